"""tenantctl: managed Kubernetes tenant clusters on Proxmox VE or KubeVirt.

YAML -> spec (pydantic models) -> render (pure functions to dicts) -> stdout or the Kubernetes API.
"""

__version__ = "0.1.0"

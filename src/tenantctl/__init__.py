"""tenantctl: managed Kubernetes tenant clusters on Proxmox VE or KubeVirt.

YAML -> spec (pydantic models) -> render (pure functions to dicts) -> stdout or the Kubernetes API.
"""

__version__ = "0.1.0"
MANAGED_BY = "tenantctl"
"""The `app.kubernetes.io/managed-by` value of every object tenantctl writes; here so every room can name it."""

"""The per-cluster `controllerVmID` of the Proxmox CSI controller, derived from namespace + cluster name.

The driver names volumes `vm-<controllerVmID>-pvc-…` and owns them as VMID 9999 unless told otherwise,
which makes every cluster's volumes look alike on shared storage. Each cluster gets its own owner id:

* Range: ``[100_000_000, 999_999_999]`` (900 000 000 values), inside Proxmox's VMID range
  (100 … 999 999 999) and above its default next-id window (100 … 1 000 000), so a VM created the
  ordinary way never takes a cluster's id.
* Input: ``"<namespace>/<cluster>"``. Both are DNS labels and cannot contain ``/``, so distinct pairs
  give distinct inputs: two tenants' clusters with the same name hash different strings.
* Collisions: SHA-256 reduced modulo 9·10⁸ is uniform to within 10⁻⁶⁸, so for *n* clusters the chance
  that any two share an id is about n²/(2·9·10⁸): 1 000 clusters ≈ 0.06 %, 10 000 ≈ 5.4 %.
  A collision merges two clusters' ownership labels; it does not let one attach the other's volumes
  (the driver checks neither — see docs/storage-chain.md).
"""

from __future__ import annotations

import hashlib

__all__ = ["CONTROLLER_VMID_MAX", "CONTROLLER_VMID_MIN", "controller_vm_id"]

CONTROLLER_VMID_MIN = 100_000_000
CONTROLLER_VMID_MAX = 999_999_999


def controller_vm_id(namespace: str, cluster: str) -> int:
    """Deterministic, stable across releases: changing it would orphan every existing volume's owner."""
    digest = hashlib.sha256(f"{namespace}/{cluster}".encode()).digest()
    span = CONTROLLER_VMID_MAX - CONTROLLER_VMID_MIN + 1
    return CONTROLLER_VMID_MIN + int.from_bytes(digest, "big") % span

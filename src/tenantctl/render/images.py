"""Container images tenantctl renders, in one table: a version bump is a one-line change."""

from __future__ import annotations

__all__ = ["IMAGES", "kubelet_image"]

IMAGES: dict[str, str] = {
    "talos-csr-signer": "ghcr.io/clastix/talos-csr-signer:v0.2.0",
    "kubelet": "ghcr.io/siderolabs/kubelet",
}


def kubelet_image(kubernetes_patch: str) -> str:
    return f"{IMAGES['kubelet']}:{kubernetes_patch}"

"""Container images tenantctl renders, in one table: a version bump is a one-line change."""

from __future__ import annotations

__all__ = ["IMAGES", "kubelet_image"]

IMAGES: dict[str, str] = {
    "talos-csr-signer": "ghcr.io/clastix/talos-csr-signer:v0.2.0",
    "kubelet": "ghcr.io/siderolabs/kubelet",
    # Composes a controller's config file from its credentials Secret (sh, awk, sed, tr).
    "config-init": "docker.io/library/busybox:1.37.0",
    "proxmox-ccm": "ghcr.io/sergelogvinov/proxmox-cloud-controller-manager:v0.15.0",
    "proxmox-csi-controller": "ghcr.io/sergelogvinov/proxmox-csi-controller:v0.20.0",
    "kubevirt-ccm": "quay.io/kubevirt/kubevirt-cloud-controller-manager:v0.5.1",
    "kubevirt-csi-driver": "quay.io/kubevirt/kubevirt-csi-driver:v0.4.1",
    "csi-attacher": "registry.k8s.io/sig-storage/csi-attacher:v4.8.0",
    "csi-provisioner": "registry.k8s.io/sig-storage/csi-provisioner:v5.1.0",
    "csi-resizer": "registry.k8s.io/sig-storage/csi-resizer:v1.13.1",
    # cluster-autoscaler 1.32.0 + fix-downscale.diff: upstream's clusterapi provider refuses any SetSize
    # above the group's max, so a pool left above a lowered maxReplicas could not shrink one step at a
    # time. Cozystack's build, by digest (cozystack/cozystack packages/apps/kubernetes/images/*.tag).
    "cluster-autoscaler": "ghcr.io/cozystack/cozystack/cluster-autoscaler:v1.6.0"
    "@sha256:d188f395a31e37ea09bfa91e45d7ce1606b7459192a437fa66bb760ffb5f17d2",
    "csi-livenessprobe": "registry.k8s.io/sig-storage/livenessprobe:v2.14.0",
}


def kubelet_image(kubernetes_patch: str) -> str:
    return f"{IMAGES['kubelet']}:{kubernetes_patch}"

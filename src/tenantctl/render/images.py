"""Container images tenantctl renders, in one table: a version bump is a one-line change."""

from __future__ import annotations

__all__ = ["IMAGES", "kubelet_image", "repository_and_tag"]

IMAGES: dict[str, str] = {
    "talos-csr-signer": "ghcr.io/clastix/talos-csr-signer:v0.2.0",
    "kubelet": "ghcr.io/siderolabs/kubelet",
    # Composes a controller's config file from its credentials Secret (sh, awk, sed, tr).
    "config-init": "docker.io/library/busybox:1.37.0",
    "proxmox-ccm": "ghcr.io/sergelogvinov/proxmox-cloud-controller-manager:v0.15.0",
    "proxmox-csi-controller": "ghcr.io/sergelogvinov/proxmox-csi-controller:v0.20.0",
    "kubevirt-ccm": "quay.io/kubevirt/kubevirt-cloud-controller-manager:v0.5.1",
    # kubevirt/csi-driver publishes no release tags; Cozystack's build, digest-pinned
    # (cozystack/cozystack packages/apps/kubernetes/images/kubevirt-csi-driver.tag).
    "kubevirt-csi-driver": (
        "ghcr.io/cozystack/cozystack/kubevirt-csi-driver:v1.6.0"
        "@sha256:d6326e343c7932ce3d375c6742b9b9745090a4a26bf5bbc5ad19f5504ea93d65"
    ),
    "csi-attacher": "registry.k8s.io/sig-storage/csi-attacher:v4.8.0",
    "csi-provisioner": "registry.k8s.io/sig-storage/csi-provisioner:v5.1.0",
    "csi-resizer": "registry.k8s.io/sig-storage/csi-resizer:v1.13.1",
    "csi-livenessprobe": "registry.k8s.io/sig-storage/livenessprobe:v2.14.0",
    # Digests below: kubernetes/k8s.io registry.k8s.io/images/<staging project>/images.yaml, the
    # promotion manifests registry.k8s.io serves from.
    "csi-node-driver-registrar": (
        "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.13.0"
        "@sha256:d7138bcc3aa5f267403d45ad4292c95397e421ea17a0035888850f424c7de25d"
    ),
    "csi-node-livenessprobe": (
        "registry.k8s.io/sig-storage/livenessprobe:v2.14.0"
        "@sha256:33692aed26aaf105b4d6e66280cceca9e0463f500c81b5d8c955428a75438f32"
    ),
    "csi-snapshotter": (
        "registry.k8s.io/sig-storage/csi-snapshotter:v8.3.0"
        "@sha256:bc7be893ecc3ad524194aa6573b2f5c06cd469bdf21a500ab6c99c2ba1c4d64d"
    ),
    # Set in the tenant charts' values, so the chart's own default tag is never what runs.
    "snapshot-controller": (
        "registry.k8s.io/sig-storage/snapshot-controller:v8.3.0"
        "@sha256:12c2da094b02ffa8fa249e17b943b755b464604880cc2cfd85977088c1a2c458"
    ),
    "metrics-server": (
        "registry.k8s.io/metrics-server/metrics-server:v0.8.0"
        "@sha256:89258156d0e9af60403eafd44da9676fd66f600c7934d468ccc17e42b199aee2"
    ),
}


def kubelet_image(kubernetes_patch: str) -> str:
    return f"{IMAGES['kubelet']}:{kubernetes_patch}"


def repository_and_tag(image: str) -> tuple[str, str]:
    """Split a reference for charts that take `repository` and `tag` (`v1@sha256:…` stays in the tag)."""
    name, _, digest = image.partition("@")
    repository, _, tag = name.rpartition(":")
    return repository, f"{tag}@{digest}" if digest else tag

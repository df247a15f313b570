"""Every container image tenantctl renders or makes a tenant pull, in one table: a bump is a one-line change.

Each entry says where its pin comes from. Renderers never read this table directly: they ask
`ImagesSpec.ref` (render/image_settings.py), the one place platform overrides and the registry mirror
apply, so no reference can bypass an air-gapped site's mirror.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tenantctl import __version__

__all__ = ["CATALOGUE", "SHARED_REGISTRY", "TENANTCTL_REPOSITORY", "CatalogueImage", "derived", "pinned", "tagged"]

# tenantctl's own image: the operator, and the backup and restore Jobs it renders. Tagged with the
# package version; `make image` builds it from the checkout (docs/getting-started.md: not published).
TENANTCTL_REPOSITORY = "ghcr.io/tenantctl/tenantctl"

# registry.k8s.io serves multi-arch indexes whose digests are published only in the promoter's manifest,
# which is not part of this project's sources; the tag is the release and registry.k8s.io never re-tags.
_K8S_PROMOTED = "registry.k8s.io promoted images are immutable; digest not recorded"
# Digests read from the promoter's manifest that registry.k8s.io serves from.
_SIG_STORAGE_PROMOTION = (
    "kubernetes/k8s.io registry.k8s.io/images/k8s-staging-sig-storage/images.yaml (promotion manifest)"
)
# The author's CI pushes release tags; no upstream source records their digests.
_NO_PUBLISHED_DIGEST = "upstream publishes no digest for its release tags"

# Kamaji composes `<spec.registry>/<containerImageName>:<version>` with one registry for these three.
SHARED_REGISTRY = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")


@dataclass(frozen=True)
class CatalogueImage:
    """`tag` None: the tag is a version tenantctl derives per cluster (Kubernetes patch, Talos release)."""

    repository: str
    tag: str | None
    digest: str | None
    source: str
    use: str
    no_digest: str = ""
    # Where a tenant sets the repository instead of the platform (overrides refused, pointing there).
    per_cluster: str = ""


def pinned(reference: str, source: str, use: str) -> CatalogueImage:
    """`repository:tag@sha256:…` in one string, as upstream manifests write it."""
    name, _, digest = reference.partition("@")
    repository, _, tag = name.rpartition(":")
    return CatalogueImage(repository, tag, digest, source, use)


def tagged(reference: str, source: str, use: str, no_digest: str) -> CatalogueImage:
    """A release tag without a known digest: `no_digest` says why."""
    repository, _, tag = reference.rpartition(":")
    return CatalogueImage(repository, tag, None, source, use, no_digest)


def derived(repository: str, source: str, use: str, per_cluster: str = "") -> CatalogueImage:
    """The tag follows the cluster's versions, so no single digest can be pinned."""
    return CatalogueImage(repository, None, None, source, use, "tag derived per cluster from its versions", per_cluster)


CATALOGUE: Mapping[str, CatalogueImage] = {
    "tenantctl": tagged(
        f"{TENANTCTL_REPOSITORY}:{__version__}", "this package's version (make image)",
        "backup CronJob and restore Job", "built from this checkout by make image; no published digest",
    ),
    # clastix/talos-csr-signer publishes only a rolling :latest (no release tags); Cozystack builds it at
    # 3b434408954012ee5cc7fe3736166f9b02b58871 and pins this build by digest.
    "talos-csr-signer": pinned(
        "ghcr.io/cozystack/cozystack/talos-csr-signer:v1.6.0"
        "@sha256:85b41e16e5e40398b1272fe0a69de72e205532c8034d0e6a9fc4a1d510f17818",
        "cozystack packages/apps/kubernetes/images/talos-csr-signer.tag",
        "apiserver pod sidecar (KamajiControlPlane extraContainers)",
    ),
    "kube-apiserver": derived(
        "registry.k8s.io/kube-apiserver", "Kamaji: spec.registry/containerImageName:spec.version", "control plane"
    ),
    "kube-controller-manager": derived(
        "registry.k8s.io/kube-controller-manager", "Kamaji: spec.registry/containerImageName:spec.version",
        "control plane",
    ),
    "kube-scheduler": derived(
        "registry.k8s.io/kube-scheduler", "Kamaji: spec.registry/containerImageName:spec.version", "control plane"
    ),
    "konnectivity-server": derived(
        "registry.k8s.io/kas-network-proxy/proxy-server", "KONNECTIVITY_VERSIONS, else Kamaji's v0.<minor>.0",
        "apiserver pod sidecar (Kamaji konnectivity addon)",
    ),
    "konnectivity-agent": derived(
        "registry.k8s.io/kas-network-proxy/proxy-agent", "KONNECTIVITY_VERSIONS, else Kamaji's v0.<minor>.0",
        "tenant DaemonSet (Kamaji konnectivity addon)",
    ),
    "kubelet": derived("ghcr.io/siderolabs/kubelet", "siderolabs/kubelet: tag = Kubernetes patch", "Talos workers"),
    "talos-installer": derived(
        "factory.talos.dev/installer", "spec.talos.installerRepository/<schematicID>:<talos version>",
        "Talos workers (install image)", per_cluster="TenantCluster spec.talos.installerRepository",
    ),
    "audit-shipper": pinned(
        "docker.io/library/busybox:1.37.0@sha256:1487d0af5f52b4ba31c7e465126ee2123fe3f2305d638e7827681e7cf6c83d5e",
        "cozystack packages/apps/kubernetes/images/busybox.tag (the same pin as config-init)",
        "apiserver pod sidecar: `tail -F` of the audit log (spec.controlPlane.apiServer.audit.shipping: sidecar)",
    ),
    "config-init": pinned(
        "docker.io/library/busybox:1.37.0@sha256:1487d0af5f52b4ba31c7e465126ee2123fe3f2305d638e7827681e7cf6c83d5e",
        "cozystack packages/apps/kubernetes/images/busybox.tag",
        "init container composing a Proxmox controller's config (sh, awk, sed, tr)",
    ),
    # Upstream tags stop at v0.13.1 (sergelogvinov/proxmox-cloud-controller-manager, 2026-05).
    "proxmox-ccm": tagged(
        "ghcr.io/sergelogvinov/proxmox-cloud-controller-manager:v0.13.1",
        "sergelogvinov/proxmox-cloud-controller-manager release v0.13.1", "Proxmox CCM Deployment",
        _NO_PUBLISHED_DIGEST,
    ),
    # Upstream tags stop at v0.19.1 (sergelogvinov/proxmox-csi-plugin, chart appVersion, 2026-06).
    "proxmox-csi-controller": tagged(
        "ghcr.io/sergelogvinov/proxmox-csi-controller:v0.19.1", "sergelogvinov/proxmox-csi-plugin release v0.19.1",
        "Proxmox CSI controller Deployment", _NO_PUBLISHED_DIGEST,
    ),
    "proxmox-csi-node": tagged(
        "ghcr.io/sergelogvinov/proxmox-csi-node:v0.19.1", "sergelogvinov/proxmox-csi-plugin release v0.19.1",
        "tenant proxmox-csi release (node.plugin.image)", _NO_PUBLISHED_DIGEST,
    ),
    # kubevirt/cloud-provider-kubevirt a0acf33 + patches 341 (EndpointSlices scoped by --cluster-name) and
    # 379 (no nil dereference on tenant endpoints without NodeName), built and pinned by Cozystack.
    "kubevirt-ccm": pinned(
        "ghcr.io/cozystack/cozystack/kubevirt-cloud-provider:v1.6.0"
        "@sha256:f005b99041d191eed9dde98f9f6691ba2d0cbfa1b3b0b2fe4b32cc0fdba74acf",
        "cozystack packages/apps/kubernetes/images/kubevirt-cloud-provider.tag", "KubeVirt CCM Deployment",
    ),
    # kubevirt/csi-driver publishes no release tags at all: Cozystack's build is the pinned one.
    "kubevirt-csi-driver": pinned(
        "ghcr.io/cozystack/cozystack/kubevirt-csi-driver:v1.6.0"
        "@sha256:d6326e343c7932ce3d375c6742b9b9745090a4a26bf5bbc5ad19f5504ea93d65",
        "cozystack packages/apps/kubernetes/images/kubevirt-csi-driver.tag",
        "KubeVirt CSI controller Deployment, tenant KubeVirt CSI node DaemonSet",
    ),
    # cluster-autoscaler 1.32.0 + fix-downscale.diff: upstream's clusterapi provider refuses any SetSize
    # above the group's max, so a pool left above a lowered maxReplicas could not shrink one step at a
    # time. Built and pinned by Cozystack.
    "cluster-autoscaler": pinned(
        "ghcr.io/cozystack/cozystack/cluster-autoscaler:v1.6.0"
        "@sha256:d188f395a31e37ea09bfa91e45d7ce1606b7459192a437fa66bb760ffb5f17d2",
        "cozystack packages/apps/kubernetes/images/cluster-autoscaler.tag",
        "cluster-autoscaler Deployment (tenants with an autoscaled pool)",
    ),
    "csi-attacher": tagged(
        "registry.k8s.io/sig-storage/csi-attacher:v4.8.0", "kubernetes-csi/external-attacher release v4.8.0",
        "CSI controller sidecar", _K8S_PROMOTED,
    ),
    "csi-provisioner": tagged(
        "registry.k8s.io/sig-storage/csi-provisioner:v5.1.0", "kubernetes-csi/external-provisioner release v5.1.0",
        "CSI controller sidecar", _K8S_PROMOTED,
    ),
    "csi-resizer": tagged(
        "registry.k8s.io/sig-storage/csi-resizer:v1.13.1", "kubernetes-csi/external-resizer release v1.13.1",
        "CSI controller sidecar", _K8S_PROMOTED,
    ),
    "csi-livenessprobe": pinned(
        "registry.k8s.io/sig-storage/livenessprobe:v2.14.0"
        "@sha256:33692aed26aaf105b4d6e66280cceca9e0463f500c81b5d8c955428a75438f32",
        _SIG_STORAGE_PROMOTION,
        "CSI controller sidecar, tenant proxmox-csi release (livenessprobe.image), tenant KubeVirt CSI node",
    ),
    "csi-node-driver-registrar": pinned(
        "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.13.0"
        "@sha256:d7138bcc3aa5f267403d45ad4292c95397e421ea17a0035888850f424c7de25d",
        _SIG_STORAGE_PROMOTION,
        "tenant proxmox-csi release (node.driverRegistrar.image), tenant KubeVirt CSI node",
    ),
    "csi-snapshotter": pinned(
        "registry.k8s.io/sig-storage/csi-snapshotter:v8.3.0"
        "@sha256:bc7be893ecc3ad524194aa6573b2f5c06cd469bdf21a500ab6c99c2ba1c4d64d",
        _SIG_STORAGE_PROMOTION, "KubeVirt CSI controller sidecar (tenant VolumeSnapshots)",
    ),
    "snapshot-controller": pinned(
        "registry.k8s.io/sig-storage/snapshot-controller:v8.3.0"
        "@sha256:12c2da094b02ffa8fa249e17b943b755b464604880cc2cfd85977088c1a2c458",
        _SIG_STORAGE_PROMOTION, "tenant snapshot-controller release (controller.image)",
    ),
    "metrics-server": pinned(
        "registry.k8s.io/metrics-server/metrics-server:v0.8.0"
        "@sha256:89258156d0e9af60403eafd44da9676fd66f600c7934d468ccc17e42b199aee2",
        "kubernetes/k8s.io registry.k8s.io/images/k8s-staging-metrics-server/images.yaml (promotion manifest)",
        "tenant metrics-server release (image.repository/tag)",
    ),
    "cilium": pinned(
        "quay.io/cilium/cilium:v1.17.6@sha256:544de3d4fed7acba72758413812780a4972d47c39035f2a06d6145d8644a3353",
        "cilium v1.17.6 release notes (Docker Manifests)", "tenant cilium release (image.override)",
    ),
    "cilium-operator": pinned(
        "quay.io/cilium/operator-generic:v1.17.6"
        "@sha256:91ac3bf7be7bed30e90218f219d4f3062a63377689ee7246062fa0cc3839d096",
        "cilium v1.17.6 release notes (Docker Manifests)", "tenant cilium release (operator.image.override)",
    ),
    "cilium-envoy": pinned(
        "quay.io/cilium/cilium-envoy:v1.33.4-1752151664-7c2edb0b44cf95f326d628b837fcdd845102ba68"
        "@sha256:318eff387835ca2717baab42a84f35a83a5f9e7d519253df87269f80b9ff0171",
        "what cilium chart 1.17.6 deploys (cilium status of 1.17.6 installs)",
        "tenant cilium release (envoy.image.override)",
    ),
    "coredns": pinned(
        "docker.io/coredns/coredns:1.12.2@sha256:af8c8d35a5d184b386c4a6d1a012c8b218d40d1376474c7d071bb6c07201f47d",
        "coredns chart 1.43.0 appVersion 1.12.2; digest as pinned in public manifests",
        "tenant coredns release (image.repository/tag)",
    ),
}

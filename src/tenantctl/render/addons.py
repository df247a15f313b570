"""Tenant add-ons as Flux HelmReleases, installed into the tenant through its admin kubeconfig.

Order is carried by `dependsOn`: cilium first (nothing in the tenant has a network before it), then
coredns and, where the substrate has one (Proxmox), the CSI node release, each depending on cilium
only. The CCM is a Deployment here, not a release, so nothing in the tenant can depend on it; the CSI
node plugin waits for the labels it sets. KubeVirt's node plugin is no release: the operator applies
it with the bootstrap objects (`render/kubevirt_csi_node.py`). Metrics and snapshots:
`render/standard_addons.py`; the optional add-ons: `render/optional_addons.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tenantctl.render.chart_sources import ChartSourcesSpec, helm_release_chart
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.kamaji import KUBECONFIG_KEY
from tenantctl.render.meta import Names, object_meta
from tenantctl.render.plain import plain_copy
from tenantctl.spec import ObservedState, TenantCluster
from tenantctl.spec.addresses import network

__all__ = [
    "ADDON_IMAGES",
    "CORE_ADDONS",
    "CSI_RELEASE",
    "HELM_RELEASE_API",
    "CsiNodeRelease",
    "TenantAddon",
    "charts_in_use",
    "cluster_dns_address",
    "render_addons",
    "render_helm_release",
    "tenant_addons",
]

HELM_RELEASE_API = "helm.toolkit.fluxcd.io/v2"
# Catalogue images the cilium and coredns values set (listed by `tenantctl images`).
ADDON_IMAGES = ("cilium", "cilium-operator", "cilium-envoy", "coredns")
CILIUM, COREDNS, CSI_RELEASE = "cilium", "coredns", "csi"
_APISERVER_PORT = 6443
_CILIUM_MTU = 1350  # headroom for the tunnel inside the substrate's own overlay
# Flux's default strategy uninstalls a failed install: a slow first boot loops install/uninstall of the only CNI.
_RETRY_ON_FAILURE = {"name": "RetryOnFailure", "retryInterval": "30s"}
# Branches no strategy reaches (an absent release, an out-of-sync one) still consult the retry count.
_UNLIMITED_REMEDIATION = {"retries": -1}


@dataclass(frozen=True)
class CsiNodeRelease:
    """What a substrate contributes to the tenant's CSI node release."""

    chart: str
    target_namespace: str
    values: Mapping[str, Any]
    post_renderers: Sequence[Mapping[str, Any]] = ()


def cluster_dns_address(cluster: TenantCluster) -> str:
    """The 10th address of the service CIDR: what Talos' kubelet uses as clusterDNS by default."""
    return str(network(cluster.spec.network.service_cidr)[10])


def render_helm_release(
    cluster: TenantCluster,
    charts: ChartSourcesSpec,
    addon: str,
    chart: str,
    target_namespace: str,
    values: Mapping[str, Any],
    *,
    depends_on: Sequence[str] = (),
    post_renderers: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Every tenant release is built here: `kubeConfig` always names the admin kubeconfig, never `valuesFrom`.

    `values` is the release's own: every values function builds it fresh, and tables are copied where they
    are merged (`deep_merge`); tests/render/test_no_shared_nodes.py walks two renders for a shared node."""
    names = Names(cluster)
    spec: dict[str, Any] = {
        "releaseName": addon,
        **helm_release_chart(charts, chart),
        "interval": "5m",
        "timeout": "10m",
        "kubeConfig": {"secretRef": {"name": names.admin_kubeconfig, "key": KUBECONFIG_KEY}},
        "targetNamespace": target_namespace,
        "storageNamespace": target_namespace,
        "install": {
            "createNamespace": True,
            "strategy": dict(_RETRY_ON_FAILURE),
            "remediation": dict(_UNLIMITED_REMEDIATION),
        },
        # The retry of a failed install runs as an upgrade: without the strategy here it falls back to remediation.
        "upgrade": {"strategy": dict(_RETRY_ON_FAILURE), "remediation": dict(_UNLIMITED_REMEDIATION)},
        "values": dict(values),
    }
    if depends_on:
        spec["dependsOn"] = [{"name": names.release(d), "namespace": names.namespace} for d in depends_on]
    if post_renderers:
        spec["postRenderers"] = plain_copy([dict(p) for p in post_renderers])
    return {
        "apiVersion": HELM_RELEASE_API,
        "kind": "HelmRelease",
        "metadata": object_meta(names.release(addon), names.namespace, names.cluster),
        "spec": spec,
    }


def _cilium_values(observed: ObservedState, images: ImagesSpec) -> dict[str, Any]:
    """Kamaji runs no kube-proxy and Talos' KubePrism is off, so cilium talks to the apiserver address
    itself and replaces kube-proxy; the capability and cgroup settings are what Talos requires.
    `override` is the chart's full-reference switch: the operator's cloud suffix is not appended to it."""
    return {
        "image": {"override": str(images.ref("cilium"))},
        "operator": {"image": {"override": str(images.ref("cilium-operator"))}},
        "envoy": {"image": {"override": str(images.ref("cilium-envoy"))}},
        "k8sServiceHost": observed.endpoint,
        "k8sServicePort": _APISERVER_PORT,
        "kubeProxyReplacement": True,
        "routingMode": "tunnel",
        "tunnelProtocol": "vxlan",
        "MTU": _CILIUM_MTU,
        "enableIPv4Masquerade": True,
        "ipam": {"mode": "kubernetes"},
        "cgroup": {"autoMount": {"enabled": False}, "hostRoot": "/sys/fs/cgroup"},
        "securityContext": {
            "capabilities": {
                "ciliumAgent": [
                    "CHOWN", "KILL", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "SYS_ADMIN",
                    "SYS_RESOURCE", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID",
                ],
                "cleanCiliumState": ["NET_ADMIN", "SYS_ADMIN", "SYS_RESOURCE"],
            }
        },
    }


def _coredns_values(cluster: TenantCluster, images: ImagesSpec) -> dict[str, Any]:
    """The chart composes `repository:tag`, so the digest rides on the tag."""
    domain = cluster.spec.network.cluster_domain
    coredns = images.ref("coredns")
    return {
        "image": {"repository": coredns.repository, "tag": coredns.tag_and_digest},
        "service": {"clusterIP": cluster_dns_address(cluster), "name": "kube-dns"},
        "k8sAppLabelOverride": "kube-dns",
        "servers": [
            {
                "zones": [{"zone": "."}],
                "port": 53,
                "plugins": [
                    {"name": "errors"},
                    {"name": "health", "configBlock": "lameduck 5s"},
                    {"name": "ready"},
                    {
                        "name": "kubernetes",
                        "parameters": f"{domain} in-addr.arpa ip6.arpa",
                        "configBlock": "pods insecure\nfallthrough in-addr.arpa ip6.arpa\nttl 30",
                    },
                    {"name": "prometheus", "parameters": "0.0.0.0:9153"},
                    {"name": "forward", "parameters": ". /etc/resolv.conf"},
                    {"name": "cache", "parameters": 30},
                    {"name": "loop"},
                    {"name": "reload"},
                    {"name": "loadbalance"},
                ],
            }
        ],
    }


@dataclass(frozen=True)
class TenantAddon:
    """One tenant release as data: the chart it installs, where, after what, and how its values are made.

    The add-ons a cluster gets are a list of these; its releases and the chart sources it needs are both
    read from that one list, so an added add-on brings its source along."""

    release: str
    chart: str
    target_namespace: str
    values: Callable[[TenantCluster, ObservedState, ImagesSpec], Mapping[str, Any]]
    depends_on: tuple[str, ...] = ()
    post_renderers: Sequence[Mapping[str, Any]] = ()


CORE_ADDONS: tuple[TenantAddon, ...] = (
    TenantAddon(CILIUM, "cilium", "kube-system", lambda _cluster, observed, images: _cilium_values(observed, images)),
    TenantAddon(
        COREDNS,
        "coredns",
        "kube-system",
        lambda cluster, _observed, images: _coredns_values(cluster, images),
        depends_on=(CILIUM,),
    ),
)


def tenant_addons(csi: CsiNodeRelease | None) -> tuple[TenantAddon, ...]:
    """cilium, coredns and (unless the substrate's CSI is off) the CSI node release, in that order."""
    if csi is None:
        return CORE_ADDONS
    csi_values = csi.values
    return (
        *CORE_ADDONS,
        TenantAddon(
            CSI_RELEASE,
            csi.chart,
            csi.target_namespace,
            lambda _cluster, _observed, _images: csi_values,
            depends_on=(CILIUM,),
            post_renderers=csi.post_renderers,
        ),
    )


def charts_in_use(addons: Sequence[TenantAddon]) -> set[str]:
    return {addon.chart for addon in addons}


def render_addons(
    cluster: TenantCluster,
    observed: ObservedState,
    charts: ChartSourcesSpec,
    addons: Sequence[TenantAddon],
    images: ImagesSpec,
) -> list[dict[str, Any]]:
    """One HelmRelease per add-on, in the list's order."""
    return [
        render_helm_release(
            cluster,
            charts,
            addon.release,
            addon.chart,
            addon.target_namespace,
            addon.values(cluster, observed, images),
            depends_on=addon.depends_on,
            post_renderers=addon.post_renderers,
        )
        for addon in addons
    ]

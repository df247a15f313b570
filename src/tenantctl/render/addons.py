"""Tenant add-ons as Flux HelmReleases, installed into the tenant through its admin kubeconfig.

Order is carried by `dependsOn`: cilium first (nothing in the tenant has a network before it), then
coredns and the CSI node release, each depending on cilium only. The CCM is a Deployment here, not a
release, so nothing in the tenant can depend on it; the CSI node plugin waits for the labels it sets.
"""

from __future__ import annotations

import copy
import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tenantctl.render.chart_sources import ChartSourcesSpec, helm_release_chart
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.kamaji import KUBECONFIG_KEY
from tenantctl.render.meta import Names, object_meta
from tenantctl.spec import ObservedState, TenantCluster

__all__ = [
    "ADDON_IMAGES",
    "CSI_RELEASE",
    "HELM_RELEASE_API",
    "CsiNodeRelease",
    "cluster_dns_address",
    "render_addons",
    "render_helm_release",
]

HELM_RELEASE_API = "helm.toolkit.fluxcd.io/v2"
# Catalogue images the cilium and coredns values set (listed by `tenantctl images`).
ADDON_IMAGES = ("cilium", "cilium-operator", "cilium-envoy", "coredns")
CILIUM, COREDNS, CSI_RELEASE = "cilium", "coredns", "csi"
_APISERVER_PORT = 6443
_CILIUM_MTU = 1350  # headroom for the tunnel inside the substrate's own overlay


@dataclass(frozen=True)
class CsiNodeRelease:
    """What a substrate contributes to the tenant's CSI node release."""

    chart: str
    target_namespace: str
    values: Mapping[str, Any]
    post_renderers: Sequence[Mapping[str, Any]] = ()


def cluster_dns_address(cluster: TenantCluster) -> str:
    """The 10th address of the service CIDR: what Talos' kubelet uses as clusterDNS by default."""
    return str(ipaddress.ip_network(cluster.spec.network.service_cidr)[10])


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

    Values are deep-copied: a render never shares mutable state with module tables or another render."""
    names = Names(cluster)
    spec: dict[str, Any] = {
        "releaseName": addon,
        **helm_release_chart(charts, chart),
        "interval": "5m",
        "timeout": "10m",
        "kubeConfig": {"secretRef": {"name": names.admin_kubeconfig, "key": KUBECONFIG_KEY}},
        "targetNamespace": target_namespace,
        "storageNamespace": target_namespace,
        "install": {"createNamespace": True, "remediation": {"retries": -1}},
        "upgrade": {"remediation": {"retries": -1}},
        "values": copy.deepcopy(dict(values)),
    }
    if depends_on:
        spec["dependsOn"] = [{"name": names.release(d), "namespace": names.namespace} for d in depends_on]
    if post_renderers:
        spec["postRenderers"] = copy.deepcopy([dict(p) for p in post_renderers])
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


def render_addons(
    cluster: TenantCluster,
    observed: ObservedState,
    charts: ChartSourcesSpec,
    csi: CsiNodeRelease | None,
    images: ImagesSpec,
) -> list[dict[str, Any]]:
    """cilium, coredns and (unless the substrate's CSI is off) the CSI node release, in that order."""
    releases = [
        render_helm_release(cluster, charts, CILIUM, "cilium", "kube-system", _cilium_values(observed, images)),
        render_helm_release(
            cluster, charts, COREDNS, "coredns", "kube-system", _coredns_values(cluster, images), depends_on=[CILIUM]
        ),
    ]
    if csi is not None:
        releases.append(
            render_helm_release(
                cluster,
                charts,
                CSI_RELEASE,
                csi.chart,
                csi.target_namespace,
                csi.values,
                depends_on=[CILIUM],
                post_renderers=csi.post_renderers,
            )
        )
    return releases

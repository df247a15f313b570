"""`tenantctl kubeconfig`: the tenant's admin kubeconfig Kamaji writes, made usable from outside.

Kamaji's Secret points at the apiserver Service's in-cluster name. With `--external` the server
becomes the address `spec.expose` publishes: the Ingress host on 443, or the LoadBalancer's host
name, pre-assigned address or assigned address on the Service's port.
"""

from __future__ import annotations

import copy
from typing import Any
from urllib.parse import urlsplit

from tenantctl.operator.kube.client import KubeClient
from tenantctl.operator.kube.tenants import UnusableKubeconfig, admin_kubeconfig, parse_kubeconfig
from tenantctl.problems import InvalidInput, Problem
from tenantctl.render import Names
from tenantctl.render.exposure import expose_type
from tenantctl.render.kamaji import KUBECONFIG_KEY
from tenantctl.spec import API_VERSION, TenantCluster, parse_tenant_documents

__all__ = ["INGRESS_PORT", "external_server", "user_kubeconfig"]

INGRESS_PORT = 443
_NOT_EXPOSED = (
    "is reachable only inside the management cluster (spec.expose.type is ClusterIP); expose it with "
    "spec.expose: {type: LoadBalancer} or {type: Ingress, hostname: api.example.com}, then run this again"
)


async def _tenant_cluster(api: KubeClient, namespace: str, name: str) -> TenantCluster:
    found = await api.get(await api.require(API_VERSION, "TenantCluster"), name, namespace)
    if found is None:
        raise InvalidInput([Problem(f"TenantCluster/{name}", f"no TenantCluster {namespace}/{name} in the cluster")])
    doc = {"apiVersion": API_VERSION, "kind": "TenantCluster", "metadata": {"name": name, "namespace": namespace}}
    return parse_tenant_documents([{**doc, "spec": found.get("spec") or {}}]).clusters[0]


async def _admin_kubeconfig(api: KubeClient, cluster: TenantCluster) -> dict[str, Any]:
    names = Names(cluster)
    data = await admin_kubeconfig(api, cluster)
    if data is None:
        raise InvalidInput([
            Problem(
                f"TenantCluster/{names.cluster}",
                f"no admin kubeconfig yet (Secret {names.namespace}/{names.admin_kubeconfig}, key {KUBECONFIG_KEY}): "
                "Kamaji writes it once the control plane is up",
            )
        ])
    return _parse_kubeconfig(data, f"Secret/{names.namespace}/{names.admin_kubeconfig}.data.{KUBECONFIG_KEY}")


def _parse_kubeconfig(data: str, where: str) -> dict[str, Any]:
    """The Secret's kubeconfig; anything but what Kamaji writes is a refusal naming the key, not a traceback."""
    try:
        return parse_kubeconfig(data)
    except UnusableKubeconfig as exc:
        raise InvalidInput([Problem(where, str(exc))]) from None


async def _load_balancer_host(api: KubeClient, cluster: TenantCluster) -> str | None:
    names = Names(cluster)
    service = await api.get(await api.require("v1", "Service"), names.apiserver_service, names.namespace)
    for entry in (((service or {}).get("status") or {}).get("loadBalancer") or {}).get("ingress") or []:
        if host := entry.get("ip") or entry.get("hostname"):
            return str(host)
    return None


async def external_server(api: KubeClient, cluster: TenantCluster, internal_server: str) -> str:
    """The URL a user outside the management cluster dials; refuses a tenant that is not exposed."""
    at = f"TenantCluster/{cluster.metadata.name}"
    kind = expose_type(cluster)
    expose = cluster.spec.expose
    if kind == "ClusterIP":
        raise InvalidInput([Problem("--external", f"{at} {_NOT_EXPOSED}")])
    if kind == "Ingress":
        assert expose is not None and expose.hostname is not None, "checked by the spec"
        return f"https://{expose.hostname}:{INGRESS_PORT}"
    host = (expose.hostname or expose.address if expose else None) or await _load_balancer_host(api, cluster)
    if host is None:
        raise InvalidInput([
            Problem("--external", f"{at}: the apiserver's LoadBalancer Service has no address yet; try again later")
        ])
    port = urlsplit(internal_server).port or 6443
    return f"https://{f'[{host}]' if ':' in host else host}:{port}"


async def user_kubeconfig(api: KubeClient, namespace: str, name: str, *, external: bool) -> dict[str, Any]:
    """Kamaji's admin kubeconfig, every cluster entry pointed at the external address when asked."""
    cluster = await _tenant_cluster(api, namespace, name)
    config = copy.deepcopy(await _admin_kubeconfig(api, cluster))
    if not external:
        return config
    for entry in config.get("clusters") or []:
        entry["cluster"]["server"] = await external_server(api, cluster, str(entry["cluster"]["server"]))
    return config

"""Reach a tenant's own apiserver through the admin kubeconfig Kamaji writes into the management cluster."""

from __future__ import annotations

import base64
from dataclasses import dataclass

import yaml

from tenantctl.operator.apply import comparable, covers
from tenantctl.operator.kube import APIError, Connection, KubeClient, RetryPolicy
from tenantctl.operator.settings import OperatorSettings
from tenantctl.render import Names, render_tenant_bootstrap
from tenantctl.spec import ObservedState, TenantCluster

__all__ = ["BootstrapResult", "admin_connection", "bootstrap_tenant", "tenant_client"]

ADMIN_KUBECONFIG_KEY = "super-admin.svc"


async def admin_connection(api: KubeClient, cluster: TenantCluster) -> Connection | None:
    """The tenant's admin connection, or None while Kamaji has not written the kubeconfig Secret."""
    names = Names(cluster)
    secret = await api.get(await api.require("v1", "Secret"), names.admin_kubeconfig, names.namespace)
    data = ((secret or {}).get("data") or {}).get(ADMIN_KUBECONFIG_KEY)
    if not data:
        return None
    return Connection.from_kubeconfig(yaml.safe_load(base64.b64decode(data)))


def tenant_client(connection: Connection, settings: OperatorSettings) -> KubeClient:
    """A client whose requests are bounded by the probe timeout: a silent tenant must not stall a pass."""
    retry = RetryPolicy(timeout=settings.tenant_probe_timeout, backoffs=settings.retry.backoffs)
    return KubeClient(connection, field_manager=settings.field_manager, retry=retry)


@dataclass(frozen=True)
class BootstrapResult:
    done: bool
    message: str
    applied: tuple[str, ...] = ()


async def bootstrap_tenant(
    api: KubeClient, cluster: TenantCluster, observed: ObservedState, settings: OperatorSettings
) -> BootstrapResult:
    """Apply the bootstrap-token Secret and the Talos node RBAC inside the tenant, comparing first."""
    connection = await admin_connection(api, cluster)
    if connection is None:
        return BootstrapResult(False, f"no admin kubeconfig Secret {Names(cluster).admin_kubeconfig} yet")
    applied: list[str] = []
    async with tenant_client(connection, settings) as tenant:
        try:
            await tenant.probe(settings.tenant_probe_timeout)
            for obj in render_tenant_bootstrap(cluster, observed):
                res = await tenant.require(obj["apiVersion"], obj["kind"])
                meta = obj["metadata"]
                live = await tenant.get(res, meta["name"], meta.get("namespace"))
                if live is not None and covers(comparable(live), comparable(obj)):
                    continue
                await tenant.apply(res, obj)
                applied.append(f"{obj['kind']}/{meta['name']}")
        except APIError as exc:
            return BootstrapResult(False, f"tenant apiserver {connection.server}: {exc}")
    return BootstrapResult(True, "bootstrap token and Talos node RBAC applied", tuple(applied))


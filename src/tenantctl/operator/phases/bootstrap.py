"""Bootstrap a tenant from inside: the bootstrap-token Secret and the Talos node RBAC, compared before applied."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.kube.client import APIError, KubeClient
from tenantctl.operator.kube.tenants import (
    TenantClients,
    UnusableKubeconfig,
    admin_kubeconfig,
    tenant_api,
)
from tenantctl.operator.phases.apply import comparable, covers
from tenantctl.render import Names, render_tenant_bootstrap
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.spec import ObservedState, TenantCluster

__all__ = ["BootstrapResult", "bootstrap_tenant"]


@dataclass(frozen=True)
class BootstrapResult:
    done: bool
    message: str
    applied: tuple[str, ...] = ()


async def bootstrap_tenant(
    api: KubeClient,
    cluster: TenantCluster,
    observed: ObservedState,
    settings: OperatorSettings,
    clients: TenantClients | None = None,
    images: ImagesSpec | None = None,
) -> BootstrapResult:
    """Apply the bootstrap-token Secret and the Talos node RBAC inside the tenant, comparing first.

    With `clients` (the operator's), the tenant's client is kept open across passes and an unchanged
    bootstrap verified less than `tenant_recheck_interval` ago costs one probe.
    """
    kubeconfig = await admin_kubeconfig(api, cluster)
    if kubeconfig is None:
        return BootstrapResult(False, f"no admin kubeconfig Secret {Names(cluster).admin_kubeconfig} yet")
    key = f"{cluster.metadata.namespace}/{cluster.metadata.name}"
    try:
        async with tenant_api(key, kubeconfig, settings, clients) as tenant:
            memo = (clients, key) if clients is not None else None
            return await _bootstrap(tenant, cluster, observed, settings, memo, images)
    except UnusableKubeconfig as exc:
        return _unusable(cluster, exc)


def _unusable(cluster: TenantCluster, exc: UnusableKubeconfig) -> BootstrapResult:
    """Not bootstrapped, and why: Kamaji rewrites the Secret, so a later pass may find it usable."""
    return BootstrapResult(False, f"admin kubeconfig Secret {Names(cluster).admin_kubeconfig} {exc}")


async def _bootstrap(
    tenant: KubeClient,
    cluster: TenantCluster,
    observed: ObservedState,
    settings: OperatorSettings,
    memo: tuple[TenantClients, str] | None,
    images: ImagesSpec | None = None,
) -> BootstrapResult:
    connection = tenant.connection
    objects = render_tenant_bootstrap(cluster, observed, images)
    digest = hashlib.sha256(json.dumps([connection.server, objects], sort_keys=True).encode()).hexdigest()
    applied: list[str] = []
    try:
        await tenant.probe(settings.tenant_probe_timeout)
        if memo is not None and memo[0].verified_recently(memo[1], digest, settings.tenant_recheck_interval):
            return BootstrapResult(True, "bootstrap token and Talos node RBAC applied")
        # First contact of this process (a new tenant, or a restart): apply without reading. A read
        # would find nothing on a new tenant, and server-side apply of an unchanged object writes
        # nothing to etcd. Later rechecks read and compare, so an idle resync never writes.
        compare = memo is None or memo[0].knows(memo[1])
        for obj in objects:
            res = await tenant.require(obj["apiVersion"], obj["kind"])
            meta = obj["metadata"]
            live = await tenant.get(res, meta["name"], meta.get("namespace")) if compare else None
            if live is not None and covers(comparable(live), comparable(obj)):
                continue
            await tenant.apply(res, obj)
            applied.append(f"{obj['kind']}/{meta['name']}")
    except APIError as exc:
        return BootstrapResult(False, f"tenant apiserver {connection.server}: {exc}")
    if memo is not None:
        memo[0].verified(memo[1], digest)
    return BootstrapResult(True, "bootstrap token and Talos node RBAC applied", tuple(applied))

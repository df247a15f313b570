"""Reach a tenant's own apiserver through the admin kubeconfig Kamaji writes into the management cluster."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from dataclasses import dataclass, field

import yaml

from tenantctl.operator.apply import comparable, covers
from tenantctl.operator.kube import APIError, Connection, KubeClient, RetryPolicy
from tenantctl.operator.settings import OperatorSettings
from tenantctl.render import Names, render_tenant_bootstrap
from tenantctl.spec import ObservedState, TenantCluster

__all__ = ["BootstrapResult", "TenantClients", "admin_connection", "bootstrap_tenant", "tenant_client"]

ADMIN_KUBECONFIG_KEY = "super-admin.svc"


async def _admin_kubeconfig(api: KubeClient, cluster: TenantCluster) -> str | None:
    """The kubeconfig Kamaji writes, as the Secret holds it (base64), or None while it has not."""
    names = Names(cluster)
    secret = await api.get(await api.require("v1", "Secret"), names.admin_kubeconfig, names.namespace)
    data = ((secret or {}).get("data") or {}).get(ADMIN_KUBECONFIG_KEY)
    return str(data) if data else None


_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: a tenth of the time


def _connection(kubeconfig: str) -> Connection:
    return Connection.from_kubeconfig(yaml.load(base64.b64decode(kubeconfig), Loader=_LOADER))


async def admin_connection(api: KubeClient, cluster: TenantCluster) -> Connection | None:
    """The tenant's admin connection, or None while Kamaji has not written the kubeconfig Secret."""
    kubeconfig = await _admin_kubeconfig(api, cluster)
    return _connection(kubeconfig) if kubeconfig is not None else None


def tenant_client(connection: Connection, settings: OperatorSettings) -> KubeClient:
    """A client whose requests are bounded by the probe timeout: a silent tenant must not stall a pass."""
    retry = RetryPolicy(timeout=settings.tenant_probe_timeout, backoffs=settings.retry.backoffs)
    return KubeClient(connection, field_manager=settings.field_manager, retry=retry)


@dataclass
class TenantClients:
    """One open client per tenant apiserver, kept across passes, and when its bootstrap was last verified.

    Reusing the client keeps its connections and discovery (no TLS handshake, no discovery reads per
    pass); the memo lets an idle pass probe the tenant once instead of reading every bootstrap object,
    as long as what it would apply is unchanged and the last full check is younger than the recheck.
    """

    _clients: dict[str, tuple[str, KubeClient]] = field(default_factory=dict)
    _verified: dict[str, tuple[str, float]] = field(default_factory=dict)

    async def client(self, key: str, kubeconfig: str, settings: OperatorSettings) -> KubeClient:
        """The open client for the admin kubeconfig as Kamaji wrote it (parsed again only when it changes)."""
        held = self._clients.get(key)
        if held is not None and held[0] == kubeconfig:
            return held[1]
        if held is not None:
            await held[1].close()
        client = await tenant_client(_connection(kubeconfig), settings).__aenter__()
        self._clients[key] = (kubeconfig, client)
        return client

    def verified_recently(self, key: str, digest: str, recheck: float) -> bool:
        seen = self._verified.get(key)
        return seen is not None and seen[0] == digest and asyncio.get_running_loop().time() - seen[1] < recheck

    def verified(self, key: str, digest: str) -> None:
        self._verified[key] = (digest, asyncio.get_running_loop().time())

    async def forget(self, key: str) -> None:
        self._verified.pop(key, None)
        held = self._clients.pop(key, None)
        if held is not None:
            await held[1].close()

    async def close(self) -> None:
        for key in list(self._clients):
            await self.forget(key)


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
) -> BootstrapResult:
    """Apply the bootstrap-token Secret and the Talos node RBAC inside the tenant, comparing first.

    With `clients` (the operator's), the tenant's client is kept open across passes and an unchanged
    bootstrap verified less than `tenant_recheck_interval` ago costs one probe.
    """
    kubeconfig = await _admin_kubeconfig(api, cluster)
    if kubeconfig is None:
        return BootstrapResult(False, f"no admin kubeconfig Secret {Names(cluster).admin_kubeconfig} yet")
    if clients is None:
        async with tenant_client(_connection(kubeconfig), settings) as tenant:
            return await _bootstrap(tenant, cluster, observed, settings, None)
    key = f"{cluster.metadata.namespace}/{cluster.metadata.name}"
    tenant = await clients.client(key, kubeconfig, settings)
    return await _bootstrap(tenant, cluster, observed, settings, (clients, key))


async def _bootstrap(
    tenant: KubeClient,
    cluster: TenantCluster,
    observed: ObservedState,
    settings: OperatorSettings,
    memo: tuple[TenantClients, str] | None,
) -> BootstrapResult:
    connection = tenant.connection
    objects = render_tenant_bootstrap(cluster, observed)
    digest = hashlib.sha256(json.dumps([connection.server, objects], sort_keys=True).encode()).hexdigest()
    applied: list[str] = []
    try:
        await tenant.probe(settings.tenant_probe_timeout)
        if memo is not None and memo[0].verified_recently(memo[1], digest, settings.tenant_recheck_interval):
            return BootstrapResult(True, "bootstrap token and Talos node RBAC applied")
        for obj in objects:
            res = await tenant.require(obj["apiVersion"], obj["kind"])
            meta = obj["metadata"]
            live = await tenant.get(res, meta["name"], meta.get("namespace"))
            if live is not None and covers(comparable(live), comparable(obj)):
                continue
            await tenant.apply(res, obj)
            applied.append(f"{obj['kind']}/{meta['name']}")
    except APIError as exc:
        return BootstrapResult(False, f"tenant apiserver {connection.server}: {exc}")
    if memo is not None:
        memo[0].verified(memo[1], digest)
    return BootstrapResult(True, "bootstrap token and Talos node RBAC applied", tuple(applied))

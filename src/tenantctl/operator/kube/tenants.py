"""Reach a tenant's own apiserver through the admin kubeconfig Kamaji writes into the management cluster."""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass, field

import yaml

from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.kube.client import Connection, KubeClient, RetryPolicy
from tenantctl.render import Names
from tenantctl.render.kamaji import KUBECONFIG_KEY
from tenantctl.spec import TenantCluster

__all__ = [
    "ADMIN_KUBECONFIG_KEY",
    "TenantClients",
    "admin_connection",
    "admin_kubeconfig",
    "kubeconfig_connection",
    "tenant_client",
]

ADMIN_KUBECONFIG_KEY = KUBECONFIG_KEY
"""The key of the Secret our KamajiControlPlane asks Kamaji to write the admin kubeconfig under."""


async def admin_kubeconfig(api: KubeClient, cluster: TenantCluster) -> str | None:
    """The kubeconfig Kamaji writes, as the Secret holds it (base64), or None while it has not."""
    names = Names(cluster)
    secret = await api.get(await api.require("v1", "Secret"), names.admin_kubeconfig, names.namespace)
    data = ((secret or {}).get("data") or {}).get(ADMIN_KUBECONFIG_KEY)
    return str(data) if data else None


_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: a tenth of the time


def kubeconfig_connection(kubeconfig: str) -> Connection:
    """A connection from the Secret's base64 kubeconfig."""
    return Connection.from_kubeconfig(yaml.load(base64.b64decode(kubeconfig), Loader=_LOADER))


async def admin_connection(api: KubeClient, cluster: TenantCluster) -> Connection | None:
    """The tenant's admin connection, or None while Kamaji has not written the kubeconfig Secret."""
    kubeconfig = await admin_kubeconfig(api, cluster)
    return kubeconfig_connection(kubeconfig) if kubeconfig is not None else None


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
        client = await tenant_client(kubeconfig_connection(kubeconfig), settings).__aenter__()
        self._clients[key] = (kubeconfig, client)
        return client

    def verified_recently(self, key: str, digest: str, recheck: float) -> bool:
        seen = self._verified.get(key)
        return seen is not None and seen[0] == digest and asyncio.get_running_loop().time() - seen[1] < recheck

    def knows(self, key: str) -> bool:
        """Whether this process has verified the tenant's bootstrap objects before (with any digest)."""
        return key in self._verified

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

"""Reach a tenant's own apiserver through the admin kubeconfig Kamaji writes into the management cluster."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.kube.client import Connection, KubeClient, RetryPolicy
from tenantctl.render import Names
from tenantctl.render.kamaji import KUBECONFIG_KEY
from tenantctl.spec import TenantCluster

__all__ = [
    "ADMIN_KUBECONFIG_KEY",
    "PEOPLE_KUBECONFIG_KEY",
    "TenantClients",
    "UnusableKubeconfig",
    "admin_connection",
    "admin_kubeconfig",
    "kubeconfig_connection",
    "parse_kubeconfig",
    "tenant_api",
    "tenant_client",
]

ADMIN_KUBECONFIG_KEY = KUBECONFIG_KEY
"""The key of the Secret our KamajiControlPlane asks Kamaji to write the admin kubeconfig under."""
PEOPLE_KUBECONFIG_KEY = "admin.svc"
"""What `tenantctl kubeconfig` hands to people: Kamaji 26.3.6-edge writes `admin.conf`/`admin.svc` as kubeadm
does (`kubernetes-admin` in group `kubeadm:cluster-admins`, bound to cluster-admin by a ClusterRoleBinding
Kamaji creates), which RBAC can revoke; `super-admin.*` is `system:masters`, which nothing can."""


async def admin_kubeconfig(api: KubeClient, cluster: TenantCluster, key: str = ADMIN_KUBECONFIG_KEY) -> str | None:
    """The kubeconfig Kamaji writes under `key`, as the Secret holds it (base64), or None while it has not."""
    names = Names(cluster)
    secret = await api.get(await api.require("v1", "Secret"), names.admin_kubeconfig, names.namespace)
    data = ((secret or {}).get("data") or {}).get(key)
    return str(data) if data else None


_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: a tenth of the time


class UnusableKubeconfig(ValueError):
    """The admin kubeconfig Secret holds something no connection can be made from; the message says what,
    as a predicate of the Secret's key ("is not a kubeconfig: ..."), so each caller names the Secret its way."""


def parse_kubeconfig(kubeconfig: str) -> dict[str, Any]:
    """The Secret's base64 kubeconfig, parsed; anything but a kubeconfig naming its servers is refused."""
    try:
        config = yaml.load(base64.b64decode(kubeconfig, validate=True), Loader=_LOADER)
    except (ValueError, yaml.YAMLError) as exc:  # binascii.Error and UnicodeDecodeError are ValueErrors
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UnusableKubeconfig(f"is not a base64-encoded YAML kubeconfig ({reason})") from None
    if not isinstance(config, dict) or not _every_cluster_names_a_server(config.get("clusters")):
        raise UnusableKubeconfig("is not a kubeconfig: it needs clusters[], each with cluster.server")
    return config


def _every_cluster_names_a_server(clusters: object) -> bool:
    return isinstance(clusters, list) and bool(clusters) and all(
        isinstance(entry, dict) and isinstance(entry.get("cluster"), dict)
        and isinstance(entry["cluster"].get("server"), str)
        for entry in clusters
    )


def kubeconfig_connection(kubeconfig: str) -> Connection:
    """A connection from the Secret's base64 kubeconfig. lightkube indexes the contexts and users it is
    given without a check, so what it trips on is refused here too rather than escaping as a KeyError."""
    config = parse_kubeconfig(kubeconfig)
    try:
        return Connection.from_kubeconfig(config)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise UnusableKubeconfig(f"is not a kubeconfig a connection can be made from ({type(exc).__name__}: {exc})") \
            from None


async def admin_connection(api: KubeClient, cluster: TenantCluster) -> Connection | None:
    """The tenant's admin connection, or None while Kamaji has not written the kubeconfig Secret; a Secret
    no connection can be made from raises `UnusableKubeconfig`."""
    kubeconfig = await admin_kubeconfig(api, cluster)
    return kubeconfig_connection(kubeconfig) if kubeconfig is not None else None


def tenant_client(connection: Connection, settings: OperatorSettings) -> KubeClient:
    """A client whose requests are bounded by the probe timeout: a silent tenant must not stall a pass."""
    retry = RetryPolicy(timeout=settings.tenant_probe_timeout, backoffs=settings.retry.backoffs)
    return KubeClient(connection, field_manager=settings.field_manager, retry=retry)


@contextlib.asynccontextmanager
async def tenant_api(key: str, kubeconfig: str, settings: OperatorSettings,
                     clients: TenantClients | None) -> AsyncIterator[KubeClient]:
    """A client for the tenant's apiserver: the operator's held one (`clients`), else one for this block only.
    Raises UnusableKubeconfig for a kubeconfig nothing could connect with."""
    if clients is not None:
        yield await clients.client(key, kubeconfig, settings)
        return
    async with tenant_client(kubeconfig_connection(kubeconfig), settings) as tenant:
        yield tenant


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

"""The watch cache against the emulator: reads answered from memory, changes arriving by watch,
our writes visible at once, and a resource we may not list read directly without polling."""

from __future__ import annotations

import asyncio

import pytest
from kube_emulator import Fault, KubeEmulator
from operator_support import eventually

from tenantctl.operator.kube import Connection, KubeClient, Resource
from tenantctl.operator.kube_cache import WatchCache

pytestmark = [pytest.mark.timeout(20)]

SECRETS = Resource("v1", "Secret", "secrets", True)


def url(emulator: KubeEmulator) -> str:
    return str(emulator.url).rstrip("/")


def secret(name: str, value: str, labels: dict[str, str] | None = None) -> dict[str, object]:
    meta = {"name": name, "namespace": "ns", "labels": labels or {}}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "data": {"v": value}}


async def test_reads_come_from_the_watch_and_changes_arrive_by_it(mgmt: KubeEmulator) -> None:
    mgmt.put("v1/secrets", secret("a", "MQ==", {"app": "x"}))
    async with KubeClient(Connection.from_server(url(mgmt)), cache=WatchCache()) as api, \
            KubeClient(Connection.from_server(url(mgmt))) as other:
        assert (await api.get(SECRETS, "a", "ns") or {})["data"] == {"v": "MQ=="}
        reads = mgmt.reads
        for _ in range(5):
            assert await api.get(SECRETS, "a", "ns") is not None
            assert [s["metadata"]["name"] for s in await api.list(SECRETS, "ns", {"app": "x"})] == ["a"]
            assert await api.list(SECRETS, "other-ns") == []
        assert mgmt.reads == reads, "no request once the resource is watched"
        await other.merge_patch(SECRETS, "a", "ns", {"data": {"v": "Mg=="}})
        await eventually(lambda: api.cache is not None and
                         (api.cache.holds("v1", "secrets", "ns", "a") or {}).get("data") == {"v": "Mg=="})
        await other.delete(SECRETS, "a", "ns")
        await eventually(lambda: api.cache is not None and api.cache.holds("v1", "secrets", "ns", "a") is None)
        created = await api.apply(SECRETS, secret("b", "Mw=="))
        assert await api.get(SECRETS, "b", "ns") == created, "our own write is read back at once"
        assert mgmt.reads == reads


async def test_a_resource_we_may_not_list_is_read_directly_without_polling(mgmt: KubeEmulator) -> None:
    mgmt.put("v1/secrets", secret("a", "MQ=="))
    mgmt.fail(Fault("GET", "secrets", status=403, times=1, message="forbidden"))
    async with KubeClient(Connection.from_server(url(mgmt)), cache=WatchCache(retry_delay=0.01)) as api:
        assert await api.get(SECRETS, "a", "ns") is not None
        reads = mgmt.reads
        await asyncio.sleep(0.3)
        assert mgmt.reads == reads, "a forbidden list is not retried in the background"
        assert await api.get(SECRETS, "a", "ns") is not None
        assert mgmt.reads == reads + 1, "each read asks the server"

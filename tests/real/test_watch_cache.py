"""The watch cache on the real kube-apiserver, whose answers carry managedFields and Go's JSON escaping:
what it holds of our own write is the server's object without managedFields, spliced from the answer
rather than decoded; the watch's event of that same version changes nothing; another writer's change
arrives; and the many events of objects it does not hold go by."""

from __future__ import annotations

import asyncio
import copy

import pytest

from real_api import Api
from real_control_plane import ControlPlane
from tenantctl.operator.kube.cache import WatchCache
from tenantctl.operator.kube.client import Connection, KubeClient, Resource

pytestmark = [pytest.mark.timeout(60)]

CONFIG_MAPS = Resource("v1", "ConfigMap", "configmaps", True)
NAMESPACE = "watch-cache-real"
OURS = {"app.kubernetes.io/managed-by": "tenantctl"}


def config_map(name: str, data: dict[str, str], labels: dict[str, str] | None = None) -> dict[str, object]:
    meta = {"name": name, "namespace": NAMESPACE, "labels": labels or {}}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def without_managed_fields(obj: dict[str, object] | None) -> dict[str, object]:
    assert obj is not None
    trimmed = copy.deepcopy(obj)
    meta = trimmed["metadata"]
    assert isinstance(meta, dict) and "managedFields" in meta, "the real server answers with managedFields"
    del meta["managedFields"]
    return trimmed


async def test_our_write_is_held_as_the_server_has_it_and_changes_by_others_arrive(
    management: ControlPlane, admin: Api
) -> None:
    admin.namespace(NAMESPACE)
    cache = WatchCache(owned=OURS)
    async with KubeClient(Connection.from_kubeconfig(management.admin_kubeconfig), cache=cache) as api:
        assert await api.list(CONFIG_MAPS, NAMESPACE, OURS) == []  # the store is listed and watched
        await api.apply(CONFIG_MAPS, config_map("ours", {"html": "<a href='x'>&</a>", "text": "ü"}, OURS))
        served = without_managed_fields(admin.get("v1", "ConfigMap", NAMESPACE, "ours"))
        assert cache.holds("v1", "configmaps", NAMESPACE, "ours") == served, "held at once, as served"
        assert await api.get(CONFIG_MAPS, "ours", NAMESPACE) == served
        for i in range(20):  # another controller's objects: events the store lets go by
            admin.apply(config_map(f"theirs-{i}", {"i": str(i)}))
        admin.merge("v1", "ConfigMap", NAMESPACE, "ours", {"data": {"more": "1"}})
        for _ in range(200):
            held = cache.holds("v1", "configmaps", NAMESPACE, "ours") or {}
            if (held.get("data") or {}).get("more") == "1":
                break
            await asyncio.sleep(0.05)
        assert held == without_managed_fields(admin.get("v1", "ConfigMap", NAMESPACE, "ours"))
        assert cache.holds("v1", "configmaps", NAMESPACE, "theirs-0") is None
        assert [m["metadata"]["name"] for m in await api.list(CONFIG_MAPS, NAMESPACE, OURS)] == ["ours"]

"""kopf keeps a handler's progress (a delete handler's retries) under its id in the object's annotations:
the ids stay what they were, whatever function registers the handlers."""

from __future__ import annotations

from tenantctl.operator.kube.client import Connection
from tenantctl.operator.runtime.handlers import OperatorContext, build_registry

STABLE_IDS = {
    "build_registry.<locals>.configure", "build_registry.<locals>.close", "build_registry.<locals>.login",
    "build_registry.<locals>.reconciler", "build_registry.<locals>.pool_deleted",
    "build_registry.<locals>.cluster_deleted", "platform_changed", "cluster_changed", "pool_changed",
}


def test_the_handlers_keep_their_ids() -> None:
    registry = build_registry(OperatorContext(Connection.from_server("http://127.0.0.1:1")))
    found = {h.id for r in (registry._changing, registry._spawning, registry._activities, registry._watching)
             for h in r.get_all_handlers()}
    assert found >= STABLE_IDS, sorted(STABLE_IDS - found)

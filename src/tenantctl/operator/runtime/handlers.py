"""The kopf side, by job: which events start which pass (`registration`), what a pass does around the
reconcile (`passes`), what every handler shares (`context`), what each shard's cache holds
(`cache_scope`). All behaviour of a pass lives in the phase modules (`operator/phases/reconcile.py`).

One daemon per TenantCluster runs the reconcile passes, so passes of one cluster never overlap
with each other; watch events (cheap, writing nothing) only wake it. The idle resync is the
daemon's timeout: it re-reads, compares, and writes nothing when nothing drifted.
"""

from __future__ import annotations

from tenantctl.operator.install.webhook import CLUSTER_WEBHOOK, POOL_WEBHOOK
from tenantctl.operator.runtime.cache_scope import (
    HELD_WHOLE,
    LIST_PAGE_SIZE,
    OWNED,
    inventory_of,
    named_as_tenants_of,
    other_controllers_objects_of,
    read_secrets_of,
    tenants_in_full_of,
)
from tenantctl.operator.runtime.context import PASSES_END_WITHIN, KopfRecorder, OperatorContext
from tenantctl.operator.runtime.kinds import (
    GROUP,
    KOPF_OBJECT_LOGGER,
    NODE_POOLS,
    TENANT_CLUSTERS,
    VERSION,
    WATCH_EVENT_HANDLERS,
)
from tenantctl.operator.runtime.passes import kamaji_release, run_pass
from tenantctl.operator.runtime.registration import NoDiffBase, build_registry, configure_kopf

__all__ = [
    "CLUSTER_WEBHOOK",
    "GROUP",
    "HELD_WHOLE",
    "KOPF_OBJECT_LOGGER",
    "LIST_PAGE_SIZE",
    "NODE_POOLS",
    "OWNED",
    "PASSES_END_WITHIN",
    "POOL_WEBHOOK",
    "TENANT_CLUSTERS",
    "VERSION",
    "WATCH_EVENT_HANDLERS",
    "KopfRecorder",
    "NoDiffBase",
    "OperatorContext",
    "build_registry",
    "configure_kopf",
    "inventory_of",
    "kamaji_release",
    "named_as_tenants_of",
    "other_controllers_objects_of",
    "read_secrets_of",
    "run_pass",
    "tenants_in_full_of",
]

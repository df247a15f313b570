"""Kubernetes quantities -> hypervisor units, and kubelet reservations derived from a pool's size."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from tenantctl.spec import NodePool
from tenantctl.spec.quantity import parse_quantity

__all__ = [
    "EVICTION",
    "EvictionThreshold",
    "KubeletReservations",
    "capmox_memory_mib",
    "eviction_config",
    "kubelet_reservations",
    "memory_mib",
    "num_cores",
]

_MIB = Decimal(2) ** 20


def num_cores(cpu: str | int | float) -> int:
    """Whole cores for a VM, rounded up: 1500m -> 2 (a VM cannot have half a core)."""
    return max(1, math.ceil(parse_quantity(cpu)))


def memory_mib(memory: str | int | float) -> int:
    """MiB for a VM, rounded up: 8G = 8e9 bytes -> 7630 MiB."""
    return max(1, math.ceil(parse_quantity(memory) / _MIB))


def capmox_memory_mib(memory: str | int | float) -> int:
    """`memory_mib` rounded up to a multiple of 8: capmox's CRD refuses anything else (8G -> 7632)."""
    return math.ceil(memory_mib(memory) / 8) * 8


@dataclass(frozen=True)
class KubeletReservations:
    system_cpu: str
    system_memory: str
    kube_cpu: str
    kube_memory: str


def _clamp(value: int, low: int, high: int) -> int:
    return min(max(value, low), high)


def kubelet_reservations(pool: NodePool) -> KubeletReservations:
    """5 % of the pool's memory and CPU, clamped to [256Mi, 1Gi] and [50m, 500m]; floors when unsized."""
    mem_mi, cpu_m = 256, 50
    if pool.spec.resources.memory is not None:
        mem_mi = _clamp(int(parse_quantity(pool.spec.resources.memory) / _MIB * Decimal("0.05")), 256, 1024)
    if pool.spec.resources.cpu is not None:
        cpu_m = _clamp(int(parse_quantity(pool.spec.resources.cpu) * 1000 * Decimal("0.05")), 50, 500)
    return KubeletReservations(f"{cpu_m}m", f"{mem_mi}Mi", f"{cpu_m}m", f"{mem_mi}Mi")


@dataclass(frozen=True)
class EvictionThreshold:
    """One kubelet eviction signal: hard (immediate) and soft (after `grace`) thresholds."""

    hard: str
    soft: str | None = None
    grace: str | None = None
    minimum_reclaim: str | None = None


# The worker kubelet's eviction, one row per signal (Cozystack `templates/talos/talos-reconcile-job.yaml`):
# a soft threshold, above its hard one, evicts only after a 90 s breach; the minimum reclaim keeps the
# kubelet from stopping just under the memory threshold and evicting again at once. The hard column is what
# a node's allocatable loses beyond its reservations (scale-from-zero capacity reads it from here).
EVICTION: dict[str, EvictionThreshold] = {
    "memory.available": EvictionThreshold(hard="7%", soft="10%", grace="1m30s", minimum_reclaim="256Mi"),
    "nodefs.available": EvictionThreshold(hard="10%", soft="15%", grace="1m30s"),
    "imagefs.available": EvictionThreshold(hard="15%", soft="20%", grace="1m30s"),
    "nodefs.inodesFree": EvictionThreshold(hard="5%"),
}


# KubeletConfiguration field <- the EvictionThreshold column that fills it.
_EVICTION_FIELDS = (
    ("evictionHard", "hard"),
    ("evictionSoft", "soft"),
    ("evictionSoftGracePeriod", "grace"),
    ("evictionMinimumReclaim", "minimum_reclaim"),
)


def eviction_config() -> dict[str, dict[str, str]]:
    """The KubeletConfiguration eviction fields, each a map of the signals that have a value in its column."""
    config: dict[str, dict[str, str]] = {}
    for field, column in _EVICTION_FIELDS:
        values = {signal: value for signal, t in EVICTION.items() if (value := getattr(t, column)) is not None}
        if values:
            config[field] = values
    return config

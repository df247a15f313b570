"""Which operator shard owns a tenant: a hash of `namespace/name`, so no shard asks another.

Every replica computes the same answer from the name alone (SHA-256, first 8 bytes, modulo the
shard count), so shards need no lease or lock between them; a NodePool belongs to the shard of the
TenantCluster it names. Changing the shard count moves tenants between shards: the new owner takes
each tenant's finalizer over (`finalizers`). The replicas of one shard share its kopf peering object,
named here once for `tenantctl install` and for the operator's own check of `--peering`.

The owner also writes its name on the tenant as the label `tenantctl.io/shard: I-of-N`, and a shard's
watches select that label on the server: a shard never receives, decodes or keeps another shard's
TenantClusters and NodePools (`runtime/claims`). The single shard selects nothing and labels nothing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["ALL", "SHARD_LABEL", "Shard", "ShardError", "peering_name", "peering_priority", "peering_shard",
           "shard_of"]

SHARD_LABEL = "tenantctl.io/shard"
"""On each TenantCluster and NodePool of a sharded operator: the shard (`I-of-N`) that owns it now."""

_SPEC = re.compile(r"([0-9]+)/([0-9]+)")
_ORDINAL = re.compile(r"-([0-9]+)$")
_PEERING_PREFIX = "tenantctl-operator-shard"
_PEERING = re.compile(rf"{_PEERING_PREFIX}-([0-9]+)-of-([0-9]+)")


class ShardError(ValueError):
    pass


def shard_of(namespace: str, name: str, count: int) -> int:
    """The shard index of the tenant `namespace/name` among `count` shards."""
    digest = hashlib.sha256(f"{namespace}/{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (0-based); the single shard 0/1 owns every tenant."""

    index: int = 0
    count: int = 1

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`I/N` with 0 <= I < N, as `--shard` takes it: exactly, a stray newline is a templating slip."""
        if text != text.strip():
            raise ShardError(f"{text!r} has leading or trailing whitespace; I/N alone (e.g. 0/2)")
        match = _SPEC.fullmatch(text)
        if match is None:
            raise ShardError(f"{text!r} is not I/N (e.g. 0/2: the first of two shards)")
        index, count = int(match[1]), int(match[2])
        if count < 1 or index >= count:
            raise ShardError(f"{text!r}: the index must be at least 0 and below the count (which is at least 1)")
        return cls(index, count)

    def owns(self, namespace: str, name: str) -> bool:
        return self.count == 1 or shard_of(namespace, name, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def label(self) -> str:
        """This shard's value of `SHARD_LABEL`: the layout is in it, so two layouts never select one tenant."""
        return f"{self.index}-of-{self.count}"

    @property
    def selector(self) -> str:
        """What this shard's watches of TenantClusters and NodePools select on the server ("": all)."""
        return "" if self.count == 1 else f"{SHARD_LABEL}={self.label}"

    @property
    def unlabelled(self) -> str:
        """Tenants no shard of any layout has claimed yet: what a shard claims the moment they appear."""
        return f"!{SHARD_LABEL}"

    @property
    def elsewhere(self) -> str:
        """Tenants not labelled for this layout (unlabelled, or another layout's): what the sweep claims."""
        values = ",".join(Shard(i, self.count).label for i in range(self.count))
        return f"{SHARD_LABEL} notin ({values})"

    def labelled(self, labels: Mapping[str, str] | None) -> bool:
        """Whether an object's labels name this shard (the single shard, which labels nothing, holds all)."""
        return self.count == 1 or (labels or {}).get(SHARD_LABEL) == self.label


ALL = Shard()


def peering_name(shard: Shard) -> str:
    """The kopf peering object of one shard's replicas: shards of one layout, and layouts, never share one."""
    return f"{_PEERING_PREFIX}-{shard.index}-of-{shard.count}"


def peering_shard(name: str) -> Shard | None:
    """The shard a tenantctl peering name belongs to; None for a name of someone else's choosing."""
    match = _PEERING.fullmatch(name)
    if match is None or int(match[1]) >= int(match[2]):
        return None
    return Shard(int(match[1]), int(match[2]))


def peering_priority(pod_name: str | None) -> int:
    """The kopf peering priority of a StatefulSet replica: ordinal 0 highest, the others standing by.

    kopf pauses an operator that sees a live peer of higher priority and lets equal priorities run
    side by side, so replicas of one shard need distinct priorities: the pod ordinal gives them.
    """
    match = _ORDINAL.search(pod_name or "")
    return -int(match[1]) if match else 0

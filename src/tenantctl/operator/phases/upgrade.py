"""Upgrade in the order Kamaji and Kubernetes allow: the control plane, then one pool at a time.

Kubernetes' skew policy forbids a kubelet newer than the apiserver, and a pool rolled over an unhealthy
one can take a tenant's capacity down, so a version change is applied in stages:

1. the KamajiControlPlane alone moves to the target; every live pool stays on what it runs;
2. once the control plane reports the target with every replica ready, the pools move one at a time,
   in name order; the next waits until the previous MachineDeployment has every replica updated and
   available (its own maxSurge/maxUnavailable apply inside it);
3. a pool whose MachineHealthCheck is remediating, or whose rollout outlives `pool_rollout_timeout`,
   stops the sequence there with a reason — the pools after it are not touched.

No tenantctl add-on's chart depends on the Kubernetes minor today, so nothing waits for the pools; a
release that did would belong after them.

Every decision is derived from the live objects (what each MachineDeployment and the control plane
run and report), so an operator killed mid-upgrade resumes where the cluster is, not where it was.
Only the stage's start time is kept in the status, to bound a stall. A held pool is rendered at the
versions it runs: its objects are those of the render at its own versions, not the target's.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from tenantctl.render.meta import POOL_LABEL, TALOS_VERSION_ANNOTATION
from tenantctl.spec.compat import installed_patch
from tenantctl.spec.versions import patch_key

__all__ = ["LiveState", "PoolState", "Stage", "UpgradeDecision", "Versions", "decide", "live_state", "same_patch"]

Obj = Mapping[str, Any]


class Stage(StrEnum):
    CONTROL_PLANE = "ControlPlane"
    """The KamajiControlPlane moves to the target; no pool moves until it reports it, ready."""
    POOL = "Pool"
    """One pool rolls to the target; the pools after it wait."""


@dataclass(frozen=True)
class Versions:
    """What a part of the tenant runs, or is to run: a Kubernetes patch and a Talos version."""

    kubernetes: str
    talos: str

    def as_status(self) -> dict[str, str]:
        return {"kubernetes": self.kubernetes, "talos": self.talos}


@dataclass(frozen=True)
class PoolState:
    """One pool's MachineDeployment as the management cluster holds it."""

    running: Versions
    replicas: int
    updated: int
    available: int
    settled: bool
    """The MachineDeployment's controller has seen its latest spec (observedGeneration)."""
    remediating: str | None = None
    """Why its MachineHealthCheck is replacing machines, or None."""

    @property
    def rolled_out(self) -> bool:
        return self.settled and self.updated >= self.replicas and self.available >= self.replicas


@dataclass(frozen=True)
class LiveState:
    control_plane: str | None
    """The KamajiControlPlane's spec.version (None: no control plane yet: a new tenant)."""
    reported: str | None = None
    """The version the control plane reports running (status.version)."""
    control_plane_ready: bool = False
    control_plane_replicas: tuple[int, int] = (0, 0)
    """(ready, wanted) apiserver replicas."""
    pools: Mapping[str, PoolState] = field(default_factory=dict)


@dataclass(frozen=True)
class UpgradeDecision:
    """What this pass applies of an upgrade, and what it waits for; `stage` None: nothing to upgrade."""

    target: Versions
    stage: Stage | None = None
    pool: str | None = None
    waiting: str = ""
    held: Mapping[str, Versions] = field(default_factory=dict)
    """Pools rendered at these versions instead of the target's this pass."""
    stalled: str | None = None
    """Set when the sequence stops: a remediating or timed-out pool (Ready=False)."""
    remaining: tuple[str, ...] = ()
    """Pools still to roll after the current stage, in order."""
    created: bool = True
    """False for a tenant with no control plane yet: it is created at the target, nothing runs to report."""

    @property
    def upgrading(self) -> bool:
        return self.stage is not None


def same_patch(a: str | None, b: str) -> bool:
    """Whether version `a` is patch `b` (`v1.33.13` and `v1.33.13` alike; None: nothing runs)."""
    return a is not None and patch_key(a) == patch_key(b)


def _pool_state(md: Obj, mhc: Obj | None, talos_default: str) -> PoolState:
    meta, spec, status = md.get("metadata") or {}, md.get("spec") or {}, md.get("status") or {}
    template = (spec.get("template") or {}).get("spec") or {}
    talos = (meta.get("annotations") or {}).get(TALOS_VERSION_ANNOTATION) or talos_default
    replicas = int(spec["replicas"] if spec.get("replicas") is not None else status.get("replicas") or 0)
    generation, observed = meta.get("generation"), status.get("observedGeneration")
    settled = generation is None or (observed is not None and int(observed) >= int(generation))
    remediating = None
    if mhc is not None:
        health = mhc.get("status") or {}
        expected, healthy = health.get("expectedMachines"), health.get("currentHealthy")
        if expected is not None and healthy is not None and int(healthy) < int(expected):
            remediating = f"its MachineHealthCheck sees {healthy}/{expected} machines healthy"
    return PoolState(
        running=Versions(str(template.get("version") or ""), str(talos)),
        replicas=replicas,
        updated=int(status.get("updatedReplicas") or 0),
        available=int(status.get("availableReplicas") or 0),
        settled=settled,
        remediating=remediating,
    )


def _versions_key(v: Versions) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Oldest first; a version that does not parse (a MachineDeployment without one) sorts first."""
    def key(version: str) -> tuple[int, int, int]:
        try:
            return patch_key(version)
        except (ValueError, IndexError):
            return (-1, -1, -1)

    return key(v.kubernetes), key(v.talos)


def _combined(states: Sequence[PoolState]) -> PoolState:
    """A spread pool is several MachineDeployments rolled as one: it has rolled out when all have, and
    runs the oldest versions any of them runs (so a group left behind is rolled, never skipped)."""
    if len(states) == 1:
        return states[0]
    remediating = "; ".join(s.remediating for s in states if s.remediating) or None
    return PoolState(
        running=min((s.running for s in states), key=_versions_key),
        replicas=sum(s.replicas for s in states),
        updated=sum(s.updated for s in states),
        available=sum(s.available for s in states),
        settled=all(s.settled for s in states),
        remediating=remediating,
    )


def live_state(
    control_plane: Obj | None,
    machine_deployments: Sequence[Obj],
    health_checks: Sequence[Obj],
    talos_default: str,
) -> LiveState:
    """Read what runs from the live KamajiControlPlane, MachineDeployments and MachineHealthChecks.

    A MachineDeployment rendered before it carried the Talos annotation counts as running
    `talos_default` (the spec's): its pool is then not rolled for Talos alone.
    """
    def pool_of(obj: Obj) -> str:
        return str(((obj.get("metadata") or {}).get("labels") or {}).get(POOL_LABEL) or "")

    def name_of(obj: Obj) -> str:
        return str((obj.get("metadata") or {}).get("name") or "")

    # A MachineHealthCheck is named as the MachineDeployment it watches (one per node group when spread).
    checks = {name_of(c): c for c in health_checks if pool_of(c)}
    groups: dict[str, list[PoolState]] = {}
    for md in sorted(machine_deployments, key=name_of):
        if pool_of(md):
            groups.setdefault(pool_of(md), []).append(_pool_state(md, checks.get(name_of(md)), talos_default))
    pools = {pool: _combined(states) for pool, states in groups.items()}
    if control_plane is None:
        return LiveState(None, pools=pools)
    spec, status = control_plane.get("spec") or {}, control_plane.get("status") or {}
    wanted = int(spec.get("replicas") or status.get("replicas") or 1)
    return LiveState(
        control_plane=str(spec.get("version") or "") or None,
        reported=str(status.get("version") or "") or None,
        control_plane_ready=bool(status.get("ready")),
        control_plane_replicas=(int(status.get("readyReplicas") or 0), wanted),
        pools=pools,
    )


def _since(previous: Mapping[str, Any], stage: Stage, pool: str | None, target: Versions, now: datetime.datetime
           ) -> datetime.datetime:
    """When the current stage began: kept from the last pass's status while the stage is the same."""
    same = (previous.get("stage") == stage and previous.get("pool") == pool
            and previous.get("target") == target.as_status())
    if same and previous.get("since"):
        try:
            return datetime.datetime.fromisoformat(str(previous["since"]).replace("Z", "+00:00"))
        except ValueError:
            pass
    return now


def decide(
    version: str,
    talos: str,
    pools: Sequence[str],
    live: LiveState,
    timeout: float,
    previous: Mapping[str, Any] | None = None,
    now: datetime.datetime | None = None,
) -> tuple[UpgradeDecision, datetime.datetime | None]:
    """The stage this pass is in, the pools it holds back, and when the stage began (None: no stage).

    `version`/`talos` are the spec's; `pools` the tenant's pool names; `previous` the last
    `status.upgrade`. A tenant with no control plane yet is created at the target directly.
    """
    now = now or datetime.datetime.now(tz=datetime.UTC)
    previous = previous or {}
    target = Versions(installed_patch(version), talos)
    if live.control_plane is None:
        return UpgradeDecision(target, created=False), None
    order = sorted(pools)
    live_pools = [p for p in order if p in live.pools]
    behind = [p for p in live_pools if live.pools[p].running != target]
    same_target = previous.get("target") == target.as_status()
    cp_moving = not same_patch(live.control_plane, target.kubernetes)
    cp_done = _control_plane_done(live, target)
    # The control plane's stage: it moves, or pools wait for it to report the target, or (an upgrade of the
    # control plane alone) the stage it was in has not finished. A tenant just created is in no stage.
    if cp_moving or (behind and not cp_done) or (
        not cp_done and same_target and previous.get("stage") == Stage.CONTROL_PLANE
    ):
        joining = Versions(live.control_plane, target.talos)  # a new pool joins at what the apiserver runs
        holding = {p: live.pools[p].running if p in live.pools else joining for p in order}
        ready, wanted = live.control_plane_replicas
        waiting = (f"the control plane to report {target.kubernetes} with every apiserver ready "
                   f"(reports {live.reported or 'nothing yet'}, {ready}/{wanted} ready)")
        since = _since(previous, Stage.CONTROL_PLANE, None, target, now)
        return UpgradeDecision(target, Stage.CONTROL_PLANE, None, waiting, holding, None, tuple(behind)), since
    held: dict[str, Versions] = {}
    if not behind:
        # Every pool runs the target: the upgrade ends when the last one released has rolled out (a
        # pool merely scaling is no upgrade).
        last = previous.get("pool") if previous.get("stage") == Stage.POOL and same_target else None
        if last not in live.pools or live.pools[str(last)].rolled_out:
            return UpgradeDecision(target), None
        current = str(last)
    else:
        # The first pool not done (behind, or still rolling) is in flight; every later one behind waits.
        at = next(i for i, p in enumerate(live_pools)
                  if live.pools[p].running != target or not live.pools[p].rolled_out)
        current = live_pools[at]
        held = {p: live.pools[p].running for p in live_pools[at + 1:] if live.pools[p].running != target}
    remaining = tuple(p for p in live_pools if p in held)
    return _pool_stage(target, current, live.pools[current], held, remaining, timeout,
                       _since(previous, Stage.POOL, current, target, now), now)


def _pool_stage(target: Versions, current: str, state: PoolState, held: dict[str, Versions],
                remaining: tuple[str, ...], timeout: float, since: datetime.datetime, now: datetime.datetime
                ) -> tuple[UpgradeDecision, datetime.datetime | None]:
    """The pool stage: `current` rolls (or finishes its rollout, or stalls) while the pools after it wait."""
    if state.running != target:
        waiting = f"pool {current} to roll to {target.kubernetes} / Talos {target.talos} (just released)"
        return UpgradeDecision(target, Stage.POOL, current, waiting, held, None, remaining), since
    waiting = (f"pool {current} to finish its rollout ({state.updated}/{state.replicas} updated, "
               f"{state.available}/{state.replicas} available)")
    stalled = None
    if state.remediating is not None:
        stalled = f"pool {current} is being remediated: {state.remediating}; the pools after it wait"
    elif (now - since).total_seconds() > timeout:
        stalled = (f"pool {current} has not finished its rollout in {int(timeout)}s ({state.updated}/"
                   f"{state.replicas} updated, {state.available}/{state.replicas} available); "
                   "the pools after it wait")
    return UpgradeDecision(target, Stage.POOL, current, waiting, held, stalled, remaining), since


def _control_plane_done(live: LiveState, target: Versions) -> bool:
    ready, wanted = live.control_plane_replicas
    return same_patch(live.reported, target.kubernetes) and live.control_plane_ready and ready >= wanted

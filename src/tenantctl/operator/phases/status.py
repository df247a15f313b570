"""The status a pass writes, derived from its scope: every condition from a table, Ready from an explicit list.

`CONDITIONS` builds each condition a finished pass reports, in the order the status lists them; `READY_FROM`
names those Ready summarises (Cluster API's `SetSummary(..., WithConditions(...))`): True when each of them
that is reported is, else the first that is not, verbatim. A stalled upgrade makes Ready False whatever
they say. A pass stopped by a refusal or an API error reports only that, and keeps what the last finished
pass learnt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tenantctl.operator.phases.apply import ApplyResult
from tenantctl.operator.phases.conditions import ConditionType, Phase, Reason, condition, merge_conditions
from tenantctl.operator.phases.outcome import Next
from tenantctl.operator.phases.scope import Obj, PassResult, Scope, previous_condition
from tenantctl.operator.phases.upgrade import Stage, UpgradeDecision
from tenantctl.render.restore import RestorePhase

__all__ = ["CONDITIONS", "READY_FROM", "STATUS_KEYS", "result", "status_patch"]

# Keys of `.status` the operator owns; anything else there (kopf's progress) is left alone.
STATUS_KEYS = ("phase", "observedGeneration", "endpoint", "inventory", "versions", "upgrade", "pending", "conditions",
               "teardown", "restore", "backup")
KEPT_ON_A_STOPPED_PASS = ("inventory", "endpoint", "versions", "upgrade", "pending", "restore")
"""A pass that stops early keeps what the last complete one learnt: the kinds to prune, the address, ..."""

Builder = Callable[[Scope, "int | None"], "Obj | None"]


def _applied(scope: Scope, gen: int | None) -> Obj:
    assert scope.applied is not None
    return condition(ConditionType.APPLIED, True, Reason.APPLIED, _applied_message(scope.applied), gen)


def _credentials(scope: Scope, gen: int | None) -> Obj | None:
    creds = scope.credentials
    return None if creds is None else condition(ConditionType.CREDENTIALS_READY, creds.ok, creds.reason,
                                                creds.message, gen)


def _endpoint(scope: Scope, gen: int | None) -> Obj:
    assert scope.observation is not None
    obs = scope.observation
    ok = obs.observed is not None
    return condition(ConditionType.ENDPOINT_READY, ok,
                     Reason.ENDPOINT_READY if ok else (obs.waiting or Reason.WAITING_FOR_ENDPOINT), obs.message, gen)


def _bootstrapped(scope: Scope, gen: int | None) -> Obj:
    boot = scope.bootstrap
    ok = boot is not None and boot.done
    reason = Reason.BOOTSTRAPPED if ok else Reason.WAITING_FOR_TENANT_API
    return condition(ConditionType.TENANT_BOOTSTRAPPED, ok, reason,
                     boot.message if boot else "waiting for the apiserver endpoint", gen)


def _restored(scope: Scope, gen: int | None) -> Obj | None:
    state = scope.restore
    return None if state is None else condition(ConditionType.RESTORED, state.phase is RestorePhase.DONE,
                                                state.reason, state.message, gen)


def _flags(scope: Scope, gen: int | None) -> Obj | None:
    flags = scope.flags
    return None if flags is None else condition(ConditionType.APISERVER_FLAGS, flags.ok, flags.reason,
                                                flags.message, gen)


def _backup(scope: Scope, gen: int | None) -> Obj | None:
    check = scope.backup
    return None if check is None else condition(ConditionType.BACKUP_FRESH, check.fresh, check.reason,
                                                check.message, gen)


def _talos_api(scope: Scope, gen: int | None) -> Obj | None:
    talos = scope.talos_api
    return None if talos is None else condition(ConditionType.TALOS_API, talos.ok, talos.reason, talos.message, gen)


def _deprecated(scope: Scope, gen: int | None) -> Obj:
    found = scope.deprecated
    if not found:
        return condition(ConditionType.DEPRECATED, False, Reason.CURRENT_SPELLING, "no deprecated spelling", gen)
    return condition(ConditionType.DEPRECATED, True, Reason.DEPRECATED_SPELLING, "; ".join(found), gen)


def _upgrading(scope: Scope, gen: int | None) -> Obj | None:
    upgrade = scope.upgrade
    if upgrade is None or not upgrade.created:
        return None
    target = f"{upgrade.target.kubernetes} / Talos {upgrade.target.talos}"
    if not upgrade.upgrading:
        return condition(ConditionType.UPGRADING, False, Reason.UP_TO_DATE, f"everything runs {target}", gen)
    reason = (Reason.UPGRADE_STALLED if upgrade.stalled
              else Reason.UPGRADING_CONTROL_PLANE if upgrade.stage is Stage.CONTROL_PLANE else Reason.UPGRADING_POOL)
    then = f"; then pools {', '.join(upgrade.remaining)}" if upgrade.remaining else ""
    return condition(ConditionType.UPGRADING, True, reason, f"to {target}: waiting for {upgrade.waiting}{then}", gen)



CONDITIONS: tuple[tuple[ConditionType, Builder], ...] = (
    (ConditionType.APPLIED, _applied),
    (ConditionType.CREDENTIALS_READY, _credentials),
    (ConditionType.ENDPOINT_READY, _endpoint),
    (ConditionType.TENANT_BOOTSTRAPPED, _bootstrapped),
    (ConditionType.RESTORED, _restored),
    (ConditionType.DEPRECATED, _deprecated),
    (ConditionType.APISERVER_FLAGS, _flags),
    (ConditionType.BACKUP_FRESH, _backup),
    (ConditionType.TALOS_API, _talos_api),
    (ConditionType.UPGRADING, _upgrading),
)
"""Each condition of a finished pass, in the order the status lists them after Ready; None: not reported."""

READY_FROM: tuple[ConditionType, ...] = (
    ConditionType.APPLIED,
    ConditionType.CREDENTIALS_READY,
    ConditionType.ENDPOINT_READY,
    ConditionType.TENANT_BOOTSTRAPPED,
    ConditionType.RESTORED,
)
"""What Ready summarises. The others inform (a stale backup, a flag Kamaji left out) and never hold it."""


def _ready(reported: Mapping[ConditionType, Obj], gen: int | None) -> Obj:
    """True when each of READY_FROM that is reported is, else the first that is not, verbatim."""
    first = next((reported[t] for t in READY_FROM if t in reported and reported[t]["status"] != "True"), None)
    if first is None:
        return condition(ConditionType.READY, True, Reason.RECONCILED, "all objects applied, tenant bootstrapped", gen)
    return condition(ConditionType.READY, False, Reason(first["reason"]), str(first["message"]), gen)


def result(scope: Scope) -> PassResult:
    gen = scope.generation
    status: Obj = {"observedGeneration": gen} if gen is not None else {}
    for kept in KEPT_ON_A_STOPPED_PASS:
        if kept in scope.current_status:
            status[kept] = scope.current_status[kept]
    conditions: list[Obj]
    if scope.refusal is not None:
        status["phase"] = Phase.INVALID
        conditions = [condition(ConditionType.READY, False, Reason.INVALID_SPEC, scope.refusal, gen)]
        next_pass = Next.RESYNC
    elif scope.apply_error is not None:
        reason, message = scope.apply_error
        _keep_observed_generation(status, scope.current_status)
        status["phase"] = Phase.PROVISIONING if scope.current_status.get("phase") else Phase.PENDING
        conditions = [condition(ConditionType.READY, False, reason, message, gen),
                      condition(ConditionType.APPLIED, False, reason, message, gen)]
        next_pass = Next.BACKOFF
    else:
        conditions, next_pass = _finished(scope, status, gen)
    status["conditions"] = merge_conditions(scope.current_status.get("conditions") or [], conditions)
    return PassResult(status=status, pool_status=_pool_status(scope, status), next=next_pass)


def _keep_observed_generation(status: Obj, current: Mapping[str, Any]) -> None:
    """A pass that failed has not brought the status to this generation: `observedGeneration` stays what the
    last pass that finished wrote (Cluster API writes it only on success); a refusal is a finished verdict."""
    status.pop("observedGeneration", None)
    if current.get("observedGeneration") is not None:
        status["observedGeneration"] = current["observedGeneration"]


def _finished(scope: Scope, status: Obj, gen: int | None) -> tuple[list[Obj], Next]:
    """A pass that ran every phase: its conditions (Ready first), its status keys, when it comes back."""
    assert scope.applied is not None and scope.observation is not None
    reported = {t: c for t, build in CONDITIONS if (c := build(scope, gen)) is not None}
    upgrade = scope.upgrade
    stalled = upgrade.stalled if upgrade is not None else None
    ready = (condition(ConditionType.READY, False, Reason.UPGRADE_STALLED, stalled, gen) if stalled
             else _ready(reported, gen))
    status["inventory"] = scope.applied.kinds
    status.pop("endpoint", None)
    if scope.observation.endpoint:
        status["endpoint"] = scope.observation.endpoint
    if scope.restore is not None:
        status["restore"] = scope.restore.status(scope.cluster) if scope.cluster is not None else {}
    if scope.backup is not None:
        status["backup"] = {"state": scope.backup.state}
    status.pop("upgrade", None)
    status.pop("pending", None)
    pending: Obj = {}
    if scope.pending is not None:
        pending |= {"kubernetes": scope.pending.pending, "reason": scope.pending.why}
    if scope.waiting_for_roll:
        pending["render"] = list(scope.waiting_for_roll)
    if pending:
        status["pending"] = pending
    if upgrade is not None and upgrade.created:
        status.update(_upgrade_status(scope, upgrade))
    is_ready = ready["status"] == "True"
    status["phase"] = Phase.READY if is_ready else Phase.PROVISIONING
    return [ready, *reported.values()], _next(scope, is_ready)


def _next(scope: Scope, ready: bool) -> Next:
    upgrade = scope.upgrade
    upgrading = upgrade is not None and upgrade.upgrading
    if upgrading and not (upgrade is not None and upgrade.stalled):
        return Next.POLL
    restoring = scope.restore
    if restoring is not None and restoring.phase is not RestorePhase.FAILED and (
            scope.restore_phase is not RestorePhase.DONE):
        # The Job's and Kamaji's progress wake no pass; and the pass that reaches Done rendered with the
        # controllers still held, so one more releases them.
        return Next.POLL
    return Next.BACKOFF if not ready or upgrading else Next.RESYNC


def _upgrade_status(scope: Scope, upgrade: UpgradeDecision) -> Obj:
    """`versions`: what runs where; `upgrade`: the stage in progress (absent when none)."""
    out: Obj = {"versions": scope.running} if scope.running else {}
    if upgrade.upgrading:
        stage: Obj = {"target": upgrade.target.as_status(), "stage": str(upgrade.stage), "waiting": upgrade.waiting}
        if upgrade.pool:
            stage["pool"] = upgrade.pool
        if upgrade.remaining:
            stage["remaining"] = list(upgrade.remaining)
        if scope.upgrade_since:
            stage["since"] = scope.upgrade_since
        if upgrade.stalled:
            stage["stalled"] = upgrade.stalled
        out["upgrade"] = stage
    return out


def _applied_message(applied: ApplyResult) -> str:
    return f"{len(applied.kinds)} kinds in the inventory"


def _pool_status(scope: Scope, cluster_status: Mapping[str, Any]) -> dict[str, Obj]:
    ready = previous_condition(cluster_status, ConditionType.READY)
    out: dict[str, Obj] = {}
    for body in scope.pool_bodies:
        meta = body.get("metadata", {})
        gen = meta.get("generation")
        cond = condition(
            ConditionType.READY,
            ready.get("status") == "True",
            Reason(ready.get("reason", Reason.RECONCILED)),
            str(ready.get("message", "")),
            int(gen) if gen is not None else None,
        )
        current = body.get("status") or {}
        pool: Obj = {"observedGeneration": gen}
        if scope.apply_error is not None:
            _keep_observed_generation(pool, current)
        out[meta["name"]] = {
            **pool,
            "phase": cluster_status.get("phase"),
            "conditions": merge_conditions(current.get("conditions") or [], [cond]),
        }
    return out


def status_patch(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> Obj | None:
    """The merge patch from `current` to `wanted` over the operator's keys, or None when equal."""
    patch: Obj = {}
    for key in STATUS_KEYS:
        if current.get(key) != wanted.get(key):
            patch[key] = wanted.get(key)
    return patch or None

"""The phases of the reconcile table that each hand one module its part of the scope.

Each reads what earlier phases put in the scope and fills its own field; a finding worth an Event is
announced once per change (`outcome.announce`), compared with what the last pass's status recorded.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from tenantctl.operator.phases.apiserver_flags import check_flags
from tenantctl.operator.phases.backup_freshness import backup_freshness
from tenantctl.operator.phases.bootstrap import bootstrap_tenant
from tenantctl.operator.phases.conditions import ConditionType, Reason
from tenantctl.operator.phases.credentials import check_credentials
from tenantctl.operator.phases.observe import ensure_talos_secrets, observe
from tenantctl.operator.phases.outcome import announce
from tenantctl.operator.phases.restore import advance, current_phase, refuse_foreign_source, refuse_live_source
from tenantctl.operator.phases.rights import closed_namespace
from tenantctl.operator.phases.scope import Obj, Scope, previous_condition
from tenantctl.operator.phases.talos_api import publish_trustd
from tenantctl.problems import InvalidInput
from tenantctl.render.restore import RestorePhase
from tenantctl.spec import parse_tenant_documents
from tenantctl.spec.deprecations import DEPRECATIONS

__all__ = ["announce_credentials", "apiserver_flags", "backup", "bootstrap", "credentials", "observe_tenant",
           "platform", "refuse", "restore", "restore_source", "rights", "talos_secrets", "trustd", "validate"]

_TALOS_API_WARNINGS = frozenset({Reason.KAMAJI_TOO_OLD, Reason.KAMAJI_MISSING})


async def platform(scope: Scope) -> None:
    """A refused Platform renders nothing for any tenant (its own status says why; no Event per tenant)."""
    if scope.platform.refusal is not None:
        scope.refusal = f"the Platform is refused, nothing is rendered until it is fixed: {scope.platform.refusal}"


async def validate(scope: Scope) -> None:
    try:
        tenant = parse_tenant_documents(_documents(scope.body, scope.pool_bodies))
    except InvalidInput as exc:
        refuse(scope, exc)
        return
    scope.cluster = tenant.clusters[0]
    scope.pools = tenant.pools_of(scope.cluster)
    scope.deprecated = tuple(str(w) for w in tenant.warnings if any(row.id in w.message for row in DEPRECATIONS))


def _documents(body: Mapping[str, Any], pools: Sequence[Mapping[str, Any]]) -> list[Obj]:
    """The objects as the user wrote them: `parse_tenant_documents` strips server fields itself."""
    return [dict(body), *(dict(p) for p in pools)]


def refuse(scope: Scope, exc: InvalidInput) -> None:
    """The pass stops as `Ready=False/InvalidSpec`; the refusal is posted once per change of its text."""
    scope.refusal = "; ".join(str(p) for p in exc.errors)
    previous = previous_condition(scope.current_status, ConditionType.READY)
    announce(scope.recorder, (previous.get("reason"), previous.get("message")), (Reason.INVALID_SPEC, scope.refusal),
             str(Reason.INVALID_SPEC), scope.refusal, warning=True)


async def rights(scope: Scope) -> None:
    """A namespace not opened to the operator stops the pass before its first write, saying how to open it."""
    assert scope.cluster is not None
    if scope.identity is not None:
        closed = await closed_namespace(scope.api, scope.cluster.metadata.namespace, scope.identity)
        if closed is not None:
            scope.apply_error = (Reason.NAMESPACE_CLOSED, closed)


async def restore_source(scope: Scope) -> None:
    """spec.restore: the phase this pass renders for; while importing, a live source is refused."""
    assert scope.cluster is not None
    scope.restore_phase = current_phase(scope.cluster, scope.current_status)
    if scope.restore_phase is RestorePhase.IMPORTING:
        refuse_foreign_source(scope.cluster, scope.platform.restore_across_namespaces)
        await refuse_live_source(scope.api, scope.cluster)


async def talos_secrets(scope: Scope) -> None:
    assert scope.cluster is not None
    scope.talos = await ensure_talos_secrets(scope.api, scope.cluster, scope.recorder)


async def observe_tenant(scope: Scope) -> None:
    """The endpoint and CAs Kamaji and the cloud wrote (the render of the add-ons waits for them)."""
    assert scope.cluster is not None and scope.talos is not None
    scope.observation = await observe(scope.api, scope.cluster, scope.talos, scope.settings.management_cluster_domain)


async def restore(scope: Scope) -> None:
    """spec.restore only: advance it one step; each phase it reaches is announced once, a failure as a warning."""
    if scope.restore_phase is None:
        return
    assert scope.cluster is not None
    recorded = str((scope.current_status.get("restore") or {}).get("message") or "")
    scope.restore = state = await advance(scope.api, scope.cluster, scope.restore_phase, scope.settings,
                                          scope.tenant_clients, recorded)
    before = (scope.current_status.get("restore") or {}).get("phase")
    announce(scope.recorder, before, state.phase, str(state.reason), state.message,
             warning=state.phase is RestorePhase.FAILED)


async def credentials(scope: Scope) -> None:
    assert scope.cluster is not None
    scope.credentials = await check_credentials(scope.api, scope.cluster)


async def backup(scope: Scope) -> None:
    assert scope.cluster is not None
    scope.backup = await backup_freshness(scope.api, scope.cluster, datetime.datetime.now(tz=datetime.UTC))


async def apiserver_flags(scope: Scope) -> None:
    assert scope.cluster is not None
    reported = bool(previous_condition(scope.current_status, ConditionType.APISERVER_FLAGS))
    scope.flags = await check_flags(scope.api, scope.cluster, scope.kamaji_release, reported)


async def announce_credentials(scope: Scope) -> None:
    """A Secret finding is posted once as a warning Event, when it first appears or changes: only once the
    guarded phases succeeded, since a pass that stops early does not record the condition it compares with."""
    check = scope.credentials
    if check is None or check.ok:
        return
    previous = previous_condition(scope.current_status, ConditionType.CREDENTIALS_READY)
    announce(scope.recorder, (previous.get("reason"), previous.get("message")), (check.reason, check.message),
             str(check.reason), check.message, warning=True)


async def trustd(scope: Scope) -> None:
    """The trustd port on the TenantControlPlane: applied is an info Event each time; a Kamaji without the
    field a warning once per change of reason."""
    assert scope.cluster is not None
    result = scope.talos_api = await publish_trustd(scope.api, scope.cluster, scope.kamaji)
    if result.applied:
        scope.recorder.info(str(Reason.TRUSTD_PUBLISHED), f"applied {result.message}")
    elif result.reason in _TALOS_API_WARNINGS:
        previous = previous_condition(scope.current_status, ConditionType.TALOS_API)
        announce(scope.recorder, previous.get("reason"), result.reason, str(result.reason), result.message,
                 warning=True)


async def bootstrap(scope: Scope) -> None:
    """The tenant's own objects, once its apiserver has an endpoint and no restore holds it."""
    assert scope.cluster is not None and scope.observation is not None
    observed = scope.observation.observed
    if observed is not None and scope.restore_phase in (None, RestorePhase.DONE):
        scope.bootstrap = await bootstrap_tenant(scope.api, scope.cluster, observed, scope.settings,
                                                 scope.tenant_clients, scope.platform.images)

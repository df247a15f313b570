"""One reconcile pass of a TenantCluster, as a list of phases over a scope; status is built at the end.

validate → Talos secrets → observe (endpoint, CAs) → upgrade stage (what runs where) → render, holding
pools back while the control plane or an earlier pool upgrades → apply + prune → capmox credentials
→ trustd port on the TenantControlPlane → tenant bootstrap.
A refusal stops at validate and becomes `Ready=False/InvalidSpec`; it never raises, so nothing loops.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.kube.client import APIError, KubeClient
from tenantctl.operator.kube.tenants import TenantClients
from tenantctl.operator.phases.apiserver_flags import FlagsCheck, check_flags
from tenantctl.operator.phases.apply import (
    ApplyResult,
    MissingAPIError,
    Verified,
    apply_inventory,
    apply_shared,
    still_verified,
)
from tenantctl.operator.phases.backup_freshness import BackupCheck, backup_freshness
from tenantctl.operator.phases.bootstrap import BootstrapResult, bootstrap_tenant
from tenantctl.operator.phases.conditions import ConditionType, Phase, Reason, condition, merge_conditions
from tenantctl.operator.phases.credentials import CredentialsCheck, check_credentials
from tenantctl.operator.phases.derived import DerivedJudge
from tenantctl.operator.phases.events import Recorder
from tenantctl.operator.phases.live_pins import (
    effective_version,
    keep_live_templates,
    live_refs,
    pool_of,
    swap_pools,
)
from tenantctl.operator.phases.observe import Observation, ensure_talos_secrets, observe
from tenantctl.operator.phases.platform import PlatformSettings
from tenantctl.operator.phases.restore import RestoreState, advance, current_phase, refuse_live_source
from tenantctl.operator.phases.talos_api import KamajiSchema, TalosAPIResult, publish_trustd
from tenantctl.operator.phases.upgrade import Stage, UpgradeDecision, Versions, decide, live_state
from tenantctl.problems import InvalidInput
from tenantctl.render import Names, cluster_labels, render_cluster
from tenantctl.render.capi import CAPI_API
from tenantctl.render.chart_sources import ChartSourcesSpec, render_chart_sources
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.kamaji import KAMAJI_API
from tenantctl.render.levels import LEVELS
from tenantctl.render.restore import RestorePhase, hold_for_restore
from tenantctl.render.tenant import charts_used
from tenantctl.spec import NodePool, ObservedState, TenantCluster, parse_tenant_documents
from tenantctl.spec.compat import DEFAULT_KAMAJI, KamajiRelease
from tenantctl.spec.deprecations import DEPRECATIONS
from tenantctl.spec.patch_policy import PatchChoice

__all__ = ["PassResult", "Scope", "reconcile", "status_patch"]

Obj = dict[str, Any]
_TALOS_API_WARNINGS = frozenset({Reason.KAMAJI_TOO_OLD, Reason.KAMAJI_MISSING})
# Keys of `.status` the operator owns; anything else there (kopf's progress) is left alone.
STATUS_KEYS = ("phase", "observedGeneration", "endpoint", "inventory", "versions", "upgrade", "pending", "conditions",
               "teardown", "restore", "backup")


@dataclass
class Scope:
    """Everything one pass works on; phases read and fill it, the status is derived from it."""

    api: KubeClient
    settings: OperatorSettings
    recorder: Recorder
    body: Mapping[str, Any]
    pool_bodies: Sequence[Mapping[str, Any]]
    cluster: TenantCluster | None = None
    pools: tuple[NodePool, ...] = ()
    refusal: str | None = None
    observation: Observation | None = None
    applied: ApplyResult | None = None
    apply_error: tuple[Reason, str] | None = None
    bootstrap: BootstrapResult | None = None
    credentials: CredentialsCheck | None = None
    talos_api: TalosAPIResult | None = None
    tenant_clients: TenantClients | None = None
    """The operator's open tenant clients (None: one client per pass)."""
    kamaji: KamajiSchema | None = None
    """The operator's shared verdict on the installed Kamaji (None: read it in this pass)."""
    derived: DerivedJudge | None = None
    """The operator's shared judge of what Cluster API builds from a render (None: read the CRDs now)."""
    kamaji_release: KamajiRelease = DEFAULT_KAMAJI
    """The management cluster's Kamaji release: which Kubernetes minors a tenant may run."""
    platform: PlatformSettings = field(default_factory=PlatformSettings)
    """The Platform's image and chart settings every object is rendered with (`render --platform`'s)."""
    upgrade: UpgradeDecision | None = None
    upgrade_since: str | None = None
    running: dict[str, Any] = field(default_factory=dict)
    """What runs where, for `status.versions`: the control plane's version and each pool's."""
    verified: Verified | None = None
    """The last pass's word that its render was in place (None: render and compare)."""
    deprecated: tuple[str, ...] = ()
    """The spec's deprecated spellings, as `path: warning` (spec.deprecations)."""
    pending: PatchChoice | None = None
    """A newer patch of the tenant's minor that its patch policy holds back (None: none)."""
    restore_phase: RestorePhase | None = None
    """spec.restore only: the phase this pass renders for (render/restore.py)."""
    restore: RestoreState | None = None
    """spec.restore only: the phase after this pass."""
    backup: BackupCheck | None = None
    """spec.backup only: whether the backups keep up with their schedule."""
    flags: FlagsCheck | None = None
    """A tenant with extra apiserver flags (or one whose status reports them): whether its running apiserver
    carries them, and none it dropped."""
    live_deployments: Sequence[Mapping[str, Any]] = ()
    """The tenant's MachineDeployments as this pass read them (their machine templates are kept)."""
    live_templates: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    """The machine templates those MachineDeployments name, by name (read before a render)."""
    waiting_for_roll: tuple[str, ...] = ()
    """Render changes a live pool's machine template waits with until the pool rolls anyway."""
    not_kept: tuple[str, ...] = ()
    """Pools whose live machine template this render does not keep, and why (said once applied)."""

    @property
    def generation(self) -> int | None:
        gen = self.body.get("metadata", {}).get("generation")
        return int(gen) if gen is not None else None

    @property
    def current_status(self) -> Mapping[str, Any]:
        return self.body.get("status") or {}


@dataclass(frozen=True)
class PassResult:
    status: Obj
    pool_status: dict[str, Obj] = field(default_factory=dict)
    requeue: bool = False
    poll: bool = False
    """An upgrade stage is in progress: come back at the plain requeue delay, never backing off to the
    resync (Kamaji's and CAPI's progress wakes no pass; a stage must not wait a minute for its check)."""


def _documents(body: Mapping[str, Any], pools: Sequence[Mapping[str, Any]]) -> list[Obj]:
    """The objects as the user wrote them: `parse_tenant_documents` strips server fields itself."""
    return [dict(body), *(dict(p) for p in pools)]


async def reconcile(scope: Scope) -> PassResult:
    if scope.platform.refusal is not None:
        scope.refusal = f"the Platform is refused, nothing is rendered until it is fixed: {scope.platform.refusal}"
        return _result(scope)
    if not _validate(scope):
        return _result(scope)
    assert scope.cluster is not None
    try:
        scope.restore_phase = current_phase(scope.cluster, scope.current_status)
        if scope.restore_phase is RestorePhase.IMPORTING:
            await refuse_live_source(scope.api, scope.cluster)
        talos = await ensure_talos_secrets(scope.api, scope.cluster, scope.recorder)
        scope.observation = await observe(
            scope.api, scope.cluster, talos, scope.settings.management_cluster_domain
        )
        await _upgrade_stage(scope)
        scope.applied = await _apply(scope)
        if scope.restore_phase is not None:
            recorded = str((scope.current_status.get("restore") or {}).get("message") or "")
            scope.restore = await advance(scope.api, scope.cluster, scope.restore_phase, scope.settings,
                                          scope.tenant_clients, recorded)
            _tell_restore(scope)
        if scope.observation.observed is not None:  # the add-ons, and so their sources, need the endpoint
            scope.applied.applied += await apply_shared(scope.api, _chart_sources(scope))
        scope.credentials = await check_credentials(scope.api, scope.cluster)
        scope.backup = await backup_freshness(scope.api, scope.cluster, datetime.datetime.now(tz=datetime.UTC))
        reported = bool(_condition(scope.current_status, ConditionType.APISERVER_FLAGS))
        scope.flags = await check_flags(scope.api, scope.cluster, scope.kamaji_release, reported)
    except InvalidInput as exc:
        _refuse(scope, exc)
        return _result(scope)
    except MissingAPIError as exc:
        scope.apply_error = (Reason.MISSING_API, str(exc))
        return _result(scope)
    except APIError as exc:
        scope.apply_error = (Reason.API_ERROR, str(exc))
        return _result(scope)
    _tell_credentials(scope)
    scope.talos_api = await publish_trustd(scope.api, scope.cluster, scope.kamaji)
    _tell_talos_api(scope)
    observed = scope.observation.observed
    if observed is not None and scope.restore_phase in (None, RestorePhase.DONE):
        scope.bootstrap = await bootstrap_tenant(
            scope.api, scope.cluster, observed, scope.settings, scope.tenant_clients, scope.platform.images
        )
    return _result(scope)


async def _upgrade_stage(scope: Scope) -> None:
    """Read what runs (control plane, each pool) and decide the stage; announce a new stage once."""
    assert scope.cluster is not None
    cluster, api = scope.cluster, scope.api
    names = Names(cluster)
    labels = cluster_labels(cluster.metadata.name)
    kcp_res = await api.resource(KAMAJI_API, "KamajiControlPlane")
    md_res = await api.resource(CAPI_API, "MachineDeployment")
    mhc_res = await api.resource(CAPI_API, "MachineHealthCheck")
    kcp = await api.get(kcp_res, names.control_plane, names.namespace, ours=True) if kcp_res is not None else None
    mds = await api.list(md_res, names.namespace, labels) if md_res is not None else []
    mhcs = await api.list(mhc_res, names.namespace, labels) if mhc_res is not None else []
    live = live_state(kcp, mds, mhcs, cluster.spec.talos.version)
    scope.live_deployments = mds
    _choose_patch(scope, live.control_plane)
    cluster = scope.cluster
    previous = scope.current_status.get("upgrade") or {}
    decision, since = decide(
        cluster.spec.version, cluster.spec.talos.version, [p.metadata.name for p in scope.pools], live,
        scope.settings.pool_rollout_timeout, previous,
    )
    scope.upgrade_since = since.strftime("%Y-%m-%dT%H:%M:%SZ") if since is not None else None
    if decision.created:
        # A pool without a MachineDeployment yet (new, or its create cut short by a restart) runs what
        # this pass creates it at: else the status would leave it out until the next resync.
        joining = {p.metadata.name: decision.held.get(p.metadata.name, decision.target).as_status()
                   for p in scope.pools if p.metadata.name not in live.pools}
        running = {name: state.running.as_status() for name, state in live.pools.items()}
        scope.running = {
            **({"controlPlane": live.reported or live.control_plane} if live.control_plane else {}),
            "pools": dict(sorted({**joining, **running}.items())),
        }
    else:
        # A new tenant: this pass creates every part at the target, so that is what the status says runs
        # (the next pass reads the same from the objects and writes nothing).
        decision = dataclasses.replace(decision, created=True)
        scope.running = {"controlPlane": decision.target.kubernetes,
                         "pools": {p.metadata.name: decision.target.as_status() for p in scope.pools}}
    scope.upgrade = decision
    stage = (decision.stage, decision.pool) if decision.upgrading else None
    before = (previous.get("stage"), previous.get("pool")) if previous.get("stage") else None
    if stage != before:
        if decision.stage is Stage.CONTROL_PLANE:
            scope.recorder.info(str(Reason.UPGRADING_CONTROL_PLANE),
                                f"control plane to {decision.target.kubernetes}; pools wait: "
                                f"{', '.join(decision.remaining) or 'none to roll'}")
        elif decision.stage is Stage.POOL:
            scope.recorder.info(str(Reason.UPGRADING_POOL),
                                f"pool {decision.pool} to {decision.target.kubernetes} / Talos "
                                f"{decision.target.talos}; then: {', '.join(decision.remaining) or 'done'}")
        elif before is not None:
            scope.recorder.info(str(Reason.UP_TO_DATE),
                                f"every part runs {decision.target.kubernetes} / Talos {decision.target.talos}")
    if decision.stalled and previous.get("stalled") != decision.stalled:
        scope.recorder.warn(str(Reason.UPGRADE_STALLED), decision.stalled)


def _choose_patch(scope: Scope, running: str | None) -> None:
    """Render at the patch the tenant's policy allows now (live_pins.effective_version)."""
    assert scope.cluster is not None
    scope.cluster, choice = effective_version(scope.cluster, running, scope.platform.patch_upgrades,
                                              datetime.datetime.now(tz=datetime.UTC))
    scope.pending = choice if choice.pending is not None else None
    before = (scope.current_status.get("pending") or {}).get("kubernetes")
    if scope.pending is not None and before != scope.pending.pending:
        scope.recorder.info(str(Reason.PATCH_PENDING), f"runs {choice.version}; {scope.pending.pending} waits: "
                                                       f"{scope.pending.why}")


async def _apply(scope: Scope) -> ApplyResult:
    """Render and apply, unless the last verified pass had these inputs and the inventory is as it saw it."""
    assert scope.cluster is not None and scope.observation is not None
    cluster, namespace = scope.cluster.metadata.name, scope.cluster.metadata.namespace
    previous_kinds, keep = scope.current_status.get("inventory") or [], _kept(scope)
    scope.live_templates = await _live_templates(scope)
    inputs = _render_inputs(scope, previous_kinds, keep)
    if await still_verified(scope.api, scope.verified, inputs, cluster=cluster, namespace=namespace):
        assert scope.verified is not None
        # The same inputs, live machine templates included, keep what the verified pass found waiting.
        scope.waiting_for_roll = tuple((scope.current_status.get("pending") or {}).get("render") or ())
        return ApplyResult(kinds=list(scope.verified.kinds), verified=scope.verified)
    objects = _render(scope, scope.observation.observed)
    await (scope.derived or DerivedJudge()).refuse(scope.api, objects)
    applied = await apply_inventory(
        scope.api,
        objects,
        cluster=cluster,
        namespace=namespace,
        previous_kinds=previous_kinds,
        keep=keep,
        recorder=scope.recorder,
        inputs=inputs,
    )
    for line in scope.not_kept:
        # Said once, after the apply that rolls the pool: the next pass renders what is live, so the pool
        # is no longer listed; a pass refused before its apply says nothing of a roll that did not happen.
        scope.recorder.info(str(Reason.TEMPLATE_NOT_KEPT), line)
    return applied


async def _live_templates(scope: Scope) -> dict[str, Mapping[str, Any]]:
    """The machine templates the live MachineDeployments run (ours, so the watch cache answers)."""
    found: dict[str, Mapping[str, Any]] = {}
    namespace = scope.cluster.metadata.namespace if scope.cluster is not None else None
    for md in scope.live_deployments:
        ref = ((((md.get("spec") or {}).get("template") or {}).get("spec") or {}).get("infrastructureRef")) or {}
        if not ref.get("name") or not ref.get("apiVersion") or not ref.get("kind"):
            continue
        res = await scope.api.resource(str(ref["apiVersion"]), str(ref["kind"]))
        live = await scope.api.get(res, str(ref["name"]), namespace, ours=True) if res is not None else None
        if live is not None:
            found[str(ref["name"])] = live
    return found


def _render_inputs(scope: Scope, previous_kinds: Sequence[str], keep: set[tuple[str, str]]) -> bytes:
    """A digest of everything `_render` and the prune read: the render is a pure function of these, so
    equal inputs render equal objects (the process's own code is fixed while its memory of them lives)."""
    assert scope.cluster is not None and scope.observation is not None
    digest = hashlib.blake2b(digest_size=16)
    observed = scope.observation.observed
    platform = scope.platform
    for model in (scope.cluster, *scope.pools, observed, platform.charts, platform.images):
        digest.update(model.model_dump_json().encode() if model is not None else b"null")
        digest.update(b"\0")
    # The upgrade's target is the cluster's spec (above); which pools it holds back is not.
    held = sorted(scope.upgrade.held.items()) if scope.upgrade is not None else []
    live = sorted(live_refs(scope.live_deployments).items())
    # Of the live templates the render reads only whether an unkept level marks them (render.levels).
    marked = sorted((name, tuple(row.marks(t) for row in LEVELS if not row.kept))
                    for name, t in scope.live_templates.items())
    digest.update(repr((scope.kamaji_release, held, live, marked, sorted(previous_kinds), sorted(keep))).encode())
    digest.update(repr(scope.restore_phase).encode())
    return digest.digest()


def _render(scope: Scope, observed: ObservedState | None) -> list[Obj]:
    """The target render, with each held pool's objects taken from a render at the versions it runs."""
    assert scope.cluster is not None
    cluster = scope.cluster
    charts, images = scope.platform.charts, scope.platform.images
    objects = render_cluster(cluster, scope.pools, observed, charts, images, kamaji=scope.kamaji_release)
    upgrade = scope.upgrade
    by_versions: dict[Versions, set[str]] = {}
    held, target = (upgrade.held, upgrade.target) if upgrade is not None else ({}, None)
    for pool, versions in held.items():
        # A pool whose running version is unknown yet (its template names none) is rendered at the target.
        if versions.kubernetes and versions != target:
            by_versions.setdefault(versions, set()).add(pool)
    rendered_at: dict[str, TenantCluster] = {}
    for versions, pools in by_versions.items():
        at_running = cluster.model_copy(update={"spec": cluster.spec.model_copy(update={
            "version": versions.kubernetes,
            "talos": cluster.spec.talos.model_copy(update={"version": versions.talos}),
        })})
        rendered_at |= dict.fromkeys(pools, at_running)
        old = [o for o in render_cluster(at_running, scope.pools, observed, charts, images, kamaji=scope.kamaji_release)
               if pool_of(o) in pools]
        objects = swap_pools(objects, pools, old)
    objects = _keep_live_templates(scope, objects, observed, rendered_at)
    return hold_for_restore(cluster, objects, scope.restore_phase, images or ImagesSpec())


def _tell_restore(scope: Scope) -> None:
    """Each restore phase is announced once, a failure as a warning."""
    state = scope.restore
    if state is None or (scope.current_status.get("restore") or {}).get("phase") == state.phase:
        return
    if state.phase is RestorePhase.FAILED:
        scope.recorder.warn(str(state.reason), state.message)
    else:
        scope.recorder.info(str(state.reason), state.message)


def _keep_live_templates(scope: Scope, objects: list[Obj], observed: ObservedState | None,
                         rendered_at: Mapping[str, TenantCluster]) -> list[Obj]:
    """A live pool whose machine template only this release's render changes keeps the one it runs."""
    assert scope.cluster is not None
    cluster = scope.cluster
    platform = scope.platform

    def render_pool(name: str, pools: Sequence[NodePool]) -> list[Obj]:
        return render_cluster(rendered_at.get(name, cluster), pools, observed, platform.charts, platform.images,
                              kamaji=scope.kamaji_release)

    kept = keep_live_templates(scope.pools, objects, scope.live_deployments, render_pool, scope.live_templates)
    scope.waiting_for_roll = kept.waiting
    scope.not_kept = kept.rolling
    return kept.objects


def _chart_sources(scope: Scope) -> list[Obj]:
    """The sources of this tenant's add-on charts, where the Platform says (`render --platform` renders them)."""
    assert scope.cluster is not None
    in_use = charts_used([scope.cluster], scope.platform.images or ImagesSpec())
    return render_chart_sources(scope.platform.charts or ChartSourcesSpec(), in_use)


def _validate(scope: Scope) -> bool:
    try:
        tenant = parse_tenant_documents(_documents(scope.body, scope.pool_bodies))
    except InvalidInput as exc:
        _refuse(scope, exc)
        return False
    scope.cluster = tenant.clusters[0]
    scope.pools = tenant.pools_of(scope.cluster)
    scope.deprecated = tuple(str(w) for w in tenant.warnings if any(row.id in w.message for row in DEPRECATIONS))
    return True


def _refuse(scope: Scope, exc: InvalidInput) -> None:
    scope.refusal = "; ".join(str(p) for p in exc.errors)
    previous = _condition(scope.current_status, ConditionType.READY)
    if previous.get("reason") != Reason.INVALID_SPEC or previous.get("message") != scope.refusal:
        scope.recorder.warn(str(Reason.INVALID_SPEC), scope.refusal)


def _tell_credentials(scope: Scope) -> None:
    """A Secret finding is posted once as a warning Event, when it first appears or changes."""
    check = scope.credentials
    if check is None or check.ok:
        return
    previous = _condition(scope.current_status, ConditionType.CREDENTIALS_READY)
    if previous.get("reason") != check.reason or previous.get("message") != check.message:
        scope.recorder.warn(str(check.reason), check.message)


def _tell_talos_api(scope: Scope) -> None:
    """An applied port is an info Event; a Kamaji without the field a warning, once per change."""
    result = scope.talos_api
    if result is None:
        return
    if result.applied:
        scope.recorder.info(str(Reason.TRUSTD_PUBLISHED), f"applied {result.message}")
        return
    previous = _condition(scope.current_status, ConditionType.TALOS_API)
    if result.reason in _TALOS_API_WARNINGS and previous.get("reason") != result.reason:
        scope.recorder.warn(str(result.reason), result.message)


def _kept(scope: Scope) -> set[tuple[str, str]]:
    """Never pruned: the Talos secrets, and TalosConfigTemplates while the endpoint is unknown."""
    assert scope.cluster is not None
    names = Names(scope.cluster)
    kept = {("Secret", names.talos_secrets)}
    if scope.observation is None or scope.observation.observed is None:
        kept |= {("TalosConfigTemplate", names.talos_config_template(p)) for p in scope.pools}
    return kept


def _condition(status: Mapping[str, Any], kind: ConditionType) -> Mapping[str, Any]:
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), {})


def _ready(conditions: Sequence[Mapping[str, Any]], ready: bool, gen: int | None) -> Obj:
    """Ready summarises the others: True when all are, else the first one that is not, verbatim."""
    if ready:
        return condition(ConditionType.READY, True, Reason.RECONCILED, "all objects applied, tenant bootstrapped", gen)
    first = next(c for c in conditions if c["status"] == "False")
    return condition(ConditionType.READY, False, Reason(first["reason"]), str(first["message"]), gen)


def _result(scope: Scope) -> PassResult:
    gen = scope.generation
    status: Obj = {"observedGeneration": gen} if gen is not None else {}
    # A pass that stops early keeps what the last complete one learnt: the kinds to prune, the address.
    for kept in ("inventory", "endpoint", "versions", "upgrade", "pending", "restore"):
        if kept in scope.current_status:
            status[kept] = scope.current_status[kept]
    conditions: list[Obj] = []
    requeue = poll = False
    if scope.refusal is not None:
        status["phase"] = Phase.INVALID
        conditions.append(condition(ConditionType.READY, False, Reason.INVALID_SPEC, scope.refusal, gen))
    elif scope.apply_error is not None:
        reason, message = scope.apply_error
        status["phase"] = Phase.PROVISIONING if scope.current_status.get("phase") else Phase.PENDING
        conditions.append(condition(ConditionType.READY, False, reason, message, gen))
        conditions.append(condition(ConditionType.APPLIED, False, reason, message, gen))
        requeue = True
    else:
        assert scope.applied is not None and scope.observation is not None
        obs, boot = scope.observation, scope.bootstrap
        status["inventory"] = scope.applied.kinds
        status.pop("endpoint", None)
        if obs.endpoint:
            status["endpoint"] = obs.endpoint
        conditions.append(condition(ConditionType.APPLIED, True, Reason.APPLIED, _applied_message(scope.applied), gen))
        creds = scope.credentials
        if creds is not None:
            conditions.append(condition(ConditionType.CREDENTIALS_READY, creds.ok, creds.reason, creds.message, gen))
        endpoint_ok = obs.observed is not None
        conditions.append(
            condition(
                ConditionType.ENDPOINT_READY,
                endpoint_ok,
                Reason.ENDPOINT_READY if endpoint_ok else (obs.waiting or Reason.WAITING_FOR_ENDPOINT),
                obs.message,
                gen,
            )
        )
        boot_ok = boot is not None and boot.done
        conditions.append(
            condition(
                ConditionType.TENANT_BOOTSTRAPPED,
                boot_ok,
                Reason.BOOTSTRAPPED if boot_ok else Reason.WAITING_FOR_TENANT_API,
                boot.message if boot else "waiting for the apiserver endpoint",
                gen,
            )
        )
        ready = endpoint_ok and boot_ok and (creds is None or creds.ok)
        restoring = scope.restore
        if restoring is not None:
            restored = restoring.phase is RestorePhase.DONE
            conditions.append(condition(ConditionType.RESTORED, restored, restoring.reason, restoring.message, gen))
            status["restore"] = restoring.status(scope.cluster) if scope.cluster is not None else {}
            ready = ready and restored
        upgrade = scope.upgrade
        stalled = upgrade.stalled if upgrade is not None else None
        if stalled:
            conditions.insert(0, condition(ConditionType.READY, False, Reason.UPGRADE_STALLED, stalled, gen))
        else:
            conditions.insert(0, _ready(conditions, ready, gen))
        conditions.append(_deprecated(scope.deprecated, gen))
        if scope.flags is not None:
            flags = scope.flags
            conditions.append(condition(ConditionType.APISERVER_FLAGS, flags.ok, flags.reason, flags.message, gen))
        if scope.backup is not None:
            check = scope.backup
            conditions.append(condition(ConditionType.BACKUP_FRESH, check.fresh, check.reason, check.message, gen))
            status["backup"] = {"state": check.state}
        if scope.talos_api is not None:
            talos = scope.talos_api
            conditions.append(condition(ConditionType.TALOS_API, talos.ok, talos.reason, talos.message, gen))
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
            conditions.append(_upgrading(upgrade, gen))
            status.update(_upgrade_status(scope, upgrade))
        ready = ready and not stalled
        status["phase"] = Phase.READY if ready else Phase.PROVISIONING
        requeue = not ready or (upgrade is not None and upgrade.upgrading)
        poll = upgrade is not None and upgrade.upgrading and not stalled
        if restoring is not None and restoring.phase is not RestorePhase.FAILED and (
                scope.restore_phase is not RestorePhase.DONE):
            # The Job's and Kamaji's progress wake no pass; and the pass that reaches Done rendered with the
            # controllers still held, so one more releases them.
            requeue = poll = True
    status["conditions"] = merge_conditions(scope.current_status.get("conditions") or [], conditions)
    return PassResult(status=status, pool_status=_pool_status(scope, status), requeue=requeue, poll=poll)


def _deprecated(found: Sequence[str], gen: int | None) -> Obj:
    if not found:
        return condition(ConditionType.DEPRECATED, False, Reason.CURRENT_SPELLING, "no deprecated spelling", gen)
    return condition(ConditionType.DEPRECATED, True, Reason.DEPRECATED_SPELLING, "; ".join(found), gen)


def _upgrading(upgrade: UpgradeDecision, gen: int | None) -> Obj:
    target = f"{upgrade.target.kubernetes} / Talos {upgrade.target.talos}"
    if not upgrade.upgrading:
        return condition(ConditionType.UPGRADING, False, Reason.UP_TO_DATE, f"everything runs {target}", gen)
    reason = (Reason.UPGRADE_STALLED if upgrade.stalled
              else Reason.UPGRADING_CONTROL_PLANE if upgrade.stage is Stage.CONTROL_PLANE else Reason.UPGRADING_POOL)
    then = f"; then pools {', '.join(upgrade.remaining)}" if upgrade.remaining else ""
    return condition(ConditionType.UPGRADING, True, reason, f"to {target}: waiting for {upgrade.waiting}{then}", gen)


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
    ready = _condition(cluster_status, ConditionType.READY)
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
        out[meta["name"]] = {
            "observedGeneration": gen,
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

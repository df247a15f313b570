"""`tenantctl plan`: what the operator would do with an input, object by object, without writing.

The render is the operator's (observations read live with its observe code) and the comparison is
its apply's (`covers` over `comparable`), so `no-op` here means the operator writes nothing.
A new content-hashed machine template is a `rotate`: every worker of its pool is replaced.
"""

from __future__ import annotations

import datetime
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any

from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.daytwo.address_capacity import address_warnings, machines_of
from tenantctl.operator.daytwo.backup import backup_line, last_backup
from tenantctl.operator.kube.client import KubeClient, Resource
from tenantctl.operator.phases.apply import REPLACE_ON_IMMUTABLE, comparable, covers, kind_key
from tenantctl.operator.phases.live_pins import effective_version, keep_live_templates
from tenantctl.operator.phases.observe import (
    Observation,
    decode_secret,
    generate_talos_secrets,
    observe,
    talos_secrets_from,
)
from tenantctl.operator.phases.upgrade import Versions, live_state, same_patch
from tenantctl.problems import Problems
from tenantctl.redaction import redact_diff_line
from tenantctl.render import Names, render_cluster
from tenantctl.render.kamaji import KAMAJI_API
from tenantctl.render.meta import NODE_GROUP_LABEL, POOL_LABEL, inventory_scope
from tenantctl.spec import NodePool, TenantCluster
from tenantctl.spec.checks import ref
from tenantctl.spec.compat import DEFAULT_KAMAJI, KamajiRelease, check_change_from_live, installed_patch
from tenantctl.spec.kamaji_flags import unapplied_change
from tenantctl.spec.patch_policy import PatchUpgrades

__all__ = ["Action", "Change", "TenantPlan", "observe_read_only", "plan_cluster", "upgrade_sequence"]

Obj = dict[str, Any]
GroupKey = tuple[str | None, str | None]
"""(pool, node group): None as the group stands for the whole pool."""
API = "tenantctl.io/v1alpha1"
DEFAULT_MANAGEMENT_DOMAIN = OperatorSettings.management_cluster_domain
_MACHINE_TEMPLATES = frozenset({"ProxmoxMachineTemplate", "KubevirtMachineTemplate"})
# Values of these kinds' data never reach a plan's output: a change is told, not shown.
_SECRET_KINDS = frozenset({"Secret"})


class Action(StrEnum):
    CREATE = "create"
    NOOP = "no-op"
    UPDATE = "update in place"
    REPLACE = "replace"
    ROTATE = "rotate"
    PRUNE = "prune"


@dataclass(frozen=True)
class Change:
    action: Action
    kind: str
    name: str
    diff: tuple[str, ...] = ()
    note: str = ""

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.name}"


@dataclass
class TenantPlan:
    namespace: str
    name: str
    changes: list[Change] = field(default_factory=list)
    spec_unchanged: bool = False
    waiting: str = ""
    rolling: list[str] = field(default_factory=list)
    """Pools whose live machine template this release does not keep, and why (`keep_live_templates`)."""
    upgrade: list[str] = field(default_factory=list)
    """The stages the operator would run, in order, with the workers each replaces (empty: none)."""
    capacity: list[str] = field(default_factory=list)
    """Live address pools that cannot cover what the input can claim (`address_capacity`)."""
    pending: dict[str, Any] = field(default_factory=dict)
    """What the operator holds back: a newer patch (`kubernetes`, `reason`), render changes (`render`)."""
    backup: dict[str, Any] = field(default_factory=dict)
    """The newest backup in the bucket and how many are kept (daytwo.backup.last_backup); {} without one."""
    restore: dict[str, Any] = field(default_factory=dict)
    """A restore's progress as the operator recorded it (status.restore)."""
    kamaji: list[str] = field(default_factory=list)
    """Changes the management cluster's Kamaji would not apply (spec.kamaji_flags)."""
    desired: list[Obj] = field(default_factory=list, repr=False)
    """The objects the operator would apply: `plan` judges them against the upstream CRDs before showing the diff."""

    @property
    def changed(self) -> bool:
        return any(c.action is not Action.NOOP for c in self.changes)

    @property
    def rotations(self) -> list[Change]:
        return [c for c in self.changes if c.action is Action.ROTATE]

    @property
    def rolls_without_spec_change(self) -> bool:
        """The release-catching case: nothing in the input changed, yet workers would be replaced."""
        return self.spec_unchanged and bool(self.rotations)

    def counts(self) -> dict[str, int]:
        return {a.value: n for a in Action if (n := sum(c.action is a for c in self.changes))}

    def data(self) -> Obj:
        out = asdict(replace(self, desired=[]))
        del out["desired"]
        out["changes"] = [{**asdict(c), "action": c.action.value, "diff": list(c.diff)} for c in self.changes]
        out["summary"] = self.counts()
        out["rollsWithoutSpecChange"] = self.rolls_without_spec_change
        return out


async def applied_management_domain(api: KubeClient, cluster: TenantCluster) -> str | None:
    """The management cluster domain the operator rendered with, read back from the apiserver's
    certSANs on the live KamajiControlPlane (`<svc>.<ns>.svc.<domain>`); None before the first apply."""
    names = Names(cluster)
    res = await api.resource("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane")
    kcp = None if res is None else await api.get(res, names.control_plane, names.namespace)
    prefix = f"{names.apiserver_service}.{names.namespace}.svc."
    sans = ((kcp or {}).get("spec") or {}).get("network", {}).get("certSANs") or []
    return next((str(s).removeprefix(prefix) for s in sans if str(s).startswith(prefix)), None)


async def observe_read_only(
    api: KubeClient, cluster: TenantCluster, management_domain: str | None = None
) -> Observation:
    """The operator's observation without its one write: absent Talos secrets are not generated here
    (the TalosConfigTemplates then plan with fresh ones; they are `create` anyway on a new tenant).
    The operator observes the management cluster's domain in its own pod; here it is given, or read
    back from what the operator applied."""
    names = Names(cluster)
    secret = await api.get(await api.require("v1", "Secret"), names.talos_secrets, names.namespace)
    values = decode_secret(secret) if secret is not None else generate_talos_secrets()
    talos = talos_secrets_from(values)
    domain = management_domain or await applied_management_domain(api, cluster) or DEFAULT_MANAGEMENT_DOMAIN
    return await observe(api, cluster, talos, domain)


def _extra_args(kcp: Obj) -> list[str]:
    return [str(a) for a in ((kcp.get("spec") or {}).get("apiServer") or {}).get("extraArgs") or []]


def _split(key: str) -> tuple[str, str]:
    api_version, _, kind = key.rpartition("/")
    return api_version, kind


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:57] + "..."


def _lines_changed(path: str, live: str, desired: str) -> list[str]:
    """A multi-line string (a machine config, a values file) as the lines that differ."""
    diff = difflib.unified_diff(live.splitlines(), desired.splitlines(), lineterm="", n=0)
    return [f"~ {path}:"] + [f"    {line}" for line in diff if not line.startswith(("---", "+++", "@@"))]


def field_diff(live: Any, desired: Any, path: str = "") -> list[str]:
    """Where `live` does not cover `desired`, one line per field; lists are compared whole, like `covers`."""
    if isinstance(desired, Mapping) and isinstance(live, Mapping):
        out: list[str] = []
        for key, value in desired.items():
            sub = f"{path}.{key}" if path else str(key)
            if key not in live:
                out.append(f"+ {sub}: {_short(value)}")
            elif not covers(live[key], value):
                out += field_diff(live[key], value, sub)
        return out
    if isinstance(live, str) and isinstance(desired, str) and "\n" in live + desired:
        return _lines_changed(path, live, desired)
    return [f"~ {path}: {_short(live)} -> {_short(desired)}"]


def changed_fields(kind: str, live: Mapping[str, Any], desired: Mapping[str, Any]) -> tuple[str, ...]:
    """The field-level diff of the operator's comparison; a Secret's values are never shown, nor anywhere a
    value of a field named like a credential (a TalosConfigTemplate's machine token and keys)."""
    lines = field_diff(comparable(live), comparable(desired))
    if kind not in _SECRET_KINDS:
        return tuple(redact_diff_line(line) for line in lines)
    return tuple(line.split(":", 1)[0] + ": (value not shown)" for line in lines if line.startswith(("~", "+")))


def _file_spec_is_live(
    live_docs: Mapping[tuple[str, str], Mapping[str, Any]], docs: Sequence[Mapping[str, Any]]
) -> bool:
    """Whether the TenantCluster and NodePools in the cluster already hold the input's specs."""
    for doc in docs:
        live = live_docs.get((doc["kind"], doc["metadata"]["name"]))
        if live is None or not covers(live.get("spec") or {}, doc.get("spec") or {}):
            return False
    return bool(docs)


async def _running_control_plane(api: KubeClient, cluster: TenantCluster) -> str | None:
    """The Kubernetes version the live KamajiControlPlane runs (None: none yet)."""
    res = await api.resource(KAMAJI_API, "KamajiControlPlane")
    names = Names(cluster)
    kcp = None if res is None else await api.get(res, names.control_plane, names.namespace)
    version = ((kcp or {}).get("spec") or {}).get("version")
    return str(version) if version else None


async def _live_documents(api: KubeClient, namespace: str) -> dict[tuple[str, str], Obj]:
    out: dict[tuple[str, str], Obj] = {}
    for kind in ("TenantCluster", "NodePool"):
        res = await api.resource(API, kind)
        if res is not None:
            for obj in await api.list(res, namespace):
                out[kind, obj["metadata"]["name"]] = obj
    return out


async def plan_cluster(
    api: KubeClient,
    cluster: TenantCluster,
    pools: Sequence[NodePool],
    documents: Sequence[Mapping[str, Any]],
    charts: Any = None,
    images: Any = None,
    management_domain: str | None = None,
    kamaji: KamajiRelease = DEFAULT_KAMAJI,
    platform_policy: PatchUpgrades | None = None,
    now: datetime.datetime | None = None,
) -> TenantPlan:
    """Classify every object the operator would render for `cluster` against the live inventory."""
    names = Names(cluster)
    ns, name = cluster.metadata.namespace, cluster.metadata.name
    plan = TenantPlan(ns, name)
    observation = await observe_read_only(api, cluster, management_domain)
    if observation.observed is None:
        plan.waiting = observation.message
    live_docs = await _live_documents(api, ns)
    _refuse_version_change(cluster, live_docs.get(("TenantCluster", name)))
    # What the operator renders: the patch the tenant's policy allows now, not always the table's.
    cluster, choice = effective_version(cluster, await _running_control_plane(api, cluster), platform_policy,
                                        now or datetime.datetime.now(tz=datetime.UTC))
    if choice.pending is not None:
        plan.pending["kubernetes"] = choice.pending
        plan.pending["reason"] = choice.why
    desired = render_cluster(cluster, pools, observation.observed, charts, images, kamaji)
    plan.spec_unchanged = _file_spec_is_live(live_docs, documents)
    live_status = (live_docs.get(("TenantCluster", name)) or {}).get("status") or {}
    previous = live_status.get("inventory") or []
    plan.restore = dict(live_status.get("restore") or {})
    plan.backup = await last_backup(api, cluster)
    resources, live = await _live_inventory(api, cluster, {*(kind_key(o) for o in desired), *previous})
    live_mds = [o for (k, _), o in live.items() if _split(k)[1] == "MachineDeployment"]

    def render_pool(_: str, at_level: Sequence[NodePool]) -> list[Obj]:
        return render_cluster(cluster, at_level, observation.observed, charts, images, kamaji)

    live_templates = {name: obj for (k, name), obj in live.items() if _split(k)[1] in _MACHINE_TEMPLATES}
    held = keep_live_templates(pools, desired, live_mds, render_pool, live_templates)
    desired = held.objects
    plan.desired = list(desired)
    if held.waiting:
        plan.pending["render"] = list(held.waiting)
    plan.rolling = list(held.rolling)
    plan.kamaji.extend(_kamaji_notes(kamaji, desired, live))
    replicas = _pool_replicas(desired, live)
    plan.upgrade = upgrade_sequence(cluster, [p.metadata.name for p in pools], live, replicas)
    plan.capacity = await address_warnings(api, cluster, pools, live_mds)
    plan.changes.extend(_classify(desired, live, resources, replicas))
    if await api.get(await api.require("v1", "Secret"), names.talos_secrets, ns) is None:
        talos_secrets = Change(Action.CREATE, "Secret", names.talos_secrets, note="Talos secrets, generated once")
        plan.changes.insert(0, talos_secrets)
    kept = {("Secret", names.talos_secrets)}
    if observation.observed is None:
        kept |= {("TalosConfigTemplate", names.talos_config_template(p)) for p in pools}
    plan.changes.extend(_prunes(desired, live, kept))
    return plan


def _kamaji_notes(kamaji: KamajiRelease, desired: Sequence[Obj], live: Mapping[tuple[str, str], Obj]) -> list[str]:
    """What this Kamaji release would not apply of a change to the control plane's extra apiserver flags."""
    live_kcp = next((o for (k, _), o in live.items() if _split(k)[1] == "KamajiControlPlane"), None)
    wanted_kcp = next((o for o in desired if o["kind"] == "KamajiControlPlane"), None)
    if live_kcp is None or wanted_kcp is None:
        return []
    note = unapplied_change(kamaji.release, _extra_args(live_kcp), _extra_args(wanted_kcp))
    return [note] if note else []


async def _live_inventory(api: KubeClient, cluster: TenantCluster, keys: set[str]
                          ) -> tuple[dict[str, Resource | None], dict[tuple[str, str], Obj]]:
    """Each kind the render or the last inventory names (None: not served) and the tenant's live objects."""
    ns, name = cluster.metadata.namespace, cluster.metadata.name
    resources: dict[str, Resource | None] = {}
    for key in sorted(keys):
        resources[key] = await api.resource(*_split(key))
    live: dict[tuple[str, str], Obj] = {}
    for key, res in resources.items():
        if res is None:
            continue
        for obj in await api.list(res, *inventory_scope(name, ns, namespaced=res.namespaced)):
            live[key, obj["metadata"]["name"]] = obj
    return resources, live


def _classify(desired: Sequence[Obj], live: Mapping[tuple[str, str], Obj],
              resources: Mapping[str, Resource | None],
              replicas: Mapping[GroupKey, tuple[int, Any, Any]]) -> list[Change]:
    """What applying each rendered object would do to its live counterpart."""
    changes: list[Change] = []
    templates_live = {_group_of(obj) for (k, _), obj in live.items() if _split(k)[1] in _MACHINE_TEMPLATES}
    for obj in desired:
        key, obj_name, kind = kind_key(obj), obj["metadata"]["name"], obj["kind"]
        current = live.get((key, obj_name))
        if resources.get(key) is None:
            changes.append(Change(Action.CREATE, kind, obj_name, note=f"{key} is not served yet"))
        elif current is None:
            pool, group = _group_of(obj)
            if kind in _MACHINE_TEMPLATES and (pool, group) in templates_live:
                changes.append(Change(Action.ROTATE, kind, obj_name, note=_rotation(pool, replicas, group)))
            else:
                changes.append(Change(Action.CREATE, kind, obj_name))
        elif covers(comparable(current), comparable(obj)):
            changes.append(Change(Action.NOOP, kind, obj_name))
        else:
            diff = changed_fields(kind, current, obj)
            if kind in REPLACE_ON_IMMUTABLE:
                changes.append(Change(Action.REPLACE, kind, obj_name, diff, "immutable: deleted and created again"))
            else:
                changes.append(Change(Action.UPDATE, kind, obj_name, diff))
    return changes


def _prunes(desired: Sequence[Obj], live: Mapping[tuple[str, str], Obj], kept: set[tuple[str, str]]) -> list[Change]:
    """The live objects the render no longer names, but those kept on purpose (Talos secrets, templates)."""
    wanted = {(kind_key(o), o["metadata"]["name"]) for o in desired}
    return [Change(Action.PRUNE, obj["kind"], obj_name, note=_prune_note(obj))
            for (key, obj_name), obj in sorted(live.items())
            if (key, obj_name) not in wanted and (obj["kind"], obj_name) not in kept]


def _refuse_version_change(cluster: TenantCluster, live: Mapping[str, Any] | None) -> None:
    """What the CRD and the webhook refuse of this change from the live TenantCluster, in their words."""
    problems = Problems()
    check_change_from_live(ref("TenantCluster", cluster.metadata.name), cluster.spec.version,
                           cluster.spec.talos.version, live, problems)
    problems.raise_if_errors()


def upgrade_sequence(
    cluster: TenantCluster,
    pools: Sequence[str],
    live: Mapping[tuple[str, str], Obj],
    replicas: Mapping[GroupKey, tuple[int, Any, Any]],
) -> list[str]:
    """The upgrade stages the operator would run from the live objects, in its order (`phases.upgrade`)."""
    names = Names(cluster)
    kcp = live.get((f"{KAMAJI_API}/KamajiControlPlane", names.control_plane))
    if kcp is None:
        return []
    mds = [o for (k, _), o in live.items() if _split(k)[1] == "MachineDeployment"]
    state = live_state(kcp, mds, [], cluster.spec.talos.version)
    target = Versions(installed_patch(cluster.spec.version), cluster.spec.talos.version)
    steps: list[str] = []
    if state.control_plane and not same_patch(state.control_plane, target.kubernetes):
        steps.append(f"control plane {names.control_plane}: {state.control_plane} -> {target.kubernetes} "
                     "(no worker replaced; the pools wait until it reports the target with every apiserver ready)")
    for pool in sorted(pools):
        running = state.pools.get(pool)
        if running is None or running.running == target:
            continue
        workers, surge, unavailable = replicas.get((pool, None), (0, None, None))
        steps.append(
            f"pool {pool}: {running.running.kubernetes} / Talos {running.running.talos} -> {target.kubernetes} / "
            f"Talos {target.talos}: {workers} worker(s) replaced, maxSurge {surge}, maxUnavailable {unavailable}"
            + (" (after the previous stage has rolled out)" if steps else "")
        )
    return [f"{i}. {step}" for i, step in enumerate(steps, 1)]


def _pool_replicas(
    desired: Sequence[Obj], live: Mapping[tuple[str, str], Obj]
) -> dict[GroupKey, tuple[int, Any, Any]]:
    """Per (pool, None) and per (pool, node group): live workers, and the rendered surge and unavailability.
    A spread pool's node groups roll together, each within its own surge: the pool's workers add up."""
    out: dict[GroupKey, tuple[int, Any, Any]] = {}
    for obj in desired:
        if obj["kind"] != "MachineDeployment":
            continue
        pool, group = _group_of(obj)
        workers = machines_of(live.get((kind_key(obj), obj["metadata"]["name"])) or obj)
        rolling = ((obj.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
        before = out.get((pool, None), (0, None, None))[0]
        out[pool, None] = (before + workers, rolling.get("maxSurge"), rolling.get("maxUnavailable"))
        if group:
            out[pool, group] = (workers, rolling.get("maxSurge"), rolling.get("maxUnavailable"))
    return out


def _group_of(obj: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(pool, node group) an object belongs to; the group is None for an unsplit pool."""
    labels = obj["metadata"].get("labels") or {}
    return labels.get(POOL_LABEL), labels.get(NODE_GROUP_LABEL)


def _rotation(pool: str | None, replicas: Mapping[GroupKey, tuple[int, Any, Any]], group: str | None = None) -> str:
    workers, surge, unavailable = replicas.get((pool, group), (0, None, None))
    where = f"pool {pool}" + (f" on {group}" if group else "")
    return f"{where}: {workers} worker(s) replaced, maxSurge {surge}, maxUnavailable {unavailable}"


def _prune_note(obj: Mapping[str, Any]) -> str:
    if obj["kind"] in _MACHINE_TEMPLATES:
        return "the pool's old machine template"
    if obj["kind"] == "MachineDeployment":
        return f"no longer rendered: its {machines_of(obj)} worker(s) are drained and deleted"
    return "no longer rendered"


def render_text(plans: Sequence[TenantPlan]) -> str:
    lines: list[str] = []
    for plan in plans:
        lines.append(f"TenantCluster {plan.namespace}/{plan.name}")
        if plan.rolls_without_spec_change:
            lines.append("  !! WORKERS WILL ROLL WITHOUT A SPEC CHANGE: this tenantctl renders new machine templates")
            lines.append("  !! for an input the cluster already holds; every worker of these pools is replaced:")
            lines += [f"  !!   {c.note}" for c in plan.rotations]
        lines += [f"  !! {line}" for line in plan.rolling]
        lines += [f"  !! {line}" for line in plan.capacity]
        lines += [f"  !! {line}" for line in plan.kamaji]
        if plan.pending.get("kubernetes"):
            lines.append(f"  pending patch {plan.pending['kubernetes']}: {plan.pending['reason']}")
        lines += [f"  pending: {line}" for line in plan.pending.get("render") or ()]
        if plan.upgrade:
            lines.append("  upgrade, in this order:")
            lines += [f"    {step}" for step in plan.upgrade]
        if plan.waiting:
            lines.append(f"  (waiting: {plan.waiting}; TalosConfigTemplates and add-ons not rendered yet)")
        if plan.backup:
            lines.append(f"  backup: {backup_line(plan.backup)}")
        if plan.restore:
            lines.append(f"  restore from {plan.restore.get('from', {}).get('namespace')}/"
                         f"{plan.restore.get('from', {}).get('name')} ({plan.restore.get('mode')}): "
                         f"{plan.restore.get('phase')}: {plan.restore.get('message')}")
        for change in plan.changes:
            note = f"  ({change.note})" if change.note else ""
            lines.append(f"  {change.action.value:<17}{change.ref}{note}")
            lines += [f"{'':21}{line}" for line in change.diff]
        summary = ", ".join(f"{n} {a}" for a, n in plan.counts().items())
        lines.append(f"  summary: {summary}")
    return "\n".join(lines) + "\n"


"""Deletion of a TenantCluster in bounded steps, each outcome recorded; leftovers are never silent.

1. Proxmox: through the tenant apiserver, delete every claim (no wait), then the pods mounting them
   (matched here from the pod list), then wait for their PVs — the CSI driver frees the disks while
   it still runs. A tenant that does not answer is a reported leftover, not a tenant without disks.
2. Suspend and delete the tenant's HelmReleases; after a bounded wait, drop their finalizers.
3. Stop the cluster-autoscaler (it would scale the pools back up), then delete the MachineDeployments,
   the Cluster (bounded wait: Cluster API deletes the Machines first), the control plane (bounded wait).
4. KubeVirt DataVolumes (only if CDI serves them), LoadBalancer Services, the rest of the inventory.
5. The handler returns and kopf removes the finalizer; the summary lists the leftovers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.kube.client import APIError, KubeClient, NotFoundError, Resource
from tenantctl.operator.kube.tenants import UnusableKubeconfig, admin_connection, tenant_client
from tenantctl.operator.phases.apply import apply_inventory
from tenantctl.operator.phases.conditions import Reason, StepOutcome, TeardownStep
from tenantctl.operator.phases.events import Recorder
from tenantctl.render import Names, cluster_labels
from tenantctl.render.meta import CAPI_CLUSTER_LABEL
from tenantctl.spec import API_VERSION, ObjectMeta, TenantCluster

__all__ = ["TeardownEnded", "TeardownReport", "TeardownScope", "claims_of", "teardown"]

Obj = dict[str, Any]
DISKS_MAY_REMAIN = "disks may remain on the hypervisor"


class TeardownEnded(Exception):
    """Raised by `progress` when the tenant is gone or another teardown finished it: this one stops where
    it is, before its step's Event, since what it would say next (a leftover, say) is no longer true."""


@dataclass
class TeardownReport:
    """The status' `teardown` field: one entry per step, the leftovers, the disks seen in the tenant."""

    steps: list[Obj] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)
    freed: Obj = field(default_factory=dict)
    """What the whole teardown freed inside the tenant, across processes: claims and pods deleted,
    volume handles released. A process resumed after a kill adds to it rather than starting at zero."""

    def record(self, step: TeardownStep, outcome: StepOutcome, message: str) -> None:
        self.steps = [s for s in self.steps if s["step"] != step]
        self.steps.append({"step": str(step), "outcome": str(outcome), "message": message})
        if outcome is StepOutcome.LEFTOVER:
            self.leftovers.append(f"{step}: {message}")

    def as_status(self) -> Obj:
        out: Obj = {"steps": self.steps, "leftovers": self.leftovers, "volumes": self.volumes}
        return out | ({"freed": self.freed} if self.freed else {})

    @staticmethod
    def finished_in(status: Mapping[str, Any]) -> bool:
        """Whether `status` holds a teardown report that reached its last step, removing the finalizer."""
        steps = (status.get("teardown") or {}).get("steps") or []
        return any(isinstance(s, Mapping) and s.get("step") == TeardownStep.FINALIZER for s in steps)

    @classmethod
    def from_status(cls, status: Mapping[str, Any]) -> TeardownReport:
        """What a resumed teardown remembers: the disks it saw and what it freed (the steps run again)."""
        recorded = status.get("teardown") or {}
        freed = recorded.get("freed") or {}
        return cls(
            volumes=list(recorded.get("volumes") or []),
            freed={"claims": int(freed.get("claims") or 0), "pods": int(freed.get("pods") or 0),
                   "volumes": list(freed.get("volumes") or [])} if freed else {},
        )


@dataclass
class TeardownScope:
    api: KubeClient
    settings: OperatorSettings
    recorder: Recorder
    body: Mapping[str, Any]
    progress: Callable[[TeardownReport], Awaitable[None]]
    report: TeardownReport = field(default_factory=TeardownReport)

    @property
    def cluster(self) -> TenantCluster:
        """Only names are needed to tear down, so a spec that no longer validates cannot block it."""
        meta = self.body["metadata"]
        named = ObjectMeta(name=meta["name"], namespace=meta["namespace"])
        return TenantCluster(api_version=API_VERSION, kind="TenantCluster", metadata=named)

    @property
    def substrate(self) -> str:
        return str((self.body.get("spec") or {}).get("substrate") or "kubevirt")

    @property
    def status(self) -> Mapping[str, Any]:
        return self.body.get("status") or {}


def claims_of(pod: Mapping[str, Any]) -> set[str]:
    """Every claim a pod mounts — a pod may mount several, which a JSONPath filter gets wrong."""
    return {
        v["persistentVolumeClaim"]["claimName"]
        for v in (pod.get("spec") or {}).get("volumes") or []
        if (v.get("persistentVolumeClaim") or {}).get("claimName")
    }


async def _wait_until(
    condition: Callable[[], Awaitable[bool]], timeout: float, interval: float
) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if await condition():
            return True
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(interval)


async def teardown(scope: TeardownScope) -> TeardownReport:
    """Run every step in order; a management-API failure raises (and is retried), leftovers do not, and
    `TeardownEnded` from the progress report stops it. Each step's Event follows its report."""
    remembered = TeardownReport.from_status(scope.status)
    scope.report.volumes, scope.report.freed = remembered.volumes, remembered.freed
    steps: list[tuple[TeardownStep, Callable[[TeardownScope], Awaitable[tuple[StepOutcome, str]]]]] = [
        (TeardownStep.TENANT_VOLUMES, _tenant_volumes),
        (TeardownStep.HELM_RELEASES, _helm_releases),
        (TeardownStep.CLUSTER_API, _cluster_api),
        (TeardownStep.SUBSTRATE, _substrate),
    ]
    for step, run in steps:
        outcome, message = await run(scope)
        scope.report.record(step, outcome, message)
        await scope.progress(scope.report)
        if outcome is StepOutcome.LEFTOVER:
            scope.recorder.warn(str(Reason.LEFTOVER), f"{step}: {message}")
        else:
            scope.recorder.info(str(Reason.TEARDOWN), f"{step}: {message}")
    summary = "; ".join(scope.report.leftovers) if scope.report.leftovers else "no leftovers"
    scope.report.record(TeardownStep.FINALIZER, StepOutcome.DONE, f"finalizer removed; {summary}")
    await scope.progress(scope.report)
    (scope.recorder.warn if scope.report.leftovers else scope.recorder.info)(
        str(Reason.TEARDOWN), f"teardown finished: {summary}"
    )
    return scope.report


# -- step 1 ------------------------------------------------------------------------------------------


def _leftover_disks(scope: TeardownScope, why: str) -> tuple[StepOutcome, str]:
    known = ", ".join(scope.report.volumes) if scope.report.volumes else "unknown"
    return StepOutcome.LEFTOVER, f"{why}; {DISKS_MAY_REMAIN}: {known}"


async def _tenant_volumes(scope: TeardownScope) -> tuple[StepOutcome, str]:
    if scope.substrate != "proxmox":
        return StepOutcome.SKIPPED, "kubevirt: the disks are DataVolumes in the management cluster (step 4)"
    try:
        connection = await admin_connection(scope.api, scope.cluster)
    except UnusableKubeconfig as exc:
        return _leftover_disks(scope, f"the admin kubeconfig Secret {exc}")
    if connection is None:
        if scope.status.get("endpoint"):
            return _leftover_disks(scope, "the admin kubeconfig Secret is gone")
        return StepOutcome.SKIPPED, "the tenant apiserver was never provisioned"
    settings = scope.settings
    async with tenant_client(connection, settings) as tenant:

        async def answers() -> bool:
            try:
                await tenant.probe(settings.tenant_probe_timeout)
            except APIError:
                return False
            return True

        if not await _wait_until(answers, settings.tenant_unreachable_grace, settings.poll_interval):
            return _leftover_disks(
                scope, f"the tenant apiserver did not answer within {settings.tenant_unreachable_grace:g}s"
            )
        try:
            return await _free_disks(scope, tenant)
        except APIError as exc:
            return _leftover_disks(scope, f"the tenant apiserver failed mid-way ({exc})")


async def _free_disks(scope: TeardownScope, tenant: KubeClient) -> tuple[StepOutcome, str]:
    pvcs = await tenant.require("v1", "PersistentVolumeClaim")
    pods = await tenant.require("v1", "Pod")
    pvs = await tenant.require("v1", "PersistentVolume")
    volumes = await tenant.list(pvs)
    handles = {v["metadata"]["name"]: _handle(v) for v in volumes}
    seen_before = set(scope.report.volumes)  # by an earlier process, if this teardown was resumed
    scope.report.volumes = sorted(seen_before | set(handles.values()))
    freed = scope.report.freed or {"claims": 0, "pods": 0, "volumes": []}
    scope.report.freed = freed
    await scope.progress(scope.report)
    claims = await tenant.list(pvcs)
    doomed = {(c["metadata"]["namespace"], c["metadata"]["name"]) for c in claims}
    bound = {c.get("spec", {}).get("volumeName") for c in claims} - {None}
    for ns, name in sorted(doomed):
        await tenant.delete(pvcs, name, ns)
    holders = [
        p for p in await tenant.list(pods) if any((p["metadata"]["namespace"], c) in doomed for c in claims_of(p))
    ]
    for pod in holders:
        await tenant.delete(pods, pod["metadata"]["name"], pod["metadata"]["namespace"])
    freed["claims"] += len(doomed)
    freed["pods"] += len(holders)
    await scope.progress(scope.report)

    async def released() -> bool:
        return not ({v["metadata"]["name"] for v in await tenant.list(pvs)} & bound)

    if not await _wait_until(released, scope.settings.volume_release_timeout, scope.settings.poll_interval):
        remaining = sorted(handles.get(n, n) for n in {v["metadata"]["name"] for v in await tenant.list(pvs)} & bound)
        scope.report.volumes = remaining
        return _leftover_disks(scope, f"volumes not released within {scope.settings.volume_release_timeout:g}s")
    # Released: every disk any process of this teardown saw that the tenant no longer has (the CSI driver
    # let go of it), not only the ones this process watched go.
    present = {_handle(v) for v in await tenant.list(pvs)}
    freed["volumes"] = sorted((set(freed["volumes"]) | set(scope.report.volumes)) - present)
    scope.report.volumes = sorted(set(scope.report.volumes) & present)
    resumed = " (counts include an earlier attempt's)" if seen_before else ""
    return StepOutcome.DONE, (
        f"deleted {freed['claims']} claims and {freed['pods']} pods; {len(freed['volumes'])} volumes released{resumed}"
    )


def _handle(pv: Mapping[str, Any]) -> str:
    return str(((pv.get("spec") or {}).get("csi") or {}).get("volumeHandle") or pv["metadata"]["name"])


async def _patch_if_present(api: KubeClient, res: Resource, name: str, namespace: str, patch: Obj) -> bool:
    """Patch an object a step read a moment ago; False when it is gone by now. During a layout handover
    two shards tear one tenant down at once, and the other may delete it between the read and the patch:
    that is the step's work done, not a failure for kopf to retry a minute later."""
    try:
        await api.merge_patch(res, name, namespace, patch)
    except NotFoundError:
        return False
    return True


# -- step 2 ------------------------------------------------------------------------------------------


async def _helm_releases(scope: TeardownScope) -> tuple[StepOutcome, str]:
    api, names = scope.api, Names(scope.cluster)
    res = await api.resource("helm.toolkit.fluxcd.io/v2", "HelmRelease")
    if res is None:
        return StepOutcome.SKIPPED, "Flux HelmRelease is not served"
    releases = await api.list(res, names.namespace, cluster_labels(names.cluster))
    if not releases:
        return StepOutcome.DONE, "no HelmReleases"
    for rel in releases:
        name = rel["metadata"]["name"]
        if await _patch_if_present(api, res, name, names.namespace, {"spec": {"suspend": True}}):
            await api.delete(res, name, names.namespace)

    async def gone() -> bool:
        return not await api.list(res, names.namespace, cluster_labels(names.cluster))

    if await _wait_until(gone, scope.settings.helm_release_timeout, scope.settings.poll_interval):
        return StepOutcome.DONE, f"{len(releases)} HelmReleases suspended and deleted"
    stuck = await api.list(res, names.namespace, cluster_labels(names.cluster))
    for rel in stuck:
        await _patch_if_present(api, res, rel["metadata"]["name"], names.namespace, {"metadata": {"finalizers": None}})
    return StepOutcome.DONE, (
        f"{len(releases)} HelmReleases suspended and deleted; finalizers dropped after "
        f"{scope.settings.helm_release_timeout:g}s: {', '.join(r['metadata']['name'] for r in stuck)}"
    )


# -- step 3 ------------------------------------------------------------------------------------------


async def _stop_autoscaler(scope: TeardownScope) -> list[str]:
    """Scaled to zero and its pods awaited (bounded) before it is deleted: a Background delete alone
    leaves a running autoscaler to act on the MachineDeployments deleted next."""
    api, names = scope.api, Names(scope.cluster)
    deployments = await api.require("apps/v1", "Deployment")
    if await api.get(deployments, names.autoscaler, names.namespace) is None:
        return []
    if not await _patch_if_present(api, deployments, names.autoscaler, names.namespace, {"spec": {"replicas": 0}}):
        return []

    async def stopped() -> bool:
        live = await api.get(deployments, names.autoscaler, names.namespace)
        return not ((live or {}).get("status") or {}).get("replicas")

    timeout = scope.settings.control_plane_timeout
    in_time = await _wait_until(stopped, timeout, scope.settings.poll_interval)
    await api.delete(deployments, names.autoscaler, names.namespace)
    return [f"Deployment/{names.autoscaler}" + ("" if in_time else f" (its pods still ran after {timeout:g}s)")]


async def _deleted_in_time(scope: TeardownScope, res: Resource, name: str, timeout: float) -> bool:
    async def gone() -> bool:
        return await scope.api.get(res, name, Names(scope.cluster).namespace) is None

    return await _wait_until(gone, timeout, scope.settings.poll_interval)


def _deleting(cluster: Mapping[str, Any] | None) -> str:
    """What Cluster API says it still waits for (its v1beta2 `Deleting` condition), if it says."""
    conditions = (((cluster or {}).get("status") or {}).get("v1beta2") or {}).get("conditions") or []
    message = next((str(c.get("message") or "") for c in conditions if c.get("type") == "Deleting"), "")
    return f": {' '.join(message.split())}" if message else ""


async def _cluster_api(scope: TeardownScope) -> tuple[StepOutcome, str]:
    """The Cluster goes before the control plane and the rest of the inventory: Cluster API deletes its
    Machines first (with their infrastructure machines and bootstrap configs), and the objects those
    providers read must outlive them — capmox v0.7.7 does nothing for a ProxmoxMachine whose
    ProxmoxCluster is gone, so its VM and disks would stay. The control plane goes last, as Cluster API
    orders it: its drains are skipped once the Cluster is deleting."""
    api, names, settings = scope.api, Names(scope.cluster), scope.settings
    ns, done = names.namespace, await _stop_autoscaler(scope)
    md = await api.resource("cluster.x-k8s.io/v1beta1", "MachineDeployment")
    if md is not None:
        for obj in await api.list(md, ns, cluster_labels(names.cluster)):
            await api.delete(md, obj["metadata"]["name"], ns)
            done.append(f"MachineDeployment/{obj['metadata']['name']}")
    outcome = StepOutcome.DONE
    capi = await api.resource("cluster.x-k8s.io/v1beta1", "Cluster")
    if capi is not None and await api.delete(capi, names.cluster, ns):
        done.append(f"Cluster/{names.cluster}")
        if not await _deleted_in_time(scope, capi, names.cluster, settings.cluster_deletion_timeout):
            outcome = StepOutcome.LEFTOVER
            waiting = _deleting(await api.get(capi, names.cluster, ns))
            done[-1] += f" (still deleting after {settings.cluster_deletion_timeout:g}s{waiting})"
    kcp = await api.resource("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane")
    if kcp is not None and await api.delete(kcp, names.control_plane, ns):
        done.append(f"KamajiControlPlane/{names.control_plane}")
        if not await _deleted_in_time(scope, kcp, names.control_plane, settings.control_plane_timeout):
            outcome = StepOutcome.LEFTOVER
            done[-1] += f" (still deleting after {settings.control_plane_timeout:g}s)"
    return outcome, "deleted " + (", ".join(done) if done else "nothing (already gone)")


# -- step 4 ------------------------------------------------------------------------------------------


async def _substrate(scope: TeardownScope) -> tuple[StepOutcome, str]:
    api, names = scope.api, Names(scope.cluster)
    ns, notes = names.namespace, []
    selector = {CAPI_CLUSTER_LABEL: names.cluster}
    if scope.substrate == "kubevirt":
        dv = await api.resource("cdi.kubevirt.io/v1beta1", "DataVolume")
        if dv is None:
            notes.append("no DataVolume CRD (CDI not installed): skipped")
        else:
            deleted = await _delete_all(api, dv, ns, selector)
            notes.append(f"{deleted} DataVolumes deleted")
    services = await api.require("v1", "Service")
    lbs = [s for s in await api.list(services, ns, selector) if (s.get("spec") or {}).get("type") == "LoadBalancer"]
    for svc in lbs:
        await api.delete(services, svc["metadata"]["name"], ns)
    notes.append(f"{len(lbs)} LoadBalancer Services deleted")
    rest = await apply_inventory(
        api,
        [],
        cluster=names.cluster,
        namespace=ns,
        previous_kinds=[*(scope.status.get("inventory") or []), "v1/Secret"],
        keep=(),
        recorder=scope.recorder,
    )
    notes.append(f"{len(rest.pruned)} remaining inventory objects deleted")
    return StepOutcome.DONE, "; ".join(notes)


async def _delete_all(api: KubeClient, res: Resource, ns: str, labels: Mapping[str, str]) -> int:
    items = await api.list(res, ns, labels)
    for obj in items:
        await api.delete(res, obj["metadata"]["name"], ns)
    return len(items)

"""The operator's side of `spec.restore` (render/restore.py says what each phase holds back).

`Importing` ends when the restore Job completes (or fails: `Failed`, with its message, and nothing
further happens until the TenantCluster is deleted and made again, since a half-imported prefix is
refused by a second import). `Scrubbing` runs here, through the tenant's own API once its control
plane answers: the restored Nodes are machines that no longer exist, the restored bootstrap tokens
would let them (or anyone holding one) join, and a PersistentVolume left at `Delete` would let the
CSI controller, once released, delete a disk the restore does not own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.kube.client import APIError, KubeClient
from tenantctl.operator.kube.tenants import (
    TenantClients,
    UnusableKubeconfig,
    admin_kubeconfig,
    tenant_api,
)
from tenantctl.operator.phases.conditions import Reason
from tenantctl.problems import InvalidInput, Problem
from tenantctl.render.restore import RestorePhase, restore_name
from tenantctl.spec import TenantCluster
from tenantctl.spec.checks import ref

__all__ = ["RestoreState", "advance", "current_phase", "foreign_source", "refuse_foreign_source", "refuse_live_source"]

_REASONS = {
    RestorePhase.IMPORTING: Reason.RESTORE_IMPORTING,
    RestorePhase.SCRUBBING: Reason.RESTORE_SCRUBBING,
    RestorePhase.DONE: Reason.RESTORE_DONE,
    RestorePhase.FAILED: Reason.RESTORE_FAILED,
}
BOOTSTRAP_TOKEN_TYPE = "bootstrap.kubernetes.io/token"


@dataclass(frozen=True)
class RestoreState:
    phase: RestorePhase
    message: str

    @property
    def reason(self) -> Reason:
        return _REASONS[self.phase]

    def status(self, cluster: TenantCluster) -> dict[str, Any]:
        restore = cluster.spec.restore
        assert restore is not None
        source = {"name": restore.from_.name, "namespace": restore.from_.namespace or cluster.metadata.namespace}
        return {"phase": str(self.phase), "from": source, "backup": restore.backup, "mode": restore.mode,
                "message": self.message}


def current_phase(cluster: TenantCluster, status: Mapping[str, Any]) -> RestorePhase | None:
    """None without spec.restore; the recorded phase, else `Importing` (a phase never goes back)."""
    if cluster.spec.restore is None:
        return None
    recorded = (status.get("restore") or {}).get("phase")
    return RestorePhase(recorded) if recorded in set(RestorePhase) else RestorePhase.IMPORTING


def foreign_source(namespace: str, source: str | None) -> str | None:
    """Why a restore into `namespace` from the backup of a tenant in `source` (None: the same namespace)
    needs the Platform's leave, or None: that backup is the other tenant's data and, with `replace`, its
    identity (Platform spec.restore.acrossNamespaces). The operator's pass and the webhook both ask it."""
    if source is None or source == namespace:
        return None
    return (f"{source!r} is another namespace: restoring its tenant's backup here hands this namespace that "
            "tenant's data; refused unless the Platform allows it (spec.restore.acrossNamespaces: true)")


def refuse_foreign_source(cluster: TenantCluster, across_namespaces: bool) -> None:
    """`foreign_source`, as the pass refuses it."""
    restore = cluster.spec.restore
    if restore is None or across_namespaces:
        return
    if (why := foreign_source(cluster.metadata.namespace, restore.from_.namespace)) is not None:
        raise InvalidInput([Problem(f"{ref('TenantCluster', cluster.metadata.name)}.spec.restore.from.namespace", why)])


async def refuse_live_source(api: KubeClient, cluster: TenantCluster) -> None:
    """`mode: replace` while the source tenant exists is refused before anything is applied: two tenants
    with one CA and one service-account key would accept each other's credentials."""
    restore = cluster.spec.restore
    if restore is None or restore.mode != "replace":
        return
    namespace = restore.from_.namespace or cluster.metadata.namespace
    res = await api.require("tenantctl.io/v1alpha1", "TenantCluster")
    if await api.get(res, restore.from_.name, namespace, cached=False) is not None:
        raise InvalidInput([Problem(
            f"{ref('TenantCluster', cluster.metadata.name)}.spec.restore.mode",
            f"replace is refused while TenantCluster {namespace}/{restore.from_.name} exists: delete it first, "
            "or restore with mode: clone (new PKI)",
        )])


def _job_outcome(job: Mapping[str, Any] | None) -> tuple[bool | None, str]:
    """(True: complete, False: failed, None: running or absent), and what the Job says."""
    for cond in ((job or {}).get("status") or {}).get("conditions") or []:
        if cond.get("status") != "True":
            continue
        if cond.get("type") == "Complete":
            return True, "the restore Job completed"
        if cond.get("type") == "Failed":
            return False, f"the restore Job failed: {cond.get('reason')}: {cond.get('message') or ''}".rstrip(": ")
    return None, "the restore Job imports the backup; the control plane is held at zero replicas"


async def scrub(tenant: KubeClient) -> str:
    """Delete the Nodes and bootstrap tokens a backup brought back; turn every PersistentVolume Retain."""
    nodes = await tenant.require("v1", "Node")
    deleted_nodes = 0
    for node in await tenant.list(nodes, cached=False):
        deleted_nodes += await tenant.delete(nodes, node["metadata"]["name"])
    secrets = await tenant.require("v1", "Secret")
    tokens = 0
    for secret in await tenant.list(secrets, "kube-system", cached=False):
        if secret.get("type") == BOOTSTRAP_TOKEN_TYPE:
            tokens += await tenant.delete(secrets, secret["metadata"]["name"], "kube-system")
    volumes = await tenant.require("v1", "PersistentVolume")
    retained = 0
    for pv in await tenant.list(volumes, cached=False):
        if (pv.get("spec") or {}).get("persistentVolumeReclaimPolicy") != "Retain":
            await tenant.merge_patch(volumes, pv["metadata"]["name"], None,
                                     {"spec": {"persistentVolumeReclaimPolicy": "Retain"}})
            retained += 1
    return (f"restored: {deleted_nodes} stale Nodes and {tokens} bootstrap tokens deleted, "
            f"{retained} PersistentVolumes set to Retain")


async def _scrubbed(api: KubeClient, cluster: TenantCluster, settings: OperatorSettings,
                    clients: TenantClients | None) -> RestoreState:
    kubeconfig = await admin_kubeconfig(api, cluster)
    if kubeconfig is None:
        return RestoreState(RestorePhase.SCRUBBING, "waiting for the tenant's admin kubeconfig to scrub it")
    key = f"{cluster.metadata.namespace}/{cluster.metadata.name}"
    try:
        async with tenant_api(key, kubeconfig, settings, clients) as tenant:
            return RestoreState(RestorePhase.DONE, await scrub(tenant))
    except (APIError, UnusableKubeconfig) as exc:
        return RestoreState(RestorePhase.SCRUBBING, f"waiting for the restored apiserver to scrub it: {exc}")


async def advance(api: KubeClient, cluster: TenantCluster, phase: RestorePhase, settings: OperatorSettings,
                  clients: TenantClients | None, recorded: str = "") -> RestoreState:
    """The phase after this pass (the render of this pass was made for `phase`); a final phase keeps the
    message it was recorded with."""
    if phase in (RestorePhase.DONE, RestorePhase.FAILED):
        return RestoreState(phase, recorded)
    if phase is RestorePhase.IMPORTING:
        jobs = await api.require("batch/v1", "Job")
        job = await api.get(jobs, restore_name(cluster.metadata.name), cluster.metadata.namespace, cached=False)
        done, message = _job_outcome(job)
        if done is None:
            return RestoreState(RestorePhase.IMPORTING, message)
        if not done:
            return RestoreState(RestorePhase.FAILED, message)
        return RestoreState(RestorePhase.SCRUBBING, "imported; the control plane scales up, then the scrub")
    return await _scrubbed(api, cluster, settings, clients)

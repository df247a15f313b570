"""`tenantctl describe tenant`: the chain from a TenantCluster down to the tenant's Nodes, as a tree.

Every node of the tree says what it saw and, when something is wrong, what to look at next. The tenant
side is read through the admin kubeconfig Kamaji writes (as the operator reaches it); a tenant API that
does not answer within the bound is one marked node, never an exception.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from tenantctl.credentials.findings import CredentialsFinding
from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.daytwo.backup import backup_line, last_backup
from tenantctl.operator.daytwo.overview import age
from tenantctl.operator.kube.client import APIError, KubeClient, RetryPolicy
from tenantctl.operator.kube.tenants import UnusableKubeconfig, admin_connection, tenant_client
from tenantctl.operator.phases.conditions import Reason
from tenantctl.problems import InvalidInput
from tenantctl.render.meta import CLUSTER_LABEL, POOL_LABEL, Names
from tenantctl.spec import TenantCluster, parse_tenant_documents

__all__ = ["SYMBOL", "Mark", "TreeNode", "describe_tenant", "summary"]

Obj = dict[str, Any]
API = "tenantctl.io/v1alpha1"
CAPI = "cluster.x-k8s.io/v1beta1"
UNINITIALIZED_TAINT = "node.cloudprovider.kubernetes.io/uninitialized"
DEPLOYMENT_LABEL = "cluster.x-k8s.io/deployment-name"
# Machine phases that are progress, not trouble; anything else (Failed, Unknown) is marked.
_MACHINE_OK = {"Running": True, "Provisioned": True, "Provisioning": False, "Pending": False, "Deleting": False}
# substrate -> the `Names` of its (CCM Deployment, CSI controller Deployment), as the substrate renders them.
_CONTROLLERS = {"proxmox": ("ccm", "csi_controller"), "kubevirt": ("kccm", "kubevirt_csi_controller")}


# Condition reasons that need a person (the rest of a False condition is the operator still waiting).
_FAILURE_REASONS = frozenset(
    {Reason.INVALID_SPEC, Reason.API_ERROR, Reason.MISSING_API, Reason.CLUSTER_NOT_FOUND,
     Reason.CREDENTIALS_NOT_FOUND, Reason.KAMAJI_TOO_OLD, Reason.KAMAJI_MISSING, *CredentialsFinding}
)


class Mark(StrEnum):
    OK = "ok"
    PROGRESS = "progress"
    WRONG = "wrong"
    INFO = "info"


SYMBOL = {Mark.OK: "✓", Mark.PROGRESS: "…", Mark.WRONG: "✗", Mark.INFO: "·"}


@dataclass
class TreeNode:
    label: str
    mark: Mark = Mark.INFO
    detail: str = ""
    next: str = ""
    children: list[TreeNode] = field(default_factory=list)

    def add(self, child: TreeNode) -> TreeNode:
        self.children.append(child)
        return child

    def data(self) -> Obj:
        out: Obj = {"label": self.label, "mark": self.mark.value}
        if self.detail:
            out["detail"] = self.detail
        if self.next:
            out["next"] = self.next
        if self.children:
            out["children"] = [c.data() for c in self.children]
        return out

    def wrong(self) -> list[TreeNode]:
        own = [self] if self.mark is Mark.WRONG else []
        return own + [w for c in self.children for w in c.wrong()]


def _status(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return (obj or {}).get("status") or {}


def _condition(obj: Mapping[str, Any] | None, kind: str = "Ready") -> Mapping[str, Any]:
    return next((c for c in _status(obj).get("conditions") or [] if c.get("type") == kind), {})


def _mark(ok: bool) -> Mark:
    return Mark.OK if ok else Mark.WRONG


async def _list(api: KubeClient, api_version: str, kind: str, namespace: str | None, **labels: str) -> list[Obj]:
    res = await api.resource(api_version, kind)
    return [] if res is None else await api.list(res, namespace, labels or None)


async def _get(api: KubeClient, api_version: str, kind: str, name: str, namespace: str | None) -> Obj | None:
    res = await api.resource(api_version, kind)
    return None if res is None else await api.get(res, name, namespace)


def _conditions(parent: TreeNode, obj: Mapping[str, Any]) -> None:
    """A False condition is progress while the operator waits, wrong when its reason is a failure."""
    for cond in _status(obj).get("conditions") or []:
        ok = cond.get("status") == "True"
        mark = Mark.OK if ok else Mark.WRONG if cond.get("reason") in _FAILURE_REASONS else Mark.PROGRESS
        parent.add(TreeNode(f"{cond.get('type')}={cond.get('status')}", mark,
                            f"{cond.get('reason', '')}: {cond.get('message', '')}".strip(": ")))


async def describe_tenant(
    api: KubeClient, namespace: str, name: str, now: datetime.datetime, tenant_timeout: float = 5.0
) -> TreeNode:
    """The tree of one tenant; raises only when the management cluster itself fails."""
    body = await _get(api, API, "TenantCluster", name, namespace)
    if body is None:
        return TreeNode(f"TenantCluster {namespace}/{name}", Mark.WRONG, "not found",
                        f"kubectl get tenantclusters -n {namespace}")
    status = _status(body)
    ready = _condition(body)
    root = TreeNode(
        f"TenantCluster {namespace}/{name}",
        Mark.OK if ready.get("status") == "True" else Mark.PROGRESS,
        f"phase {status.get('phase', '-')}, endpoint {status.get('endpoint', '-')}, "
        f"age {age(body['metadata'].get('creationTimestamp'), now)}",
    )
    _conditions(root.add(TreeNode("conditions")), body)
    _upgrade(root, status)
    _pending(root, status)
    _restore(root, status)
    if body["metadata"].get("deletionTimestamp"):
        _teardown(root, status.get("teardown") or {})
    pools = await _list(api, API, "NodePool", namespace)
    docs = [body, *(p for p in pools if (p.get("spec") or {}).get("cluster") == name)]
    try:
        cluster = parse_tenant_documents([_as_written(d) for d in docs]).clusters[0]
    except InvalidInput as exc:
        root.add(TreeNode("spec", Mark.WRONG, "; ".join(str(p) for p in exc.problems),
                          "fix the TenantCluster/NodePools; the operator applies nothing until then"))
        return root
    names = Names(cluster)
    tenant = await _read_tenant(api, cluster, names, tenant_timeout)
    await _capi(api, root, namespace, name)
    ccm = str(getattr(names, _CONTROLLERS[cluster.spec.substrate][0]))
    placed = await _pools(api, root, namespace, name, now, tenant, ccm)
    root.add(tenant.node)
    for node in tenant.nodes:
        if node["metadata"]["name"] not in placed:
            tenant.node.add(_node(node, None, ccm, namespace))
    await _storage(api, root, names, cluster.spec.substrate, tenant)
    await _helm_releases(api, root, namespace, name)
    await _backup(api, root, cluster, body)
    return root


def _restore(root: TreeNode, status: Mapping[str, Any]) -> None:
    restore = status.get("restore") or {}
    if not restore:
        return
    phase = restore.get("phase")
    mark = Mark.OK if phase == "Done" else Mark.WRONG if phase == "Failed" else Mark.PROGRESS
    source = restore.get("from") or {}
    what = f"{phase} ({restore.get('mode')}, backup {restore.get('backup')}): {restore.get('message')}"
    node = root.add(TreeNode(f"restore from {source.get('namespace')}/{source.get('name')}", mark, what,
                             "delete the TenantCluster and create it again" if phase == "Failed" else ""))
    node.add(TreeNode("phases", Mark.INFO, "Importing (control plane at 0) -> Scrubbing -> Done"))


async def _backup(api: KubeClient, root: TreeNode, cluster: TenantCluster, body: Mapping[str, Any]) -> None:
    if cluster.spec.backup is None:
        return
    fresh: Mapping[str, Any] = next(
        (c for c in _status(body).get("conditions") or [] if c.get("type") == "BackupFresh"), {})
    info = await last_backup(api, cluster)
    mark = Mark.WRONG if fresh.get("status") == "False" or "error" in info else Mark.OK if info.get("last") \
        else Mark.PROGRESS
    node = root.add(TreeNode(f"backup ({cluster.spec.backup.schedule} UTC, keep {cluster.spec.backup.keep})", mark,
                             backup_line(info), f"tenantctl backup list {cluster.metadata.name} -n "
                             f"{cluster.metadata.namespace}" if mark is Mark.WRONG else ""))
    if fresh:
        node.add(TreeNode(f"BackupFresh={fresh.get('status')}", Mark.INFO,
                          f"{fresh.get('reason')}: {fresh.get('message')}"))


def _upgrade(root: TreeNode, status: Mapping[str, Any]) -> None:
    """What runs where, and during an upgrade its stage and what it waits for."""
    upgrade, versions = status.get("upgrade") or {}, status.get("versions") or {}
    if not upgrade and not versions:
        return
    if not upgrade:
        root.add(TreeNode("versions", Mark.OK, f"control plane {versions.get('controlPlane', '-')}"))
        return
    target = upgrade.get("target") or {}
    stage = f"{upgrade.get('stage')}" + (f" {upgrade['pool']}" if upgrade.get("pool") else "")
    node = root.add(TreeNode(
        "upgrade", Mark.WRONG if upgrade.get("stalled") else Mark.PROGRESS,
        f"to {target.get('kubernetes')} / Talos {target.get('talos')}: stage {stage}, waiting for "
        f"{upgrade.get('waiting')}" + (f"; then pools {', '.join(upgrade['remaining'])}" if upgrade.get("remaining")
                                       else ""),
        upgrade.get("stalled") or "",
    ))
    node.add(TreeNode("control plane", Mark.INFO, str(versions.get("controlPlane", "-"))))
    for pool, runs in sorted((versions.get("pools") or {}).items()):
        node.add(TreeNode(f"pool {pool}", Mark.INFO, f"{runs.get('kubernetes')} / Talos {runs.get('talos')}"))


def _pending(root: TreeNode, status: Mapping[str, Any]) -> None:
    """What the operator holds back until the tenant's patch policy, or a roll of the pool's own, moves it."""
    pending = status.get("pending") or {}
    if not pending:
        return
    node = root.add(TreeNode("pending", Mark.INFO, "held back across a tenantctl upgrade"))
    if pending.get("kubernetes"):
        node.add(TreeNode(f"patch {pending['kubernetes']}", Mark.INFO, str(pending.get("reason") or ""),
                          "spec.patchUpgrades (or write the patch in spec.version)"))
    for line in pending.get("render") or ():
        node.add(TreeNode("machine template kept", Mark.INFO, str(line)))


def _as_written(doc: Mapping[str, Any]) -> Obj:
    return {k: v for k, v in doc.items() if k in ("apiVersion", "kind", "metadata", "spec")}


def _teardown(root: TreeNode, teardown: Mapping[str, Any]) -> None:
    node = root.add(TreeNode("teardown", Mark.PROGRESS, "deleting"))
    for key, value in teardown.items():
        node.add(TreeNode(str(key), Mark.INFO, str(value)))


async def _capi(api: KubeClient, root: TreeNode, namespace: str, name: str) -> None:
    cluster = await _get(api, CAPI, "Cluster", name, namespace)
    if cluster is None:
        root.add(TreeNode(f"Cluster {name}", Mark.WRONG, "not found", "the TenantCluster's Applied condition"))
    else:
        phase = _status(cluster).get("phase", "-")
        endpoint = (cluster.get("spec") or {}).get("controlPlaneEndpoint") or {}
        where = f"{endpoint.get('host')}:{endpoint.get('port')}" if endpoint.get("host") else "-"
        root.add(TreeNode(f"Cluster {name}", Mark.OK if phase == "Provisioned" else Mark.PROGRESS,
                          f"phase {phase}, controlPlaneEndpoint {where}"))
    kcp = await _get(api, "controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane", name, namespace)
    if kcp is None:
        root.add(TreeNode(f"KamajiControlPlane {name}", Mark.WRONG, "not found",
                          "the TenantCluster's Applied condition"))
        return
    want = int((kcp.get("spec") or {}).get("replicas") or 0)
    have = int(_status(kcp).get("readyReplicas") or 0)
    version = _status(kcp).get("version") or (kcp.get("spec") or {}).get("version", "-")
    node = root.add(TreeNode(f"KamajiControlPlane {name}", Mark.OK if have >= want > 0 else Mark.WRONG,
                             f"ready {have}/{want}, version {version}"))
    if node.mark is Mark.WRONG:
        node.next = f"kubectl -n {namespace} get tenantcontrolplane {name} and its apiserver pods"


async def _pools(
    api: KubeClient, root: TreeNode, namespace: str, name: str, now: datetime.datetime, tenant: TenantView, ccm: str
) -> set[str]:
    """MachineDeployments → Machines → their tenant Nodes; returns the Node names placed under a Machine."""
    placed: set[str] = set()
    nodes = {n["metadata"]["name"]: n for n in tenant.nodes}
    for md in sorted(await _list(api, CAPI, "MachineDeployment", namespace, **{CLUSTER_LABEL: name}),
                     key=lambda o: str(o["metadata"]["name"])):
        md_name = md["metadata"]["name"]
        pool = (md["metadata"].get("labels") or {}).get(POOL_LABEL, "-")
        want, have = int((md.get("spec") or {}).get("replicas") or 0), int(_status(md).get("readyReplicas") or 0)
        md_node = root.add(TreeNode(f"NodePool {pool} → MachineDeployment {md_name}",
                                    Mark.OK if have >= want else Mark.PROGRESS, f"ready {have}/{want}"))
        machines = await _list(api, CAPI, "Machine", namespace, **{DEPLOYMENT_LABEL: md_name})
        for machine in sorted(machines, key=lambda o: str(o["metadata"]["name"])):
            item = md_node.add(await _machine(api, machine, now))
            node_name = (_status(machine).get("nodeRef") or {}).get("name")
            if isinstance(node_name, str) and node_name in nodes:
                item.add(_node(nodes[node_name], machine, ccm, namespace))
                placed.add(node_name)
    return placed


async def _machine(api: KubeClient, machine: Obj, now: datetime.datetime) -> TreeNode:
    meta, status, spec = machine["metadata"], _status(machine), machine.get("spec") or {}
    phase = str(status.get("phase", "Unknown"))
    node_name = (status.get("nodeRef") or {}).get("name", "-")
    failure = status.get("failureMessage") or status.get("failureReason") or ""
    detail = (f"phase {phase}, node {node_name}, providerID {spec.get('providerID') or '-'}, "
              f"age {age(meta.get('creationTimestamp'), now)}")
    ok = _MACHINE_OK.get(phase)
    node = TreeNode(f"Machine {meta['name']}", Mark.OK if ok else Mark.PROGRESS if ok is False else Mark.WRONG, detail)
    infra_ref = spec.get("infrastructureRef") or {}
    infra = None
    if infra_ref.get("name") and (failure or not ok):
        infra = await _get(api, infra_ref.get("apiVersion", ""), infra_ref.get("kind", ""), infra_ref["name"],
                           meta.get("namespace"))
    infra_failure = _status(infra).get("failureMessage") or _failing_condition(infra)
    if failure or infra_failure:
        node.mark = Mark.WRONG
        node.detail += f", failure: {failure or infra_failure}"
        kind = infra_ref.get("kind", "infrastructure machine")
        node.next = (f"{kind} {infra_ref.get('name')}: {infra_failure or 'no message'}; "
                     f"kubectl -n {meta.get('namespace')} describe {kind.lower()} {infra_ref.get('name')}, "
                     "then the infrastructure provider's controller logs")
    return node


def _failing_condition(obj: Mapping[str, Any] | None) -> str:
    for cond in _status(obj).get("conditions") or []:
        if cond.get("status") == "False" and cond.get("message"):
            return f"{cond.get('type')} {cond.get('reason', '')}: {cond['message']}"
    return ""


@dataclass
class TenantView:
    """What the tenant's API told, read once: its Nodes, Pods and StorageClasses, or why not."""

    node: TreeNode
    answered: bool = False
    nodes: list[Obj] = field(default_factory=list)
    pods: list[Obj] = field(default_factory=list)
    classes: list[Obj] = field(default_factory=list)


async def _read_tenant(api: KubeClient, cluster: Any, names: Names, timeout: float) -> TenantView:
    view = TenantView(TreeNode("tenant API"))
    try:
        connection = await admin_connection(api, cluster)
    except UnusableKubeconfig as exc:
        view.node.mark, view.node.detail = Mark.WRONG, f"admin kubeconfig Secret {names.admin_kubeconfig} {exc}"
        return view
    if connection is None:
        view.node.mark = Mark.PROGRESS
        view.node.detail = f"no admin kubeconfig Secret {names.admin_kubeconfig} yet"
        return view
    settings = OperatorSettings(tenant_probe_timeout=timeout, retry=RetryPolicy(timeout=timeout, backoffs=()))
    try:
        async with tenant_client(connection, settings) as tenant:
            await tenant.probe(timeout)
            view.nodes = sorted(await _list(tenant, "v1", "Node", None), key=lambda o: str(o["metadata"]["name"]))
            view.pods = await _list(tenant, "v1", "Pod", None)
            view.classes = await _list(tenant, "storage.k8s.io/v1", "StorageClass", None)
    except APIError as exc:
        view.node.mark = Mark.WRONG
        view.node.detail = f"{connection.server} did not answer within {timeout:g}s: {exc.message}"
        view.node.next = f"kubectl -n {names.namespace} get tenantcontrolplane {names.control_plane} and its pods"
        return view
    view.answered = True
    view.node.mark, view.node.detail = Mark.OK, f"answers through the admin kubeconfig, {len(view.nodes)} Node(s)"
    return view


def _node(node: Obj, machine: Obj | None, ccm: str, namespace: str) -> TreeNode:
    node_name = node["metadata"]["name"]
    ready = _condition(node).get("status") == "True"
    taints = [t.get("key") for t in (node.get("spec") or {}).get("taints") or []]
    provider_id = (node.get("spec") or {}).get("providerID")
    detail = f"Ready={'True' if ready else 'False'}, providerID {provider_id or '-'}"
    if machine is None:
        detail += ", no Machine"
    item = TreeNode(f"Node {node_name}", _mark(ready), detail)
    if UNINITIALIZED_TAINT in taints:
        item.mark = Mark.WRONG
        item.detail += ", still tainted uninitialized: the CCM has not initialised it"
        item.next = f"kubectl -n {namespace} logs deploy/{ccm} (the management cluster's CCM for this tenant)"
    elif not provider_id:
        item.mark = Mark.WRONG
        item.detail += ", no providerID"
        item.next = f"kubectl -n {namespace} logs deploy/{ccm}"
    elif not ready:
        item.next = f"the Node's conditions: kubectl describe node {node_name} (through the tenant kubeconfig)"
    return item


async def _storage(api: KubeClient, root: TreeNode, names: Names, substrate: str, tenant: TenantView) -> None:
    storage = root.add(TreeNode("storage chain"))
    ccm_name, csi_name = (str(getattr(names, attr)) for attr in _CONTROLLERS[substrate])
    for role, deploy_name in (("CCM", ccm_name), ("CSI controller", csi_name)):
        deploy = await _get(api, "apps/v1", "Deployment", deploy_name, names.namespace)
        if deploy is None:
            storage.add(TreeNode(f"{role} Deployment {deploy_name}", Mark.WRONG, "not found",
                                 "the TenantCluster's Applied condition"))
            continue
        want = int((deploy.get("spec") or {}).get("replicas") or 1)
        have = int(_status(deploy).get("readyReplicas") or 0)
        node = storage.add(TreeNode(f"{role} Deployment {deploy_name}", _mark(have >= want), f"ready {have}/{want}"))
        if have < want:
            node.next = f"kubectl -n {names.namespace} logs deploy/{deploy_name}"
    if not tenant.answered:
        storage.add(TreeNode("CSI node pods, StorageClasses", Mark.INFO, "not read: the tenant API did not answer"))
        return
    on_node = {(p.get("spec") or {}).get("nodeName"): p for p in tenant.pods if _is_csi_node_pod(p)}
    csi = storage.add(TreeNode("CSI node pods"))
    for node_name in (n["metadata"]["name"] for n in tenant.nodes):
        pod = on_node.get(node_name)
        if pod is None:
            csi.add(TreeNode(f"on {node_name}", Mark.WRONG, "no CSI node pod",
                             "the csi HelmRelease and the DaemonSet's events in the tenant"))
            continue
        running = _status(pod).get("phase") == "Running"
        csi.add(TreeNode(f"on {node_name}", _mark(running), f"{pod['metadata']['name']} {_status(pod).get('phase')}"))
    classes = storage.add(TreeNode("StorageClasses"))
    if not tenant.classes:
        classes.mark, classes.next = Mark.WRONG, "none in the tenant: the csi HelmRelease"
    for sc in sorted(tenant.classes, key=lambda o: str(o["metadata"]["name"])):
        default = (sc["metadata"].get("annotations") or {}).get("storageclass.kubernetes.io/is-default-class")
        classes.add(TreeNode(sc["metadata"]["name"], Mark.OK,
                             f"{sc.get('provisioner', '-')}{', default' if default == 'true' else ''}"))


def _is_csi_node_pod(pod: Mapping[str, Any]) -> bool:
    name = str(pod["metadata"].get("name", ""))
    component = (pod["metadata"].get("labels") or {}).get("app.kubernetes.io/component", "")
    return "csi" in name and ("node" in name or component == "node")


async def _helm_releases(api: KubeClient, root: TreeNode, namespace: str, name: str) -> None:
    releases = await _list(api, "helm.toolkit.fluxcd.io/v2", "HelmRelease", namespace, **{CLUSTER_LABEL: name})
    parent = root.add(TreeNode("HelmReleases"))
    for release in sorted(releases, key=lambda o: str(o["metadata"]["name"])):
        cond = _condition(release)
        ok = {"True": True, "False": False}.get(str(cond.get("status")))
        node = parent.add(TreeNode(release["metadata"]["name"], Mark.PROGRESS if ok is None else _mark(ok),
                                   str(cond.get("message") or "no Ready condition yet")))
        if ok is False:
            node.next = (f"kubectl -n {namespace} describe helmrelease {release['metadata']['name']} "
                         "(and the tenant's pods it installs)")


def summary(root: TreeNode) -> Sequence[str]:
    return [f"{w.label}: {w.next or w.detail}" for w in root.wrong()]

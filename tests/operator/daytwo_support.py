"""A management cluster (and its tenant) as they look a while after `acme` was created: the fixture
`get`, `plan` and `describe` read, with Machines in several phases and a half-done storage chain."""

from __future__ import annotations

import copy
from typing import Any

from kube_emulator import KubeEmulator, declare
from operator_support import b64, management, seed_control_plane, seed_documents

from tenant_support import clone, load_example
from tenantctl.operator.kube.client import Connection, KubeClient
from tenantctl.operator.phases.observe import generate_talos_secrets
from tenantctl.render import Names, render_cluster
from tenantctl.spec import parse_tenant_documents

CREATED = "2026-11-28T10:00:00Z"
NOW = "2026-11-30T10:00:00Z"
NS, NAME = "tenant-acme", "acme"
MACHINES = ("cluster.x-k8s.io/v1beta1/machines", "Machine", True, ())
PROXMOX_MACHINES = ("infrastructure.cluster.x-k8s.io/v1alpha1/proxmoxmachines", "ProxmoxMachine", True, ())
TENANT_KINDS = [
    ("v1/nodes", "Node", False, ()),
    ("apps/v1/daemonsets", "DaemonSet", True, ()),
    ("storage.k8s.io/v1/storageclasses", "StorageClass", False, ()),
]
PLURALS = {
    "Secret": "v1/secrets",
    "TenantCluster": "tenantctl.io/v1alpha1/tenantclusters",
    "Cluster": "cluster.x-k8s.io/v1beta1/clusters",
    "MachineDeployment": "cluster.x-k8s.io/v1beta1/machinedeployments",
    "MachineHealthCheck": "cluster.x-k8s.io/v1beta1/machinehealthchecks",
    "KamajiControlPlane": "controlplane.cluster.x-k8s.io/v1alpha1/kamajicontrolplanes",
    "ProxmoxCluster": "infrastructure.cluster.x-k8s.io/v1alpha1/proxmoxclusters",
    "ProxmoxMachineTemplate": "infrastructure.cluster.x-k8s.io/v1alpha1/proxmoxmachinetemplates",
    "TalosConfigTemplate": "bootstrap.cluster.x-k8s.io/v1alpha3/talosconfigtemplates",
    "HelmRelease": "helm.toolkit.fluxcd.io/v2/helmreleases",
    "Issuer": "cert-manager.io/v1/issuers",
    "Certificate": "cert-manager.io/v1/certificates",
    "Deployment": "apps/v1/deployments",
    "ServiceAccount": "v1/serviceaccounts",
    "ConfigMap": "v1/configmaps",
    "Role": "rbac.authorization.k8s.io/v1/roles",
    "RoleBinding": "rbac.authorization.k8s.io/v1/rolebindings",
    "ClusterRole": "rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "rbac.authorization.k8s.io/v1/clusterrolebindings",
}
TALOS = {k: b64(v) for k, v in generate_talos_secrets().items()}


def url(emulator: KubeEmulator) -> str:
    return str(emulator.url).rstrip("/")


UPGRADING: dict[str, Any] = {
    "phase": "Ready", "endpoint": "192.0.2.10",
    "versions": {"controlPlane": "v1.33.13", "pools": {"md0": {"kubernetes": "v1.33.13", "talos": "v1.13.6"}}},
    "upgrade": {"target": {"kubernetes": "v1.34.9", "talos": "v1.13.6"}, "stage": "ControlPlane",
                "waiting": "the control plane to report v1.34.9", "remaining": ["md0"]},
}
"""A TenantCluster status the operator writes while the control plane upgrades."""


def documents() -> list[dict[str, Any]]:
    docs = clone(load_example("proxmox.yaml"))
    for d in docs:
        d["metadata"]["creationTimestamp"] = CREATED
    return docs


def seed_management(mgmt: KubeEmulator, docs: list[dict[str, Any]], tenant_url: str | None) -> None:
    """The documents with the status the operator wrote, plus what Kamaji and cert-manager wrote."""
    management(mgmt)
    declare(mgmt, [MACHINES, PROXMOX_MACHINES])
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, tenant_url)
    tc = mgmt.get("tenantctl.io/v1alpha1/tenantclusters", NS, NAME)
    assert tc is not None
    tc["status"] = {
        "phase": "Provisioning",
        "endpoint": "192.0.2.10",
        "conditions": [{"type": "Ready", "status": "False", "reason": "WaitingForTenantAPI",
                        "message": "tenant apiserver does not answer"}],
    }
    mgmt.put("tenantctl.io/v1alpha1/tenantclusters", tc)
    mgmt.put("v1/secrets", {"metadata": {"name": Names(_cluster(docs)).talos_secrets, "namespace": NS,
                                         "labels": {"app.kubernetes.io/managed-by": "tenantctl",
                                                    "tenantctl.io/cluster": NAME}},
                            "type": "Opaque", "data": TALOS})


def _cluster(docs: list[dict[str, Any]]) -> Any:
    return parse_tenant_documents(docs).clusters[0]


async def applied(mgmt: KubeEmulator, docs: list[dict[str, Any]], domain: str | None = None) -> list[dict[str, Any]]:
    """What the operator applied for `docs`: rendered with the observations the cluster holds, stored."""
    from tenantctl.operator.daytwo.plan import observe_read_only

    tenant = parse_tenant_documents(docs)
    cluster = tenant.clusters[0]
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        observation = await observe_read_only(api, cluster, domain)
    objects = render_cluster(cluster, tenant.pools_of(cluster), observation.observed)
    for obj in objects:
        mgmt.put(PLURALS[obj["kind"]], copy.deepcopy(obj))
    return objects


def set_status(mgmt: KubeEmulator, kind: str, name: str, status: dict[str, Any], namespace: str | None = NS) -> None:
    obj = mgmt.get(PLURALS.get(kind, kind), namespace, name)
    assert obj is not None, (kind, name)
    obj["status"] = status
    mgmt.put(PLURALS.get(kind, kind), obj)


def machine(name: str, phase: str, node: str | None, provider_id: str | None, **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Machine",
        "metadata": {"name": name, "namespace": NS, "creationTimestamp": "2026-11-30T09:40:00Z",
                     "labels": {"cluster.x-k8s.io/cluster-name": NAME,
                                "cluster.x-k8s.io/deployment-name": f"{NAME}-md0"}},
        "spec": {"clusterName": NAME, **({"providerID": provider_id} if provider_id else {}),
                 "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1",
                                       "kind": "ProxmoxMachine", "name": name}},
        "status": {"phase": phase, **({"nodeRef": {"kind": "Node", "name": node}} if node else {}), **status},
    }


def node(name: str, *, ready: bool, provider_id: str | None, uninitialized: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"providerID": provider_id} if provider_id else {}
    if uninitialized:
        spec["taints"] = [{"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true",
                           "effect": "NoSchedule"}]
    return {"metadata": {"name": name, "creationTimestamp": "2026-11-30T09:45:00Z"}, "spec": spec,
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


async def seed_day_two(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    """Three workers wanted: one Running with its Node initialised, one whose Node the CCM has not
    initialised yet, one stuck provisioning on Proxmox; the CSI controller down and its release failed."""
    docs = documents()
    docs[1]["spec"]["replicas"] = 3
    seed_management(mgmt, docs, url(tenant))
    await applied(mgmt, docs)
    set_status(mgmt, "Cluster", NAME, {"phase": "Provisioned"})
    cluster = mgmt.get(PLURALS["Cluster"], NS, NAME)
    assert cluster is not None
    cluster["spec"]["controlPlaneEndpoint"] = {"host": "192.0.2.10", "port": 6443}
    mgmt.put(PLURALS["Cluster"], cluster)
    set_status(mgmt, "KamajiControlPlane", NAME, {"readyReplicas": 2, "version": "v1.33.6"})
    set_status(mgmt, "MachineDeployment", f"{NAME}-md0", {"replicas": 3, "readyReplicas": 1})
    set_status(mgmt, "Deployment", f"{NAME}-pccm", {"readyReplicas": 1})
    set_status(mgmt, "Deployment", f"{NAME}-pcsi-controller", {"readyReplicas": 0})
    set_status(mgmt, "HelmRelease", f"{NAME}-cilium", {"conditions": [
        {"type": "Ready", "status": "True", "reason": "InstallSucceeded", "message": "Helm install succeeded"}]})
    set_status(mgmt, "HelmRelease", f"{NAME}-coredns", {"conditions": [
        {"type": "Ready", "status": "True", "reason": "InstallSucceeded", "message": "Helm install succeeded"}]})
    set_status(mgmt, "HelmRelease", f"{NAME}-csi", {"conditions": [
        {"type": "Ready", "status": "False", "reason": "InstallFailed",
         "message": "Helm install failed: context deadline exceeded"}]})
    machines = [
        machine(f"{NAME}-md0-a", "Running", f"{NAME}-md0-a", "proxmox://1b0d7a1e-aaaa"),
        machine(f"{NAME}-md0-b", "Running", f"{NAME}-md0-b", None),
        machine(f"{NAME}-md0-c", "Provisioning", None, None),
    ]
    for m in machines:
        mgmt.put(MACHINES[0], m)
    mgmt.put(PROXMOX_MACHINES[0], {
        "metadata": {"name": f"{NAME}-md0-c", "namespace": NS},
        "status": {"ready": False, "failureMessage": "no node in allowedNodes has 8G of free memory"}})
    declare(tenant, TENANT_KINDS)
    tenant.put("v1/nodes", node(f"{NAME}-md0-a", ready=True, provider_id="proxmox://1b0d7a1e-aaaa"))
    tenant.put("v1/nodes", node(f"{NAME}-md0-b", ready=False, provider_id=None, uninitialized=True))
    tenant.put("v1/pods", {"metadata": {"name": "proxmox-csi-plugin-node-x7k2p", "namespace": "csi-proxmox"},
                           "spec": {"nodeName": f"{NAME}-md0-a"}, "status": {"phase": "Running"}})
    tenant.put("storage.k8s.io/v1/storageclasses", {
        "metadata": {"name": "pve-zfs", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "csi.proxmox.sinextra.dev"})

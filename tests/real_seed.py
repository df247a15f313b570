"""The world around a tenant on the real API servers: what the platform admin, Kamaji, Cluster API and
cert-manager would write, written by the test as admin (there are no such controllers here), and the
operator run as the ServiceAccount `tenantctl install` renders, with exactly the RBAC it renders.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import yaml
from operator_support import b64, capmox_credentials, kamaji_labels, running_operator_on

from real_api import Api
from real_control_plane import ControlPlane
from tenantctl.operator.config.identity import Subject
from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.kube.client import Connection
from tenantctl.operator.phases.rights import rights_binding
from tenantctl.operator.runtime.handlers import OperatorContext
from tenantctl.render import Names
from tenantctl.spec import parse_tenant_documents

OPERATOR_NAMESPACE = "tenantctl-system"
OPERATOR_SA = "tenantctl-operator"


def seed_tenant(api: Api, docs: list[dict[str, Any]]) -> None:
    """The TenantCluster and NodePools as a user applies them, in a namespace the platform admin created and
    opened to the operator (`install --tenant-namespace`)."""
    for doc in docs:
        open_namespace(api, doc["metadata"]["namespace"])
        api.apply(doc, manager="kubectl")


def open_namespace(api: Api, namespace: str) -> None:
    """The namespace, and the RoleBinding `tenantctl install --tenant-namespace` renders in it."""
    api.namespace(namespace)
    api.apply(rights_binding(namespace, Subject("ServiceAccount", OPERATOR_SA, OPERATOR_NAMESPACE)),
              manager="tenantctl-install")


def seed_control_plane(api: Api, docs: list[dict[str, Any]], tenant: ControlPlane | None,
                       *, address: str = "192.0.2.10", capmox_secret: bool = True) -> None:
    """What Kamaji, cert-manager and the cloud write for the tenant, and (proxmox) the capmox Secret the
    platform admin applies before it. `tenant`: the real API server standing for the tenant's. Kamaji is
    played here on purpose (see operator_support.seed_control_plane); test_upstream_kamaji.py runs it."""
    cluster = parse_tenant_documents(docs).clusters[0]
    names, ns = Names(cluster), cluster.metadata.namespace
    api.namespace(ns)
    service: dict[str, Any] = {"apiVersion": "v1", "kind": "Service",
                               "metadata": {"name": names.apiserver_service, "namespace": ns},
                               "spec": {"ports": [{"name": "kube-apiserver", "port": 6443}]}}
    if cluster.spec.substrate == "proxmox":
        service["spec"]["type"] = "LoadBalancer"
        api.apply(service, manager="kamaji")
        api.merge_status("v1", "Service", ns, names.apiserver_service,
                         {"loadBalancer": {"ingress": [{"ip": address}]}})
    else:
        # The server allocates the ClusterIPs from its service range (10.0.0.0/24 here): a chosen one may be
        # taken already by another test's Service.
        service["spec"]["type"] = "ClusterIP"
        api.apply(service, manager="kamaji")
        api.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "kube-dns", "namespace": "kube-system"},
                   "spec": {"ports": [{"name": "dns", "port": 53, "protocol": "UDP"}]}}, manager="kubeadm")
    if cluster.spec.substrate == "proxmox" and capmox_secret:
        api.apply({"apiVersion": "v1", "kind": "Secret", **capmox_credentials(docs)}, manager="admin")
    ca = tenant.ca.pem if tenant is not None else b"KUBE CA"
    api.apply({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": names.kubernetes_ca, "namespace": ns,
                            "labels": kamaji_labels(names.control_plane, "ca")},
               "data": {"ca.crt": b64(ca)}}, manager="kamaji")
    api.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": names.talos_ca, "namespace": ns},
               "data": {"tls.crt": b64("TALOS CA")}}, manager="cert-manager")
    if tenant is not None:
        api.apply({"apiVersion": "v1", "kind": "Secret",
                   "metadata": {"name": names.admin_kubeconfig, "namespace": ns,
                                "labels": kamaji_labels(names.control_plane, "admin-kubeconfig")},
                   "data": {"super-admin.svc": b64(yaml.safe_dump(tenant.admin_kubeconfig)),
                            "admin.svc": b64(yaml.safe_dump(tenant.admin_kubeconfig))}}, manager="kamaji")


def operator_connection(management: ControlPlane) -> Connection:
    """The operator's identity: a token of the ServiceAccount `install` renders, bound by its RBAC only."""
    return Connection.from_kubeconfig(management.kubeconfig_for(OPERATOR_NAMESPACE, OPERATOR_SA))


def running_operator(connection: Connection,
                     settings: OperatorSettings) -> contextlib.AbstractAsyncContextManager[OperatorContext]:
    """The operator's kopf engine on a real API server: its first list of every kind takes longer than on the
    emulator, and so does its stop."""
    return running_operator_on(connection, settings, start=30.0, stop_within=30.0)


async def eventually(check: Callable[[], Any], timeout: float = 30.0, interval: float = 0.2, what: str = "") -> Any:
    """Poll `check` (run in a thread: it may block on the API) until it returns something truthy."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    value: Any = None
    while loop.time() < deadline:
        value = await asyncio.to_thread(check)
        if value:
            return value
        await asyncio.sleep(interval)
    raise AssertionError(f"not within {timeout:g}s: {what or check}; last value: {value!r}")


VOLUMES = (("pv-a", "local-zfs:vm-1-disk-a", "app", "data-a"), ("pv-b", "local-zfs:vm-1-disk-b", "app", "data-b"),
           ("pv-c", "local-zfs:c", "db", "data-c"))
"""(PersistentVolume, its CSI handle, the claim's namespace and name) of `tenant_volumes`."""


def tenant_volumes(tenant: Api) -> None:
    """Three disks in the tenant: two claims mounted by one pod, one by a pod elsewhere, an idle pod. The API
    server's admission adds the pvc-protection finalizer, as in a real cluster."""
    for pv, disk, ns, claim in VOLUMES:
        tenant.apply({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": pv},
                      "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                               "persistentVolumeReclaimPolicy": "Delete",
                               "claimRef": {"namespace": ns, "name": claim},
                               "csi": {"driver": "csi.proxmox.sinextra.dev", "volumeHandle": disk}}})
        tenant.namespace(ns)
        tenant.apply({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": claim, "namespace": ns},
                      "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                               "volumeName": pv, "storageClassName": ""}})
    container = [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]
    both = [{"name": n, "persistentVolumeClaim": {"claimName": n}} for n in ("data-a", "data-b")]
    tenant.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "both", "namespace": "app"},
                  "spec": {"containers": container, "volumes": both}})
    tenant.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "idle", "namespace": "app"},
                  "spec": {"containers": container}})
    tenant.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pg", "namespace": "db"},
                  "spec": {"containers": container,
                           "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data-c"}}]}})


def play_storage(tenant: Api, release: bool) -> list[str]:
    """One step of what the tenant's kube-controller-manager and CSI driver do at teardown: a deleted claim
    no pod mounts loses its protection finalizer; with `release`, each volume whose claim is gone is
    deleted with its disk. The handles of the disks freed by this step."""
    mounted = {(p["metadata"]["namespace"], v["persistentVolumeClaim"]["claimName"])
               for p in tenant.list("v1", "Pod") for v in p["spec"].get("volumes") or []
               if v.get("persistentVolumeClaim")}
    claims = {}
    for claim in tenant.list("v1", "PersistentVolumeClaim"):
        meta = claim["metadata"]
        key = (meta["namespace"], meta["name"])
        claims[key] = claim
        if meta.get("deletionTimestamp") and key not in mounted and meta.get("finalizers"):
            tenant.merge("v1", "PersistentVolumeClaim", *key, {"metadata": {"finalizers": None}})
    freed = []
    present = {pv["metadata"]["name"] for pv in tenant.list("v1", "PersistentVolume")}
    for pv, disk, ns, claim in VOLUMES:
        if release and pv in present and (ns, claim) not in claims:
            tenant.merge("v1", "PersistentVolume", None, pv, {"metadata": {"finalizers": None}})
            tenant.delete("v1", "PersistentVolume", None, pv)
            freed.append(disk)
    return freed

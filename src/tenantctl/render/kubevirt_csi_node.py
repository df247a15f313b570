"""KubeVirt CSI inside the tenant: the node plugin DaemonSet, CSIDriver, RBAC and StorageClasses.

Rendered by tenantctl and applied by the operator through the admin kubeconfig, like the bootstrap
objects, rather than as a Helm release: `kubevirt/csi-driver` publishes neither a chart nor release
tags, and Cozystack's `kubevirt-csi-node` chart is built into its platform artifacts, not served from
any chart repository. A chart address nobody serves leaves every KubeVirt tenant without volumes; these
few objects need no chart at all. The shape follows upstream `deploy/tenant/base/deploy.yaml` and
Cozystack's `packages/system/kubevirt-csi-node` (which adds the memory limits: without one the Talos
OOM handler may pick this pod first). The controller half runs in the management cluster
(`render/kubevirt_csi.py`).
"""

from __future__ import annotations

from typing import Any

from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.meta import DEFAULT_CLASS_ANNOTATION, cluster_labels
from tenantctl.spec import TenantCluster
from tenantctl.spec.storage import default_storage_class

__all__ = [
    "KUBEVIRT_CSI_DRIVER",
    "KUBEVIRT_CSI_NAMESPACE",
    "render_kubevirt_csi_node",
    "render_kubevirt_storage_classes",
]

KUBEVIRT_CSI_DRIVER = "csi.kubevirt.io"
# kube-system: it exists from the first moment, so nothing waits on a Namespace being created.
KUBEVIRT_CSI_NAMESPACE = "kube-system"
_NODE = "kubevirt-csi-node"
_RBAC_API = "rbac.authorization.k8s.io/v1"
_HEALTH_PORT = 10300
_PLUGIN_DIR = f"/var/lib/kubelet/plugins/{KUBEVIRT_CSI_DRIVER}/"
_SOCKET = "/csi/csi.sock"
# What the node service reads and writes in the tenant (upstream's node ClusterRole, less OpenShift SCCs).
_NODE_RULES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("", ("persistentvolumes",), ("get", "list", "watch", "update", "create", "delete")),
    ("", ("persistentvolumeclaims",), ("get", "list", "watch", "update")),
    ("storage.k8s.io", ("storageclasses", "csinodes"), ("get", "list", "watch")),
    ("", ("nodes",), ("get", "list", "watch", "update", "patch")),
    ("storage.k8s.io", ("volumeattachments",), ("get", "list", "watch", "update")),
    ("storage.k8s.io", ("volumeattachments/status",), ("get", "list", "watch", "update", "patch")),
    ("", ("events",), ("list", "watch", "create", "update", "patch")),
)
# The container sets a memory limit so the Pod cgroup gets memory.max (Cozystack's daemonset test).
_DRIVER_RESOURCES = {"requests": {"cpu": "10m", "memory": "50Mi"}, "limits": {"memory": "512Mi"}}
_SIDECAR_RESOURCES = {"requests": {"cpu": "5m", "memory": "20Mi"}, "limits": {"memory": "128Mi"}}


def _host_path(name: str, path: str, kind: str | None) -> dict[str, Any]:
    source: dict[str, Any] = {"path": path}
    if kind:
        source["type"] = kind
    return {"name": name, "hostPath": source}


def _daemon_set(labels: dict[str, str], images: ImagesSpec) -> dict[str, Any]:
    selector = {"app.kubernetes.io/name": _NODE}
    driver = {
        "name": "csi-driver",
        "image": str(images.ref("kubevirt-csi-driver")),
        "imagePullPolicy": "IfNotPresent",
        "args": [
            f"--endpoint=unix:{_SOCKET}",
            "--node-name=$(KUBE_NODE_NAME)",
            "--run-node-service=true",
            "--run-controller-service=false",
            "--v=2",
        ],
        "env": [{"name": "KUBE_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        # Mounting into the kubelet's tree and formatting block devices needs the host's privileges.
        "securityContext": {"privileged": True, "allowPrivilegeEscalation": True},
        "volumeMounts": [
            {"name": "kubelet-dir", "mountPath": "/var/lib/kubelet", "mountPropagation": "Bidirectional"},
            {"name": "plugin-dir", "mountPath": "/csi"},
            {"name": "device-dir", "mountPath": "/dev"},
            {"name": "udev", "mountPath": "/run/udev"},
        ],
        "ports": [{"name": "healthz", "containerPort": _HEALTH_PORT, "protocol": "TCP"}],
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": "healthz"},
            "initialDelaySeconds": 10,
            "timeoutSeconds": 3,
            "periodSeconds": 10,
            "failureThreshold": 5,
        },
        "resources": _DRIVER_RESOURCES,
    }
    # The registry.k8s.io sidecars are distroless: no shell, so no preStop clean-up hook.
    registrar = {
        "name": "csi-node-driver-registrar",
        "image": str(images.ref("csi-node-driver-registrar")),
        "imagePullPolicy": "IfNotPresent",
        "args": [
            f"--csi-address={_SOCKET}",
            f"--kubelet-registration-path={_PLUGIN_DIR}csi.sock",
            "--v=2",
        ],
        "volumeMounts": [
            {"name": "plugin-dir", "mountPath": "/csi"},
            {"name": "registration-dir", "mountPath": "/registration"},
        ],
        "resources": _SIDECAR_RESOURCES,
    }
    liveness = {
        "name": "csi-liveness-probe",
        "image": str(images.ref("csi-livenessprobe")),
        "imagePullPolicy": "IfNotPresent",
        "args": [f"--csi-address={_SOCKET}", "--probe-timeout=3s", f"--health-port={_HEALTH_PORT}"],
        "volumeMounts": [{"name": "plugin-dir", "mountPath": "/csi"}],
        "resources": _SIDECAR_RESOURCES,
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": _NODE, "namespace": KUBEVIRT_CSI_NAMESPACE, "labels": labels},
        "spec": {
            "selector": {"matchLabels": selector},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": selector},
                "spec": {
                    "serviceAccountName": _NODE,
                    "priorityClassName": "system-node-critical",
                    # Every node mounts volumes, tainted ones included.
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [driver, registrar, liveness],
                    "volumes": [
                        _host_path("kubelet-dir", "/var/lib/kubelet", "Directory"),
                        _host_path("plugin-dir", _PLUGIN_DIR, "DirectoryOrCreate"),
                        _host_path("registration-dir", "/var/lib/kubelet/plugins_registry/", "Directory"),
                        _host_path("device-dir", "/dev", "Directory"),
                        _host_path("udev", "/run/udev", None),
                    ],
                },
            },
        },
    }


def render_kubevirt_storage_classes(cluster: TenantCluster) -> list[dict[str, Any]]:
    """One StorageClass per `spec.kubevirt.storageClasses` entry; exactly one carries the default mark."""
    labels = cluster_labels(cluster.metadata.name)
    classes = cluster.spec.kubevirt.storage_classes
    default = default_storage_class(classes)
    out: list[dict[str, Any]] = []
    for sc in classes:
        # The controller hot-plugs each volume into the worker VM; KubeVirt hot-plugs disks on SCSI.
        parameters = {"bus": "scsi"}
        if sc.infra_storage_class:
            parameters["infraStorageClassName"] = sc.infra_storage_class
        meta: dict[str, Any] = {"name": sc.name, "labels": labels}
        if sc.name == default:
            meta["annotations"] = {DEFAULT_CLASS_ANNOTATION: "true"}
        out.append(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": meta,
                "provisioner": KUBEVIRT_CSI_DRIVER,
                "allowVolumeExpansion": True,
                "reclaimPolicy": "Delete",
                "volumeBindingMode": "Immediate",
                "parameters": parameters,
            }
        )
    return out


def render_kubevirt_csi_node(cluster: TenantCluster, images: ImagesSpec) -> list[dict[str, Any]]:
    """RBAC before the DaemonSet that uses it; StorageClasses last."""
    labels = cluster_labels(cluster.metadata.name)
    binding_name = f"tenantctl:{_NODE}"
    return [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"name": KUBEVIRT_CSI_DRIVER, "labels": labels},
            "spec": {"attachRequired": True, "podInfoOnMount": True, "fsGroupPolicy": "ReadWriteOnceWithFSType"},
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": _NODE, "namespace": KUBEVIRT_CSI_NAMESPACE, "labels": labels},
        },
        {
            "apiVersion": _RBAC_API,
            "kind": "ClusterRole",
            "metadata": {"name": binding_name, "labels": labels},
            "rules": [
                {"apiGroups": [group], "resources": list(resources), "verbs": list(verbs)}
                for group, resources, verbs in _NODE_RULES
            ],
        },
        {
            "apiVersion": _RBAC_API,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": binding_name, "labels": labels},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": binding_name},
            "subjects": [{"kind": "ServiceAccount", "name": _NODE, "namespace": KUBEVIRT_CSI_NAMESPACE}],
        },
        _daemon_set(labels, images),
        *render_kubevirt_storage_classes(cluster),
    ]

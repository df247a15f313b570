"""Controllers that run in the tenant's namespace of the management cluster and drive the tenant
through its admin kubeconfig: the one place their Deployments, ServiceAccounts and RBAC are built."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tenantctl.render.kamaji import KUBECONFIG_KEY
from tenantctl.render.meta import Names, object_meta
from tenantctl.render.plain import plain_copy

__all__ = [
    "CONTROLLER_TOLERATIONS",
    "KUBECONFIG_MOUNT",
    "KUBECONFIG_PATH",
    "KUBECONFIG_VOLUME",
    "Rule",
    "container",
    "controller_deployment",
    "kubeconfig_volume",
    "service_account",
]

KUBECONFIG_VOLUME = "kubeconfig"
KUBECONFIG_MOUNT = "/etc/kubernetes/kubeconfig"
KUBECONFIG_PATH = f"{KUBECONFIG_MOUNT}/{KUBECONFIG_KEY}"
# Exactly these two: a blanket `operator: Exists` would also match node.kubernetes.io/unreachable
# with no tolerationSeconds, and the Pod would outlive the Node it runs on.
CONTROLLER_TOLERATIONS: tuple[Mapping[str, str], ...] = (
    {"key": "CriticalAddonsOnly", "operator": "Exists"},
    {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
)
_CONTAINER_SECURITY: Mapping[str, Any] = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "readOnlyRootFilesystem": True,
}
# The controller images run as the distroless nonroot user; the config init container writes as it too.
_POD_SECURITY: Mapping[str, Any] = {
    "runAsNonRoot": True,
    "runAsUser": 65532,
    "runAsGroup": 65532,
    "fsGroup": 65532,
    "seccompProfile": {"type": "RuntimeDefault"},
}
_RESOURCES: Mapping[str, Any] = {
    "requests": {"cpu": "10m", "memory": "32Mi"},
    "limits": {"cpu": "500m", "memory": "256Mi"},
}

Rule = tuple[str, Sequence[str], Sequence[str]]


def kubeconfig_volume(names: Names) -> dict[str, Any]:
    """The tenant's admin kubeconfig Kamaji writes; the Pod waits for it rather than failing."""
    return {"name": KUBECONFIG_VOLUME, "secret": {"secretName": names.admin_kubeconfig}}


def container(
    name: str,
    image: str,
    args: Sequence[str],
    mounts: Sequence[tuple[str, str]] = (),
    *,
    env: Sequence[Mapping[str, Any]] = (),
    command: Sequence[str] = (),
    writable: Sequence[str] = (),
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A hardened container; `mounts` are (volume, path) pairs, read-only unless the volume is `writable`."""
    spec: dict[str, Any] = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if command:
        spec["command"] = list(command)
    spec["args"] = list(args)
    if env:
        spec["env"] = [dict(e) for e in env]
    if mounts:
        spec["volumeMounts"] = [
            {"name": vol, "mountPath": path, **({} if vol in writable else {"readOnly": True})}
            for vol, path in mounts
        ]
    spec["resources"] = plain_copy(_RESOURCES)
    spec["securityContext"] = plain_copy(_CONTAINER_SECURITY)
    spec.update(extra or {})
    return spec


def controller_deployment(
    names: Names,
    name: str,
    service_account_name: str,
    containers: Sequence[Mapping[str, Any]],
    volumes: Sequence[Mapping[str, Any]],
    *,
    init_containers: Sequence[Mapping[str, Any]] = (),
    annotations: Mapping[str, str] | None = None,
    infra_access: bool = False,
) -> dict[str, Any]:
    """One replica, no leader election: a second copy would only fight the first over the tenant.

    `infra_access` mounts the ServiceAccount token: only KubeVirt's controllers act on this cluster."""
    selector = {"app.kubernetes.io/name": name}
    pod: dict[str, Any] = {
        "enableServiceLinks": False,
        "serviceAccountName": service_account_name,
        "automountServiceAccountToken": infra_access,
        "priorityClassName": "system-cluster-critical",
        "securityContext": plain_copy(_POD_SECURITY),
        "tolerations": [dict(t) for t in CONTROLLER_TOLERATIONS],
    }
    if init_containers:
        pod["initContainers"] = [dict(c) for c in init_containers]
    pod["containers"] = [dict(c) for c in containers]
    pod["volumes"] = [dict(v) for v in volumes]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": object_meta(
            name, names.namespace, names.cluster, labels=selector, annotations=annotations
        ),
        "spec": {
            "replicas": 1,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": dict(selector)},
            "template": {"metadata": {"labels": {**selector}}, "spec": pod},
        },
    }


def service_account(names: Names, name: str) -> dict[str, Any]:
    """Token mounting is decided per Pod (`infra_access`), not here."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": object_meta(name, names.namespace, names.cluster),
    }




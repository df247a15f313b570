"""The management-cluster rights of a tenant's add-on controllers: ClusterRoles shared by every tenant,
bound per tenant namespace.

`tenantctl install` renders these ClusterRoles once; each tenant's render binds its controllers'
ServiceAccounts to them with a RoleBinding in the tenant's namespace (the kubevirt CSI controller's
PersistentVolume read, the one cluster-scoped right, with a ClusterRoleBinding). The operator then
needs only `bind` on exactly these names, not every rule they hold: Kubernetes lets a subject grant a
role it is allowed to bind without holding its rules, and a per-tenant Role would make the operator
hold the union of all of them cluster-wide (issue 61).
"""

from __future__ import annotations

from typing import Any

from tenantctl.render.controllers import Rule
from tenantctl.render.meta import Names, object_meta

__all__ = [
    "ADDON_ROLES",
    "AUTOSCALER_ROLES",
    "KCCM_ROLE",
    "KCCM_RULES",
    "KCSI_CLUSTER_RULES",
    "KCSI_ROLE",
    "KCSI_RULES",
    "KCSI_VOLUMES_ROLE",
    "addon_cluster_roles",
    "autoscaler_rules",
    "bind_cluster_role",
    "bind_cluster_role_cluster_wide",
]

_RBAC_API = "rbac.authorization.k8s.io/v1"
_RBAC_GROUP = "rbac.authorization.k8s.io"

_READ = ("get", "list", "watch")
# VMs and VMIs to map Nodes to; Services and EndpointSlices for the tenant's LoadBalancer Services.
KCCM_RULES: tuple[Rule, ...] = (
    ("kubevirt.io", ("virtualmachines",), ("get", "list", "watch")),
    ("kubevirt.io", ("virtualmachineinstances",), ("get", "list", "watch", "update")),
    ("", ("pods",), ("get", "list", "watch")),
    ("", ("services",), ("get", "list", "watch", "create", "update", "patch", "delete")),
    ("discovery.k8s.io", ("endpointslices",), ("get", "list", "watch", "create", "update", "patch", "delete")),
)
# The KubeVirt CSI controller: hotplugged DataVolumes on the tenant's VMs, their claims and snapshots.
KCSI_RULES: tuple[Rule, ...] = (
    ("cdi.kubevirt.io", ("datavolumes",), ("get", "create", "delete")),
    ("kubevirt.io", ("virtualmachineinstances", "virtualmachines"), ("get", "list")),
    ("subresources.kubevirt.io", ("virtualmachines/addvolume", "virtualmachines/removevolume"), ("update",)),
    ("", ("persistentvolumeclaims",), ("get", "patch")),
    ("snapshot.storage.k8s.io", ("volumesnapshots",), ("get", "create", "delete")),
)
# ... and the PersistentVolumes its claims are bound to, which have no namespace.
KCSI_CLUSTER_RULES: tuple[Rule, ...] = (("", ("persistentvolumes",), ("get",)),)


def autoscaler_rules(machine_templates: str) -> list[Rule]:
    """What the clusterapi provider of cluster-autoscaler 1.32.0 calls (`clusterapi_controller.go`,
    `clusterapi_unstructured.go`): informers on machinedeployments, machinesets, machines and, when
    served, machinepools (a forbidden list stalls its cache sync for ever); scale through the `scale`
    subresource; an update of a Machine to mark it for deletion; the infrastructure template read for
    its capacity. Nothing else is written."""
    return [
        ("cluster.x-k8s.io", ("machinedeployments", "machinesets", "machinepools"), _READ),
        ("cluster.x-k8s.io", ("machinedeployments/scale",), ("get", "update")),
        ("cluster.x-k8s.io", ("machines",), (*_READ, "update")),
        ("infrastructure.cluster.x-k8s.io", (machine_templates,), _READ),
    ]


KCCM_ROLE = "tenantctl-kubevirt-ccm"
KCSI_ROLE = "tenantctl-kubevirt-csi"
KCSI_VOLUMES_ROLE = "tenantctl-kubevirt-csi-volumes"
AUTOSCALER_ROLES = {
    "kubevirtmachinetemplates": "tenantctl-autoscaler-kubevirt",
    "proxmoxmachinetemplates": "tenantctl-autoscaler-proxmox",
}
"""By the machine template kind the autoscaler reads a node group's capacity from."""

ADDON_ROLES: dict[str, tuple[Rule, ...]] = {
    KCCM_ROLE: KCCM_RULES,
    KCSI_ROLE: KCSI_RULES,
    KCSI_VOLUMES_ROLE: KCSI_CLUSTER_RULES,
    **{role: tuple(autoscaler_rules(kind)) for kind, role in AUTOSCALER_ROLES.items()},
}
"""Every add-on ClusterRole `install` renders, by name: the rules are the upstream controllers' own."""


def addon_cluster_roles(labels: dict[str, str]) -> list[dict[str, Any]]:
    """The shared ClusterRoles, as `install` applies them."""
    return [
        {
            "apiVersion": _RBAC_API,
            "kind": "ClusterRole",
            "metadata": {"name": name, "labels": dict(labels)},
            "rules": [{"apiGroups": [g], "resources": list(r), "verbs": list(v)} for g, r, v in rules],
        }
        for name, rules in ADDON_ROLES.items()
    ]


def bind_cluster_role(names: Names, name: str, service_account_name: str, role: str) -> dict[str, Any]:
    """A RoleBinding in the tenant's namespace of a shared add-on ClusterRole to the controller's account.

    Named `<name>-access`: the Role-bound binding of earlier releases was `<name>`, and a binding's
    `roleRef` cannot change, so the new one comes beside it and the old is pruned once it is in place."""
    return {
        "apiVersion": _RBAC_API,
        "kind": "RoleBinding",
        "metadata": object_meta(f"{name}-access", names.namespace, names.cluster),
        "roleRef": {"apiGroup": _RBAC_GROUP, "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": service_account_name, "namespace": names.namespace}],
    }


def bind_cluster_role_cluster_wide(names: Names, name: str, service_account_name: str, role: str) -> dict[str, Any]:
    """A ClusterRoleBinding of a shared add-on ClusterRole, for a right that has no namespace (PersistentVolumes);
    `name` must carry the namespace (see `Names`)."""
    return {
        "apiVersion": _RBAC_API,
        "kind": "ClusterRoleBinding",
        "metadata": object_meta(f"{name}-access", None, names.cluster, owner_namespace=names.namespace),
        "roleRef": {"apiGroup": _RBAC_GROUP, "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": service_account_name, "namespace": names.namespace}],
    }

"""The one place object metadata, inventory labels, references and derived names are built."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import msgspec

from tenantctl import MANAGED_BY
from tenantctl.spec import NodePool, ObservedState, TenantCluster
from tenantctl.spec.addons import INGRESS_NODE_LABEL

__all__ = [
    "CAPI_CLUSTER_LABEL",
    "CLUSTER_LABEL",
    "DEFAULT_CLASS_ANNOTATION",
    "GPU_NODE_LABEL",
    "INGRESS_NODE_LABEL",
    "INVENTORY_LABELS",
    "KAMAJI_CONTROL_PLANE_LABEL",
    "MANAGED_BY",
    "NAMESPACE_LABEL",
    "NODE_GROUP_LABEL",
    "POOL_LABEL",
    "TALOS_CA_SUFFIX",
    "TALOS_VERSION_ANNOTATION",
    "Names",
    "canonical_json",
    "cluster_labels",
    "content_hash",
    "inventory_scope",
    "kamaji_admin_kubeconfig",
    "kamaji_ca",
    "node_group_labels",
    "object_meta",
    "object_ref",
    "platform_meta",
    "talos_ca",
]

CLUSTER_LABEL = "tenantctl.io/cluster"
POOL_LABEL = "tenantctl.io/nodepool"
NODE_GROUP_LABEL = "tenantctl.io/node-group"
"""On a spread pool's Machines: the node group (Proxmox node, lower case) their MachineDeployment pins."""
TALOS_VERSION_ANNOTATION = "tenantctl.io/talos-version"
"""On a MachineDeployment: the Talos version its machines run (CAPI's own field carries Kubernetes')."""
# Cluster-scoped objects carry their tenant's namespace: two tenants may give their clusters one name.
NAMESPACE_LABEL = "tenantctl.io/namespace"
CAPI_CLUSTER_LABEL = "cluster.x-k8s.io/cluster-name"
# Selecting on these finds everything tenantctl rendered for one cluster: the prune inventory.
INVENTORY_LABELS = ("app.kubernetes.io/managed-by", CLUSTER_LABEL)
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
# NVIDIA's GPU operator deploys its operands on nodes labelled so; tenantctl sets it on pools with GPUs.
GPU_NODE_LABEL = "nvidia.com/gpu.present"

_DEFAULT_MANAGEMENT_DOMAIN: str = ObservedState.model_fields["management_cluster_domain"].default

KAMAJI_CONTROL_PLANE_LABEL = "kamaji.clastix.io/name"
"""Kamaji's label on what it writes for a TenantControlPlane: its name (`utilities.KamajiLabels`)."""


def kamaji_ca(control_plane: str) -> str:
    """The Secret of the tenant's Kubernetes CA, as Kamaji names it (`AddTenantPrefix("ca")`)."""
    return f"{control_plane}-ca"


def kamaji_admin_kubeconfig(control_plane: str) -> str:
    """The Secret of the tenant's admin kubeconfig, as Kamaji names it."""
    return f"{control_plane}-admin-kubeconfig"


TALOS_CA_SUFFIX = "-talos-ca"


def talos_ca(cluster: str) -> str:
    """The Secret cert-manager issues the tenant's Talos CA into (our Certificate names it)."""
    return f"{cluster}{TALOS_CA_SUFFIX}"


def cluster_labels(cluster: str, pool: str | None = None, *, namespace: str | None = None) -> dict[str, str]:
    """Inventory labels; `namespace` is given for cluster-scoped objects only."""
    labels = {"app.kubernetes.io/managed-by": MANAGED_BY, CLUSTER_LABEL: cluster}
    if namespace is not None:
        labels[NAMESPACE_LABEL] = namespace
    if pool is not None:
        labels[POOL_LABEL] = pool
    return labels


def inventory_scope(cluster: str, namespace: str, *, namespaced: bool) -> tuple[str | None, dict[str, str]]:
    """Where one kind of a tenant's inventory is listed: its namespace by the cluster's labels, or (for a
    cluster-scoped kind) everywhere by those labels and the namespace's, so a same-named tenant of
    another namespace is not taken for this one."""
    if namespaced:
        return namespace, cluster_labels(cluster)
    return None, cluster_labels(cluster, namespace=namespace)


def node_group_labels(group: str | None) -> dict[str, str]:
    """A spread pool's node-group objects say which group they are (`tenantctl plan` tells a new group
    from a rotation by it); an unsplit pool's carry nothing new."""
    return {NODE_GROUP_LABEL: group} if group is not None else {}


def object_meta(
    name: str,
    namespace: str | None,
    cluster: str,
    *,
    pool: str | None = None,
    owner_namespace: str | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """`namespace` None makes a cluster-scoped object, which must name its tenant's `owner_namespace`."""
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    elif owner_namespace is None:
        raise ValueError(f"cluster-scoped {name!r} needs owner_namespace for the prune inventory")
    meta["labels"] = {**cluster_labels(cluster, pool, namespace=owner_namespace), **(labels or {})}
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def platform_meta(name: str, namespace: str) -> dict[str, Any]:
    """Objects rendered once per platform (chart sources) belong to no cluster: no cluster label."""
    return {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/managed-by": MANAGED_BY}}


def object_ref(obj: Mapping[str, Any], *, with_namespace: bool = True) -> dict[str, str]:
    """An ObjectReference to a rendered object."""
    ref = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"]}
    if with_namespace and "namespace" in obj["metadata"]:
        ref["namespace"] = obj["metadata"]["namespace"]
    return ref


_SORTED_JSON = msgspec.json.Encoder(order="sorted")


def canonical_json(value: Any) -> bytes:
    """`json.dumps(value, sort_keys=True, separators=(",", ":"))`, byte for byte: what every template name
    hashes, so a changed byte renames a template and rolls its pool.

    msgspec writes the same bytes eight times faster for ASCII text without DEL; the standard library
    escapes those (`\\u00e9`, `\\u007f`) where msgspec writes them raw, and converts keys that are not
    strings where msgspec refuses them: such values take its way.
    Floats are the last difference (`1e+16` against `1e16`): no render holds one, a quantity given as a
    float being rendered as text or whole cores (tests/render/test_canonical_json.py pins both)."""
    try:
        blob = _SORTED_JSON.encode(value)
    except TypeError:  # a key that is not a string: the standard library converts it (msgspec refuses)
        pass
    else:
        if blob.isascii() and b"\x7f" not in blob:
            return blob
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def content_hash(value: Any, length: int = 8) -> str:
    """A short stable hash of a JSON-able value: names immutable templates after their content."""
    return hashlib.sha256(canonical_json(value)).hexdigest()[:length]


class Names:
    """Every object name derived from a cluster (and pool) name, defined once."""

    def __init__(self, cluster: TenantCluster) -> None:
        self.cluster = cluster.metadata.name
        self.namespace = cluster.metadata.namespace

    @property
    def control_plane(self) -> str:
        return self.cluster

    @property
    def apiserver_service(self) -> str:
        return self.cluster

    @property
    def admin_kubeconfig(self) -> str:
        return kamaji_admin_kubeconfig(self.control_plane)

    @property
    def kubernetes_ca(self) -> str:
        return kamaji_ca(self.control_plane)

    @property
    def talos_secrets(self) -> str:
        return f"{self.cluster}-talos-secrets"

    @property
    def talos_ca(self) -> str:
        return talos_ca(self.cluster)

    @property
    def talos_tls(self) -> str:
        return f"{self.cluster}-talos-tls-cert"

    @property
    def ccm(self) -> str:
        """The Proxmox cloud-controller-manager Deployment and its ServiceAccount."""
        return f"{self.cluster}-pccm"

    @property
    def csi_controller(self) -> str:
        return f"{self.cluster}-pcsi-controller"

    @property
    def csi_service_account(self) -> str:
        return f"{self.cluster}-pcsi"

    @property
    def autoscaler(self) -> str:
        """The cluster-autoscaler: Deployment, ServiceAccount, Role and RoleBinding share the name."""
        return f"{self.cluster}-cluster-autoscaler"

    @property
    def kccm(self) -> str:
        """The KubeVirt cloud-controller-manager: Deployment, ServiceAccount and RBAC share the name."""
        return f"{self.cluster}-kccm"

    @property
    def kccm_cloud_config(self) -> str:
        return f"{self.cluster}-cloud-config"

    @property
    def kubevirt_csi_controller(self) -> str:
        return f"{self.cluster}-kcsi-controller"

    @property
    def kubevirt_csi(self) -> str:
        """ServiceAccount and RBAC of the KubeVirt CSI controller."""
        return f"{self.cluster}-kcsi"

    @property
    def kubevirt_csi_cluster_role(self) -> str:
        """Cluster-scoped, so the namespace is part of it: two tenants may name their clusters alike."""
        return f"{self.namespace}-{self.cluster}-kcsi"

    def release(self, addon: str) -> str:
        """A tenant add-on's HelmRelease in the management cluster (`<cluster>-cilium`)."""
        return f"{self.cluster}-{addon}"

    def node_group(self, pool: NodePool, group: str | None = None) -> str:
        """A pool's MachineDeployment and MachineHealthCheck; a spread pool's node group adds its node."""
        return f"{self.cluster}-{pool.metadata.name}" + (f"-{group}" if group else "")

    def machine_template(self, pool: NodePool, spec: Any, group: str | None = None) -> str:
        """Named after a hash of its spec: templates are immutable, a new spec is a new template."""
        return f"{self.node_group(pool, group)}-{content_hash(spec)}"

    def machine_deployment(self, pool: NodePool, group: str | None = None) -> str:
        return self.node_group(pool, group)

    def talos_config_template(self, pool: NodePool) -> str:
        """One per pool: every node group of a spread pool boots the same machine config."""
        return f"{self.cluster}-{pool.metadata.name}"

    def machine_health_check(self, pool: NodePool, group: str | None = None) -> str:
        return self.node_group(pool, group)

    def address_pool(self, pool: NodePool, device: str, version: int) -> str:
        """The InClusterIPPool of one family of a pool's further NIC: `<cluster>-<pool>-net1-v4`."""
        return f"{self.cluster}-{pool.metadata.name}-{device}-v{version}"

    def apiserver_dns_names(self, observed: ObservedState | None = None) -> list[str]:
        """The apiserver Service's names in the management cluster, whose domain is observed
        (the ObservedState default until it is)."""
        domain = observed.management_cluster_domain if observed else _DEFAULT_MANAGEMENT_DOMAIN
        svc = self.apiserver_service
        return [f"{svc}.{self.namespace}.svc", f"{svc}.{self.namespace}.svc.{domain}"]

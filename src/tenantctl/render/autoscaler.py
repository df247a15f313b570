"""The tenant's cluster-autoscaler: one per tenant with an autoscaled pool, in the tenant's namespace here.

It watches the tenant's pods through the admin kubeconfig and scales the MachineDeployments of this
cluster through its own ServiceAccount (`--clusterapi-cloud-config-authoritative`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tenantctl.render.addon_roles import AUTOSCALER_ROLES, bind_cluster_role
from tenantctl.render.controllers import (
    KUBECONFIG_MOUNT,
    KUBECONFIG_PATH,
    KUBECONFIG_VOLUME,
    container,
    controller_deployment,
    kubeconfig_volume,
    service_account,
)
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.meta import Names
from tenantctl.render.plain import plain_copy
from tenantctl.spec import NodePool, TenantCluster
from tenantctl.spec.placement import node_groups

__all__ = ["AUTOSCALER_RESOURCES", "autoscaler_args", "render_autoscaler"]

_READ = ("get", "list", "watch")
# Cozystack's figures (templates/cluster-autoscaler/deployment.yaml): its informers hold every Machine,
# MachineSet and tenant Node and Pod, more than the shared controller default of 256Mi.
AUTOSCALER_RESOURCES: dict[str, dict[str, str]] = {
    "requests": {"cpu": "125m", "memory": "128Mi"},
    "limits": {"cpu": "512m", "memory": "512Mi"},
}


def autoscaler_args(names: Names, balance: bool = False) -> list[str]:
    """Auto-discovery scoped to this cluster also scopes the provider's informers to this namespace,
    which is what lets a namespaced Role suffice (clusterapi `namespaceToWatch`).

    `balance`: a spread pool is one node group per Proxmox node; balancing similar groups keeps a
    scale-up even across them. They differ only in `topology.kubernetes.io/zone` (the Proxmox CCM sets
    it to the host), which the autoscaler ignores when it compares groups. Only such tenants get the
    flag, so no other autoscaler restarts."""
    return [
        "--cloud-provider=clusterapi",
        f"--node-group-auto-discovery=clusterapi:namespace={names.namespace},clusterName={names.cluster}",
        "--enforce-node-group-min-size=true",
        *(["--balance-similar-node-groups=true"] if balance else []),
        f"--kubeconfig={KUBECONFIG_PATH}",
        "--clusterapi-cloud-config-authoritative",
    ]


def render_autoscaler(
    cluster: TenantCluster, pools: Sequence[NodePool], machine_templates: str, images: ImagesSpec
) -> list[dict[str, Any]]:
    """Nothing for a tenant without autoscaled pools: an autoscaler with no node group only costs."""
    if not any(p.spec.autoscaled for p in pools):
        return []
    names = Names(cluster)
    name = names.autoscaler
    balance = any(p.spec.autoscaled and len(node_groups(p, cluster)) > 1 for p in pools)
    main = container(
        "cluster-autoscaler",
        str(images.ref("cluster-autoscaler")),
        autoscaler_args(names, balance),
        [(KUBECONFIG_VOLUME, KUBECONFIG_MOUNT)],
        command=["/cluster-autoscaler"],
        extra={"resources": plain_copy(AUTOSCALER_RESOURCES)},
    )
    return [
        service_account(names, name),
        bind_cluster_role(names, name, name, AUTOSCALER_ROLES[machine_templates]),
        controller_deployment(names, name, name, [main], [kubeconfig_volume(names)], infra_access=True),
    ]

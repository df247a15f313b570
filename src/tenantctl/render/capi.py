"""Cluster API core objects: Cluster, and per pool MachineDeployment and MachineHealthCheck."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tenantctl.render.capacity import node_template_annotations
from tenantctl.render.meta import (
    CAPI_CLUSTER_LABEL,
    POOL_LABEL,
    TALOS_VERSION_ANNOTATION,
    Names,
    node_group_labels,
    object_meta,
    object_ref,
)
from tenantctl.render.node_placement import capi_synced_labels
from tenantctl.render.versions import kubernetes_patch
from tenantctl.spec import NodePool, TenantCluster
from tenantctl.spec.autoscaling import DEFAULT_MAX_NODE_PROVISION_TIME
from tenantctl.spec.durations import format_go_duration, parse_go_duration
from tenantctl.spec.placement import NodeGroup

__all__ = [
    "AUTOSCALER_MAX",
    "AUTOSCALER_MIN",
    "CAPI_API",
    "MAX_NODE_PROVISION_TIME",
    "render_capi_cluster",
    "render_machine_deployment",
    "render_machine_health_check",
]

CAPI_API = "cluster.x-k8s.io/v1beta1"
AUTOSCALER_MIN = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
AUTOSCALER_MAX = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
MAX_NODE_PROVISION_TIME = "cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime"


def render_capi_cluster(
    cluster: TenantCluster, control_plane: Mapping[str, Any], infra_cluster: Mapping[str, Any]
) -> dict[str, Any]:
    names = Names(cluster)
    return {
        "apiVersion": CAPI_API,
        "kind": "Cluster",
        "metadata": object_meta(names.cluster, names.namespace, names.cluster),
        "spec": {
            "clusterNetwork": {
                "pods": {"cidrBlocks": [cluster.spec.network.pod_cidr]},
                "services": {"cidrBlocks": [cluster.spec.network.service_cidr]},
                "serviceDomain": cluster.spec.network.cluster_domain,
            },
            "controlPlaneRef": object_ref(control_plane),
            "infrastructureRef": object_ref(infra_cluster),
        },
    }


def _group_selector(cluster: TenantCluster, pool: NodePool, group: NodeGroup) -> dict[str, str]:
    """A pool's machines, or one node group's: a spread pool's groups must not select each other's."""
    return {CAPI_CLUSTER_LABEL: cluster.metadata.name, POOL_LABEL: pool.metadata.name,
            **node_group_labels(group.key)}


def render_machine_deployment(
    cluster: TenantCluster,
    pool: NodePool,
    group: NodeGroup,
    machine_template: Mapping[str, Any],
    bootstrap_api: str,
) -> dict[str, Any]:
    """Workers of one pool (or one node group of a spread pool); an autoscaled one is a node group of the
    cluster-autoscaler instead."""
    names = Names(cluster)
    spec = pool.spec
    md_spec: dict[str, Any] = {"clusterName": names.cluster}
    annotations = {
        TALOS_VERSION_ANNOTATION: cluster.spec.talos.version,
        **_autoscaler_annotations(cluster, pool, group),
    }
    if group.replicas is not None:
        md_spec["replicas"] = group.replicas
    selector = _group_selector(cluster, pool, group)
    md_spec |= {
        "selector": {"matchLabels": selector},
        "strategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {
                "maxSurge": spec.rolling_update.max_surge,
                "maxUnavailable": spec.rolling_update.max_unavailable,
            },
        },
        "template": {
            # CAPI copies node-role/node-restriction labels from here to the Nodes, in place.
            "metadata": {"labels": {**capi_synced_labels(pool), **selector}},
            "spec": {
                "clusterName": names.cluster,
                "version": kubernetes_patch(cluster),
                "bootstrap": {
                    "configRef": {
                        "apiVersion": bootstrap_api,
                        "kind": "TalosConfigTemplate",
                        "name": names.talos_config_template(pool),
                        "namespace": names.namespace,
                    }
                },
                "infrastructureRef": object_ref(machine_template),
            },
        },
    }
    return {
        "apiVersion": CAPI_API,
        "kind": "MachineDeployment",
        "metadata": object_meta(
            names.machine_deployment(pool, group.key),
            names.namespace,
            names.cluster,
            pool=pool.metadata.name,
            labels={CAPI_CLUSTER_LABEL: names.cluster, **node_group_labels(group.key)},
            annotations=annotations,
        ),
        "spec": md_spec,
    }


def _autoscaler_annotations(cluster: TenantCluster, pool: NodePool, group: NodeGroup) -> dict[str, str]:
    """Bounds, provisioning timeout and, for scale from zero, what one node offers and carries.

    `spec.replicas` is left out and the autoscaler owns it. What keeps Cluster API from resetting it
    (cluster-api v1.10.1 `internal/webhooks/machinedeployment.go`, `calculateMachineDeploymentReplicas`):
    on create the defaulting webhook sets replicas to the min-size annotation; on every later update
    without replicas it keeps the live value, clamped into [min, max]. Our server-side apply never
    names the field, so a re-apply neither drains nor grows the pool. A spread pool's bounds are split
    over its node groups as its replicas would be (`spec.placement.split_evenly`)."""
    spec = pool.spec
    if not spec.autoscaled:
        return {}
    options = spec.autoscaling
    return {
        AUTOSCALER_MIN: str(group.min_replicas),
        AUTOSCALER_MAX: str(group.max_replicas),
        MAX_NODE_PROVISION_TIME: options.max_node_provision_time if options else DEFAULT_MAX_NODE_PROVISION_TIME,
        **node_template_annotations(cluster.spec.substrate, pool),
    }


def _seconds(duration: str) -> str:
    """Checked Go durations, rendered as CAPI stores a `metav1.Duration` (its webhooks decode and encode the
    object): `1h30m` -> `1h30m0s`, `1200s` -> `20m0s`. Another spelling would be rewritten on every apply."""
    return format_go_duration(parse_go_duration(duration))


def render_machine_health_check(cluster: TenantCluster, pool: NodePool, group: NodeGroup) -> dict[str, Any]:
    """Per MachineDeployment: a host down takes its whole node group, and `maxUnhealthy` then stops
    remediation there (its replacements could only be cloned onto that host) and nowhere else."""
    names = Names(cluster)
    hc = pool.spec.health_check
    max_unhealthy: int | str = hc.max_unhealthy
    if isinstance(max_unhealthy, str) and not max_unhealthy.endswith("%"):
        max_unhealthy = int(max_unhealthy)
    return {
        "apiVersion": CAPI_API,
        "kind": "MachineHealthCheck",
        "metadata": object_meta(
            names.machine_health_check(pool, group.key), names.namespace, names.cluster, pool=pool.metadata.name
        ),
        "spec": {
            "clusterName": names.cluster,
            "maxUnhealthy": max_unhealthy,
            "nodeStartupTimeout": _seconds(hc.node_startup_timeout),
            "selector": {"matchLabels": _group_selector(cluster, pool, group)},
            "unhealthyConditions": [
                {"type": "Ready", "status": "Unknown", "timeout": _seconds(hc.ready_unknown_timeout)},
                {"type": "Ready", "status": "False", "timeout": _seconds(hc.ready_false_timeout)},
            ],
        },
    }

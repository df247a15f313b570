"""The renderer's entry points: one cluster, a whole input, and the tenant-side bootstrap objects."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tenantctl.problems import Problems
from tenantctl.render.addons import TenantAddon, charts_in_use, render_addons, tenant_addons
from tenantctl.render.autoscaler import render_autoscaler
from tenantctl.render.bootstrap import render_tenant_bootstrap_objects
from tenantctl.render.capi import render_capi_cluster, render_machine_deployment, render_machine_health_check
from tenantctl.render.chart_sources import ChartSourcesSpec, render_chart_sources
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.kamaji import render_kamaji_control_plane
from tenantctl.render.optional_addons import optional_addons
from tenantctl.render.standard_addons import standard_addons
from tenantctl.render.substrates import SUBSTRATES
from tenantctl.render.talos_config import CABPT_API, check_observed, render_talos_config_template
from tenantctl.render.talos_pki import render_talos_pki
from tenantctl.spec import NodePool, ObservedState, TenantCluster, TenantInput

__all__ = ["addons_of", "render_cluster", "render_tenant", "render_tenant_bootstrap"]

ObservedMap = Mapping[tuple[str, str], ObservedState]


def render_cluster(
    cluster: TenantCluster,
    pools: Sequence[NodePool],
    observed: ObservedState | None = None,
    charts: ChartSourcesSpec | None = None,
    images: ImagesSpec | None = None,
) -> list[dict[str, Any]]:
    """Every management-cluster object of one tenant, in apply order. Pure and deterministic.

    The tenant add-on releases need the apiserver address (cilium's k8sServiceHost), so like the
    TalosConfigTemplates they are rendered only once it is observed. `images` is the platform's
    overrides and mirror; every image reference below is resolved through it."""
    charts = charts or ChartSourcesSpec()
    images = images or ImagesSpec()
    substrate = SUBSTRATES[cluster.spec.substrate]
    if observed is not None:
        problems = Problems()
        check_observed(cluster, observed, problems)
        problems.raise_if_errors()
    control_plane = render_kamaji_control_plane(cluster, observed, images)
    infra_cluster = substrate.render_infra_cluster(cluster)
    objects: list[dict[str, Any]] = [
        *render_talos_pki(cluster, observed),
        render_capi_cluster(cluster, control_plane, infra_cluster),
        control_plane,
        infra_cluster,
    ]
    for pool in sorted(pools, key=lambda p: p.metadata.name):
        template = substrate.render_machine_template(cluster, pool)
        if observed is not None:
            objects.append(render_talos_config_template(cluster, pool, observed, substrate, images))
        objects += [
            template,
            render_machine_deployment(cluster, pool, template, CABPT_API),
            render_machine_health_check(cluster, pool),
        ]
    objects += substrate.render_controllers(cluster, images)
    objects += render_autoscaler(cluster, pools, substrate.machine_templates, images)
    if observed is not None:
        objects += render_addons(cluster, observed, charts, addons_of(cluster, images), images)
    return objects


def addons_of(cluster: TenantCluster, images: ImagesSpec) -> tuple[TenantAddon, ...]:
    """The add-on releases a cluster gets: what its releases and its chart sources are both made from.
    The substrate's (cilium, coredns, CSI node), metrics and snapshots, then the enabled optional ones."""
    substrate = SUBSTRATES[cluster.spec.substrate]
    return (
        *tenant_addons(substrate.csi_node_release(cluster, images)),
        *standard_addons(substrate),
        *optional_addons(cluster),
    )


def render_tenant(
    tenant: TenantInput,
    observed: ObservedMap | None = None,
    charts: ChartSourcesSpec | None = None,
    images: ImagesSpec | None = None,
) -> list[dict[str, Any]]:
    """The chart sources the input's add-ons use, then all clusters of an input ordered by namespace and
    name; refuses observations of unknown clusters."""
    charts = charts or ChartSourcesSpec()
    observed = observed or {}
    known = {(c.metadata.namespace, c.metadata.name) for c in tenant.clusters}
    problems = Problems()
    for ns, name in sorted(set(observed) - known):
        problems.error(f"ObservedState/{name}.metadata", f"no TenantCluster {ns}/{name} in the input")
    problems.raise_if_errors()
    in_use = set().union(*(charts_in_use(addons_of(c, images or ImagesSpec())) for c in tenant.clusters))
    objects = render_chart_sources(charts, in_use)
    for cluster in sorted(tenant.clusters, key=lambda c: (c.metadata.namespace, c.metadata.name)):
        key = (cluster.metadata.namespace, cluster.metadata.name)
        objects += render_cluster(cluster, tenant.pools_of(cluster), observed.get(key), charts, images)
    return objects


def render_tenant_bootstrap(
    cluster: TenantCluster, observed: ObservedState, images: ImagesSpec | None = None
) -> list[dict[str, Any]]:
    """Objects applied inside the tenant through its admin kubeconfig: the bootstrap token and node RBAC,
    then what the substrate needs there (KubeVirt: the CSI node plugin and StorageClasses)."""
    substrate = SUBSTRATES[cluster.spec.substrate]
    return [
        *render_tenant_bootstrap_objects(cluster, observed),
        *substrate.render_tenant_objects(cluster, images or ImagesSpec()),
    ]

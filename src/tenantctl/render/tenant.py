"""The renderer's entry points: one cluster, a whole input, and the tenant-side bootstrap objects."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tenantctl.problems import Problems
from tenantctl.render.addons import TenantAddon, charts_in_use, render_addons, tenant_addons
from tenantctl.render.apiserver_access import apiserver_access
from tenantctl.render.autoscaler import render_autoscaler
from tenantctl.render.backup import render_backup
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
from tenantctl.render.versions import kubernetes_patch
from tenantctl.spec import NodePool, ObservedState, TenantCluster, TenantInput
from tenantctl.spec.checks import ref
from tenantctl.spec.compat import DEFAULT_KAMAJI, KamajiRelease, check_kamaji_serves
from tenantctl.spec.placement import node_groups
from tenantctl.spec.versions import minor_of

__all__ = [
    "addons_of", "charts_used", "refuse_collisions", "render_cluster", "render_tenant", "render_tenant_bootstrap",
]

ObservedMap = Mapping[tuple[str, str], ObservedState]


Sourced = list[tuple[str, dict[str, Any]]]


def _render_cluster_sourced(
    cluster: TenantCluster,
    pools: Sequence[NodePool],
    observed: ObservedState | None,
    charts: ChartSourcesSpec,
    images: ImagesSpec,
    kamaji: KamajiRelease,
    addons: Sequence[TenantAddon] | None = None,
) -> Sourced:
    """Every object of one tenant with the input document it comes from (for collision reports);
    `addons`: its `addons_of`, when the caller made them already for the chart sources."""
    substrate = SUBSTRATES[cluster.spec.substrate]
    problems = Problems()
    if observed is not None:
        check_observed(cluster, observed, problems)
    check_kamaji_serves(ref("TenantCluster", cluster.metadata.name), cluster.spec.version, kamaji, problems)
    problems.raise_if_errors()
    at = f"TenantCluster/{cluster.metadata.namespace}/{cluster.metadata.name}"
    access = apiserver_access(cluster, minor_of(kubernetes_patch(cluster)), images)
    control_plane = render_kamaji_control_plane(cluster, observed, images, access)
    infra_cluster = substrate.render_infra_cluster(cluster)
    objects: list[dict[str, Any]] = [
        *render_talos_pki(cluster, observed),
        # Before the control plane that mounts them: Kamaji's apiserver Pod waits for a missing ConfigMap.
        *access.objects,
        render_capi_cluster(cluster, control_plane, infra_cluster),
        control_plane,
        infra_cluster,
    ]
    sourced: Sourced = [(at, o) for o in objects]
    for pool in sorted(pools, key=lambda p: p.metadata.name):
        pool_objects = (
            [render_talos_config_template(cluster, pool, observed, substrate, images)] if observed else []
        )
        pool_objects += substrate.render_pool_objects(cluster, pool)
        for group in node_groups(pool, cluster):
            template = substrate.render_machine_template(cluster, pool, group)
            pool_objects += [
                template,
                render_machine_deployment(cluster, pool, group, template, CABPT_API),
                render_machine_health_check(cluster, pool, group),
            ]
        sourced += [(f"NodePool/{pool.metadata.namespace}/{pool.metadata.name}", o) for o in pool_objects]
    sourced += [(at, o) for o in substrate.render_controllers(cluster, images)]
    sourced += [(at, o) for o in render_autoscaler(cluster, pools, substrate.machine_templates, images)]
    sourced += [(at, o) for o in render_backup(cluster, images)]
    if observed is not None:
        addons = addons_of(cluster, images) if addons is None else addons
        sourced += [(at, o) for o in render_addons(cluster, observed, charts, addons, images)]
    return sourced


def _identity(obj: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """What the API server keys an object by: group (not version), kind, namespace, name."""
    meta = obj["metadata"]
    return obj["apiVersion"].rpartition("/")[0], obj["kind"], meta.get("namespace", ""), meta["name"]


def refuse_collisions(sourced: Sourced) -> None:
    """Two objects with one identity would be applied as one: the second silently replaces the first."""
    problems = Problems()
    first: dict[tuple[str, str, str, str], str] = {}
    for source, obj in sourced:
        key = _identity(obj)
        if key not in first:
            first[key] = source
            continue
        group, kind, ns, name = key
        problems.error(
            source,
            f"renders {kind}.{group or 'core'} {ns + '/' if ns else ''}{name}, which {first[key]} renders too; "
            "rename one so each object has one owner",
        )
    problems.raise_if_errors()


def render_cluster(
    cluster: TenantCluster,
    pools: Sequence[NodePool],
    observed: ObservedState | None = None,
    charts: ChartSourcesSpec | None = None,
    images: ImagesSpec | None = None,
    kamaji: KamajiRelease = DEFAULT_KAMAJI,
) -> list[dict[str, Any]]:
    """Every management-cluster object of one tenant, in apply order. Pure and deterministic.

    The tenant add-on releases need the apiserver address (cilium's k8sServiceHost), so like the
    TalosConfigTemplates they are rendered only once it is observed. `images` is the platform's
    overrides and mirror; every image reference below is resolved through it. A version the
    management cluster's `kamaji` cannot serve is refused, as Kamaji's webhook would."""
    sourced = _render_cluster_sourced(
        cluster, pools, observed, charts or ChartSourcesSpec(), images or ImagesSpec(), kamaji
    )
    refuse_collisions(sourced)
    return [o for _, o in sourced]


def addons_of(cluster: TenantCluster, images: ImagesSpec) -> tuple[TenantAddon, ...]:
    """The add-on releases a cluster gets: what its releases and its chart sources are both made from.
    The substrate's (cilium, coredns, CSI node), metrics and snapshots, then the enabled optional ones."""
    substrate = SUBSTRATES[cluster.spec.substrate]
    return (
        *tenant_addons(substrate.csi_node_release(cluster, images)),
        *standard_addons(substrate),
        *optional_addons(cluster),
    )


def charts_used(clusters: Sequence[TenantCluster], images: ImagesSpec) -> set[str]:
    """The add-on charts these clusters install: the sources `render_tenant` and the operator render, the
    charts `tenantctl images` lists."""
    return _charts_of(addons_of(c, images) for c in clusters)


def _charts_of(addons: Iterable[Sequence[TenantAddon]]) -> set[str]:
    return set().union(*(charts_in_use(a) for a in addons))


def render_tenant(
    tenant: TenantInput,
    observed: ObservedMap | None = None,
    charts: ChartSourcesSpec | None = None,
    images: ImagesSpec | None = None,
    kamaji: KamajiRelease = DEFAULT_KAMAJI,
) -> list[dict[str, Any]]:
    """The chart sources the input's add-ons use, then all clusters of an input ordered by namespace and
    name; refuses observations of unknown clusters and two objects with one identity."""
    charts = charts or ChartSourcesSpec()
    images = images or ImagesSpec()
    observed = observed or {}
    known = {(c.metadata.namespace, c.metadata.name) for c in tenant.clusters}
    problems = Problems()
    for ns, name in sorted(set(observed) - known):
        problems.error(f"ObservedState/{name}.metadata", f"no TenantCluster {ns}/{name} in the input")
    problems.raise_if_errors()
    addons = {(c.metadata.namespace, c.metadata.name): addons_of(c, images) for c in tenant.clusters}
    sourced: Sourced = [
        ("Platform spec.charts", o) for o in render_chart_sources(charts, _charts_of(addons.values()))
    ]  # `charts_used`, from the add-ons each cluster's releases are made of below: made once, not twice
    for cluster in sorted(tenant.clusters, key=lambda c: (c.metadata.namespace, c.metadata.name)):
        key = (cluster.metadata.namespace, cluster.metadata.name)
        sourced += _render_cluster_sourced(
            cluster, tenant.pools_of(cluster), observed.get(key), charts, images, kamaji, addons[key]
        )
    refuse_collisions(sourced)
    return [o for _, o in sourced]


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

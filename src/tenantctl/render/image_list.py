"""What a platform and its tenants pull: the list an air-gapped site mirrors (`tenantctl images`).

Controllers are read back from their rendered Deployments, so a reference that bypassed the catalogue
lookup is caught here; the pieces rendered only once runtime inputs are observed (worker config, add-on
values) are listed from the same lookups the renderers use.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tenantctl.render.addons import ADDON_IMAGES
from tenantctl.render.autoscaler import render_autoscaler
from tenantctl.render.chart_sources import ChartSourcesSpec, PulledChart, charts_pulled
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.images import CATALOGUE, SHARED_REGISTRY
from tenantctl.render.standard_addons import STANDARD_ADDON_IMAGES
from tenantctl.render.substrates import SUBSTRATES
from tenantctl.render.talos_config import worker_images
from tenantctl.render.tenant import charts_used
from tenantctl.render.versions import kamaji_konnectivity_tag, kubernetes_patch
from tenantctl.spec import NodePool, TenantCluster, TenantInput

__all__ = ["PulledImage", "cluster_images", "tenant_charts", "tenant_images"]


@dataclass(frozen=True, order=True)
class PulledImage:
    image: str
    source: str


def _source(name: str) -> str:
    return f"{name}: {CATALOGUE[name].use}"


def _containers(obj: Mapping[str, Any]) -> Iterator[str]:
    pod = obj.get("spec", {}).get("template", {}).get("spec", {})
    for key in ("initContainers", "containers"):
        for container in pod.get(key, []):
            yield container["image"]


def _controller_images(
    cluster: TenantCluster, pools: Sequence[NodePool], images: ImagesSpec
) -> Iterator[tuple[str, str]]:
    """Every container image of the substrate's controllers, the autoscaler and the workloads the
    substrate applies inside the tenant (KubeVirt's CSI node plugin), each mapped back to its catalogue
    name."""
    known = {str(images.ref(name)): name for name, entry in CATALOGUE.items() if entry.tag is not None}
    substrate = SUBSTRATES[cluster.spec.substrate]
    controllers = substrate.render_controllers(cluster, images)
    controllers += render_autoscaler(cluster, pools, substrate.machine_templates, images)
    controllers += substrate.render_tenant_objects(cluster, images)
    for obj in controllers:
        for image in _containers(obj):
            if image not in known:
                raise ValueError(f"{obj['kind']}/{obj['metadata']['name']} runs {image!r}, not from the catalogue")
            yield known[image], image


def cluster_images(
    cluster: TenantCluster, pools: Sequence[NodePool], images: ImagesSpec
) -> list[tuple[str, str]]:
    """(catalogue name, full reference) of everything one cluster pulls, in a stable order."""
    patch = kubernetes_patch(cluster)
    konnectivity = kamaji_konnectivity_tag(cluster)
    found = [(name, str(images.ref(name, patch))) for name in SHARED_REGISTRY]
    found += [(name, str(images.ref(name, konnectivity))) for name in ("konnectivity-server", "konnectivity-agent")]
    found.append(("talos-csr-signer", str(images.ref("talos-csr-signer"))))
    if pools:
        found += sorted(worker_images(cluster, images).items())
    found += _controller_images(cluster, pools, images)
    found += [(name, str(images.ref(name))) for name in (*ADDON_IMAGES, *STANDARD_ADDON_IMAGES)]
    substrate = SUBSTRATES[cluster.spec.substrate]
    if substrate.csi_node_release(cluster, images) is not None:
        found += [(name, str(images.ref(name))) for name in substrate.csi_node_images]
    return found


def tenant_images(tenant: TenantInput, images: ImagesSpec) -> list[PulledImage]:
    """Every image of every cluster in the input, deduplicated, sorted by reference."""
    pulled = {
        PulledImage(ref, _source(name))
        for cluster in tenant.clusters
        for name, ref in cluster_images(cluster, tenant.pools_of(cluster), images)
    }
    return sorted(pulled)


def tenant_charts(tenant: TenantInput, charts: ChartSourcesSpec, images: ImagesSpec) -> list[PulledChart]:
    """Every chart the input's add-ons install, from where the Platform says (its mirror, its overrides)."""
    return charts_pulled(charts, charts_used(tenant.clusters, images))

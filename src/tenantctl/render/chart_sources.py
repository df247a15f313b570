"""Where the tenant add-on charts come from: a platform setting with upstream defaults.

The sources (Flux HelmRepository / OCIRepository objects) of the charts in use are rendered once, in one
namespace; every cluster's HelmReleases point at them. A platform that mirrors charts overrides an
entry in its Platform document's `spec.charts`; whatever it leaves out keeps the upstream default.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from tenantctl.render.meta import platform_meta
from tenantctl.spec.base import SpecModel
from tenantctl.spec.patterns import DNS_LABEL, FLUX_INTERVAL, URL

__all__ = [
    "ADDON_CHARTS",
    "DEFAULT_CHART_SOURCES",
    "SOURCE_API",
    "ChartSource",
    "ChartSourcesSpec",
    "chart_source_name",
    "helm_release_chart",
    "render_chart_sources",
]

SOURCE_API = "source.toolkit.fluxcd.io/v1"
ADDON_CHARTS = ("cilium", "coredns", "proxmox-csi", "kubevirt-csi-node")
# A chart's name in its repository; a version is a tag or a semver range (no whitespace, no newline).
CHART_NAME = r"^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$"
CHART_VERSION = r"^[0-9A-Za-z.+_*^~<>=|, -]+$"
_HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"


class ChartSource(SpecModel):
    """`HelmRepository` needs the chart's name inside the repository; an OCI URL names the chart itself."""

    kind: Literal["HelmRepository", "OCIRepository"]
    url: str = Field(pattern=URL, max_length=2048)
    chart: str | None = Field(default=None, pattern=CHART_NAME, max_length=253)
    version: str = Field(pattern=CHART_VERSION, max_length=128)
    interval: str = Field(default="1h", pattern=FLUX_INTERVAL, max_length=64)

    @model_validator(mode="after")
    def _chart_matches_kind(self) -> ChartSource:
        if self.kind == "HelmRepository" and not self.chart:
            raise ValueError("a HelmRepository source needs `chart`: the chart's name inside the repository")
        if self.kind == "OCIRepository" and not self.url.startswith("oci://"):
            raise ValueError(f"an OCIRepository url starts with oci:// (got {self.url!r})")
        if self.kind == "OCIRepository" and self.chart is not None:
            raise ValueError("an OCIRepository url names the chart itself; drop `chart`")
        return self


SourceKind = Literal["HelmRepository", "OCIRepository"]


def _source(kind: SourceKind, url: str, version: str, chart: str | None = None) -> ChartSource:
    return ChartSource(kind=kind, url=url, chart=chart, version=version)


DEFAULT_CHART_SOURCES: Mapping[str, ChartSource] = {
    "cilium": _source("HelmRepository", "https://helm.cilium.io/", "1.17.6", "cilium"),
    "coredns": _source("HelmRepository", "https://coredns.github.io/helm", "1.43.0", "coredns"),
    "proxmox-csi": _source("OCIRepository", "oci://ghcr.io/sergelogvinov/charts/proxmox-csi-plugin", "0.5.12"),
    # KubeVirt's CSI driver publishes no chart upstream. This address is a placeholder, not a verified
    # artifact: a kubevirt platform sets spec.charts.sources.kubevirt-csi-node to its own packaging.
    "kubevirt-csi-node": _source("OCIRepository", "oci://ghcr.io/cozystack/cozystack/kubevirt-csi-node", "0.1.0"),
}


class ChartSourcesSpec(SpecModel):
    """`spec.charts` of a Platform: the sources' namespace and per-chart overrides of the defaults."""

    namespace: str = Field(default="tenantctl-system", pattern=DNS_LABEL, max_length=63)
    sources: dict[str, ChartSource] = Field(default_factory=dict)

    @field_validator("sources")
    @classmethod
    def _known_charts(cls, sources: dict[str, ChartSource]) -> dict[str, ChartSource]:
        unknown = sorted(set(sources) - set(ADDON_CHARTS))
        if unknown:
            raise ValueError(f"unknown chart(s) {unknown}; known: {', '.join(ADDON_CHARTS)}")
        return sources

    def source(self, addon: str) -> ChartSource:
        return self.sources.get(addon, DEFAULT_CHART_SOURCES[addon])


def chart_source_name(addon: str) -> str:
    return f"tenantctl-{addon}"


def render_chart_sources(charts: ChartSourcesSpec, in_use: Collection[str]) -> list[dict[str, Any]]:
    """One source object per chart in use, in the table's order.

    A source of a chart nothing installs is not harmless: a Proxmox-only platform would carry a
    KubeVirt chart source that fails to resolve forever."""
    unknown = sorted(set(in_use) - set(ADDON_CHARTS))
    if unknown:
        raise ValueError(f"chart(s) {unknown} in use without a source in ADDON_CHARTS")
    objects: list[dict[str, Any]] = []
    for addon in (a for a in ADDON_CHARTS if a in in_use):
        src = charts.source(addon)
        spec: dict[str, Any] = {"interval": src.interval, "url": src.url}
        if src.kind == "OCIRepository":
            spec["ref"] = {"tag": src.version}
            spec["layerSelector"] = {"mediaType": _HELM_CHART_LAYER, "operation": "copy"}
        objects.append(
            {
                "apiVersion": SOURCE_API,
                "kind": src.kind,
                "metadata": platform_meta(chart_source_name(addon), charts.namespace),
                "spec": spec,
            }
        )
    return objects


def helm_release_chart(charts: ChartSourcesSpec, addon: str) -> dict[str, Any]:
    """The part of a HelmRelease spec that names its chart: `chart.spec` or `chartRef`, by source kind."""
    src = charts.source(addon)
    ref = {"kind": src.kind, "name": chart_source_name(addon), "namespace": charts.namespace}
    if src.kind == "OCIRepository":
        return {"chartRef": ref}
    return {"chart": {"spec": {"chart": src.chart, "version": src.version, "sourceRef": ref, "interval": src.interval}}}


"""Where the tenant add-on charts come from: a platform setting with upstream defaults.

The sources (Flux HelmRepository / OCIRepository objects) of the charts in use are rendered once, in one
namespace; every cluster's HelmReleases point at them. A platform that mirrors charts overrides an
entry in its Platform document's `spec.charts`; whatever it leaves out keeps the upstream default.

Every default below names a chart its publisher serves at that address and version. Where the version
was read: the publisher's Helm repository index (`index.yaml` on the `gh-pages` branch) or the
`helm pull … --version` Cozystack vendors from it (`cozystack/cozystack` 3c780acd,
`packages/system/<name>/Makefile` and `charts/<name>/Chart.yaml`). Like every source, an optional
add-on's (`OPTIONAL_CHARTS`) is rendered only while some cluster of the input enables it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from tenantctl.render.meta import platform_meta
from tenantctl.spec.base import SpecModel
from tenantctl.spec.patterns import DNS_LABEL, FLUX_INTERVAL, URL

__all__ = [
    "ADDON_CHARTS",
    "CORE_CHARTS",
    "DEFAULT_CHART_SOURCES",
    "OPTIONAL_CHARTS",
    "SOURCE_API",
    "ChartMirror",
    "ChartSource",
    "ChartSourcesSpec",
    "PulledChart",
    "chart_source_name",
    "charts_pulled",
    "helm_release_chart",
    "render_chart_sources",
]

SOURCE_API = "source.toolkit.fluxcd.io/v1"
# Charts of the add-ons every tenant gets, then those a TenantCluster enables in spec.addons.
CORE_CHARTS = ("cilium", "coredns", "proxmox-csi", "metrics-server", "snapshot-controller")
OPTIONAL_CHARTS = ("cert-manager", "ingress-nginx", "vertical-pod-autoscaler", "velero", "gpu-operator")
ADDON_CHARTS = CORE_CHARTS + OPTIONAL_CHARTS
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
    # sergelogvinov/proxmox-csi-plugin a7c58ec ("chore: release v0.19.1", 2026-06-25): chart 0.5.9, appVersion
    # v0.19.1 — the controller and node images tenantctl runs (render/images.py). The design record's 0.5.12
    # (app v0.20.0) names images upstream never published; one component, one version.
    "proxmox-csi": _source("OCIRepository", "oci://ghcr.io/sergelogvinov/charts/proxmox-csi-plugin", "0.5.9"),
    # kubernetes-sigs/metrics-server gh-pages index.yaml: 3.13.0 ships metrics-server 0.8.0.
    "metrics-server": _source(
        "HelmRepository", "https://kubernetes-sigs.github.io/metrics-server/", "3.13.0", "metrics-server"
    ),
    # piraeusdatastore/helm-charts gh-pages index.yaml (2026-07-21): 5.2.0, external-snapshotter v8.6.0 CRDs.
    "snapshot-controller": _source(
        "HelmRepository", "https://piraeus.io/helm-charts/", "5.2.0", "snapshot-controller"
    ),
    # The versions Cozystack pulls (`helm pull <repo>/<chart> --version`) from these repositories.
    "cert-manager": _source("HelmRepository", "https://charts.jetstack.io", "v1.20.2", "cert-manager"),
    # 4.11.5 (2025-03-24, controller v1.11.5) carries the controller security fixes (#13070); 4.11.2 does not.
    "ingress-nginx": _source("HelmRepository", "https://kubernetes.github.io/ingress-nginx", "4.11.5", "ingress-nginx"),
    "vertical-pod-autoscaler": _source(
        "HelmRepository", "https://cowboysysop.github.io/charts/", "11.1.1", "vertical-pod-autoscaler"
    ),
    "velero": _source("HelmRepository", "https://vmware-tanzu.github.io/helm-charts", "12.0.3", "velero"),
    "gpu-operator": _source("HelmRepository", "https://helm.ngc.nvidia.com/nvidia", "v26.3.1", "gpu-operator"),
}


class ChartMirror(SpecModel):
    """Where an air-gapped site mirrors every chart: one OCI registry path, or one Helm repository.

    `oci`: each chart is `<oci>/<chart name>:<version>` (what `helm push` of the pulled chart gives);
    `helm`: one Helm repository (ChartMuseum, Harbor, Nexus) serving every chart under its own name.
    Exactly one: a chart in two places would make the site ask which copy the tenants install.
    """

    oci: str | None = Field(default=None, pattern=r"^oci://[^\s]+$", max_length=2048)
    helm: str | None = Field(default=None, pattern=r"^https?://[^\s]+$", max_length=2048)

    @model_validator(mode="after")
    def _one_place(self) -> ChartMirror:
        if (self.oci is None) == (self.helm is None):
            raise ValueError("give exactly one of oci (an OCI registry path) or helm (a Helm repository URL)")
        return self

    def source(self, upstream: ChartSource) -> ChartSource:
        """The upstream source as this mirror serves it: same chart, same version."""
        name = upstream.chart or upstream.url.rstrip("/").rpartition("/")[2]
        if self.oci is not None:
            return ChartSource(kind="OCIRepository", url=f"{self.oci.rstrip('/')}/{name}", version=upstream.version,
                               interval=upstream.interval)
        assert self.helm is not None
        return ChartSource(kind="HelmRepository", url=self.helm, chart=name, version=upstream.version,
                           interval=upstream.interval)


class ChartSourcesSpec(SpecModel):
    """`spec.charts` of a Platform: the sources' namespace, a site mirror, and per-chart overrides.

    A per-chart source wins over the mirror, which wins over the upstream default.
    """

    namespace: str = Field(default="tenantctl-system", pattern=DNS_LABEL, max_length=63)
    mirror: ChartMirror | None = None
    sources: dict[str, ChartSource] = Field(default_factory=dict)

    @field_validator("sources")
    @classmethod
    def _known_charts(cls, sources: dict[str, ChartSource]) -> dict[str, ChartSource]:
        unknown = sorted(set(sources) - set(ADDON_CHARTS))
        if unknown:
            raise ValueError(f"unknown chart(s) {unknown}; known: {', '.join(ADDON_CHARTS)}")
        return sources

    def source(self, addon: str) -> ChartSource:
        if addon in self.sources:
            return self.sources[addon]
        upstream = DEFAULT_CHART_SOURCES[addon]
        return self.mirror.source(upstream) if self.mirror is not None else upstream


@dataclass(frozen=True, order=True)
class PulledChart:
    """A chart artifact a site mirrors: where it is pulled from, and which add-on installs it."""

    artifact: str
    addon: str


def charts_pulled(charts: ChartSourcesSpec, in_use: Collection[str]) -> list[PulledChart]:
    """Every chart the add-ons in use install, as `<oci url>:<version>` or `<repo url> <chart>:<version>`."""
    pulled = []
    for addon in (a for a in ADDON_CHARTS if a in in_use):
        src = charts.source(addon)
        artifact = f"{src.url}:{src.version}" if src.kind == "OCIRepository" else f"{src.url} {src.chart}:{src.version}"
        pulled.append(PulledChart(artifact, addon))
    return pulled


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


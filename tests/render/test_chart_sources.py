"""Chart sources: upstream defaults, platform overrides, rendered once, and what a source must say."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest
from pydantic import ValidationError

from tenant_support import load_example
from tenantctl.render import render_tenant
from tenantctl.render.addons import CORE_ADDONS, TenantAddon, charts_in_use
from tenantctl.render.chart_sources import (
    ADDON_CHARTS,
    CORE_CHARTS,
    DEFAULT_CHART_SOURCES,
    OPTIONAL_CHARTS,
    ChartMirror,
    ChartSource,
    ChartSourcesSpec,
    render_chart_sources,
)
from tenantctl.spec import parse_observed, parse_tenant_documents

Validator = Callable[[Iterable[Mapping[str, Any]]], None]


def test_every_add_on_has_an_upstream_default() -> None:
    assert set(DEFAULT_CHART_SOURCES) == set(ADDON_CHARTS)


def test_defaults_render_valid_flux_sources(assert_valid: Validator) -> None:
    objects = render_chart_sources(ChartSourcesSpec(), CORE_CHARTS)
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("HelmRepository", "tenantctl-cilium"),
        ("HelmRepository", "tenantctl-coredns"),
        ("OCIRepository", "tenantctl-proxmox-csi"),
        ("HelmRepository", "tenantctl-metrics-server"),
        ("HelmRepository", "tenantctl-snapshot-controller"),
    ]
    assert {o["metadata"]["namespace"] for o in objects} == {"tenantctl-system"}
    assert objects[2]["spec"]["ref"] == {"tag": "0.5.9"}, "the chart of the v0.19.1 images"
    assert_valid(objects)


def test_a_platform_override_reaches_sources_and_releases(assert_valid: Validator) -> None:
    charts = ChartSourcesSpec.model_validate(
        {
            "namespace": "flux-mirror",
            "sources": {
                "cilium": {"kind": "OCIRepository", "url": "oci://mirror.example/charts/cilium", "version": "1.18.0"}
            },
        }
    )
    objects = render_tenant(
        parse_tenant_documents(load_example("proxmox.yaml")),
        parse_observed(load_example("observed-proxmox.yaml")),
        charts,
    )
    sources = [o for o in objects if o["apiVersion"].startswith("source.toolkit")]
    assert {o["metadata"]["namespace"] for o in sources} == {"flux-mirror"}
    cilium = next(o for o in objects if o["kind"] == "HelmRelease" and o["metadata"]["name"] == "acme-cilium")
    ref = {"kind": "OCIRepository", "name": "tenantctl-cilium", "namespace": "flux-mirror"}
    assert cilium["spec"]["chartRef"] == ref
    assert "chart" not in cilium["spec"]
    coredns = next(o for o in objects if o["kind"] == "HelmRelease" and o["metadata"]["name"] == "acme-coredns")
    assert coredns["spec"]["chart"]["spec"]["sourceRef"]["namespace"] == "flux-mirror"
    assert_valid(o for o in objects if o["kind"] in {"HelmRelease", "HelmRepository", "OCIRepository"})


def _on_vlan(doc: dict[str, Any], vlan: int) -> dict[str, Any]:
    """The second tenant's workers on their own VLAN: two tenants sharing addresses on one are refused."""
    if doc["kind"] == "NodePool":
        doc["spec"]["proxmox"]["network"]["vlan"] = vlan
    return doc


def test_sources_are_rendered_once_for_many_clusters() -> None:
    docs = load_example("proxmox.yaml") + [
        _on_vlan({**d, "metadata": {**d["metadata"], "namespace": "tenant-two"}}, 200)
        for d in load_example("proxmox.yaml")
    ]
    objects = render_tenant(parse_tenant_documents(docs))
    assert len([o for o in objects if o["kind"] == "HelmRepository"]) == 4
    assert len([o for o in objects if o["kind"] == "OCIRepository"]) == 1


def test_optional_sources_render_only_while_some_cluster_enables_them(assert_valid: Validator) -> None:
    docs = load_example("kubevirt.yaml")
    objects = render_tenant(parse_tenant_documents(docs))
    plain = {o["metadata"]["name"] for o in objects if o["kind"] == "HelmRepository"}
    assert not plain & {f"tenantctl-{c}" for c in OPTIONAL_CHARTS}
    for doc in docs:
        if doc["kind"] == "TenantCluster":
            doc["spec"]["addons"] = {"velero": {"enabled": True}, "certManager": {"enabled": False}}
    objects = render_tenant(parse_tenant_documents(docs))
    sources = [o for o in objects if o["kind"] == "HelmRepository"]
    assert {o["metadata"]["name"] for o in sources} - plain == {"tenantctl-velero"}
    assert_valid(sources)


def test_every_optional_chart_has_a_pinned_helm_repository_default() -> None:
    """Versions are the ones verified upstream (chart_sources docstring); none floats."""
    for chart in OPTIONAL_CHARTS:
        src = DEFAULT_CHART_SOURCES[chart]
        assert src.kind == "HelmRepository" and src.url.startswith("https://")
        assert src.chart == chart and src.version[0] in "v0123456789"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ({"kind": "HelmRepository", "url": "https://x.example", "version": "1"}, "needs `chart`"),
        ({"kind": "OCIRepository", "url": "https://x.example/c", "version": "1"}, "starts with oci://"),
        ({"kind": "OCIRepository", "url": "oci://x.example/c", "chart": "c", "version": "1"}, "drop `chart`"),
    ],
)
def test_a_source_that_cannot_name_a_chart_is_refused(source: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ChartSource.model_validate(source)


def test_an_unknown_chart_is_refused() -> None:
    with pytest.raises(ValidationError, match="unknown chart"):
        ChartSourcesSpec.model_validate({"sources": {"cillium": DEFAULT_CHART_SOURCES["cilium"].model_dump()}})


def _platform(tmp_path: Any, charts: dict[str, Any]) -> str:
    import yaml

    path = tmp_path / "platform.yaml"
    path.write_text(
        yaml.safe_dump({"apiVersion": "tenantctl.io/v1alpha1", "kind": "Platform", "metadata": {"name": "p"},
                        "spec": {"charts": charts}})
    )
    return str(path)


def test_cli_render_takes_chart_sources_from_a_platform_file(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from tenant_support import EXAMPLES
    from tenantctl.cli import app

    platform = _platform(tmp_path, {"namespace": "flux-mirror"})
    for command in ("render", "audit"):
        result = CliRunner().invoke(app, [command, "-f", str(EXAMPLES / "proxmox.yaml"), "--platform", platform])
        assert result.exit_code == 0, result.stderr
    rendered = CliRunner().invoke(app, ["render", "-f", str(EXAMPLES / "proxmox.yaml"), "--platform", platform])
    assert "namespace: flux-mirror" in rendered.stdout and "tenantctl-system" not in rendered.stdout


def test_cli_refuses_a_bad_platform_chart_source_with_its_path(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from tenant_support import EXAMPLES
    from tenantctl.cli import app

    cilium = {"kind": "HelmRepository", "url": "https://x", "version": "1"}
    platform = _platform(tmp_path, {"sources": {"cilium": cilium}})
    result = CliRunner().invoke(app, ["render", "-f", str(EXAMPLES / "proxmox.yaml"), "--platform", platform])
    assert result.exit_code == 2
    assert "Platform/p.spec.charts.sources.cilium" in result.stderr and "needs `chart`" in result.stderr


def _source_names(objects: Iterable[Mapping[str, Any]]) -> set[str]:
    return {o["metadata"]["name"] for o in objects if o["apiVersion"].startswith("source.toolkit")}


def _release_sources(objects: Iterable[Mapping[str, Any]]) -> set[str]:
    refs = set()
    for o in objects:
        if o["kind"] == "HelmRelease":
            spec = o["spec"]
            refs.add((spec.get("chartRef") or spec["chart"]["spec"]["sourceRef"])["name"])
    return refs


@pytest.mark.parametrize(
    ("example", "observed", "absent"),
    [
        ("proxmox.yaml", "observed-proxmox.yaml", "tenantctl-velero"),
        ("kubevirt.yaml", "observed-kubevirt.yaml", "tenantctl-proxmox-csi"),
    ],
)
def test_only_the_sources_of_the_rendered_releases_are_rendered(example: str, observed: str, absent: str) -> None:
    """A Proxmox-only platform must not carry a KubeVirt chart source that fails forever, and vice versa."""
    objects = render_tenant(parse_tenant_documents(load_example(example)), parse_observed(load_example(observed)))
    assert _source_names(objects) == _release_sources(objects)
    assert absent not in _source_names(objects)


def test_sources_do_not_wait_for_the_releases() -> None:
    """Before the apiserver is observed no release is rendered, yet the sources they will need are."""
    objects = render_tenant(parse_tenant_documents(load_example("proxmox.yaml")))
    assert _source_names(objects) == {
        "tenantctl-cilium", "tenantctl-coredns", "tenantctl-proxmox-csi", "tenantctl-metrics-server",
        "tenantctl-snapshot-controller",
    }


def test_a_cluster_without_csi_gets_no_csi_source() -> None:
    docs = load_example("proxmox.yaml")
    tenant = next(d for d in docs if d["kind"] == "TenantCluster")
    tenant["spec"]["proxmox"]["csi"] = {"enabled": False}
    objects = render_tenant(parse_tenant_documents(docs), parse_observed(load_example("observed-proxmox.yaml")))
    assert "tenantctl-proxmox-csi" not in _source_names(objects)
    assert _source_names(objects) == _release_sources(objects)


def test_a_mixed_input_carries_the_sources_of_both_substrates() -> None:
    """Each cluster brings a source the other lacks (proxmox its CSI chart, the kubevirt one the GPU
    operator it enables), and the expected names are written out: dropping either cluster's sources fails."""
    kubevirt = load_example("kubevirt.yaml")
    next(d for d in kubevirt if d["kind"] == "TenantCluster")["spec"]["addons"] = {"gpuOperator": {"enabled": True}}
    docs = load_example("proxmox.yaml") + kubevirt
    assert _source_names(render_tenant(parse_tenant_documents(docs))) == {
        "tenantctl-cilium", "tenantctl-coredns", "tenantctl-metrics-server", "tenantctl-snapshot-controller",
        "tenantctl-proxmox-csi", "tenantctl-gpu-operator",
    }


def test_an_added_add_on_brings_its_source() -> None:
    """The list of add-ons is the one truth: a new entry needs no second edit to get its source."""
    extra = TenantAddon("extra", "velero", "kube-system", lambda _c, _o, _i: {})
    in_use = charts_in_use((*CORE_ADDONS, extra))
    assert in_use == {"cilium", "coredns", "velero"}
    assert _source_names(render_chart_sources(ChartSourcesSpec(), in_use)) == {
        "tenantctl-cilium", "tenantctl-coredns", "tenantctl-velero",
    }


def test_a_chart_in_use_without_a_source_is_a_bug() -> None:
    with pytest.raises(ValueError, match=r"\['kubevirt-csi-node'\] in use without a source"):
        render_chart_sources(ChartSourcesSpec(), {"cilium", "kubevirt-csi-node"})


def _observed_render(example: str, charts: ChartSourcesSpec) -> list[dict[str, Any]]:
    observed = {"kubevirt.yaml": "observed-kubevirt.yaml", "proxmox.yaml": "observed-proxmox.yaml"}[example]
    return render_tenant(parse_tenant_documents(load_example(example)), parse_observed(load_example(observed)),
                         charts)


@pytest.mark.parametrize("example", ["kubevirt.yaml", "proxmox.yaml"])
def test_an_oci_mirror_takes_every_chart_source_and_an_override_still_wins(
    example: str, assert_valid: Validator
) -> None:
    override = ChartSource(kind="HelmRepository", url="https://charts.example.org/cilium", chart="cilium",
                           version="1.17.6")
    charts = ChartSourcesSpec(mirror=ChartMirror(oci="oci://mirror.example.org/charts"), sources={"cilium": override})
    objects = _observed_render(example, charts)
    assert_valid(objects)
    sources = [o for o in objects if o["kind"] in ("HelmRepository", "OCIRepository")]
    assert sources
    for src in sources:
        url = src["spec"]["url"]
        if src["metadata"]["name"] == "tenantctl-cilium":
            assert (src["kind"], url) == ("HelmRepository", "https://charts.example.org/cilium")
        else:
            assert src["kind"] == "OCIRepository" and url.startswith("oci://mirror.example.org/charts/"), src
    releases = [o for o in objects if o["kind"] == "HelmRelease"]
    for release in releases:
        ref = release["spec"].get("chartRef") or release["spec"]["chart"]["spec"]["sourceRef"]
        assert ref["name"] in {s["metadata"]["name"] for s in sources}
        if ref["name"] != "tenantctl-cilium":
            assert "chartRef" in release["spec"], "an OCI source is named by chartRef"


def test_a_helm_mirror_serves_every_chart_under_its_own_name_at_the_same_version() -> None:
    mirror = ChartMirror(helm="https://charts.mirror.example/tenantctl")
    charts = ChartSourcesSpec(mirror=mirror)
    for addon, upstream in DEFAULT_CHART_SOURCES.items():
        src = charts.source(addon)
        expected = upstream.chart or upstream.url.rpartition("/")[2]
        assert (src.kind, src.url, src.chart, src.version) == (
            "HelmRepository", "https://charts.mirror.example/tenantctl", expected, upstream.version)


ONE_PLACE = "give exactly one of oci (an OCI registry path) or helm (a Helm repository URL)"


@pytest.mark.parametrize(("mirror", "loc", "message"), [
    ({}, ("mirror",), ONE_PLACE),
    ({"oci": "oci://a/b", "helm": "https://c/d"}, ("mirror",), ONE_PLACE),
    ({"oci": "https://not-oci"}, ("mirror", "oci"), "String should match pattern '^oci://"),
    ({"helm": "oci://a/b"}, ("mirror", "helm"), "String should match pattern '^https?://"),
])
def test_a_mirror_is_one_place_of_the_right_scheme(mirror: dict[str, str], loc: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValidationError) as refused:
        ChartSourcesSpec.model_validate({"mirror": mirror})
    assert [(e["loc"], message in e["msg"]) for e in refused.value.errors()] == [(loc, True)], refused.value.errors()


def test_images_lists_the_charts_a_site_mirrors_beside_the_images(tmp_path: Any) -> None:
    import json

    import yaml
    from typer.testing import CliRunner

    from tenant_support import EXAMPLES
    from tenantctl.cli import app

    platform = tmp_path / "platform.yaml"
    platform.write_text(yaml.safe_dump({
        "apiVersion": "tenantctl.io/v1alpha1", "kind": "Platform", "metadata": {"name": "site"},
        "spec": {"charts": {"mirror": {"oci": "oci://mirror.example.org/charts"}},
                 "images": {"registryMirror": "mirror.example.org"}},
    }))
    result = CliRunner().invoke(app, ["images", "-f", str(EXAMPLES / "proxmox.yaml"), "--platform", str(platform),
                                      "-o", "json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    charts = {item["chart"] for item in listed if item["kind"] == "chart"}
    assert "oci://mirror.example.org/charts/cilium:1.17.6" in charts
    assert all(c.startswith("oci://mirror.example.org/charts/") for c in charts)
    assert all(item["image"].startswith("mirror.example.org/") for item in listed if item["kind"] == "image")


@pytest.mark.parametrize("url", ["oci://ghcr.io/org/charts/cilium", "oci://ghcr.io/org/charts/cilium/"])
def test_a_mirror_serves_an_oci_chart_under_its_last_path_segment(url: str) -> None:
    upstream = ChartSource(kind="OCIRepository", url=url, version="1.2.3")
    oci = ChartMirror(oci="oci://mirror.example/charts/").source(upstream)
    assert (oci.kind, oci.url, oci.version) == ("OCIRepository", "oci://mirror.example/charts/cilium", "1.2.3")
    helm = ChartMirror(helm="https://mirror.example/helm").source(upstream)
    assert (helm.kind, helm.url, helm.chart) == ("HelmRepository", "https://mirror.example/helm", "cilium")

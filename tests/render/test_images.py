"""The image catalogue, Platform.spec.images (overrides, registry mirror), `tenantctl images`, Talos
registry mirrors and the konnectivity version table: each assert guards one line of the issue."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tenant_support import EXAMPLES, doc, load_example
from tenantctl.cli import app
from tenantctl.render import render_tenant, render_tenant_bootstrap
from tenantctl.render.image_settings import ImageOverride, ImagesSpec
from tenantctl.render.images import CATALOGUE, pinned
from tenantctl.spec import parse_observed, parse_tenant_documents
from tenantctl.spec.image_refs import digest_problem, repository_problem, tag_problem
from tenantctl.spec.tenant import TalosSpec

Docs = list[dict[str, Any]]
MIRROR = "registry.example.org/mirror"
UPSTREAM_HOSTS = ("registry.k8s.io", "ghcr.io", "quay.io", "docker.io", "factory.talos.dev")
# host/path:tag[@digest] or host/path@digest: what a container image reference looks like in a render.
_IMAGE = re.compile(
    r"^[a-z0-9][a-z0-9.-]*\.[a-z]{2,}(?::\d+)?(?:/[a-z0-9._-]+)+"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]*)?(?:@sha256:[0-9a-f]{64})?$"
)
EXAMPLE_PAIRS = (("proxmox.yaml", "observed-proxmox.yaml"), ("kubevirt.yaml", "observed-kubevirt.yaml"))


def _render(example: str, observed: str, images: ImagesSpec | None = None) -> list[dict[str, Any]]:
    """The management render and what is applied inside each tenant (KubeVirt's CSI node plugin)."""
    tenant = parse_tenant_documents(load_example(example))
    obs = parse_observed(load_example(observed))
    inside = [
        obj
        for c in tenant.clusters
        for obj in render_tenant_bootstrap(c, obs[(c.metadata.namespace, c.metadata.name)], images)
    ]
    return [*render_tenant(tenant, obs, None, images), *inside]


def _strings(node: Any) -> Iterator[str]:
    """Every string of a render, the Talos machine config blob parsed and walked too."""
    if isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)
    elif isinstance(node, str):
        yield node
        if node.startswith("version: v1alpha1\n"):
            yield from _strings(yaml.safe_load(node))


def _dicts(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _dicts(value)
    elif isinstance(node, list):
        for value in node:
            yield from _dicts(value)
    elif isinstance(node, str) and node.startswith("version: v1alpha1\n"):
        yield from _dicts(yaml.safe_load(node))


def _images_in(objects: list[dict[str, Any]]) -> set[str]:
    """References found by looking, not by asking the catalogue: full strings, chart `repository`+`tag`
    pairs, and what Kamaji composes from the KamajiControlPlane's fields."""
    found = {s for obj in objects for s in _strings(obj) if _IMAGE.match(s) and (":" in s.split("/")[-1])}
    for obj in objects:
        for d in _dicts(obj):
            if isinstance(d.get("repository"), str) and isinstance(d.get("tag"), str):
                found.add(f"{d['repository']}:{d['tag']}")
        if obj["kind"] == "KamajiControlPlane":
            spec = obj["spec"]
            for field in ("apiServer", "controllerManager", "scheduler"):
                found.add(f"{spec['registry']}/{spec[field]['containerImageName']}:{spec['version']}")
            minor = spec["version"].split(".")[1]
            for part in spec["addons"]["konnectivity"].values():
                found.add(f"{part['image']}:{part.get('version', f'v0.{minor}.0')}")
    return found


def _platform(tmp_path: Path, images: dict[str, Any]) -> Path:
    path = tmp_path / "platform.yaml"
    path.write_text(yaml.safe_dump({
        "apiVersion": "tenantctl.io/v1alpha1", "kind": "Platform", "metadata": {"name": "site"},
        "spec": {"images": images},
    }))
    return path


# --- the catalogue ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_catalogue_entry_is_pinned_with_its_source(name: str) -> None:
    entry = CATALOGUE[name]
    assert repository_problem(entry.repository) is None
    assert entry.source and entry.use
    if entry.tag is not None:
        assert tag_problem(entry.tag) is None and entry.tag != "latest"
    assert entry.digest is not None or entry.no_digest, f"{name}: no digest and no reason why"
    if entry.digest is not None:
        assert digest_problem(entry.digest) is None


def test_a_pinned_reference_keeps_a_registry_port_in_its_repository() -> None:
    """`host:port/path:tag@digest` as upstream manifests write it: the tag follows the last colon."""
    digest = "sha256:" + "0" * 64
    entry = pinned(f"registry.example.org:5000/team/app:v1.2.3@{digest}", "a manifest", "a use")
    assert (entry.repository, entry.tag, entry.digest) == ("registry.example.org:5000/team/app", "v1.2.3", digest)


def test_talos_csr_signer_is_the_digest_pinned_cozystack_build() -> None:
    """clastix/talos-csr-signer publishes only :latest; the v0.2.0 tag never existed."""
    assert str(ImagesSpec().ref("talos-csr-signer")) == (
        "ghcr.io/cozystack/cozystack/talos-csr-signer:v1.6.0"
        "@sha256:85b41e16e5e40398b1272fe0a69de72e205532c8034d0e6a9fc4a1d510f17818"
    )


def test_kubevirt_controllers_run_cozystacks_pinned_builds() -> None:
    for name in ("kubevirt-ccm", "kubevirt-csi-driver"):
        entry = CATALOGUE[name]
        assert entry.repository.startswith("ghcr.io/cozystack/cozystack/") and entry.digest, name


def test_the_installer_default_is_the_catalogues() -> None:
    assert TalosSpec().installer_repository == CATALOGUE["talos-installer"].repository


# --- overrides and the mirror ----------------------------------------------------------------------


def test_an_override_replaces_the_tag_and_drops_the_catalogue_digest() -> None:
    spec = ImagesSpec(overrides={"cilium": ImageOverride(tag="v1.17.7")})
    assert str(spec.ref("cilium")) == "quay.io/cilium/cilium:v1.17.7"


def test_an_override_digest_is_kept() -> None:
    digest = "sha256:" + "a" * 64
    spec = ImagesSpec(overrides={"csi-attacher": ImageOverride(digest=digest)})
    assert str(spec.ref("csi-attacher")) == f"registry.k8s.io/sig-storage/csi-attacher:v4.8.0@{digest}"


def test_a_repository_override_reaches_the_deployment(tmp_path: Path) -> None:
    platform = _platform(tmp_path, {"overrides": {"proxmox-ccm": {"repository": "registry.example.org/ccm"}}})
    result = CliRunner().invoke(app, ["render", "-f", str(EXAMPLES / "proxmox.yaml"), "--platform", str(platform)])
    assert result.exit_code == 0, result.stderr
    assert "image: registry.example.org/ccm:v0.13.1\n" in result.stdout


@pytest.mark.parametrize(("example", "observed"), EXAMPLE_PAIRS)
def test_with_a_registry_mirror_every_reference_points_at_it(example: str, observed: str) -> None:
    objects = _render(example, observed, ImagesSpec(registry_mirror=MIRROR))
    checked = 0
    for obj in objects:
        for text in _strings(obj):
            # Not image pulls: the KubeVirt disk is an HTTP download (spec.talos.imageFactoryURL) and chart
            # sources are Platform spec.charts' to relocate.
            if text.startswith(("https://", "http://", "oci://")):
                continue
            for host in UPSTREAM_HOSTS:
                for match in re.finditer(re.escape(host) + "/", text):
                    checked += 1
                    assert text[: match.start()].endswith(f"{MIRROR}/"), f"{obj['kind']}: {text!r}"
    assert checked >= 15
    for image in _images_in(objects):
        assert image.startswith(f"{MIRROR}/"), image
    kcp = next(o for o in objects if o["kind"] == "KamajiControlPlane")
    assert kcp["spec"]["registry"] == f"{MIRROR}/registry.k8s.io"


def test_the_mirror_rewrites_the_talos_installer_and_kubelet() -> None:
    objects = _render("proxmox.yaml", "observed-proxmox.yaml", ImagesSpec(registry_mirror=MIRROR))
    config = yaml.safe_load(next(o for o in objects if o["kind"] == "TalosConfigTemplate")
                            ["spec"]["template"]["spec"]["data"])
    assert config["machine"]["kubelet"]["image"].startswith(f"{MIRROR}/ghcr.io/siderolabs/kubelet:")
    assert config["machine"]["install"]["image"].startswith(f"{MIRROR}/factory.talos.dev/installer/")


@pytest.mark.parametrize(("images", "path", "says"), [
    ({"registryMirror": "https://registry.example.org"}, "spec.images.registryMirror", "no scheme"),
    ({"registryMirror": "registry.example.org/"}, "spec.images.registryMirror", "no trailing slash"),
    ({"overrides": {"talos-csr-signr": {"tag": "v1"}}}, "spec.images.overrides.talos-csr-signr",
     "did you mean 'talos-csr-signer'"),
    ({"overrides": {"cilium": {"repository": "cilium/cilium"}}}, "spec.images.overrides.cilium.repository",
     "fully qualified"),
    ({"overrides": {"cilium": {"repository": "quay.io/Cilium/cilium"}}}, "spec.images.overrides.cilium.repository",
     "lowercase"),
    ({"overrides": {"cilium": {"tag": "-v1"}}}, "spec.images.overrides.cilium.tag", "is not a tag"),
    ({"overrides": {"cilium": {"digest": "sha256:abc"}}}, "spec.images.overrides.cilium.digest", "not a digest"),
    ({"overrides": {"kubelet": {"tag": "v1.33.0"}}}, "spec.images.overrides.kubelet.tag", "follows a version"),
    ({"overrides": {"talos-installer": {"repository": "registry.example.org/installer"}}},
     "spec.images.overrides.talos-installer", "spec.talos.installerRepository"),
    ({"overrides": {"kube-scheduler": {"repository": "registry.example.org/k8s/kube-scheduler"}}},
     "spec.images.overrides", "share one registry"),
])
def test_invalid_image_settings_are_refused_with_their_path(
    tmp_path: Path, images: dict[str, Any], path: str, says: str
) -> None:
    platform = _platform(tmp_path, images)
    result = CliRunner().invoke(app, ["images", "-f", str(EXAMPLES / "proxmox.yaml"), "--platform", str(platform)])
    assert result.exit_code == 2, result.stdout
    assert f"Platform/site.{path}" in result.stderr and says in result.stderr
    assert "Traceback" not in result.stderr


# --- tenantctl images ------------------------------------------------------------------------------


@pytest.mark.parametrize(("example", "observed"), EXAMPLE_PAIRS)
def test_images_lists_every_image_the_render_pulls(example: str, observed: str) -> None:
    result = CliRunner().invoke(app, ["images", "-f", str(EXAMPLES / example), "-o", "json"])
    assert result.exit_code == 0, result.stderr
    everything = json.loads(result.stdout)
    listed = [item for item in everything if item["kind"] == "image"]
    assert all(set(item) == {"kind", "image", "source"} and item["source"] for item in listed)
    assert len({item["image"] for item in listed}) == len(listed), "deduplicated"
    assert {item["image"] for item in listed} == _images_in(_render(example, observed))
    charts = [item for item in everything if item["kind"] == "chart"]
    assert charts and len(charts) + len(listed) == len(everything)


def test_images_lists_the_mirrored_references(tmp_path: Path) -> None:
    platform = _platform(tmp_path, {"registryMirror": MIRROR})
    result = CliRunner().invoke(
        app, ["images", "-f", str(EXAMPLES / "kubevirt.yaml"), "--platform", str(platform), "-o", "json"]
    )
    assert result.exit_code == 0, result.stderr
    assert all(item["image"].startswith(f"{MIRROR}/") for item in json.loads(result.stdout) if item["kind"] == "image")


def test_images_text_output_names_each_image_once_with_its_use() -> None:
    result = CliRunner().invoke(app, ["images", "-f", str(EXAMPLES / "proxmox.yaml")])
    assert result.exit_code == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if "talos-csr-signer:" in line)
    assert line.split()[1] == "talos-csr-signer:"


# --- konnectivity ----------------------------------------------------------------------------------


def _konnectivity(version: str) -> dict[str, Any]:
    docs = load_example("proxmox.yaml")
    doc(docs, "TenantCluster")["spec"]["version"] = version
    objects = render_tenant(parse_tenant_documents(docs))
    kcp = next(o for o in objects if o["kind"] == "KamajiControlPlane")
    konnectivity: dict[str, Any] = kcp["spec"]["addons"]["konnectivity"]
    return konnectivity


def test_konnectivity_on_v1_35_runs_v0_34_0_not_the_unpublished_v0_35_0() -> None:
    konnectivity = _konnectivity("v1.35")
    assert konnectivity["server"]["version"] == "v0.34.0"
    assert konnectivity["agent"]["version"] == "v0.34.0"


def test_a_minor_without_an_entry_keeps_kamajis_derivation() -> None:
    konnectivity = _konnectivity("v1.33")
    assert "version" not in konnectivity["server"] and "version" not in konnectivity["agent"]


# --- Talos registry mirrors ------------------------------------------------------------------------


def _worker_config(docs: Docs) -> dict[str, Any]:
    objects = render_tenant(parse_tenant_documents(docs), parse_observed(load_example("observed-proxmox.yaml")))
    template = next(o for o in objects if o["kind"] == "TalosConfigTemplate")
    config: dict[str, Any] = yaml.safe_load(template["spec"]["template"]["spec"]["data"])
    return config


def test_registry_mirrors_reach_the_worker_config(proxmox_docs: Docs) -> None:
    doc(proxmox_docs, "TenantCluster")["spec"]["talos"]["registryMirrors"] = {
        "ghcr.io": {"endpoints": ["https://registry.example.org/v2/ghcr"], "overridePath": True},
        "docker.io": {"endpoints": ["http://10.0.0.5:5000"], "skipFallback": True},
    }
    assert _worker_config(proxmox_docs)["machine"]["registries"] == {"mirrors": {
        "docker.io": {"endpoints": ["http://10.0.0.5:5000"], "skipFallback": True},
        "ghcr.io": {"endpoints": ["https://registry.example.org/v2/ghcr"], "overridePath": True},
    }}


def test_without_registry_mirrors_the_worker_config_has_no_registries(proxmox_docs: Docs) -> None:
    assert "registries" not in _worker_config(proxmox_docs)["machine"]


@pytest.mark.parametrize(("mirrors", "path", "says"), [
    ({"ghcr io": {"endpoints": ["https://r.example.org"]}}, "registryMirrors.ghcr io", "not a registry host"),
    ({"ghcr.io": {"endpoints": ["ftp://r.example.org"]}}, "registryMirrors.ghcr.io.endpoints[0]", "not a registry"),
    ({"ghcr.io": {"endpoints": []}}, "registryMirrors.ghcr.io.endpoints", "at least one endpoint"),
])
def test_invalid_registry_mirrors_are_refused_with_their_path(
    tmp_path: Path, proxmox_docs: Docs, mirrors: dict[str, Any], path: str, says: str
) -> None:
    doc(proxmox_docs, "TenantCluster")["spec"]["talos"]["registryMirrors"] = mirrors
    source = tmp_path / "tenant.yaml"
    source.write_text(yaml.safe_dump_all(proxmox_docs))
    result = CliRunner().invoke(app, ["render", "-f", str(source)])
    assert result.exit_code == 2
    assert f"spec.talos.{path}" in result.stderr and says in result.stderr


def test_an_invalid_installer_repository_is_refused(tmp_path: Path, proxmox_docs: Docs) -> None:
    doc(proxmox_docs, "TenantCluster")["spec"]["talos"]["installerRepository"] = "installer"
    source = tmp_path / "tenant.yaml"
    source.write_text(yaml.safe_dump_all(proxmox_docs))
    result = CliRunner().invoke(app, ["render", "-f", str(source)])
    assert result.exit_code == 2 and "spec.talos.installerRepository" in result.stderr


def test_the_kubevirt_csi_node_plugin_runs_the_pinned_driver_under_the_mirror() -> None:
    """tenantctl renders the node plugin itself, so the mirror reaches every container of it."""
    objects = _render("kubevirt.yaml", "observed-kubevirt.yaml", ImagesSpec(registry_mirror=MIRROR))
    node = next(o for o in objects if o["kind"] == "DaemonSet" and o["metadata"]["name"] == "kubevirt-csi-node")
    images = [c["image"] for c in node["spec"]["template"]["spec"]["containers"]]
    assert images[0] == str(ImagesSpec(registry_mirror=MIRROR).ref("kubevirt-csi-driver"))
    assert all(image.startswith(f"{MIRROR}/") and "@sha256:" in image for image in images)


@pytest.mark.parametrize(("example", "observed"), EXAMPLE_PAIRS)
def test_a_mirrored_render_with_worker_registry_mirrors_passes_the_upstream_crds(
    example: str, observed: str, assert_valid: Any
) -> None:
    docs = load_example(example)
    doc(docs, "TenantCluster")["spec"]["talos"]["registryMirrors"] = {"*": {"endpoints": ["https://r.example.org"]}}
    objects = render_tenant(
        parse_tenant_documents(docs), parse_observed(load_example(observed)), None, ImagesSpec(registry_mirror=MIRROR)
    )
    assert_valid(objects)


def test_an_installer_repository_with_a_trailing_slash_is_accepted(tmp_path: Path, proxmox_docs: Docs) -> None:
    """The renderer strips it; refusing it would break specs that rendered before the check existed."""
    doc(proxmox_docs, "TenantCluster")["spec"]["talos"]["installerRepository"] = "factory.talos.dev/installer/"
    source = tmp_path / "tenant.yaml"
    source.write_text(yaml.safe_dump_all(proxmox_docs))
    result = CliRunner().invoke(app, ["images", "-f", str(source)])
    assert result.exit_code == 0, result.stderr
    schematic = doc(proxmox_docs, "TenantCluster")["spec"]["talos"]["schematicID"]
    assert f"factory.talos.dev/installer/{schematic}:" in result.stdout

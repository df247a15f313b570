"""`providers render`: the capi-operator objects and ConfigMaps, read back the way capi-operator reads them."""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import Result

from providers.support import PROXMOX_ON, Cli, load_all
from tenantctl.providers.render import NAME_LABEL, TYPE_LABEL, VERSION_LABEL

PROVIDERS = {
    ("CoreProvider", "cluster-api"): ("capi-system", "v1.10.1", "manager"),
    ("BootstrapProvider", "talos"): ("cabpt-system", "v0.6.12", "manager"),
    ("ControlPlaneProvider", "kamaji"): ("capi-kamaji-system", "v0.19.0", "controller"),
    ("InfrastructureProvider", "kubevirt"): ("capk-system", "v0.1.10", "manager"),
    ("InfrastructureProvider", "proxmox"): ("capmox-system", "v0.7.7", "manager"),
    ("IPAMProvider", "in-cluster"): ("capi-ipam-in-cluster-system", "v1.0.3", "manager"),
}


def objects(result: Result) -> list[dict[str, Any]]:
    assert result.exit_code == 0, result.stderr
    return load_all(result.stdout)


def render(cli: Cli, platform: Path, *extra: str | Path) -> Result:
    return cli("providers", "render", "-f", platform, *extra)


def providers_of(docs: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(d["kind"], d["metadata"]["name"]): d for d in docs if d["apiVersion"].startswith("operator.")}


def operator_reads(provider: dict[str, Any], docs: list[dict[str, Any]]) -> tuple[str, bytes, str]:
    """What capi-operator's configmapRepository does: list by selector in the provider's namespace, take the
    version from the label, refuse a ConfigMap without metadata, gunzip binaryData when annotated."""
    selector = provider["spec"]["fetchConfig"]["selector"]["matchLabels"]
    found = [d for d in docs if d["kind"] == "ConfigMap"
             and d["metadata"]["namespace"] == provider["metadata"]["namespace"]
             and all(d["metadata"]["labels"].get(k) == v for k, v in selector.items())]
    assert len(found) == 1, f"{len(found)} ConfigMaps match {selector}"
    [cm] = found
    version = cm["metadata"]["labels"].get(VERSION_LABEL, cm["metadata"]["name"])
    assert re.fullmatch(r"v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?", version)
    assert cm["metadata"]["annotations"]["provider.cluster.x-k8s.io/compressed"] == "true"
    return version, gzip.decompress(base64.b64decode(cm["binaryData"]["components"])), cm["data"]["metadata"]


def test_enabling_proxmox_yields_both_providers_their_configmaps_and_the_config_secret(
    rendered: list[dict[str, Any]], vendored_template: Path
) -> None:
    docs = rendered
    providers = providers_of(docs)
    assert set(providers) == set(PROVIDERS)
    proxmox = providers[("InfrastructureProvider", "proxmox")]
    assert proxmox["spec"]["configSecret"] == {"name": "capmox-credentials", "namespace": "capmox-system"}
    assert "configSecret" not in providers[("IPAMProvider", "in-cluster")]["spec"]
    for provider in providers.values():
        version, components, metadata = operator_reads(provider, docs)
        assert version == provider["spec"]["version"]
        package = provider["metadata"]["labels"]["tenantctl.io/package"]
        vendor = vendored_template.parent / "vendor" / package
        assert components == (vendor / "components.yaml").read_bytes()
        assert metadata == (vendor / "metadata.yaml").read_text()


@pytest.mark.parametrize(("key", "expected"), sorted(PROVIDERS.items()))
def test_each_provider_object(
    rendered: list[dict[str, Any]], key: tuple[str, str], expected: tuple[str, str, str]
) -> None:
    namespace, version, container = expected
    provider = providers_of(rendered)[key]
    assert provider["apiVersion"] == "operator.cluster.x-k8s.io/v1alpha2"
    assert provider["metadata"]["namespace"] == namespace
    assert provider["spec"]["version"] == version
    [manager] = provider["spec"]["deployment"]["containers"]
    assert manager["name"] == container
    assert set(manager["resources"]) == {"requests"}


def test_configmaps_are_named_and_labelled_as_capi_operator_names_its_own(rendered: list[dict[str, Any]]) -> None:
    docs = rendered
    cm = next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["namespace"] == "capmox-system")
    assert cm["metadata"]["name"] == "infrastructure-proxmox-v0.7.7"
    labels = cm["metadata"]["labels"]
    assert (labels[NAME_LABEL], labels[TYPE_LABEL], labels[VERSION_LABEL]) == ("proxmox", "infrastructure", "v0.7.7")


def test_the_blob_ships_and_the_yaml_does_not(rendered: list[dict[str, Any]], vendored_template: Path) -> None:
    for cm in (d for d in rendered if d["kind"] == "ConfigMap"):
        assert set(cm["data"]) == {"metadata"}
        assert set(cm["binaryData"]) == {"components"}
        blob = (vendored_template.parent / "vendor" / cm["metadata"]["labels"]["tenantctl.io/package"] /
                "components.yaml.gz").read_bytes()
        assert base64.b64decode(cm["binaryData"]["components"]) == blob


def test_every_namespace_comes_before_what_lives_in_it(rendered: list[dict[str, Any]]) -> None:
    seen: set[str] = set()
    for doc in rendered:
        if doc["kind"] == "Namespace":
            seen.add(doc["metadata"]["name"])
        else:
            assert doc["metadata"]["namespace"] in seen


def test_each_configmap_comes_before_its_provider(rendered: list[dict[str, Any]]) -> None:
    kinds = [d["kind"] for d in rendered]
    assert kinds[:3] == ["Namespace", "ConfigMap", "CoreProvider"]


def test_planning_mode_is_the_same_without_configmaps(
    cli: Cli, rendered: list[dict[str, Any]], vendored_template: Path
) -> None:
    full = rendered
    result = render(cli, vendored_template)
    assert [d for d in full if d["kind"] != "ConfigMap"] == objects(result)
    assert "warning: --components: not given: ConfigMaps left out (planning mode)" in result.stderr


def test_planning_mode_needs_no_vendored_files(cli: Cli, write_platform: Callable[..., Path]) -> None:
    docs = objects(render(cli, write_platform(PROXMOX_ON)))
    assert {d["kind"] for d in docs} == {"Namespace", "CoreProvider", "BootstrapProvider", "ControlPlaneProvider",
                                         "InfrastructureProvider", "IPAMProvider"}


def test_default_platform_has_no_proxmox_and_no_ipam(cli: Cli, write_platform: Callable[..., Path]) -> None:
    providers = providers_of(objects(render(cli, write_platform())))
    assert ("InfrastructureProvider", "proxmox") not in providers
    assert ("IPAMProvider", "in-cluster") not in providers
    assert ("InfrastructureProvider", "kubevirt") in providers


def test_the_credentials_namespace_defaults_to_the_provider_namespace(
    cli: Cli, write_platform: Callable[..., Path]
) -> None:
    provider = providers_of(objects(render(cli, write_platform(PROXMOX_ON))))[("InfrastructureProvider", "proxmox")]
    assert provider["spec"]["configSecret"] == {"name": "capmox-credentials", "namespace": "capmox-system"}


def test_a_given_credentials_namespace_is_kept(cli: Cli, write_platform: Callable[..., Path]) -> None:
    spec = {**PROXMOX_ON, "packages": {"infrastructure-proxmox": {
        "credentialsSecret": {"name": "pve", "namespace": "secrets"}}}}
    provider = providers_of(objects(render(cli, write_platform(spec))))[("InfrastructureProvider", "proxmox")]
    assert provider["spec"]["configSecret"] == {"name": "pve", "namespace": "secrets"}


def test_default_resources_are_requests_from_the_catalogue(cli: Cli, write_platform: Callable[..., Path]) -> None:
    core = providers_of(objects(render(cli, write_platform())))[("CoreProvider", "cluster-api")]
    assert core["spec"]["deployment"]["containers"] == [
        {"name": "manager", "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}}}]


def test_resources_in_the_platform_replace_the_catalogue_ones(cli: Cli, write_platform: Callable[..., Path]) -> None:
    spec = {"packages": {"core": {"resources": {"limits": {"memory": "1Gi"}}}}}
    core = providers_of(objects(render(cli, write_platform(spec))))[("CoreProvider", "cluster-api")]
    assert core["spec"]["deployment"]["containers"] == [{"name": "manager", "resources": {"limits": {"memory": "1Gi"}}}]


def test_empty_resources_leave_deployment_out(cli: Cli, write_platform: Callable[..., Path]) -> None:
    spec = {"packages": {"core": {"resources": {}}}}
    core = providers_of(objects(render(cli, write_platform(spec))))[("CoreProvider", "cluster-api")]
    assert "deployment" not in core["spec"]


def test_a_version_override_reaches_spec_version_and_the_selector(
    cli: Cli, write_platform: Callable[..., Path]
) -> None:
    spec = {"packages": {"core": {"version": "v1.10.2"}}}
    result = render(cli, write_platform(spec))
    core = providers_of(objects(result))[("CoreProvider", "cluster-api")]
    assert core["spec"]["version"] == "v1.10.2"
    assert core["spec"]["fetchConfig"]["selector"]["matchLabels"][VERSION_LABEL] == "v1.10.2"
    assert "contract of core v1.10.2 not checked" in result.stderr


def test_json_output_is_a_kubectl_list(cli: Cli, write_platform: Callable[..., Path]) -> None:
    result = render(cli, write_platform(), "-o", "json")
    listed = json.loads(result.stdout)
    assert listed["kind"] == "List" and len(listed["items"]) == 8


def test_a_drifted_package_stops_the_render_and_prints_nothing(cli: Cli, vendored_platform: Path) -> None:
    yaml_path = vendored_platform.parent / "vendor" / "core" / "components.yaml"
    yaml_path.write_text(yaml_path.read_text() + "# edit\n")
    result = render(cli, vendored_platform, "--components", vendored_platform.parent / "vendor")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "core: decompresses to sha256" in result.stderr


def test_v1beta2_capmox_stops_the_render(cli: Cli, vendored_platform: Path, metadata_tables: Path) -> None:
    """Done-when: capmox v0.9 (contract v1beta2) against core v1.10.1 (v1beta1) exits 2 naming both."""
    doc = yaml.safe_load(vendored_platform.read_text())
    doc["spec"]["packages"]["infrastructure-proxmox"]["version"] = "v0.9.0"
    vendored_platform.write_text(yaml.safe_dump(doc))
    table = (metadata_tables / "capmox-v0.9.0" / "metadata.yaml").read_bytes()
    metadata = vendored_platform.parent / "vendor" / "infrastructure-proxmox" / "metadata.yaml"
    lock = vendored_platform.parent / "providers.lock"
    text = lock.read_text().replace('version = "v0.7.7"', 'version = "v0.9.0"')
    import hashlib

    text = text.replace(hashlib.sha256(metadata.read_bytes()).hexdigest(), hashlib.sha256(table).hexdigest())
    lock.write_text(text)
    metadata.write_bytes(table)
    for extra in ([], ["--components", vendored_platform.parent / "vendor"]):
        result = render(cli, vendored_platform, *extra)
        assert result.exit_code == 2
        err = result.stderr.replace("\n", "")
        assert ("Platform/default.spec.packages.infrastructure-proxmox.version: infrastructure-proxmox v0.9.0 "
                "declares contract v1beta2") in err
        assert "core v1.10.1 serves v1beta1" in err


def test_the_token_secret_never_reaches_a_render(cli: Cli, vendored_platform: Path) -> None:
    env = {"PVE_TOKEN_SECRET": "0d1b7a6e-5b0c-4b53-9f4e-token-sentinel"}
    result = cli("providers", "render", "-f", vendored_platform, "--components", vendored_platform.parent / "vendor",
                 env=env)
    assert result.exit_code == 0
    assert "token-sentinel" not in result.stdout + result.stderr


def test_rendered_providers_are_valid_against_the_operator_crds(
    rendered: list[dict[str, Any]], request: pytest.FixtureRequest
) -> None:
    assert_valid = request.getfixturevalue("assert_valid")
    assert_valid(rendered)


def test_every_render_refusal_exits_2_without_a_traceback(cli: Cli, write_platform: Callable[..., Path]) -> None:
    result = render(cli, write_platform({"bundles": {"enabledPackages": ["infrastructure-proxmox"],
                                                     "disabledPackages": ["ipam-in-cluster"]}}))
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
    assert len([line for line in result.stderr.splitlines() if line.startswith("Platform/")]) == 2


def test_the_crd_judge_is_live_for_provider_objects(rendered: list[dict[str, Any]], shared: Path) -> None:
    """Control for the test above: the same objects with both url and selector break the CRD's CEL rule."""
    from tenantctl import validate

    docs = rendered
    providers_of(docs)[("InfrastructureProvider", "proxmox")]["spec"]["fetchConfig"]["url"] = "https://example.invalid"
    problems = validate.validate_objects(docs, validate.SchemaCatalog.from_dirs([shared / "crds"]))
    assert any("one and only one of {oci, url, selector}" in str(p) for p in problems), problems


def test_a_planning_render_ignores_metadata_of_a_version_not_pinned(cli: Cli, vendored_platform: Path) -> None:
    """The vendored table belongs to the pinned v0.7.7; judging v0.9.0 by it would be a false verdict."""
    doc = yaml.safe_load(vendored_platform.read_text())
    doc["spec"]["packages"]["infrastructure-proxmox"]["version"] = "v0.9.0"
    vendored_platform.write_text(yaml.safe_dump(doc))
    result = render(cli, vendored_platform)
    assert result.exit_code == 0, result.stderr
    assert "contract of infrastructure-proxmox v0.9.0 not checked" in result.stderr


def test_a_malformed_lock_stops_every_command_naming_it(cli: Cli, vendored_platform: Path) -> None:
    lock = vendored_platform.parent / "providers.lock"
    lock.write_text("format = 1\n[packages.core\n")
    for args in (["providers", "render"], ["vendor", "check"], ["vendor", "fetch"]):
        result = cli(*args, "-f", vendored_platform)
        assert result.exit_code == 2
        assert f"{lock}: malformed TOML" in result.stderr

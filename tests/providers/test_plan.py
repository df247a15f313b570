"""`providers plan`: applied, or silently ignored because applied-spec-hash does not cover the ConfigMap."""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from typer.testing import Result

from providers.support import Cli, load_all
from tenantctl.providers.blob import compress
from tenantctl.providers.plan import plan

PROXMOX = "InfrastructureProvider/capmox-system/proxmox"


def render(cli: Cli, platform: Path, components: bool = True) -> list[dict[str, Any]]:
    extra = ["--components", platform.parent / "vendor"] if components else []
    result = cli("providers", "render", "-f", platform, *extra)
    assert result.exit_code == 0, result.stderr
    return load_all(result.stdout)


def run_plan(cli: Cli, platform: Path, previous: list[dict[str, Any]], tmp_path: Path) -> Result:
    path = tmp_path / "previous.yaml"
    path.write_text(yaml.safe_dump_all(previous, sort_keys=False))
    return cli("providers", "plan", "-f", platform, "--components", platform.parent / "vendor", "--previous", path)


def find(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def test_the_same_render_changes_nothing(
    rendered: list[dict[str, Any]], cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    result = run_plan(cli, vendored_platform, rendered, tmp_path)
    assert result.exit_code == 0, result.stderr
    assert f"{PROXMOX}: unchanged" in result.stdout.splitlines()
    assert result.stdout.count(": unchanged\n") == 6


def test_new_components_under_the_same_version_are_refused(
    rendered: list[dict[str, Any]], cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    previous = rendered
    cm = find(previous, "ConfigMap", "core-cluster-api-v1.10.1")
    cm["binaryData"]["components"] = base64.b64encode(compress(b"kind: Namespace\n")).decode()
    result = run_plan(cli, vendored_platform, previous, tmp_path)
    assert result.exit_code == 2
    assert "CoreProvider/capi-system/cluster-api: silently ignored — components changed under spec.version v1.10.1" in (
        result.stdout)
    assert (
        "CoreProvider/capi-system/cluster-api: components changed but spec.version (v1.10.1) and the ConfigMap name "
        "did not: capi-operator re-applies only when operator.cluster.x-k8s.io/applied-spec-hash (provider spec + "
        "config Secret) changes, so clusters already running this provider would keep the old components and report "
        "nothing. Move the package to a new version (version and ConfigMap name together)"
    ) in " ".join(result.stderr.split()), "the whole reason, word for word"


def test_new_metadata_under_the_same_version_is_refused(
    rendered: list[dict[str, Any]], cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    previous = rendered
    find(previous, "ConfigMap", "ipam-in-cluster-v1.0.3")["data"]["metadata"] += "# older\n"
    result = run_plan(cli, vendored_platform, previous, tmp_path)
    assert result.exit_code == 2
    assert "IPAMProvider/capi-ipam-in-cluster-system/in-cluster: silently ignored — metadata changed" in result.stdout


def test_a_version_bump_is_applied(
    rendered: list[dict[str, Any]], cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    previous = rendered
    provider = find(previous, "InfrastructureProvider", "proxmox")
    provider["spec"]["version"] = "v0.7.6"
    provider["spec"]["fetchConfig"]["selector"]["matchLabels"]["provider.cluster.x-k8s.io/version"] = "v0.7.6"
    cm = find(previous, "ConfigMap", "infrastructure-proxmox-v0.7.7")
    cm["metadata"]["name"] = "infrastructure-proxmox-v0.7.6"
    cm["metadata"]["labels"]["provider.cluster.x-k8s.io/version"] = "v0.7.6"
    cm["binaryData"]["components"] = base64.b64encode(compress(b"kind: Old\n")).decode()
    result = run_plan(cli, vendored_platform, previous, tmp_path)
    assert result.exit_code == 0, result.stderr
    assert f"{PROXMOX}: re-applied — spec.version v0.7.6 → v0.7.7; spec.fetchConfig" in result.stdout


def test_another_spec_change_is_applied(
    rendered: list[dict[str, Any]], cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    previous = rendered
    find(previous, "CoreProvider", "cluster-api")["spec"]["deployment"]["containers"][0]["resources"] = {}
    result = run_plan(cli, vendored_platform, previous, tmp_path)
    assert "CoreProvider/capi-system/cluster-api: re-applied — spec.deployment" in result.stdout


def test_a_spec_field_added_or_dropped_is_a_change(
    rendered: list[dict[str, Any]], cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    """A field only one side has changes what capi-operator applies as much as a changed value does."""
    previous = rendered
    del find(previous, "CoreProvider", "cluster-api")["spec"]["deployment"]
    result = run_plan(cli, vendored_platform, previous, tmp_path)
    assert "CoreProvider/capi-system/cluster-api: re-applied — spec.deployment" in result.stdout


def test_new_providers_are_installed_and_dropped_ones_named(rendered: list[dict[str, Any]],
    cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    previous = rendered
    current_kamaji = find(previous, "ControlPlaneProvider", "kamaji")
    previous.remove(find(previous, "IPAMProvider", "in-cluster"))
    gone = copy.deepcopy(current_kamaji)
    gone["metadata"]["name"] = "talos"
    previous.append(gone)
    result = run_plan(cli, vendored_platform, previous, tmp_path)
    assert "IPAMProvider/capi-ipam-in-cluster-system/in-cluster: installed — version v1.0.3" in result.stdout
    assert ("ControlPlaneProvider/capi-kamaji-system/talos: no longer rendered — delete it yourself: apply does not "
            "prune it") in result.stdout


def test_a_planning_render_cannot_be_compared(cli: Cli, vendored_platform: Path, tmp_path: Path) -> None:
    result = run_plan(cli, vendored_platform, render(cli, vendored_platform, components=False), tmp_path)
    assert result.exit_code == 0
    assert f"{PROXMOX}: unchanged spec — components not compared: the previous render has no ConfigMap " \
           "(planning mode)\n" in result.stdout
    assert "components not compared; render both with --components" in result.stderr


def test_this_render_in_planning_mode_cannot_be_compared(rendered: list[dict[str, Any]],
    cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    path = tmp_path / "previous.yaml"
    path.write_text(yaml.safe_dump_all(rendered, sort_keys=False))
    result = cli("providers", "plan", "-f", vendored_platform, "--previous", path)
    assert f"{PROXMOX}: unchanged spec — components not compared: this render has no ConfigMap (planning mode)\n" \
           in result.stdout


def test_an_uncompressed_configmap_is_compared_by_content(rendered: list[dict[str, Any]],
    cli: Cli, vendored_platform: Path, write_platform: Callable[..., Path]
) -> None:
    current = rendered
    previous = copy.deepcopy(current)
    cm = find(previous, "ConfigMap", "core-cluster-api-v1.10.1")
    del cm["binaryData"]
    cm["data"]["components"] = (vendored_platform.parent / "vendor" / "core" / "components.yaml").read_text()
    verdicts, problems = plan(previous, current, "previous.yaml")
    assert [str(v) for v in verdicts if v.provider.startswith("CoreProvider")] == [
        "CoreProvider/capi-system/cluster-api: unchanged"]
    assert not problems.errors


def test_the_secret_data_blind_spot_is_stated(
    rendered: list[dict[str, Any]], cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    result = run_plan(cli, vendored_platform, rendered, tmp_path)
    assert "config Secret data also re-applies it; tenantctl does not see that data" in result.stdout

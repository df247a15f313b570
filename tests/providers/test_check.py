"""`vendor check`: green on a clean tree, red on each drift case the seeds describe (#4087, #4483)."""

from __future__ import annotations

import base64
import gzip
import io
import os
from pathlib import Path
from typing import Any

import yaml
from typer.testing import Result

from providers.support import Cli, load_all
from tenantctl.providers.blob import compress
from tenantctl.providers.catalogue import load_catalogue
from tenantctl.providers.download import sha256

CATALOGUE = load_catalogue()


def check(cli: Cli, platform: Path, *rendered: Path) -> Result:
    args: list[str | Path] = ["vendor", "check", "-f", platform]
    for path in rendered:
        args += ["--rendered", path]
    return cli(*args)


def errors(result: Result) -> str:
    assert result.exit_code == 2, result.stdout + result.stderr
    return result.stderr.replace("\n", "")


def vendored(platform: Path, package: str, name: str) -> Path:
    return platform.parent / "vendor" / package / name


def render_to(rendered_template: str, path: Path) -> list[dict[str, Any]]:
    """The session's render (same vendored files as each test's copy), committed to `path`."""
    path.write_text(rendered_template)
    return load_all(rendered_template)


def write_docs(path: Path, docs: list[dict[str, Any]]) -> None:
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))


def find(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def test_a_clean_tree_is_green(cli: Cli, vendored_platform: Path) -> None:
    result = check(cli, vendored_platform)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("vendor check: 6 package(s) match")


def test_a_clean_tree_and_its_committed_render_are_green(
    rendered_template: str, cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    render_to(rendered_template, tmp_path / "providers.yaml")
    result = check(cli, vendored_platform, tmp_path / "providers.yaml")
    assert result.exit_code == 0, result.stderr


def test_yaml_edited_without_the_blob_is_red(cli: Cli, vendored_platform: Path) -> None:
    yaml_path = vendored(vendored_platform, "core", "components.yaml")
    original = yaml_path.read_bytes()
    yaml_path.write_bytes(original + b"# reviewed and tweaked\n")
    err = errors(check(cli, vendored_platform))
    blob_path = vendored(vendored_platform, "core", "components.yaml.gz")
    assert f"{blob_path}: core: decompresses to sha256 {sha256(original)}" in err
    assert f"but {yaml_path} is sha256 {sha256(original + b'# reviewed and tweaked' + bytes([10]))}" in err
    assert "the cluster runs the blob, not the YAML" in err
    assert f"the YAML has 1 line(s) more after line {len(original.splitlines())}" in err


def test_yaml_cut_short_says_the_blob_has_the_lines_more(cli: Cli, vendored_platform: Path) -> None:
    yaml_path = vendored(vendored_platform, "core", "components.yaml")
    lines = yaml_path.read_bytes().splitlines(keepends=True)
    yaml_path.write_bytes(b"".join(lines[:-2]))
    assert f"the blob has 2 line(s) more after line {len(lines) - 2}" in errors(check(cli, vendored_platform))


def test_a_yaml_edit_that_changes_a_line_names_it(cli: Cli, vendored_platform: Path) -> None:
    yaml_path = vendored(vendored_platform, "ipam-in-cluster", "components.yaml")
    lines = yaml_path.read_text().splitlines(keepends=True)
    lines[3] = "  name: edited\n"
    yaml_path.write_text("".join(lines))
    assert "first difference at line 4" in errors(check(cli, vendored_platform))


def test_yaml_and_blob_edited_together_still_differ_from_the_lock(cli: Cli, vendored_platform: Path) -> None:
    yaml_path = vendored(vendored_platform, "ipam-in-cluster", "components.yaml")
    edited = yaml_path.read_bytes() + b"# hand edit\n"
    yaml_path.write_bytes(edited)
    vendored(vendored_platform, "ipam-in-cluster", "components.yaml.gz").write_bytes(compress(edited))
    err = errors(check(cli, vendored_platform))
    assert f"{yaml_path}: ipam-in-cluster: sha256 {sha256(edited)} but" in err
    assert "edited by hand?" in err


def test_version_bumped_alone_in_the_platform_is_red(cli: Cli, vendored_platform: Path) -> None:
    doc = yaml.safe_load(vendored_platform.read_text())
    doc["spec"]["packages"]["infrastructure-proxmox"]["version"] = "v0.7.8"
    vendored_platform.write_text(yaml.safe_dump(doc))
    err = errors(check(cli, vendored_platform))
    assert ("Platform/default.spec.packages.infrastructure-proxmox.version: infrastructure-proxmox is v0.7.8 here "
            f"but {vendored_platform.parent / 'providers.lock'} pins v0.7.7") in err


def test_version_bumped_alone_in_the_lock_is_red(cli: Cli, vendored_platform: Path) -> None:
    lock = vendored_platform.parent / "providers.lock"
    lock.write_text(lock.read_text().replace('version = "v1.0.3"', 'version = "v1.0.4"'))
    err = errors(check(cli, vendored_platform))
    assert "ipam-in-cluster (tenantctl catalogue version): ipam-in-cluster is v1.0.3 here but" in err
    assert "pins v1.0.4" in err


def test_spec_version_bumped_alone_in_a_committed_render_is_red(
    rendered_template: str, cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    docs = render_to(rendered_template, tmp_path / "providers.yaml")
    find(docs, "InfrastructureProvider", "proxmox")["spec"]["version"] = "v0.7.8"
    write_docs(tmp_path / "providers.yaml", docs)
    err = errors(check(cli, vendored_platform, tmp_path / "providers.yaml"))
    at = f"{tmp_path / 'providers.yaml'}: InfrastructureProvider/capmox-system/proxmox"
    assert f"{at}.spec.version: v0.7.8 but" in err
    assert "pins infrastructure-proxmox v0.7.7" in err
    assert "provider.cluster.x-k8s.io/version=v0.7.7 but" in err


def test_configmap_renamed_without_spec_version_is_red(
    rendered_template: str, cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    docs = render_to(rendered_template, tmp_path / "providers.yaml")
    cm = find(docs, "ConfigMap", "infrastructure-proxmox-v0.7.7")
    cm["metadata"]["name"] = "infrastructure-proxmox-v0.7.8"
    cm["metadata"]["labels"]["provider.cluster.x-k8s.io/version"] = "v0.7.8"
    write_docs(tmp_path / "providers.yaml", docs)
    err = errors(check(cli, vendored_platform, tmp_path / "providers.yaml"))
    cm_at = f"{tmp_path / 'providers.yaml'}: ConfigMap/capmox-system/infrastructure-proxmox-v0.7.8"
    assert (f"{cm_at}.metadata.name: infrastructure-proxmox-v0.7.8 does not carry spec.version v0.7.7 of "
            f"{tmp_path / 'providers.yaml'}: InfrastructureProvider/capmox-system/proxmox") in err
    assert ("(expected infrastructure-proxmox-v0.7.7): capi-operator's applied-spec-hash does not cover the "
            "ConfigMap, so a change here without spec.version is never applied") in err
    assert f"{cm_at}.metadata.labels: provider.cluster.x-k8s.io/version=v0.7.8 but" in err
    assert ".spec.fetchConfig.selector: matches no ConfigMap" in err


def test_configmap_renamed_with_its_label_left_is_red(
    rendered_template: str, cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    docs = render_to(rendered_template, tmp_path / "providers.yaml")
    find(docs, "ConfigMap", "core-cluster-api-v1.10.1")["metadata"]["name"] = "core-cluster-api-v1.10.2"
    write_docs(tmp_path / "providers.yaml", docs)
    err = errors(check(cli, vendored_platform, tmp_path / "providers.yaml"))
    assert "core-cluster-api-v1.10.2 does not carry spec.version v1.10.1" in err


def test_patch_missing_from_the_blob_is_red(cli: Cli, vendored_platform: Path) -> None:
    core = CATALOGUE.core
    yaml_path = vendored(vendored_platform, "core", "components.yaml")
    unpatched = yaml_path.read_text().replace("startupProbe", "readinessGate").encode()
    yaml_path.write_bytes(unpatched)
    vendored(vendored_platform, "core", "components.yaml.gz").write_bytes(compress(unpatched))
    err = errors(check(cli, vendored_platform))
    assert (f"core: declared patch missing from the blob: {core.patches[0].id}: Deployment/capi-controller-manager "
            ".spec.template.spec.containers[name=manager].startupProbe") in err


def test_a_blob_missing_the_last_lines_of_the_yaml_says_so(cli: Cli, vendored_platform: Path) -> None:
    yaml_bytes = vendored(vendored_platform, "core", "components.yaml").read_bytes()
    vendored(vendored_platform, "core", "components.yaml.gz").write_bytes(compress(yaml_bytes.rsplit(b"\n", 3)[0]))
    assert "the YAML has 2 line(s) more after line" in errors(check(cli, vendored_platform))


def test_patch_in_the_yaml_but_not_in_the_blob_is_red(cli: Cli, vendored_platform: Path) -> None:
    """cozystack#2946: the probe was in the YAML a reviewer read, never in the blob a cluster ran."""
    blob = vendored(vendored_platform, "bootstrap-talos", "components.yaml.gz")
    text = gzip.decompress(blob.read_bytes()).decode()
    reverted = text.replace("serviceAccountName: cabpt-manager", "serviceAccountName: default")
    blob.write_bytes(compress(reverted.encode()))
    err = errors(check(cli, vendored_platform))
    assert "bootstrap-talos: declared patch missing from the blob: cabpt-dedicated-service-account" in err
    assert "bootstrap-talos: decompresses to sha256" in err


def test_a_blob_with_a_name_and_time_is_not_reproducible(cli: Cli, vendored_platform: Path) -> None:
    yaml_bytes = vendored(vendored_platform, "core", "components.yaml").read_bytes()
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="core-components.yaml", mode="wb", fileobj=buffer, mtime=1700000000) as out:
        out.write(yaml_bytes)
    vendored(vendored_platform, "core", "components.yaml.gz").write_bytes(buffer.getvalue())
    err = errors(check(cli, vendored_platform))
    assert "core: not reproducible: it stores a file name (use gzip -n)" in err


def test_a_blob_that_is_not_gzip_is_red(cli: Cli, vendored_platform: Path) -> None:
    vendored(vendored_platform, "core", "components.yaml.gz").write_bytes(b"plain text")
    assert "core: not a readable gzip stream" in errors(check(cli, vendored_platform))


def test_metadata_edited_is_red(cli: Cli, vendored_platform: Path) -> None:
    path = vendored(vendored_platform, "ipam-in-cluster", "metadata.yaml")
    path.write_text(path.read_text() + "# edited\n")
    assert f"{path}: ipam-in-cluster: sha256" in errors(check(cli, vendored_platform))


def test_a_vendored_table_without_the_pinned_series_is_red_naming_its_file(
    cli: Cli, vendored_platform: Path
) -> None:
    """The contract check reads the vendored metadata.yaml: its refusal must say which file to look at."""
    path = vendored(vendored_platform, "ipam-in-cluster", "metadata.yaml")
    lock = vendored_platform.parent / "providers.lock"
    before = sha256(path.read_bytes())
    path.write_text("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\n"
                    "releaseSeries: [{major: 9, minor: 9, contract: v1beta1}]\n")
    assert before in lock.read_text()
    lock.write_text(lock.read_text().replace(before, sha256(path.read_bytes())))  # vendored so, on purpose
    assert f"matches no release series in {path}" in errors(check(cli, vendored_platform))


def test_a_package_never_fetched_is_red(cli: Cli, vendored_platform: Path) -> None:
    for name in ("components.yaml", "components.yaml.gz", "metadata.yaml"):
        os.remove(vendored(vendored_platform, "ipam-in-cluster", name))
    err = errors(check(cli, vendored_platform))
    assert "ipam-in-cluster: cannot read" in err
    assert "run `tenantctl vendor fetch ipam-in-cluster`" in err


def test_an_enabled_package_missing_from_the_lock_is_red(cli: Cli, vendored_platform: Path) -> None:
    lock = vendored_platform.parent / "providers.lock"
    text = lock.read_text()
    start = text.index("[packages.ipam-in-cluster]")
    end = text.index("[packages.", start + 1) if "[packages." in text[start + 1:] else len(text)
    lock.write_text(text[:start] + text[end:])
    assert "ipam-in-cluster is enabled but not pinned" in errors(check(cli, vendored_platform))


def test_a_patch_changed_since_the_lock_is_red(cli: Cli, vendored_platform: Path) -> None:
    lock = vendored_platform.parent / "providers.lock"
    digest = CATALOGUE.core.patches[0].digest()
    lock.write_text(lock.read_text().replace(digest, "f" * 64))
    err = errors(check(cli, vendored_platform))
    assert f"patch capi-controller-manager-startup-probe: declared sha256 {digest}, pinned {'f' * 64}" in err


def test_a_patch_declared_but_not_pinned_and_one_pinned_but_gone_are_both_named(
    cli: Cli, vendored_platform: Path
) -> None:
    lock = vendored_platform.parent / "providers.lock"
    patch = CATALOGUE.core.patches[0]
    lock.write_text(lock.read_text().replace(f'id = "{patch.id}"', 'id = "retired-patch"'))
    err = errors(check(cli, vendored_platform))
    assert f"patch {patch.id}: declared sha256 {patch.digest()}, pinned (none)" in err, err
    assert f"patch retired-patch: declared sha256 (none), pinned {patch.digest()}" in err, err


def test_a_pinned_package_that_is_not_enabled_is_a_warning(cli: Cli, vendored_platform: Path) -> None:
    doc = yaml.safe_load(vendored_platform.read_text())
    doc["spec"] = {}
    vendored_platform.write_text(yaml.safe_dump(doc))
    result = check(cli, vendored_platform)
    assert result.exit_code == 0
    assert "packages.infrastructure-proxmox: infrastructure-proxmox is pinned but not enabled" in result.stderr


def test_a_configmap_without_its_namespace_is_named_so_and_matched_by_no_provider(
    rendered_template: str, cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    """capi-operator looks for the components in the provider's namespace; one left without a namespace
    (applied to whatever namespace kubectl defaults to) is not found there."""
    docs = render_to(rendered_template, tmp_path / "providers.yaml")
    cm = find(docs, "ConfigMap", "core-cluster-api-v1.10.1")
    del cm["metadata"]["namespace"], cm["metadata"]["annotations"]
    write_docs(tmp_path / "providers.yaml", docs)
    err = errors(check(cli, vendored_platform, tmp_path / "providers.yaml"))
    at = tmp_path / "providers.yaml"
    assert f"{at}: CoreProvider/capi-system/cluster-api.spec.fetchConfig.selector: matches no ConfigMap in {at}" in err
    assert f"{at}: ConfigMap//core-cluster-api-v1.10.1.metadata.annotations: " in err, "no namespace: an empty one"


def test_a_render_shipping_the_yaml_twice_is_red(
    rendered_template: str, cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    docs = render_to(rendered_template, tmp_path / "providers.yaml")
    cm = find(docs, "ConfigMap", "core-cluster-api-v1.10.1")
    cm["data"]["components"] = vendored(vendored_platform, "core", "components.yaml").read_text()
    write_docs(tmp_path / "providers.yaml", docs)
    err = errors(check(cli, vendored_platform, tmp_path / "providers.yaml"))
    assert "core-cluster-api-v1.10.1.data.components: the readable YAML ships here as well as the blob" in err


def test_a_render_without_the_compressed_annotation_is_red(
    rendered_template: str, cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    docs = render_to(rendered_template, tmp_path / "providers.yaml")
    del find(docs, "ConfigMap", "core-cluster-api-v1.10.1")["metadata"]["annotations"]
    write_docs(tmp_path / "providers.yaml", docs)
    err = errors(check(cli, vendored_platform, tmp_path / "providers.yaml"))
    assert 'provider.cluster.x-k8s.io/compressed must be "true"' in err


def test_a_render_carrying_other_components_is_red(
    rendered_template: str, cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    docs = render_to(rendered_template, tmp_path / "providers.yaml")
    find(docs, "ConfigMap", "core-cluster-api-v1.10.1")["binaryData"]["components"] = base64.b64encode(
        compress(b"kind: Namespace\n")).decode()
    find(docs, "ConfigMap", "ipam-in-cluster-v1.0.3")["data"]["metadata"] = "releaseSeries: []\n"
    write_docs(tmp_path / "providers.yaml", docs)
    err = errors(check(cli, vendored_platform, tmp_path / "providers.yaml"))
    assert f"core-cluster-api-v1.10.1.binaryData.components: sha256 {sha256(b'kind: Namespace' + bytes([10]))}" in err
    assert "ipam-in-cluster-v1.0.3.data.metadata: differs from" in err


def test_a_render_with_undecodable_components_is_red(
    rendered_template: str, cli: Cli, vendored_platform: Path, tmp_path: Path
) -> None:
    docs = render_to(rendered_template, tmp_path / "providers.yaml")
    find(docs, "ConfigMap", "core-cluster-api-v1.10.1")["binaryData"]["components"] = "not base64!"
    write_docs(tmp_path / "providers.yaml", docs)
    err = errors(check(cli, vendored_platform, tmp_path / "providers.yaml"))
    assert "binaryData.components: cannot compare with" in err


def test_a_blob_over_the_configmap_limit_is_red(cli: Cli, vendored_platform: Path) -> None:
    vendored(vendored_platform, "core", "components.yaml.gz").write_bytes(compress(os.urandom(1024 * 1024)))
    assert "over the 1048576-byte ConfigMap limit" in errors(check(cli, vendored_platform))

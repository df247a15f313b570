"""`vendor lock` and `vendor fetch` against a loopback upstream serving synthetic releases."""

from __future__ import annotations

import gzip
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from providers.support import PROXMOX_ON, Cli, Upstream, real_metadata, synthetic_components, tree_bytes
from tenantctl.providers.build import build
from tenantctl.providers.catalogue import load_catalogue
from tenantctl.providers.download import sha256
from tenantctl.providers.lockfile import Lock, LockedFile, LockedPackage, read_lock, write_lock

CATALOGUE = load_catalogue()
PROXMOX = CATALOGUE.get("infrastructure-proxmox")
ENABLED = ["core", "bootstrap-talos", "controlplane-kamaji", "infrastructure-kubevirt", "infrastructure-proxmox",
           "ipam-in-cluster"]


@pytest.fixture
def platform(write_platform: Callable[..., Path]) -> Path:
    return write_platform(PROXMOX_ON)


def lock(cli: Cli, platform: Path, upstream: Upstream, *packages: str) -> Result:
    return cli("vendor", "lock", "-f", platform, *packages, "--mirror", upstream.mirror)


def fetch(cli: Cli, platform: Path, upstream: Upstream, *packages: str) -> Result:
    return cli("vendor", "fetch", "-f", platform, *packages, "--mirror", upstream.mirror)


def test_lock_records_upstream_urls_and_digests_and_shows_them(cli: Cli, platform: Path, upstream: Upstream) -> None:
    result = lock(cli, platform, upstream)
    assert result.exit_code == 0, result.stderr
    pins = read_lock(platform.parent / "providers.lock")
    assert sorted(pins.packages) == sorted(ENABLED)
    entry = pins.packages["infrastructure-proxmox"]
    path = "/ionos-cloud/cluster-api-provider-proxmox/releases/download/v0.7.7/infrastructure-components.yaml"
    url, served = f"https://github.com{path}", upstream.files[path]
    assert (entry.version, entry.components.url, entry.components.sha256) == ("v0.7.7", url, sha256(served))
    assert f"components  sha256:{sha256(served)}  {url}" in result.stdout
    assert "infrastructure-proxmox v0.7.7: pinned" in result.stdout


def test_lock_records_the_patches_applied(cli: Cli, platform: Path, upstream: Upstream) -> None:
    lock(cli, platform, upstream)
    pins = read_lock(platform.parent / "providers.lock")
    [startup] = pins.packages["core"].patches
    assert (startup.id, startup.sha256) == ("capi-controller-manager-startup-probe", CATALOGUE.core.patches[0].digest())
    assert pins.packages["ipam-in-cluster"].patches == ()


def test_a_second_lock_changes_nothing_and_downloads_nothing(cli: Cli, platform: Path, upstream: Upstream) -> None:
    lock(cli, platform, upstream)
    before = (platform.parent / "providers.lock").read_bytes()
    upstream.requests.clear()
    result = lock(cli, platform, upstream)
    assert result.exit_code == 0
    assert "core v1.10.1: already pinned, unchanged" in result.stdout
    assert upstream.requests == []
    assert (platform.parent / "providers.lock").read_bytes() == before


def test_lock_of_a_new_version_is_the_way_a_pin_changes(
    cli: Cli, write_platform: Callable[..., Path], upstream: Upstream
) -> None:
    platform = write_platform(PROXMOX_ON)
    lock(cli, platform, upstream)
    upstream.publish(PROXMOX, "v0.7.8")
    spec = {**PROXMOX_ON, "packages": {"infrastructure-proxmox": {
        "version": "v0.7.8", "credentialsSecret": {"name": "capmox-credentials"}}}}
    platform = write_platform(spec)
    result = lock(cli, platform, upstream, "infrastructure-proxmox")
    assert result.exit_code == 0, result.stderr
    assert read_lock(platform.parent / "providers.lock").packages["infrastructure-proxmox"].version == "v0.7.8"


def test_fetch_writes_yaml_blob_and_metadata(cli: Cli, platform: Path, upstream: Upstream) -> None:
    lock(cli, platform, upstream)
    result = fetch(cli, platform, upstream)
    assert result.exit_code == 0, result.stderr
    vendor = platform.parent / "vendor"
    assert sorted(p.name for p in vendor.iterdir()) == sorted(ENABLED)
    for name in ENABLED:
        files = vendor / name
        assert sorted(p.name for p in files.iterdir()) == ["components.yaml", "components.yaml.gz", "metadata.yaml"]
        assert gzip.decompress((files / "components.yaml.gz").read_bytes()) == (files / "components.yaml").read_bytes()
    core_blob = gzip.decompress((vendor / "core" / "components.yaml.gz").read_bytes())
    assert b"startupProbe" in core_blob


def test_two_fetches_give_identical_bytes(cli: Cli, platform: Path, upstream: Upstream, tmp_path: Path) -> None:
    lock(cli, platform, upstream)
    fetch(cli, platform, upstream)
    first = tree_bytes(platform.parent / "vendor")
    fetch(cli, platform, upstream)
    assert tree_bytes(platform.parent / "vendor") == first
    assert sorted(p.name for p in (platform.parent / "vendor").iterdir()) == sorted(ENABLED)


def test_fetch_of_a_changed_upstream_file_names_file_and_both_digests(
    cli: Cli, platform: Path, upstream: Upstream
) -> None:
    lock(cli, platform, upstream)
    url = PROXMOX.components_url("v0.7.7")
    pinned = read_lock(platform.parent / "providers.lock").packages["infrastructure-proxmox"].components.sha256
    upstream.set(url, b"# re-tagged upstream\n")
    result = fetch(cli, platform, upstream)
    assert result.exit_code == 2
    assert (f"{url}: SHA-256 {sha256(b'# re-tagged upstream' + bytes([10]))} does not match the pinned {pinned}; "
            "the file changed since it was locked. Nothing was written") in " ".join(result.stderr.split())
    assert not (platform.parent / "vendor").exists()


def test_lock_enforces_pins_it_already_holds(cli: Cli, platform: Path, upstream: Upstream) -> None:
    lock(cli, platform, upstream)
    lock_path = platform.parent / "providers.lock"
    old_patch = CATALOGUE.core.patches[0].digest()
    lock_path.write_text(lock_path.read_text().replace(old_patch, "0" * 64))
    upstream.set(CATALOGUE.core.components_url("v1.10.1"), b"# changed\n")
    result = lock(cli, platform, upstream, "core")
    assert result.exit_code == 2
    assert "does not match the pinned" in result.stderr


def test_lock_re_pins_changed_patches_without_touching_file_pins(cli: Cli, platform: Path, upstream: Upstream) -> None:
    lock(cli, platform, upstream)
    lock_path = platform.parent / "providers.lock"
    good = lock_path.read_text()
    lock_path.write_text(good.replace(CATALOGUE.core.patches[0].digest(), "0" * 64))
    result = lock(cli, platform, upstream, "core")
    assert result.exit_code == 0, result.stderr
    assert "core v1.10.1: patches re-pinned" in result.stdout
    assert lock_path.read_text() == good


def test_fetch_without_a_pin_is_refused(cli: Cli, platform: Path, upstream: Upstream) -> None:
    result = fetch(cli, platform, upstream, "core")
    assert result.exit_code == 2
    assert "packages.core: no pin for core; run `tenantctl vendor lock core` first" in result.stderr
    assert upstream.requests == []


def test_fetch_of_a_version_the_lock_does_not_pin_names_both(
    cli: Cli, write_platform: Callable[..., Path], upstream: Upstream
) -> None:
    platform = write_platform(PROXMOX_ON)
    lock(cli, platform, upstream)
    platform = write_platform({**PROXMOX_ON, "packages": {"infrastructure-proxmox": {
        "version": "v0.7.8", "credentialsSecret": {"name": "capmox-credentials"}}}})
    result = fetch(cli, platform, upstream)
    assert result.exit_code == 2
    assert ("Platform/default.spec.packages.infrastructure-proxmox.version: infrastructure-proxmox is v0.7.8 here "
            "but") in result.stderr
    assert "pins v0.7.7" in result.stderr


def test_fetch_refuses_a_patch_that_changed_since_the_lock(cli: Cli, platform: Path, upstream: Upstream) -> None:
    lock(cli, platform, upstream)
    lock_path = platform.parent / "providers.lock"
    digest = CATALOGUE.core.patches[0].digest()
    lock_path.write_text(lock_path.read_text().replace(digest, "0" * 64))
    result = fetch(cli, platform, upstream)
    assert result.exit_code == 2
    assert f"patch capi-controller-manager-startup-probe: declared sha256 {digest}, pinned {'0' * 64}" in (
        result.stderr.replace("\n", ""))


def test_fetch_names_a_patch_the_lock_lacks_and_one_it_pins_that_is_gone(
    cli: Cli, platform: Path, upstream: Upstream
) -> None:
    lock(cli, platform, upstream)
    lock_path = platform.parent / "providers.lock"
    patch = CATALOGUE.core.patches[0]
    lock_path.write_text(lock_path.read_text().replace(f'id = "{patch.id}"', 'id = "retired-patch"'))
    result = fetch(cli, platform, upstream)
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())
    assert f"patch {patch.id}: declared sha256 {patch.digest()}, pinned (none); run `tenantctl vendor lock core`" \
        in said
    assert f"patch retired-patch: declared sha256 (none), pinned {patch.digest()}" in said


def test_fetch_refuses_output_that_differs_from_the_pinned_vendored_digest(
    cli: Cli, platform: Path, upstream: Upstream
) -> None:
    lock(cli, platform, upstream)
    lock_path = platform.parent / "providers.lock"
    pinned = read_lock(lock_path).packages["ipam-in-cluster"].vendored_sha256
    text = lock_path.read_text()
    lock_path.write_text(text.replace(f'vendored-sha256 = "{pinned}"', f'vendored-sha256 = "{"1" * 64}"'))
    result = fetch(cli, platform, upstream)
    assert result.exit_code == 2
    assert f"patched components.yaml has sha256 {pinned}, the lock pins {'1' * 64}" in result.stderr.replace("\n", "")


def test_fetch_of_one_package_vendors_only_that_one(cli: Cli, platform: Path, upstream: Upstream) -> None:
    lock(cli, platform, upstream)
    assert fetch(cli, platform, upstream, "ipam-in-cluster").exit_code == 0
    assert [p.name for p in (platform.parent / "vendor").iterdir()] == ["ipam-in-cluster"]


def test_unknown_and_disabled_packages_are_refused(
    cli: Cli, write_platform: Callable[..., Path], upstream: Upstream
) -> None:
    platform = write_platform()
    result = lock(cli, platform, upstream, "ipam-incluster", "infrastructure-proxmox")
    assert result.exit_code == 2
    assert "ipam-incluster: unknown package; did you mean 'ipam-in-cluster'?" in result.stderr
    assert "infrastructure-proxmox: not enabled in Platform/default" in result.stderr


def test_a_missing_upstream_file_is_refused_and_nothing_is_written(
    cli: Cli, platform: Path, upstream: Upstream
) -> None:
    del upstream.files["/kubernetes-sigs/cluster-api-ipam-provider-in-cluster/releases/download/v1.0.3/"
                       "metadata.yaml"]
    result = lock(cli, platform, upstream)
    assert result.exit_code == 2
    assert "cannot download https://github.com/kubernetes-sigs/cluster-api-ipam-provider-in-cluster/releases/" in (
        result.stderr)
    assert "HTTP 404" in result.stderr
    assert not (platform.parent / "providers.lock").exists()


def test_an_unreachable_mirror_is_refused(cli: Cli, platform: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = cli("vendor", "lock", "-f", platform, "core", "--mirror", f"http://127.0.0.1:{port}")
    assert result.exit_code == 2
    assert f"(via http://127.0.0.1:{port}/kubernetes-sigs/cluster-api/releases/download/v1.10.1/" in result.stderr
    assert "ConnectionError" in result.stderr


def test_a_patch_that_no_longer_fits_upstream_is_refused(cli: Cli, platform: Path, upstream: Upstream) -> None:
    upstream.set(CATALOGUE.core.components_url("v1.10.1"), b"apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n")
    result = lock(cli, platform, upstream, "core")
    assert result.exit_code == 2
    assert "patch capi-controller-manager-startup-probe: no Deployment/capi-controller-manager" in result.stderr


def test_lock_refuses_capmox_v0_9_with_the_real_contract_tables(
    cli: Cli, write_platform: Callable[..., Path], upstream: Upstream, metadata_tables: Path
) -> None:
    upstream.publish(CATALOGUE.core, "v1.10.1", metadata=real_metadata(metadata_tables, "cluster-api-v1.10.1"))
    upstream.publish(PROXMOX, "v0.9.0", metadata=real_metadata(metadata_tables, "capmox-v0.9.0"))
    platform = write_platform({**PROXMOX_ON, "packages": {"infrastructure-proxmox": {
        "version": "v0.9.0", "credentialsSecret": {"name": "capmox-credentials"}}}})
    result = lock(cli, platform, upstream)
    assert result.exit_code == 2
    err = result.stderr.replace("\n", "")
    assert "Platform/default.spec.packages.infrastructure-proxmox.version: infrastructure-proxmox v0.9.0 declares " \
           "contract v1beta2" in err
    assert "core v1.10.1 serves v1beta1" in err
    # Both tables are named by the URL of the version that was downloaded, not the catalogue's default.
    assert f"(release series 0.9 in {PROXMOX.metadata_url('v0.9.0')})" in err
    assert f"(release series 1.10 in {CATALOGUE.core.metadata_url('v1.10.1')})" in err
    assert "Pick a release of infrastructure-proxmox whose series declares v1beta1" in err
    assert not (platform.parent / "providers.lock").exists()


def test_fetch_replaces_a_vendored_package_whole(cli: Cli, platform: Path, upstream: Upstream) -> None:
    lock(cli, platform, upstream)
    fetch(cli, platform, upstream, "core")
    stray = platform.parent / "vendor" / "core" / "stray.txt"
    stray.write_text("left by hand")
    fetch(cli, platform, upstream, "core")
    assert not stray.exists()
    assert [p.name for p in (platform.parent / "vendor").iterdir()] == ["core"]


def test_a_vendor_dir_that_cannot_be_written_is_refused(cli: Cli, platform: Path, upstream: Upstream) -> None:
    lock(cli, platform, upstream)
    (platform.parent / "vendor").write_text("a file where the directory goes")
    result = fetch(cli, platform, upstream, "core")
    assert result.exit_code == 2
    assert f"{platform.parent / 'vendor' / 'core'}: cannot write:" in result.stderr
    assert "Traceback" not in result.stderr


def test_fetch_checks_the_contract_of_what_it_downloads(
    cli: Cli, write_platform: Callable[..., Path], upstream: Upstream, metadata_tables: Path
) -> None:
    """A lock written by hand (or by a tenantctl without the check) cannot smuggle in a v1beta2 provider."""
    table = real_metadata(metadata_tables, "capmox-v0.9.0")
    upstream.publish(PROXMOX, "v0.9.0", metadata=table)
    platform = write_platform({**PROXMOX_ON, "packages": {"infrastructure-proxmox": {
        "version": "v0.9.0", "credentialsSecret": {"name": "capmox-credentials"}}}})
    components = synthetic_components(PROXMOX, "v0.9.0")
    entry = LockedPackage(
        version="v0.9.0",
        components=LockedFile(url=PROXMOX.components_url("v0.9.0"), sha256=sha256(components)),
        metadata=LockedFile(url=PROXMOX.metadata_url("v0.9.0"), sha256=sha256(table)),
        vendored_sha256=sha256(build(components, ()).components),
    )
    write_lock(platform.parent / "providers.lock", Lock(packages={"infrastructure-proxmox": entry}))
    result = fetch(cli, platform, upstream, "infrastructure-proxmox")
    assert result.exit_code == 2
    assert "infrastructure-proxmox v0.9.0 declares contract v1beta2" in result.stderr.replace("\n", "")
    assert not (platform.parent / "vendor").exists()


def test_warnings_go_to_stderr_and_the_report_to_stdout(
    cli: Cli, write_platform: Callable[..., Path], upstream: Upstream
) -> None:
    platform = write_platform({"bundles": {"enabledPackages": ["ipam-in-cluster"],
                                           "disabledPackages": ["ipam-in-cluster"]}})
    for verb in ("lock", "fetch"):
        result = cli("vendor", verb, "-f", platform, "core", "--mirror", upstream.mirror)
        assert result.exit_code == 0, result.stderr
        assert "disabledPackages wins" in result.stderr
        assert "disabledPackages wins" not in result.stdout
        assert result.stdout.startswith("core v1.10.1: ")


def test_components_a_patch_no_longer_applies_to_are_refused_naming_their_url(
    cli: Cli, platform: Path, upstream: Upstream
) -> None:
    url = CATALOGUE.core.components_url("v1.10.1")
    upstream.set(url, b"apiVersion: v1\nkind: Namespace\nmetadata: {name: capi-system}\n")
    result = lock(cli, platform, upstream, "core")
    assert result.exit_code == 2
    assert f"core v1.10.1: {url}: " in " ".join(result.stderr.split()), result.stderr

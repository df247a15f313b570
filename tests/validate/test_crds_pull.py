"""`tenantctl crds pull` (issue 38): the upstream CRDs of the pinned providers, from a mirror on loopback
serving the upstream paths (the bytes of ../shared/crds, which are those files at those tags), and
`validate` judging every object of every example with them and nothing else given."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner
from werkzeug import Response

from crd_support import serve_upstream_crds
from tenantctl.cli import app
from tenantctl.validate.upstream import pulled_dirs, sources

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_PAIRS = [("proxmox.yaml", "observed-proxmox.yaml"), ("proxmox-spread.yaml", "observed-proxmox.yaml"),
                 ("kubevirt.yaml", "observed-kubevirt.yaml")]


def _pull(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["crds", "pull", *args])
    return result.exit_code, result.output


def test_the_pins_are_the_files_the_repositories_hold(shared: Path) -> None:
    """Every pinned SHA-256 is that of the file at its tag (../shared/crds holds them unchanged)."""
    for source in sources():
        for name, pin in source.files:
            assert hashlib.sha256((shared / "crds" / source.folder / name).read_bytes()).hexdigest() == pin, name
    assert {s.folder for s in sources()} == {p.name for p in (shared / "crds").iterdir() if p.is_dir()}


def test_pull_then_validate_judges_every_object_of_every_example(
    httpserver: HTTPServer, shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("TENANTCTL_CRDS_CACHE", str(cache))
    files = sum(len(s.files) for s in sources())
    code, out = _pull("--mirror", serve_upstream_crds(httpserver, shared))
    assert code == 0, out
    providers = len(sources())
    said = f"{files} upstream CRD files of {providers} providers in {cache} ({files} downloaded, 0 already there)\n"
    assert out == said
    assert pulled_dirs() == [cache / s.folder for s in sources()]
    for spec, observed in EXAMPLE_PAIRS:
        result = CliRunner().invoke(app, ["validate", "-f", str(EXAMPLES / spec), "--observed",
                                          str(EXAMPLES / observed), "--strict"])
        assert result.exit_code == 0, result.output
        found = re.fullmatch(r"ok: (\d+) objects checked \((\d+) against Kubernetes \S+ core schemas, (\d+) against "
                             r"the CRDs in .*; \d+ objects their controllers build from them, judged too\)\n",
                             result.stdout)
        assert found and int(found[1]) == int(found[2]) + int(found[3]) and int(found[3]) > 0, result.stdout
        assert "not judged" not in result.stderr and "not checked" not in result.stderr, result.stderr
    # Pulled again: nothing downloaded, the mirror not asked.
    requests = len(httpserver.log)
    code, out = _pull("--mirror", httpserver.url_for("/"))
    assert code == 0 and f"(0 downloaded, {files} already there)" in out
    assert len(httpserver.log) == requests


def test_a_file_that_differs_from_its_pin_is_never_written(
    httpserver: HTTPServer, shared: Path, tmp_path: Path,
) -> None:
    code, out = _pull("--mirror", serve_upstream_crds(httpserver, shared, tampered="cluster.x-k8s.io_machines.yaml"),
                      "--dir", str(tmp_path / "cache"))
    assert code == 2
    assert re.search(r"cluster-api-v1.10.1/cluster.x-k8s.io_machines.yaml: https://raw.githubusercontent.com/"
                     r"kubernetes-sigs/cluster-api/v1.10.1/config/crd/bases/cluster.x-k8s.io_machines.yaml has "
                     r"SHA-256 [0-9a-f]{64}, but tenantctl pins [0-9a-f]{64}: not written", out), out
    assert "crds pull: nothing written: the cache is as it was" in out
    assert not (tmp_path / "cache").exists(), "every file verified before any is written"


def test_a_mirror_that_does_not_answer_is_named_without_a_hang(httpserver: HTTPServer, tmp_path: Path) -> None:
    httpserver.expect_request(re.compile(".*")).respond_with_handler(lambda _: Response("gone", status=404))
    code, out = _pull("--mirror", httpserver.url_for("/"), "--dir", str(tmp_path / "cache"))
    assert code == 2 and "Traceback" not in out
    assert "cannot download https://raw.githubusercontent.com/kubernetes-sigs/cluster-api/v1.10.1/config/crd/bases/" \
           "cluster.x-k8s.io_clusters.yaml (via http://" in out and "HTTP 404" in out


def test_a_mirror_named_by_the_environment_serves_a_pull_without_flags(
    httpserver: HTTPServer, shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An air-gapped site sets TENANTCTL_CRDS_MIRROR once; `tenantctl crds pull` as written then works."""
    monkeypatch.setenv("TENANTCTL_CRDS_MIRROR", serve_upstream_crds(httpserver, shared))
    monkeypatch.setenv("TENANTCTL_CRDS_CACHE", str(tmp_path / "cache"))
    code, out = _pull()
    assert code == 0, out
    assert pulled_dirs() is not None and len(httpserver.log) == sum(len(s.files) for s in sources())


def test_a_partial_cache_is_not_used(pulled_crds: Path, tmp_path: Path) -> None:
    """One file missing: validate would judge some kinds and skip others without saying; it is not used."""
    partial = tmp_path / "partial"
    for source in sources():
        (partial / source.folder).mkdir(parents=True)
        for name, _ in source.files:
            (partial / source.folder / name).write_bytes((pulled_crds / source.folder / name).read_bytes())
    assert pulled_dirs(partial) is not None
    next(partial.glob("capmox-*/*.yaml")).unlink()
    assert pulled_dirs(partial) is None

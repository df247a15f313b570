"""Fixtures for the provider packages: a loopback upstream serving synthetic releases, platform dirs, CLI.

The upstream serves every catalogue file at its real GitHub path, so `--mirror` pointed at it exercises
the same URLs the lock records; nothing here touches the network.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner
from werkzeug import Request, Response

from providers.support import PROXMOX_ON, Cli, Upstream, load_all, platform_document
from tenantctl.providers.catalogue import load_catalogue


@pytest.fixture
def metadata_tables(shared: Path) -> Path:
    """The real upstream metadata.yaml tables in ../shared/provider-metadata (one folder per release)."""
    path = shared / "provider-metadata"
    if not path.is_dir():
        pytest.skip(f"real metadata tables not found at {path} (set TENANTCTL_SHARED)")
    return path


def _serve(server: HTTPServer) -> Upstream:
    """Answer every GET from `Upstream.files`, 404 otherwise; publish each catalogue release."""
    up = Upstream(server)

    def handler(request: Request) -> Response:
        up.requests.append(request.path)
        data = up.files.get(request.path)
        return Response(data, status=200) if data is not None else Response("not found", status=404)

    server.expect_request(re.compile(r"^/.*$"), method="GET").respond_with_handler(handler)
    for package in load_catalogue().packages:
        up.publish(package, package.version)
    return up


@pytest.fixture
def upstream(httpserver: HTTPServer) -> Upstream:
    return _serve(httpserver)


@pytest.fixture(scope="session")
def vendored_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A platform dir with proxmox enabled, locked and fetched once per session from a loopback upstream."""
    server = HTTPServer(host="127.0.0.1")
    server.start()
    try:
        up = _serve(server)
        path = tmp_path_factory.mktemp("template") / "platform" / "platform.yaml"
        path.parent.mkdir()
        path.write_text(yaml.safe_dump(platform_document(PROXMOX_ON), sort_keys=False))
        cli = Cli(CliRunner())
        for verb in ("lock", "fetch"):
            result = cli("vendor", verb, "-f", path, "--mirror", up.mirror)
            assert result.exit_code == 0, result.stderr
    finally:
        server.stop()
    return path


@pytest.fixture
def vendored_platform(vendored_template: Path, tmp_path: Path) -> Path:
    """A private copy of the vendored platform dir, for a test to damage; returns its platform.yaml."""
    shutil.copytree(vendored_template.parent, tmp_path / "platform")
    return tmp_path / "platform" / "platform.yaml"


@pytest.fixture
def write_platform(tmp_path: Path) -> Callable[..., Path]:
    """Write platform.yaml into a fresh platform directory and return its path."""

    def write(spec: dict[str, Any] | None = None, **kwargs: Any) -> Path:
        directory = tmp_path / "platform"
        directory.mkdir(exist_ok=True)
        path = directory / "platform.yaml"
        path.write_text(yaml.safe_dump(platform_document(spec, **kwargs), sort_keys=False))
        return path

    return write


@pytest.fixture
def cli() -> Iterator[Cli]:
    yield Cli(CliRunner())




@pytest.fixture(scope="session")
def rendered_template(vendored_template: Path) -> str:
    """`providers render --components` of the session's vendored platform, rendered once."""
    result = Cli(CliRunner())("providers", "render", "-f", vendored_template,
                              "--components", vendored_template.parent / "vendor")
    assert result.exit_code == 0, result.stderr
    return str(result.stdout)


@pytest.fixture
def rendered(rendered_template: str) -> list[dict[str, Any]]:
    """A private parse of that render, for a test to read or damage."""
    return load_all(rendered_template)

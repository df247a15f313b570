"""Fixtures shared by every suite: the examples, the upstream CRDs beside the checkout, a validator."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import hypothesis  # noqa: F401  (see below)
import pytest

from tenant_support import REPO, load_example

# hypothesis' pytest plugin imports hypothesis lazily, at the latest in the session's terminal summary. A
# suite run alone (the crash sweeps) has by then had kopf, kmock and aiohttp threads format tracebacks while
# the main thread parsed, and CPython 3.11's shared AST recursion-depth state (gh-106905) fails that late
# import with SystemError after every test passed. Imported here, before any thread, it parses in peace.


@pytest.fixture(scope="session", autouse=True)
def _no_pulled_crds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Hermetic: what a user's `tenantctl crds pull` put in their cache never changes a test. A test that
    wants pulled CRDs points TENANTCTL_CRDS_CACHE at a cache of its own (`pulled_crds`)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TENANTCTL_CRDS_CACHE", str(tmp_path_factory.mktemp("crds-cache-empty")))
        yield


@pytest.fixture(scope="session")
def pulled_crds(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache as `tenantctl crds pull` leaves it, laid out from ../shared/crds (the same files at the same
    tags, so the pins hold) without the network."""
    from tenantctl.validate.upstream import sources

    cache = tmp_path_factory.mktemp("crds-cache")
    for source in sources():
        (cache / source.folder).mkdir()
        for name, _ in source.files:
            (cache / source.folder / name).write_bytes((shared / "crds" / source.folder / name).read_bytes())
    return cache


def shared_dir() -> Path:
    """`../shared` beside the checkout (CI lays it there); `TENANTCTL_SHARED` overrides."""
    return Path(os.environ.get("TENANTCTL_SHARED", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def shared() -> Path:
    path = shared_dir()
    if not (path / "crds").is_dir():
        pytest.skip(f"upstream CRDs not found at {path}/crds (set TENANTCTL_SHARED)")
    return path


@pytest.fixture(scope="session")
def crd_catalog(shared: Path) -> Any:
    from tenantctl.validate import SchemaCatalog

    return SchemaCatalog.from_dirs([shared / "crds"])


@pytest.fixture(scope="session")
def assert_valid(crd_catalog: Any) -> Callable[[Iterable[Mapping[str, Any]]], None]:
    """Judge rendered objects against the upstream CRDs (schema + CEL) and core schemas."""
    from tenantctl.validate import validate_objects

    def check(objects: Iterable[Mapping[str, Any]]) -> None:
        problems = validate_objects(list(objects), crd_catalog)
        assert not problems, "\n".join(str(p) for p in problems)

    return check


@pytest.fixture
def proxmox_docs() -> list[dict[str, Any]]:
    return load_example("proxmox.yaml")


@pytest.fixture
def kubevirt_docs() -> list[dict[str, Any]]:
    return load_example("kubevirt.yaml")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`slow` tests run only when asked for (`pytest -m slow`, `make slow`), never in `make test`."""
    if "slow" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with `pytest -m slow` (make slow)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)

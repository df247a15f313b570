"""Fixtures shared by every suite: the examples, the upstream CRDs beside the checkout, a validator."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import hypothesis  # noqa: F401  (see below)
import pytest

from tenant_support import REPO, load_example

# hypothesis' pytest plugin imports hypothesis lazily, at the latest in the session's terminal summary. A
# suite run alone (the crash sweeps) has by then had kopf, kmock and aiohttp threads format tracebacks while
# the main thread parsed, and CPython 3.11's shared AST recursion-depth state (gh-106905) fails that late
# import with SystemError after every test passed. Imported here, before any thread, it parses in peace.


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

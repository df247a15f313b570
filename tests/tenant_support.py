"""Helpers for tests that build tenant input: the examples, and finding a document to mutate."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


def load_example(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if d]


def example_ca() -> str:
    """A CA bundle the observed-state checks accept (base64 PEM of a real certificate), from the examples."""
    return str(load_example("observed-proxmox.yaml")[0]["kubernetesCA"])


def doc(docs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    """The document of `kind` (and `name`) in a list, for a test to mutate in place."""
    return next(d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name))


def clone(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return copy.deepcopy(docs)


def refused(docs: list[dict[str, Any]]) -> dict[str, str]:
    """The refusal of `docs`, as path → message (the test fails if they parse)."""
    from tenantctl.problems import InvalidInput
    from tenantctl.spec import parse_tenant_documents

    with pytest.raises(InvalidInput) as err:
        parse_tenant_documents(docs)
    return {p.path: p.message for p in err.value.errors}

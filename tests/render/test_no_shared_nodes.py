"""A render hands out trees no one else holds: the operator and `--output` mutate them (status, managed
fields, pruning labels), so a node shared with a module table or another render would leak the edit."""

from __future__ import annotations

from typing import Any

import pytest

from tenant_support import clone, doc, load_example
from tenantctl.render import render_tenant
from tenantctl.spec import ADDON_NAMES, parse_observed, parse_tenant_documents

EXAMPLES = [("kubevirt.yaml", "observed-kubevirt.yaml"), ("proxmox.yaml", "observed-proxmox.yaml")]


def containers(value: Any, found: list[int]) -> list[int]:
    if isinstance(value, dict):
        found.append(id(value))
        for item in value.values():
            containers(item, found)
    elif isinstance(value, list):
        found.append(id(value))
        for item in value:
            containers(item, found)
    return found


def everything_enabled(example: str) -> list[dict[str, Any]]:
    docs = clone(load_example(example))
    usable = [n for n in ADDON_NAMES if example == "kubevirt.yaml" or n != "gpuOperator"]  # GPUs: kubevirt only
    doc(docs, "TenantCluster")["spec"]["addons"] = {
        name: {"enabled": True, "valuesOverride": {"extra": {"list": [1, 2]}}} for name in usable
    }
    return docs


@pytest.mark.parametrize(("example", "observed"), EXAMPLES)
def test_no_node_is_shared_within_a_render_or_between_two(example: str, observed: str) -> None:
    docs, observed_docs = everything_enabled(example), load_example(observed)
    first = render_tenant(parse_tenant_documents(docs), parse_observed(observed_docs))
    second = render_tenant(parse_tenant_documents(docs), parse_observed(observed_docs))
    assert {o["kind"] for o in first} >= {"HelmRelease", "TalosConfigTemplate", "MachineDeployment"}
    ids_first, ids_second = containers(first, []), containers(second, [])
    assert len(ids_first) == len(set(ids_first)), "a node appears twice in one render"
    assert not set(ids_first) & set(ids_second), "two renders share a node"

"""Template selection mirrors capmox v0.7.7's FindVMTemplateByTags, case by case."""

from __future__ import annotations

from typing import Any

import pytest

from tenantctl.proxmox.templates import select_templates, selector_tags, template_tags


def vm(vmid: int, tags: str, template: int = 1, node: str = "pve1") -> dict[str, Any]:
    return {"vmid": vmid, "tags": tags, "template": template, "node": node}


@pytest.mark.parametrize(
    ("selector", "tags", "selected"),
    [
        (["talos", "v1.13.6"], "v1.13.6;talos", True),
        (["TALOS", "v1.13.6", "talos"], "talos;v1.13.6", True),
        (["talos"], "talos;v1.13.6", False),
        (["talos", "v1.13.6", "zfs"], "talos;v1.13.6", False),
        (["talos"], "Talos", False),
        (["talos", "talos"], "talos;talos", False),
    ],
    ids=[
        "order does not matter",
        "the selector is lower-cased and de-duplicated",
        "a superset of the selector is not selected",
        "a subset of the selector is not selected",
        "the template's tags are not lower-cased",
        "the template's tags are not de-duplicated",
    ],
)
def test_set_equality_after_sorting(selector: list[str], tags: str, selected: bool) -> None:
    assert bool(select_templates(selector, [vm(9000, tags)]).exact) is selected


def test_only_templates_with_tags_take_part() -> None:
    sel = select_templates(["talos"], [vm(100, "talos", template=0), vm(101, "", template=1), vm(9000, "talos")])
    assert [v["vmid"] for v in sel.exact] == [9000]


def test_supersets_are_reported_apart_from_exact_matches() -> None:
    sel = select_templates(["talos"], [vm(9000, "talos;zfs"), vm(9001, "talos"), vm(9002, "talos", node="pve2")])
    assert [v["vmid"] for v in sel.exact] == [9001, 9002]
    assert [v["vmid"] for v in sel.supersets] == [9000]


def test_normalisation_helpers() -> None:
    assert selector_tags(["b", "A", "a"]) == ["a", "b"]
    assert template_tags("b;a;B") == ["B", "a", "b"]

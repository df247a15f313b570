"""Inputs that once printed a traceback: each is now exit 2 with the field or line named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hostile_support import dump, invoke
from tenant_support import clone, doc, load_example

KV = load_example("kubevirt.yaml")
PX = load_example("proxmox.yaml")


def _render(tmp_path: Path, text: str | bytes, *extra: str) -> Any:
    return invoke(["render", "-f", "t.yaml", *extra], {"t.yaml": text}, tmp_path)


def test_an_integer_beyond_python_int_parsing_names_its_line(tmp_path: Path) -> None:
    text = dump(KV).replace("maxReplicas: 4", "maxReplicas: " + "9" * 5000)
    line = _render(tmp_path, text).refusal_at("t.yaml:")
    assert "5000 digits" in line and "64-bit" in line


def test_an_integer_beyond_64_bits_is_refused(tmp_path: Path) -> None:
    text = dump(KV).replace("maxReplicas: 4", "maxReplicas: 9223372036854775808")
    assert "64-bit" in _render(tmp_path, text).refusal_at("t.yaml:")


def test_nesting_a_thousand_levels_names_the_depth(tmp_path: Path) -> None:
    text = dump(KV) + "---\nx: " + "[" * 1000 + "]" * 1000 + "\n"
    assert "nested more than 64 levels" in _render(tmp_path, text).refusal_at("t.yaml:")


def test_nesting_at_the_bound_is_not_a_depth_refusal(tmp_path: Path) -> None:
    text = dump(KV) + "---\nx: " + "[" * 62 + "]" * 62 + "\n"
    out = _render(tmp_path, text)
    assert "nested" not in out.stderr and out.exit_code == 2  # refused as a document of no kind, not as depth


@pytest.mark.parametrize(
    "content", [b"\x00\x01\x02\xff\xfe", "kind: Tenant\xe9Cluster\n".encode("latin-1")], ids=["binary", "latin-1"]
)
def test_a_file_that_is_not_utf8_is_refused(content: bytes, tmp_path: Path) -> None:
    assert "not UTF-8" in _render(tmp_path, content).refusal_at("t.yaml")


def test_a_control_character_is_refused_by_the_reader(tmp_path: Path) -> None:
    assert "malformed YAML" in _render(tmp_path, "kind: \x00\n").refusal_at("t.yaml")


@pytest.mark.parametrize("value", [["TenantCluster"], {"a": 1}], ids=["list", "mapping"])
@pytest.mark.parametrize("field", ["kind", "apiVersion"])
def test_an_identity_field_that_is_not_a_string(field: str, value: Any, tmp_path: Path) -> None:
    docs = clone(KV)
    docs[0][field] = value
    line = _render(tmp_path, dump(docs)).refusal_at(f".{field}")
    assert "must be a string" in line


def test_a_name_that_is_a_mapping_is_named_by_position(tmp_path: Path) -> None:
    docs = clone(KV)
    docs[0]["metadata"]["name"] = {"a": 1}
    assert "valid string" in _render(tmp_path, dump(docs)).refusal_at("TenantCluster[document 0].metadata.name")


@pytest.mark.parametrize(
    ("quantity", "fragment"),
    [
        (".nan", "not a finite number"),
        (".inf", "not a finite number"),
        ("1e1000000", "exponent"),
        ("1e" + "9" * 5000, "longer than 64"),
        ("1e101", "exponent"),
        ("8Gi\n", "not a Kubernetes quantity"),
    ],
    ids=["nan", "inf", "1e1000000", "exponent-5000-digits", "1e101", "trailing-newline"],
)
def test_a_nodepool_quantity_that_cannot_be_evaluated(quantity: str, fragment: str, tmp_path: Path) -> None:
    docs = clone(KV)
    doc(docs, "NodePool", "big")["spec"]["resources"]["memory"] = "QUANTITY"
    text = dump(docs).replace("QUANTITY", quantity if "\n" not in quantity else '"8Gi\\n"')
    out = _render(tmp_path, text)
    assert fragment in out.stderr, out.stderr
    assert out.exit_code == 2


def test_a_quantity_with_an_exponent_at_the_bound_is_judged_by_size(tmp_path: Path) -> None:
    docs = clone(KV)
    doc(docs, "NodePool", "big")["spec"]["resources"]["memory"] = "1e100"
    assert "more than a VM" in _render(tmp_path, dump(docs)).refusal_at("NodePool/big.spec.resources.memory")


@pytest.mark.parametrize("quantity", ["1e1000000", "1e" + "9" * 5000, "nan"])
def test_a_platform_package_quantity_that_cannot_be_evaluated(quantity: str, tmp_path: Path) -> None:
    docs = clone(load_example("platform.yaml"))
    spec = doc(docs, "Platform")["spec"]
    spec.setdefault("packages", {})["core"] = {"resources": {"limits": {"memory": quantity}}}
    out = invoke(["providers", "render", "-f", "p.yaml"], {"p.yaml": dump(docs)}, tmp_path)
    assert "quantity" in out.refusal_at("resources.limits.memory")


def test_huge_replicas_are_refused_before_the_capacity_message(tmp_path: Path) -> None:
    docs = clone(PX)
    spec = doc(docs, "NodePool", "md0")["spec"]
    for key in ("minReplicas", "maxReplicas"):
        spec.pop(key, None)
    spec["replicas"] = 2**62
    line = _render(tmp_path, dump(docs)).refusal_at("NodePool/md0.spec.replicas")
    assert "less than or equal to 2147483647" in line


def test_a_health_check_duration_with_a_trailing_newline(tmp_path: Path) -> None:
    docs = clone(KV)
    doc(docs, "NodePool", "md0")["spec"]["healthCheck"] = {"nodeStartupTimeout": "20m\n"}
    line = _render(tmp_path, dump(docs)).refusal_at("NodePool/md0.spec.healthCheck.nodeStartupTimeout")
    assert "'20m\\n'" in line

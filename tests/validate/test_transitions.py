"""Transition rules on an update: run where the field is in both objects, after defaulting, at its path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crd_support import example_crd
from tenantctl.validate import SchemaCatalog
from tenantctl.validate.transitions import validate_transition

SPRING_SPEC = """\
type: object
x-kubernetes-validations:
- {rule: self.size == oldSelf.size, message: size is immutable}
- {rule: self.mode == oldSelf.mode, fieldPath: .mode, message: mode is immutable}
- {rule: has(self.size), message: not a transition rule}
properties:
  size: {type: string}
  mode: {type: string, default: fast}
  inner:
    type: object
    properties:
      coil:
        type: string
        x-kubernetes-validations:
        - {rule: self == oldSelf, messageExpression: "'coil was ' + oldSelf"}
  broken:
    type: string
    x-kubernetes-validations:
    - {rule: self == oldSelf ===}
  chained:
    type: string
    x-kubernetes-validations:
    - {rule: self == oldSelf ===}
    - {rule: self == oldSelf, message: chained is immutable}
  items:
    type: array
    items:
      type: string
      x-kubernetes-validations:
      - {rule: self == oldSelf, message: list items are not correlated}
"""


@pytest.fixture
def catalog(tmp_path: Path) -> SchemaCatalog:
    directory = tmp_path / "example-v1.0.0"
    directory.mkdir()
    (directory / "springs.yaml").write_text(example_crd("Spring", SPRING_SPEC))
    return SchemaCatalog.from_dirs([directory])


def spring(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Spring", "metadata": {"name": "s1", "namespace": "ns"},
            "spec": {"size": "small", **spec}}


def told(new: dict[str, Any], old: dict[str, Any], catalog: SchemaCatalog) -> list[tuple[str, str]]:
    return [(p.path, p.message) for p in validate_transition(new, old, catalog)]


def test_an_unchanged_object_passes_every_transition_rule(catalog: SchemaCatalog) -> None:
    assert told(spring(inner={"coil": "a"}, items=["x"]), spring(inner={"coil": "a"}, items=["y"]), catalog) == []


def test_a_changed_field_fails_its_rule_at_its_path_in_the_crds_words(catalog: SchemaCatalog) -> None:
    assert told(spring(size="large", mode="slow", inner={"coil": "b"}), spring(inner={"coil": "a"}), catalog) == [
        ("Spring/s1.spec", 'Invalid value: size is immutable (rule `self.size == oldSelf.size` failed with self = '
                              '{"inner": {"coil": "b"}, "mode": "slow", "size": "large"})'),
        ("Spring/s1.spec.mode", 'Invalid value: mode is immutable (rule `self.mode == oldSelf.mode` failed with self = '
                                   '{"inner": {"coil": "b"}, "mode": "slow", "size": "large"})'),
        ("Spring/s1.spec.inner.coil", 'Invalid value: coil was a (rule `self == oldSelf` failed with self = "b")'),
    ]


def test_both_objects_are_defaulted_before_the_rules_run(catalog: SchemaCatalog) -> None:
    assert told(spring(mode="fast"), spring(), catalog) == []
    ((path, message),) = told(spring(), spring(mode="slow"), catalog)
    assert path == "Spring/s1.spec.mode" and message.startswith("Invalid value: mode is immutable")


def test_a_field_missing_from_either_object_is_not_judged(catalog: SchemaCatalog) -> None:
    assert told(spring(inner={"coil": "b"}), spring(), catalog) == []
    assert told(spring(), spring(inner={"coil": "a"}), catalog) == []
    assert told(spring(inner={}), spring(inner={"coil": "a"}), catalog) == []
    assert told(spring(inner="not an object"), spring(inner={"coil": "a"}), catalog) == []


def test_a_rule_that_does_not_compile_is_a_problem_where_it_sits(catalog: SchemaCatalog) -> None:
    ((path, message),) = told(spring(broken="a"), spring(broken="a"), catalog)
    assert path == "Spring/s1.spec.broken"
    assert message.startswith("rule `self == oldSelf ===` does not compile: ")


def test_the_rules_after_one_that_does_not_compile_still_run(catalog: SchemaCatalog) -> None:
    found = told(spring(chained="b"), spring(chained="a"), catalog)
    assert [path for path, _ in found] == ["Spring/s1.spec.chained", "Spring/s1.spec.chained"]
    assert found[0][1].startswith("rule `self == oldSelf ===` does not compile: ")
    assert found[1][1].startswith("Invalid value: chained is immutable")


def test_a_kind_without_a_crd_is_named_with_the_catalog(catalog: SchemaCatalog) -> None:
    other = {"apiVersion": "example.com/v2", "kind": "Spring", "metadata": {"name": "s1"}}
    assert told(other, other, catalog) == [
        ("Spring/s1", f"no CRD for example.com/v2 Spring in {catalog.describe()}")]
    assert "example-v1.0.0" in catalog.describe()

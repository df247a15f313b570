"""compare-before-write: `covers` says a live object already holds what we would write, and nothing more."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tenantctl.operator.phases.apply import covers

leaves = st.one_of(st.text(max_size=5), st.integers(-5, 5), st.booleans(), st.none())
trees = st.recursive(
    leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=20,
)


def with_server_fields(value: Any) -> Any:
    """What the server adds: an extra key in every mapping."""
    if isinstance(value, dict):
        return {**{k: with_server_fields(v) for k, v in value.items()}, "\x00server": 1}
    if isinstance(value, list):
        return [with_server_fields(v) for v in value]
    return value


@settings(max_examples=300, deadline=None)
@given(trees)
def test_an_object_covers_itself_and_its_server_decorated_copy(desired: Any) -> None:
    assert covers(copy.deepcopy(desired), desired)
    assert covers(with_server_fields(desired), desired)


def test_a_changed_leaf_a_missing_key_or_another_length_is_not_covered() -> None:
    desired = {"spec": {"replicas": 2, "items": [{"a": 1}, {"b": [1, 2]}]}, "metadata": {"name": "x"}}
    live = with_server_fields(desired)
    assert covers(live, desired)
    changed = copy.deepcopy(live)
    changed["spec"]["items"][1]["b"][1] = 3
    assert not covers(changed, desired)
    missing = copy.deepcopy(live)
    del missing["spec"]["replicas"]
    assert not covers(missing, desired)
    longer = copy.deepcopy(live)
    longer["spec"]["items"].append({})
    assert not covers(longer, desired)
    assert not covers({"spec": "scalar"}, desired)
    assert not covers([1], {"a": 1}) and not covers({"a": 1}, [1])

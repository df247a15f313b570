"""Template names hash canonical JSON: the fast encoder must write the standard library's bytes, or every
pool's template is renamed and its workers roll."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tenant_support import load_example
from tenantctl.render import render_tenant
from tenantctl.render.meta import canonical_json
from tenantctl.spec import parse_observed, parse_tenant_documents

# What the two encoders write differently unless handled: non-ASCII, DEL, control characters, quotes.
EDGES = ["", "é", "\x7f", "a\x7fb", "\x00", "\x1f", "\n", "\t", '"', "\\", "/", "ü\x7f", "\u2028", "😀", "~"]
text = st.one_of(st.text(max_size=8), st.sampled_from(EDGES), st.text("abcXYZ019-./:", max_size=12))
scalars = st.one_of(text, st.integers(-(10**20), 10**20), st.booleans(), st.none())
keys = st.one_of(text, st.integers(-5, 20))
trees = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.tuples(inner, inner), st.dictionaries(keys, inner, max_size=5)
    ),
    max_leaves=40,
)


def standard(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(trees)
def test_canonical_json_is_the_standard_librarys(value: Any) -> None:
    try:
        expected = standard(value)
    except TypeError:  # keys of mixed types cannot be sorted: both refuse
        with pytest.raises(TypeError):
            canonical_json(value)
        return
    assert canonical_json(value) == expected


DIFFERENCES = [{"é": 1, "z": 2}, {"a": "\x7f"}, {10: 1, 9: 2}, ["😀"], {"k": [1, {"b": None, "a": True}]}]


@pytest.mark.parametrize("value", DIFFERENCES)
def test_each_difference_of_the_encoders_is_written_as_the_standard_library_writes_it(value: Any) -> None:
    assert canonical_json(value) == standard(value)


def _floats(node: Any) -> int:
    if isinstance(node, float):
        return 1
    if isinstance(node, dict):
        return sum(_floats(v) for v in node.values())
    if isinstance(node, list | tuple):
        return sum(_floats(v) for v in node)
    return 0


@pytest.mark.parametrize("example", ["kubevirt", "proxmox"])
def test_no_render_holds_a_float_even_from_a_float_in_the_spec(example: str) -> None:
    """The encoders write floats differently (`1e+16`, `1e16`): templates are hashed as rendered, and a
    quantity given as a float (the only float fields) is rendered as text or whole cores."""
    docs = load_example(f"{example}.yaml")
    observed = parse_observed(load_example(f"observed-{example}.yaml"))
    assert sum(_floats(o) for o in render_tenant(parse_tenant_documents(docs), observed)) == 0
    for d in docs:
        if d["kind"] == "NodePool":
            d["spec"]["resources"] = {"cpu": 1.5, "memory": 4294967296.0}
        else:
            d["spec"].setdefault("controlPlane", {})["resources"] = {
                "apiServer": {"requests": {"cpu": 0.25, "memory": 268435456.0}}}
    tenant = parse_tenant_documents(docs)
    assert isinstance(tenant.pools[0].spec.resources.cpu, float), "the float reached the spec"
    assert sum(_floats(o) for o in render_tenant(tenant, observed)) == 0

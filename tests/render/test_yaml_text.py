"""The machine-config writer is byte-equal to libyaml: a changed byte replaces every TalosConfigTemplate."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tenant_support import load_example
from tenantctl.render import render_tenant
from tenantctl.render.yaml_text import DUMPER, block_text, libyaml_dump, to_yaml
from tenantctl.spec import parse_observed, parse_tenant_documents

# What renders hold: names, paths, quantities, addresses, image refs, words YAML 1.1 resolves.
PLAIN_ALPHABET = "abcmnotyzAMNOTYZ0123456789./:-_%=@+ "
EDGES = [
    "", "true", "no", "On", "NULL", "~", "1", "-1", "0x1f", "0o17", "1_000", "1e3", ".5", ".inf", "12:30:00",
    "2001-12-14", "2001-12-14 21:59:43.10", "<<", "=", "-", "- a", "a: b", "a:", ":a", "x #y", "x#y", "...",
    "---", "a b", " a", "a ", "it's", 'say "hi"', "tab\there", "line\nbreak", "é", "[a]", "{a}", "*a", "&a",
    "!a", "|", ">", "%a", "@a", "`a", "?a", "a?b", "a,b", "a" * 200, "w " * 50, "k" * 120,
]
text = st.one_of(st.text(PLAIN_ALPHABET, max_size=20), st.sampled_from(EDGES), st.text(max_size=6))
scalars = st.one_of(text, st.integers(-(10**20), 10**20), st.booleans(), st.none(), st.floats(allow_nan=False))
trees = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)),
    max_leaves=40,
)
documents = st.dictionaries(text, trees, min_size=1, max_size=6)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(documents, st.booleans())
def test_every_document_is_written_as_libyaml_writes_it(data: dict[Any, Any], sort_keys: bool) -> None:
    try:
        expected = libyaml_dump(data, sort_keys=sort_keys)
    except TypeError:  # unorderable keys: to_yaml raises exactly what PyYAML raises
        return
    assert to_yaml(data, sort_keys=sort_keys) == expected


# The shape renders produce: the direct writer must take every one of these (else the equality above
# would compare libyaml with itself).
names = st.from_regex(r"[a-z][a-zA-Z0-9.\-/]{5,30}", fullmatch=True)
render_scalars = st.one_of(
    names, st.from_regex(r"[0-9]{1,4}(m|Mi|Gi|%|s)?", fullmatch=True), st.integers(-(10**6), 10**6),
    st.booleans(), st.none(), st.sampled_from(["", "true", "10", "1.5", "v1.13.6", "a b c"]),
)
render_trees = st.recursive(
    render_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(names, inner, max_size=4)),
    max_leaves=40,
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(names, render_trees, min_size=1, max_size=6))
def test_the_shape_renders_produce_is_written_directly(data: dict[str, Any]) -> None:
    direct = block_text(data)
    assert direct is not None
    assert direct == libyaml_dump(data)


# Where the two could part: every edge string as a value, a key and a list item; lines at the fold width;
# keys at libyaml's simple-key limit (128); every YAML 1.1 word that resolves.
EDGE_WORDS = [
    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
    "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL",
]  # fmt: skip
LINES = [
    line for n in range(74, 82)
    for line in ({"k": "w" * n + " x"}, {"k": "w" * n + " x y"}, {"key": ["w" * n + " x"]},
                 {"k" * (n - 8): "2001-12-14 21:59:43.10"})  # single-quoted: a timestamp
]
KEYS = [{"k" * n: 1} for n in (99, 100, 101, 127, 128, 129, 130)]


@pytest.mark.parametrize("value", [*EDGES, *EDGE_WORDS, "FALSE1", "Nulls", "10.96.0.10", "200m", "1m30s"])
def test_an_edge_string_is_written_as_libyaml_writes_it(value: str) -> None:
    for data in ({"k": value}, {value or "empty": [value, {"n": value}]}, {value: 1}):
        assert to_yaml(data) == libyaml_dump(data), data


@pytest.mark.parametrize("data", [*LINES, *KEYS], ids=lambda d: f"{len(next(iter(d)))}-{len(str(d))}")
def test_lines_near_the_fold_and_keys_near_the_limit_match_libyaml(data: dict[str, Any]) -> None:
    """Equal always; and written directly exactly when libyaml neither folds the line nor writes `? key`."""
    expected = libyaml_dump(data)
    assert to_yaml(data) == expected
    direct = expected.count("\n") == 1 + sum(isinstance(v, list) for v in data.values())
    assert (block_text(data) is not None) == direct


def test_a_shared_node_is_an_alias_and_left_to_libyaml() -> None:
    shared = {"a": 1}
    data = {"x": shared, "y": shared}
    assert block_text(data) is None
    assert to_yaml(data) == libyaml_dump(data)
    assert "&id001" in to_yaml(data)


def test_a_long_line_with_spaces_folds_as_libyaml_folds_it() -> None:
    data = {"k": "word " * 30 + "end"}
    assert block_text(data) is None
    assert to_yaml(data) == libyaml_dump(data)
    assert to_yaml(data).count("\n") > 1


@pytest.mark.parametrize(("example", "observed"), [("kubevirt.yaml", "observed-kubevirt.yaml"),
                                                    ("proxmox.yaml", "observed-proxmox.yaml")])
def test_the_examples_machine_configs_are_written_directly_and_equal_both_emitters(example: str, observed: str) -> None:
    assert DUMPER is yaml.CSafeDumper, "libyaml is there (PyYAML's wheels carry it)"
    objects = render_tenant(parse_tenant_documents(load_example(example)), parse_observed(load_example(observed)))
    templates = [o for o in objects if o["kind"] == "TalosConfigTemplate"]
    assert templates
    for template in templates:
        data = template["spec"]["template"]["spec"]["data"]
        config = yaml.safe_load(data)
        assert block_text(config) == data, "the direct writer wrote this config"
        pure = yaml.dump(config, Dumper=yaml.SafeDumper, sort_keys=False, default_flow_style=False)
        assert data == pure == libyaml_dump(config)

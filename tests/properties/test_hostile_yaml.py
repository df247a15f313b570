"""Hostile YAML through the CLI entry point: exit 0 with a valid, collision-free render, or exit 2 with
`path: message` lines — never a traceback, never a hang.

The families are the ones fuzzing found: dropped fields, wrong types, extreme numbers, huge strings,
unicode (lone surrogates included), YAML faults (aliases, duplicate keys, truncation, deep nesting,
binary), swapped kinds and multi-document identity collisions. `make test` runs a bounded number of
examples; `pytest -m slow` runs 10,000.
"""

from __future__ import annotations

import copy
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from hostile_support import PROBLEM_LINE
from tenant_support import load_example
from tenantctl.cli import app

EXAMPLES = {
    name: (load_example(f"{name}.yaml"), load_example(f"observed-{name}.yaml")) for name in ("proxmox", "kubevirt")
}
# CPU seconds, not wall time: a shared machine stretches wall time, a hang burns CPU for minutes.
CPU_SECONDS_PER_EXAMPLE = 20
RAW_TOKENS = [
    "9" * 5000, "9223372036854775808", "-9223372036854775809", ".nan", ".inf", "1e1000000", "1e" + "9" * 3000,
    '"\\udcff"', '"x\\n"', "!!binary aGVsbG8=", "~", "[]", "{}", "-0", "0x7fffffffffffffff", "1_000", "2001-01-01",
]
KINDS = ["TenantCluster", "NodePool", "ObservedState", "Platform", "ConfigMap", "", "tenantcluster"]


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(node, Mapping):
        out = [path] if path else []
        for key, value in node.items():
            out += _leaves(value, (*path, key))
        return out
    if isinstance(node, list):
        out = [path]
        for i, value in enumerate(node):
            out += _leaves(value, (*path, i))
        return out
    return [path]


def _parent(root: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        root = root[part]
    return root


@st.composite
def _mutate_docs(draw: st.DrawFn, docs: list[dict[str, Any]], raws: list[str]) -> None:
    """One structural mutation of one document, in place; raw YAML goes in through a placeholder."""
    target = docs[draw(st.integers(0, len(docs) - 1))]
    paths = _leaves(target)
    path = paths[draw(st.integers(0, len(paths) - 1))]
    parent, key = _parent(target, path), path[-1]
    family = draw(st.sampled_from(["drop", "type", "number", "string", "unicode", "raw", "kind", "newline"]))
    if family == "drop":
        parent.pop(key)
        return
    value: Any
    if family == "type":
        value = draw(st.sampled_from([[], {}, ["x"], {"a": 1}, 0, True, None, "x", 1.5]))
    elif family == "number":
        value = draw(st.sampled_from([-1, 0, 2**31, 2**63 - 1, -(2**63), 10**18, 1e308, 0.5]))
    elif family == "string":
        value = "a" * draw(st.sampled_from([0, 64, 254, 300, 70_000]))
    elif family == "unicode":
        value = draw(st.text(min_size=1, max_size=12))
    elif family == "newline":
        value = f"{parent[key]}\n"
    elif family == "kind":
        parent, key = target, "kind"
        value = draw(st.sampled_from(KINDS))
    else:
        raws.append(draw(st.sampled_from(RAW_TOKENS)))
        value = f"RAWTOKEN{len(raws) - 1}X"
    parent[key] = value


@st.composite
def _collide(draw: st.DrawFn, docs: list[dict[str, Any]]) -> None:
    """A second cluster/pool pair whose `<cluster>-<pool>` or `<namespace>-<cluster>` names coincide."""
    cluster = copy.deepcopy(next(d for d in docs if d.get("kind") == "TenantCluster"))
    pools = [copy.deepcopy(d) for d in docs if d.get("kind") == "NodePool"]
    if draw(st.booleans()) and pools:
        name = cluster["metadata"]["name"]
        first = pools[0]
        cluster["metadata"]["name"] = f"{name}-{first['metadata']['name'].split('-')[0]}"
        first["metadata"]["name"] = f"x{first['metadata']['name']}"
        first["spec"]["cluster"] = cluster["metadata"]["name"]
        docs += [cluster, first]
    else:
        ns, name = cluster["metadata"]["namespace"], cluster["metadata"]["name"]
        cluster["metadata"]["namespace"], cluster["metadata"]["name"] = f"{ns}-{name[:1]}", name[1:] or "x"
        docs.append(cluster)


@st.composite
def hostile_inputs(draw: st.DrawFn) -> tuple[bytes, bytes]:
    base = draw(st.sampled_from(sorted(EXAMPLES)))
    docs, observed = (copy.deepcopy(d) for d in EXAMPLES[base])
    raws: list[str] = []
    if draw(st.integers(0, 4)) == 0:
        draw(_collide(docs))
    for _ in range(draw(st.integers(0, 3))):
        draw(_mutate_docs(docs if draw(st.integers(0, 3)) else observed, raws))
    texts = []
    for part in (docs, observed):
        text = yaml.safe_dump_all(part, sort_keys=False, allow_unicode=True)
        for i, raw in enumerate(raws):
            text = text.replace(f"RAWTOKEN{i}X", raw)
        texts.append(text)
    fault = draw(st.sampled_from(["none"] * 6 + ["alias", "duplicate", "truncate", "bytes", "deep", "bomb"]))
    text = texts[0]
    if fault == "alias":
        text = text.replace("namespace: ", "namespace: &ns ", 1) + "---\nkind: *ns\n"
    elif fault == "duplicate":
        text = text.replace("metadata:\n", "metadata:\n  name: dup\n", 1)
    elif fault == "truncate":
        text = text[: draw(st.integers(0, len(text)))]
    elif fault == "deep":
        depth = draw(st.sampled_from([10, 63, 65, 1000]))
        text += "---\nx: " + "[" * depth + "]" * depth + "\n"
    elif fault == "bomb":
        text += "---\na: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nkind: *b\n"
    data = text.encode("utf-8", "surrogatepass")
    if fault == "bytes":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    return data, texts[1].encode("utf-8", "surrogatepass")


def _identity(obj: Mapping[str, Any]) -> tuple[str, str, str, str]:
    meta = obj.get("metadata", {})
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    return group, str(obj.get("kind")), str(meta.get("namespace", "")), str(meta.get("name"))


def _check(spec: bytes, observed: bytes, judge: Callable[[Iterable[Mapping[str, Any]]], None]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "t.yaml").write_bytes(spec)
        (Path(tmp) / "o.yaml").write_bytes(observed)
        started = time.process_time()
        result = CliRunner().invoke(app, ["render", "-f", f"{tmp}/t.yaml", "--observed", f"{tmp}/o.yaml"])
        elapsed = time.process_time() - started
    assert not (result.exception and not isinstance(result.exception, SystemExit)), repr(result.exception)
    assert result.exit_code in (0, 2), result.output
    assert elapsed < CPU_SECONDS_PER_EXAMPLE, f"{elapsed:.1f} CPU seconds"
    if result.exit_code == 2:
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        assert lines and all(PROBLEM_LINE.match(ln) for ln in lines), result.stderr
        return
    objects = [o for o in yaml.safe_load_all(result.stdout) if o]
    identities = [_identity(o) for o in objects]
    assert len(identities) == len(set(identities)), "two rendered objects share an identity"
    judge(objects)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(hostile_inputs())
def test_hostile_yaml_exits_0_or_2(assert_valid: Callable[..., None], case: tuple[bytes, bytes]) -> None:
    _check(*case, assert_valid)


@pytest.mark.slow
@pytest.mark.timeout(0)
@settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(hostile_inputs())
def test_hostile_yaml_exits_0_or_2_slow(assert_valid: Callable[..., None], case: tuple[bytes, bytes]) -> None:
    _check(*case, assert_valid)

"""Every field that reaches a rendered object is checked at least as strictly as its target CRD.

Derived, not listed: each string or integer the examples' documents hold (defaults made explicit)
is given values a CRD commonly refuses — a trailing newline, a space, upper case, an empty string,
300 characters, a negative or int32-overflowing number. tenantctl must either refuse the input
(exit 2) or render objects that the upstream CRDs (schema + CEL) and core schemas accept. A field
copied into a CRD field with a pattern, enum, length or bound therefore cannot pass unchecked.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import pytest

from tenant_support import load_example
from tenantctl.problems import InvalidInput
from tenantctl.render import render_tenant, render_tenant_bootstrap
from tenantctl.spec import parse_observed, parse_tenant_documents

Path_ = tuple[str | int, ...]
# The document's identity is another test's business (the loader's); here, what the spec carries.
_SKIP = {("apiVersion",), ("kind",)}


def _explicit(example: str) -> list[dict[str, Any]]:
    """The example's documents with every default written out, so default-only fields are covered."""
    tenant = parse_tenant_documents(load_example(example))
    return [
        m.model_dump(by_alias=True, exclude_none=True, mode="json")
        for m in (*tenant.clusters, *tenant.pools)
    ]


def _leaves(node: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _leaves(value, (*path, i))
    elif isinstance(node, str | int) and not isinstance(node, bool) and path not in _SKIP:
        yield path, node


def _set(doc: dict[str, Any], path: Path_, value: Any) -> None:
    node: Any = doc
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def _variants(value: str | int) -> list[Any]:
    if isinstance(value, int):
        return [-1, 2**31]
    return [value + "\n", value.upper() + " X", "", "a" * 300]


def _cases(example: str, observed: str) -> Iterable[tuple[str, int, Path_, Any]]:
    for index, doc in enumerate(_explicit(example)):
        for path, value in _leaves(doc):
            for variant in _variants(value):
                yield example, index, path, variant
    for path, value in _leaves(load_example(observed)[0]):
        for variant in _variants(value):
            yield observed, 0, path, variant


CASES = [*_cases("proxmox.yaml", "observed-proxmox.yaml"), *_cases("kubevirt.yaml", "observed-kubevirt.yaml")]
CASE_IDS = [f"{s.split('.')[0]}[{i}].{'.'.join(map(str, p))}={v!r:.20}" for s, i, p, v in CASES]


def mutated(source: str, index: int, path: Path_, value: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The example's documents (defaults written out) and its observed state, with the case's one change."""
    example = source.replace("observed-", "")
    docs = _explicit(example)
    observed = copy.deepcopy(load_example(f"observed-{example}"))
    target = observed if source.startswith("observed-") else docs
    _set(target[index], path, value)
    return docs, observed


def _render(docs: list[dict[str, Any]], observed: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    try:
        tenant, obs = parse_tenant_documents(docs), parse_observed(observed)
        return render_tenant(tenant, obs) + [
            o for c in tenant.clusters for o in render_tenant_bootstrap(c, obs[(c.metadata.namespace, c.metadata.name)])
        ]
    except InvalidInput:
        return None


def _key(obj: Mapping[str, Any]) -> str:
    return repr(sorted(obj.items()))


@pytest.fixture(scope="module")
def judge(assert_valid: Callable[[Iterable[Mapping[str, Any]]], None]) -> Callable[..., None]:
    """Judge only the objects a mutation changed: the unmutated renders are judged once, here."""
    baseline: set[str] = set()
    for example in ("proxmox.yaml", "kubevirt.yaml"):
        rendered = _render(_explicit(example), load_example(f"observed-{example}"))
        assert rendered is not None
        assert_valid(rendered)
        baseline |= {_key(o) for o in rendered}

    def check(objects: list[dict[str, Any]]) -> None:
        assert_valid([o for o in objects if _key(o) not in baseline])

    return check


@pytest.mark.parametrize(("source", "index", "path", "value"), CASES, ids=CASE_IDS)
def test_a_value_the_crds_refuse_is_refused_by_tenantctl(
    source: str, index: int, path: Path_, value: Any, judge: Callable[..., None]
) -> None:
    docs, observed = mutated(source, index, path, value)
    rendered = _render(docs, observed)
    if rendered is not None:
        judge(rendered)

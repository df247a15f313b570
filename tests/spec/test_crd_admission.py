"""The generated CRDs refuse, on their own, every refusal a single object can express.

Each refusal case of `test_refusals` that `spec.refusals` places in the CRD (schema or CEL) is applied
to its example, and the one mutated object is judged by the project's validator against the generated
CRDs alone (schema, defaults and every CEL rule, as the API server would on create).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
from test_autoscaling_refusals import AUTOSCALING_CASES
from test_control_plane_refusals import CASES as CONTROL_PLANE_CASES
from test_expose_refusals import EXPOSE_CASES, with_expose
from test_refusals import CASES, Case

from crd_support import mappings
from tenant_support import EXAMPLES, clone, load_example
from tenantctl.problems import Problem, Severity
from tenantctl.spec import NodePoolSpec, TenantClusterSpec
from tenantctl.spec.crd_rules import IMMUTABLE, RESOURCE_CEILINGS
from tenantctl.spec.crds import render_crds
from tenantctl.spec.quantity import parse_quantity
from tenantctl.spec.refusals import LIVE_ONLY, OWN_SUITES, REFUSALS, Layer, markdown_table, refusal_for
from tenantctl.validate import SchemaCatalog, validate_objects
from tenantctl.validate.crds import CrdVersion
from tenantctl.validate.custom import compiled_version
from tenantctl.validate.defaults import apply_defaults
from tenantctl.validate.go_regex import compile_go_regex
from tenantctl.validate.transitions import validate_transition

REPO = Path(__file__).resolve().parents[2]
CRD_LAYERS = {Layer.SCHEMA, Layer.CEL}


def _without_nulls(value: Any) -> Any:
    """The API server drops `null` in fields that are not `nullable` before it defaults and validates."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _object_at(docs: list[dict[str, Any]], path: str) -> dict[str, Any]:
    kind, _, rest = path.partition("/")
    name = re.split(r"[.:]", rest, maxsplit=1)[0]
    return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def _errors(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity is Severity.ERROR]


def _crd_cases() -> dict[str, Case]:
    return {name: case for name, case in CASES.items() if refusal_for(name).layer in CRD_LAYERS}


def test_every_refusal_case_has_a_row_in_the_table_and_every_row_a_case() -> None:
    missing = [name for name in CASES if not _has_row(name)]
    assert not missing, f"add a row (where it is enforced) to tenantctl.spec.refusals.REFUSALS for: {missing}"
    used = {row for row in REFUSALS if row in CASES or any(c.startswith(row + " ") for c in CASES)}
    assert set(REFUSALS) - used == LIVE_ONLY | OWN_SUITES


def _has_row(name: str) -> bool:
    try:
        refusal_for(name)
    except KeyError:
        return False
    return True


@pytest.mark.parametrize("case", _crd_cases().values(), ids=_crd_cases().keys())
def test_the_crds_alone_refuse_each_single_object_case(case: Case, own_catalog: SchemaCatalog) -> None:
    docs = clone(load_example(case.example))
    case.mutate(docs)
    obj = _without_nulls(_object_at(docs, case.path))
    problems = _errors(validate_objects([obj], own_catalog, core=False))
    # The problem sits at the case's field (a list-type duplicate: at the item holding it).
    want = case.path.replace("['", "[").replace("']", "]")  # the validator does not quote map keys
    at = [p for p in problems if p.path == want or want.startswith((p.path + ".", p.path + "["))]
    assert at, f"{case.path} not refused by the CRDs; got:\n" + "\n".join(map(str, problems))
    field = re.sub(r"\[.*?\]", "", case.path).rsplit(".", 1)[-1]
    assert any(field in p.path or field in p.message for p in at), at


def _own_suites() -> dict[str, tuple[list[dict[str, Any]], dict[str, str]]]:
    cases = {f"expose: {n}": (with_expose(e, x), paths) for n, (e, x, paths) in EXPOSE_CASES.items()}
    for name, (control_plane, path, _) in CONTROL_PLANE_CASES.items():
        if ".extraArgs." in path:
            continue  # map keys: the webhook's (see spec.refusals)
        docs = clone(load_example("kubevirt.yaml"))
        docs[0]["spec"]["controlPlane"] = control_plane
        cases[f"controlPlane: {name}"] = (docs, {path: ""})
    return {**cases, **{f"autoscaling: {n}": case for n, case in AUTOSCALING_CASES.items()}}


@pytest.mark.parametrize("case", _own_suites().values(), ids=_own_suites().keys())
def test_the_crds_alone_refuse_the_expose_and_autoscaling_suites(
    case: tuple[list[dict[str, Any]], dict[str, str]], own_catalog: SchemaCatalog
) -> None:
    docs, expected = case
    for path in expected:
        obj = _without_nulls(_object_at(docs, path))
        problems = _errors(validate_objects([obj], own_catalog, core=False))
        assert any(p.path == path for p in problems), f"{path}:\n" + "\n".join(map(str, problems))


def _tenant_examples() -> list[str]:
    """The examples that hold tenant objects; the others (observed state, a Platform) have no CRD of ours."""
    return sorted(p.name for p in EXAMPLES.glob("*.yaml")
                  if any(d.get("kind") == "TenantCluster" for d in load_example(p.name)))


def test_the_tenant_examples_are_the_ones_expected() -> None:
    assert _tenant_examples() == ["kubevirt.yaml", "proxmox-spread.yaml", "proxmox.yaml"]


@pytest.mark.parametrize("example", _tenant_examples())
def test_every_example_passes_the_crds(example: str, own_catalog: SchemaCatalog) -> None:
    docs = [d for d in load_example(example) if d.get("kind") in ("TenantCluster", "NodePool")]
    assert {d["kind"] for d in docs} == {"TenantCluster", "NodePool"}
    assert validate_objects(docs, own_catalog, core=False) == []
    broken = clone(docs)
    broken[0]["spec"]["version"] = "1.33"
    assert [p.path for p in _errors(validate_objects(broken, own_catalog, core=False))] == [
        f"TenantCluster/{docs[0]['metadata']['name']}.spec.version"
    ], "the same documents with one bad field are refused: the CRDs did judge them"


def _versions(catalog: SchemaCatalog) -> list[CrdVersion]:
    return list(catalog)


def test_every_rule_compiles_and_every_pattern_is_a_full_match_re2(own_catalog: SchemaCatalog) -> None:
    for version in _versions(own_catalog):
        compiled = compiled_version(version)
        assert compiled.unchecked == [], compiled.unchecked
        assert compiled.converted.rules > 10
    patterns = [node["pattern"] for node in mappings(render_crds()) if isinstance(node.get("pattern"), str)]
    assert patterns
    for pattern in patterns:
        compile_go_regex(pattern)
        assert pattern.startswith("^") and pattern.endswith("$"), pattern


def _schema_nodes(node: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
    found = [(path, node)]
    for key, child in (node.get("properties") or {}).items():
        found += _schema_nodes(child, f"{path}.{key}")
    if isinstance(node.get("items"), dict):
        found += _schema_nodes(node["items"], f"{path}[]")
    return found


def _touched(node: dict[str, Any], path: str) -> list[tuple[str, dict[str, Any]]]:
    """The rule node itself and every field below it that one of its rules names."""
    text = " ".join(r["rule"] + r.get("messageExpression", "") for r in node["x-kubernetes-validations"])
    named = set(re.findall(r"[A-Za-z_]\w*", text))
    return [
        (below, child)
        for below, child in _schema_nodes(node, path)
        if below == path or below.removesuffix("[]").rsplit(".", 1)[-1] in named
    ]


def test_strings_and_lists_the_rules_touch_are_bounded() -> None:
    """The API server estimates a rule's cost from maxLength/maxItems; unbounded, it refuses the CRD."""
    checked = 0
    for crd in render_crds():
        root = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        for path, node in _schema_nodes(root["properties"]["spec"], ".spec"):
            if "x-kubernetes-validations" not in node:
                continue
            for below, child in _touched(node, path):
                checked += 1
                if (child.get("type") == "string" and "enum" not in child) or child.get("x-kubernetes-int-or-string"):
                    assert "maxLength" in child, f"{crd['spec']['names']['kind']} {below} has no maxLength"
                if child.get("type") == "array":
                    assert "maxItems" in child, f"{crd['spec']['names']['kind']} {below} has no maxItems"
                    assert "maxLength" in child["items"] or child["items"].get("type") != "string", below
    assert checked > 30


def test_status_keeps_unknown_fields_and_kinds_keep_their_names() -> None:
    for crd in render_crds():
        root = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        assert root["properties"]["status"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        names = crd["spec"]["names"]
        assert names["singular"] == names["kind"].lower()
        assert crd["spec"]["versions"][0]["storage"] is True
    pool = render_crds()[1]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert pool["required"] == ["spec"]
    assert "cluster" in pool["properties"]["spec"]["required"]
    substrate = render_crds()[0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert substrate["properties"]["substrate"]["enum"] == ["kubevirt", "proxmox"]


def _defaults_below(node: dict[str, Any], model: Any, path: str) -> list[tuple[str, Any, Any]]:
    """(path, CRD default, model default) for every field of `model` and of the models below it."""
    from tenantctl.spec.base import model_in

    found: list[tuple[str, Any, Any]] = []
    # pydantic's own dump of an instance built from defaults alone (required fields left out).
    defaults = model.model_construct().model_dump(mode="json", by_alias=True, exclude_none=True)
    for name, info in model.model_fields.items():
        key = info.alias or name
        child = node["properties"][key]
        found.append((f"{path}.{key}", child.get("default"), defaults.get(key)))
        inner = model_in(info.annotation)
        target = child
        while "properties" not in target and ("items" in target or "additionalProperties" in target):
            target = target.get("items") or target["additionalProperties"]  # a list or map of the model
        if inner is not None:
            found += _defaults_below(target, inner, f"{path}.{key}")
    return found


@pytest.mark.parametrize(("index", "model"), [(0, TenantClusterSpec), (1, NodePoolSpec)])
def test_crd_defaults_equal_model_defaults_field_by_field(index: int, model: Any) -> None:
    spec = render_crds()[index]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    rows = _defaults_below(spec, model, "spec")
    assert len(rows) > 20
    for path, crd_default, model_default in rows:
        assert crd_default == model_default, path


def test_a_defaulted_object_is_the_models_default(own_catalog: SchemaCatalog) -> None:
    """Persisted at creation: what the API server stores for `spec: {}` is what the model assumes."""
    cluster = own_catalog.lookup("tenantctl.io/v1alpha1", "TenantCluster")
    pool = own_catalog.lookup("tenantctl.io/v1alpha1", "NodePool")
    assert cluster is not None and pool is not None
    tree = compiled_version(cluster).converted.defaults
    stored = apply_defaults({"metadata": {"name": "a", "namespace": "b"}}, tree)
    assert stored["spec"] == TenantClusterSpec().model_dump(mode="json", by_alias=True, exclude_none=True)
    tree = compiled_version(pool).converted.defaults
    stored = apply_defaults({"spec": {"cluster": "a"}}, tree)
    expected = NodePoolSpec(cluster="a").model_dump(mode="json", by_alias=True, exclude_none=True)
    assert stored["spec"] == expected


def test_resource_ceilings_are_the_checks_ceilings() -> None:
    from tenantctl.spec import checks

    for field, (ceiling, _) in RESOURCE_CEILINGS.items():
        assert parse_quantity(ceiling) == checks._RESOURCE_LIMITS[field][0]


_CHANGES: dict[str, tuple[str, Any]] = {
    "TenantClusterSpec.substrate": ("kubevirt.yaml", lambda d: d[0]["spec"].update(substrate="proxmox")),
    "TenantClusterSpec.network": (
        "kubevirt.yaml", lambda d: d[0]["spec"].setdefault("network", {}).update(podCIDR="10.250.0.0/16")
    ),
    "NodePoolSpec.cluster": ("kubevirt.yaml", lambda d: d[1]["spec"].update(cluster="other")),
}


@pytest.mark.parametrize("key", sorted(IMMUTABLE))
def test_immutable_fields_refuse_a_change_and_allow_an_unchanged_update(key: str, own_catalog: SchemaCatalog) -> None:
    example, change = _CHANGES[key]
    old = load_example(example)
    index = 0 if key.startswith("TenantCluster") else 1
    new = copy.deepcopy(old)
    change(new)
    problems = validate_transition(new[index], old[index], own_catalog)
    field = key.split(".", 1)[1]
    assert [p for p in problems if p.path.endswith(f".spec.{field}") and "immutable" in p.message], problems
    mutable = copy.deepcopy(old[index])
    if index:
        mutable["spec"]["replicas"] = 7
    else:
        mutable["spec"]["controlPlane"] = {"replicas": 3}
    assert validate_transition(mutable, old[index], own_catalog) == []


def test_docs_table_is_generated() -> None:
    table = markdown_table()
    doc = (REPO / "docs" / "admission.md").read_text()
    readme = (REPO / "docs" / "spec.md").read_text()
    assert table in doc, "regenerate docs/admission.md: python -m tenantctl.spec.refusals"
    assert table in readme, "regenerate docs/spec.md's table: python -m tenantctl.spec.refusals"


@pytest.mark.parametrize("example", ["proxmox.yaml", "kubevirt.yaml"])
def test_what_the_api_server_stores_means_what_the_user_wrote(example: str, own_catalog: SchemaCatalog) -> None:
    """Defaulted by the CRDs (nested proxmox blocks included), an example parses to the same models."""
    from tenantctl.spec import parse_tenant_documents

    docs = load_example(example)
    stored = []
    for d in docs:
        version = own_catalog.lookup(d["apiVersion"], d["kind"])
        assert version is not None
        stored.append(apply_defaults(d, compiled_version(version).converted.defaults))
    assert stored != docs
    assert parse_tenant_documents(stored) == parse_tenant_documents(docs)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("readyUnknownTimeout", "0s", "'0s' must be a positive duration, a zero timeout remediates every new worker"),
     ("readyFalseTimeout", "0s", "'0s' must be a positive duration, a zero timeout remediates every new worker")],
)
def test_a_duration_the_crd_refuses_says_why_in_the_apiservers_words(
    field: str, value: str, message: str, own_catalog: SchemaCatalog
) -> None:
    """`kubectl apply` shows the CRD's message alone: it must say what is wrong and why, as the check does."""
    docs = clone(load_example("proxmox.yaml"))
    pool = next(d for d in docs if d["kind"] == "NodePool")
    pool["spec"].setdefault("healthCheck", {})[field] = value
    [problem] = _errors(validate_objects([pool], own_catalog, core=False))
    assert problem.path == f"NodePool/md0.spec.healthCheck.{field}"
    assert problem.message.startswith(f"Invalid value: {message} (rule "), problem.message

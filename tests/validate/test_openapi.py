"""CRD kinds: the structural schema judged strictly, with the Kubernetes extensions' apiserver meaning."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from tenantctl.problems import Problem, Severity
from tenantctl.validate import SchemaCatalog, validate_objects

Widget = Callable[..., dict[str, Any]]
Pmt = Callable[..., dict[str, Any]]


def only(problems: list[Problem]) -> Problem:
    assert len(problems) == 1, "\n".join(map(str, problems))
    return problems[0]


def test_a_valid_widget_using_every_feature_passes(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    obj = widget(
        minReplicas=2,
        maxReplicas=9,
        mode="Legacy",
        legacyConfig="x",
        port="http",
        handle="Abc",
        budget=-(2**31),
        note=None,
        startedAt="2026-01-02T03:04:05Z",
        ratio=0.25,
        extra={"anything": {"goes": [1, 2]}},
        template={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}},
        tags=["a", "b"],
        ports=[{"name": "http"}, {"name": "https", "number": 443}],
        selector={"app": "w"},
        memory="512Mi",
        hosts=["a.example.com"],
    )
    obj["status"] = {"free": "form"}
    assert validate_objects([obj], widget_catalog) == []


def test_validation_never_mutates_the_callers_object(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    obj = widget(ports=[{"name": "http"}])
    before = copy.deepcopy(obj)
    validate_objects([obj], widget_catalog)
    assert obj == before


@pytest.mark.parametrize(
    ("case", "spec", "path", "fragment"),
    [
        ("unknown field", {"colour": "red"}, "Widget/w1.spec.colour", "unknown field 'colour'"),
        ("unknown field near a known one", {"sise": "small"}, "Widget/w1.spec.sise", "did you mean 'size'?"),
        (
            "unknown field in a list item",
            {"ports": [{"name": "a", "nmber": 1}]},
            "Widget/w1.spec.ports[0].nmber",
            "unknown field",
        ),
        ("wrong type", {"budget": "2"}, "Widget/w1.spec.budget", 'Invalid value: "2": must be integer, not string'),
        (
            "wrong type in a map value",
            {"selector": {"app": 1}},
            "Widget/w1.spec.selector.app",
            "must be string, not integer",
        ),
        (
            "enum",
            {"size": "medium"},
            "Widget/w1.spec.size",
            'Unsupported value: "medium"; supported values: "small", "large"',
        ),
        ("minimum", {"minReplicas": -1, "maxReplicas": 5}, "Widget/w1.spec.minReplicas", "must be >= 0"),
        (
            "exclusive maximum from OpenAPI's boolean form",
            {"maxReplicas": 10},
            "Widget/w1.spec.maxReplicas",
            "must be < 10",
        ),
        ("int32 overflow", {"budget": 2**31}, "Widget/w1.spec.budget", "not a valid int32"),
        (
            "pattern (an RE2 pattern with a mid-pattern flag)",
            {"handle": "a-b"},
            "Widget/w1.spec.handle",
            "must match the regular expression",
        ),
        ("maxLength", {"handle": "abcdefghi"}, "Widget/w1.spec.handle", "too long: 9, must have at most 8 characters"),
        ("date-time format", {"startedAt": "yesterday"}, "Widget/w1.spec.startedAt", "not a valid date-time"),
        ("int-or-string refuses other types", {"port": 1.5}, "Widget/w1.spec.port", "must be integer or string"),
        ("null where not nullable", {"mode": None}, "Widget/w1.spec.mode", "the field is not nullable"),
        ("list-type set duplicates", {"tags": ["a", "a"]}, "Widget/w1.spec.tags[1]", "Duplicate value"),
        (
            "list-type map duplicate keys",
            {"ports": [{"name": "a"}, {"name": "a", "number": 2}]},
            "Widget/w1.spec.ports[1]",
            'map keys {"name": "a"}',
        ),
        ("required in a list item", {"ports": [{"number": 1}]}, "Widget/w1.spec.ports[0].name", "Required value"),
        (
            "embedded resource needs a kind",
            {"template": {"apiVersion": "v1"}},
            "Widget/w1.spec.template.kind",
            "Required value",
        ),
        (
            "embedded resource kind is a string",
            {"template": {"apiVersion": "v1", "kind": 5}},
            "Widget/w1.spec.template.kind",
            "string",
        ),
        (
            "embedded resource metadata is ObjectMeta",
            {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"nmae": "p"}}},
            "Widget/w1.spec.template.metadata.nmae",
            "unknown field",
        ),
    ],
)
def test_each_schema_rule_refuses_with_the_field_and_value(
    widget_catalog: SchemaCatalog, widget: Widget, case: str, spec: dict[str, Any], path: str, fragment: str
) -> None:
    problem = only(validate_objects([widget(**spec)], widget_catalog))
    assert problem.path == path, case
    assert fragment in problem.message, case
    assert problem.severity is Severity.ERROR


def test_a_missing_required_field_is_reported_at_the_field(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    obj = widget()
    obj["spec"] = {}
    problem = only(validate_objects([obj], widget_catalog))
    assert problem.path == "Widget/w1.spec.size"
    assert problem.message == "Required value: field is missing"


def test_an_unknown_top_level_field_is_refused(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    obj = widget()
    obj["sepc"] = {}
    assert only(validate_objects([obj], widget_catalog)).path == "Widget/w1.sepc"


def test_defaults_are_applied_before_validation(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    # maxReplicas defaults to 3, so 5 breaks the min <= max rule although maxReplicas is absent.
    problem = only(validate_objects([widget(minReplicas=5)], widget_catalog))
    assert problem.path == "Widget/w1.spec.minReplicas"
    assert "minReplicas must not exceed maxReplicas" in problem.message


@pytest.mark.parametrize(
    ("metadata", "path", "fragment"),
    [
        ({"name": "w1", "labels": {"tier": "x" * 64}}, "Widget/w1.metadata.labels.tier", "invalid label value"),
        ({"name": "w1", "labels": {"tier": "-bad"}}, "Widget/w1.metadata.labels.tier", "invalid label value"),
        ({"name": "w1", "labels": {"bad key!": "x"}}, "Widget/w1.metadata.labels[bad key!]", "invalid label key"),
        (
            {"name": "w1", "annotations": {"a/b/c": "x"}},
            "Widget/w1.metadata.annotations[a/b/c]",
            "invalid annotation key",
        ),
        ({"name": "w1", "labels": {"tier": 3}}, "Widget/w1.metadata.labels.tier", "must be string, not integer"),
        ({"name": "Not_A_Subdomain"}, "Widget/Not_A_Subdomain.metadata.name", "must be a DNS subdomain"),
        ({"name": "a" * 254}, f"Widget/{'a' * 254}.metadata.name", "no more than 253 characters"),
        ({"name": "w1", "namespace": "Bad_NS"}, "Widget/w1.metadata.namespace", "must be a DNS label"),
        ({"name": "w1", "nmae": "x"}, "Widget/w1.metadata.nmae", "unknown field 'nmae'; did you mean 'name'?"),
        ({"labels": {}}, "Widget.metadata.name", "required: name or generateName"),
    ],
)
def test_metadata_is_checked_like_the_apiserver(
    widget_catalog: SchemaCatalog, widget: Widget, metadata: dict[str, Any], path: str, fragment: str
) -> None:
    obj = widget()
    obj["metadata"] = metadata
    problem = only(validate_objects([obj], widget_catalog))
    assert (problem.path, fragment in problem.message) == (path, True), problem


def test_annotations_may_not_exceed_256_kib_in_total(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    obj = widget()
    obj["metadata"]["annotations"] = {"a": "x" * 200_000, "b": "x" * 62_000}
    assert validate_objects([obj], widget_catalog) == []
    obj["metadata"]["annotations"]["c"] = "x" * 200
    problem = only(validate_objects([obj], widget_catalog))
    assert (problem.path, problem.message) == (
        "Widget/w1.metadata.annotations",
        "too long: annotations total 262203 bytes, the limit is 262144",
    )


def test_a_label_value_of_63_characters_is_fine(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    obj = widget()
    obj["metadata"]["labels"] = {"tier": "x" * 63, "example.com/empty": ""}
    assert validate_objects([obj], widget_catalog) == []


def test_a_namespace_on_a_cluster_scoped_kind_is_refused(widget_catalog: SchemaCatalog) -> None:
    gadget: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "g", "namespace": "x"},
    }
    problem = only(validate_objects([gadget], widget_catalog))
    assert problem.path == "Gadget/g.metadata.namespace"
    assert "cluster-scoped" in problem.message
    del gadget["metadata"]["namespace"]
    assert validate_objects([gadget], widget_catalog) == []


def test_a_kind_missing_from_the_catalog_is_an_error(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    obj = widget()
    obj["apiVersion"] = "example.com/v2"
    problem = only(validate_objects([obj], widget_catalog))
    assert problem.path == "Widget/w1"
    assert problem.message.startswith("no CRD for example.com/v2 Widget in ")
    assert "versions v1, v1alpha1, v1beta1" in problem.message


def test_without_a_catalog_custom_kinds_are_skipped(widget: Widget) -> None:
    obj = widget(colour="red")
    assert validate_objects([obj]) == []


def test_a_version_that_is_not_served_is_refused(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    obj = widget()
    obj["apiVersion"] = "example.com/v1alpha1"
    problem = only(validate_objects([obj], widget_catalog))
    assert problem.path == f"Widget/{obj['metadata']['name']}"
    assert problem.message.startswith("example.com/v1alpha1 Widget is not served by CRD widgets.example.com (")


def test_a_deprecated_version_warns_with_the_crds_own_words(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    obj = widget()
    obj["apiVersion"] = "example.com/v1beta1"
    problem = only(validate_objects([obj], widget_catalog))
    assert problem.severity is Severity.WARNING
    assert problem.message == "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget"


@pytest.mark.parametrize(
    ("obj", "path"),
    [
        ({"kind": "Widget", "metadata": {"name": "w"}}, "Widget/w.apiVersion"),
        ({"apiVersion": "example.com/v1", "metadata": {"name": "w"}}, "object[0]/w.kind"),
        ({"apiVersion": "example.com/v1", "kind": ""}, "object[0].kind"),
    ],
)
def test_an_object_without_apiversion_or_kind_is_refused(
    widget_catalog: SchemaCatalog, obj: dict[str, Any], path: str
) -> None:
    assert only(validate_objects([obj], widget_catalog)).path == path


def test_every_object_is_judged_and_problems_keep_their_order(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    problems = validate_objects([widget("a", colour=1), widget("b"), widget("c", size="x")], widget_catalog)
    assert [p.path for p in problems] == ["Widget/a.spec.colour", "Widget/c.spec.size"]


# --- the upstream CRDs ----------------------------------------------------------------------------


def test_a_hand_written_proxmox_machine_template_passes(crd_catalog: SchemaCatalog, pmt: Pmt) -> None:
    assert validate_objects([pmt(storage="local-lvm", full=True)], crd_catalog) == []


def test_capmox_schema_refusals(crd_catalog: SchemaCatalog, pmt: Pmt) -> None:
    problems = validate_objects([pmt(memoryMiB=4100, storrage="x")], crd_catalog)
    assert [(p.path, p.message.split(" (")[0]) for p in problems] == [
        (
            "ProxmoxMachineTemplate/acme-md0-1a2b.spec.template.spec.memoryMiB",
            "Invalid value: 4100: must be a multiple of 8",
        ),
        (
            "ProxmoxMachineTemplate/acme-md0-1a2b.spec.template.spec.storrage",
            "unknown field 'storrage'; did you mean 'storage'?",
        ),
    ]


def test_a_type_error_skips_cel_rules_like_the_apiserver(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    # minReplicas "2" would also break `self.minReplicas <= self.maxReplicas`; only the type error is news.
    problems = validate_objects([widget(minReplicas="2")], widget_catalog)
    assert [(p.path, p.severity) for p in problems] == [
        ("Widget/w1.spec.minReplicas", Severity.ERROR),
        ("Widget/w1", Severity.WARNING),
    ]
    assert "rules were not checked" in problems[1].message


def test_a_cluster_api_cluster_with_an_unknown_field_fails(crd_catalog: SchemaCatalog) -> None:
    cluster = {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "acme", "namespace": "tenant-acme"},
        "spec": {"clusterNetwork": {"pods": {"cidrBlocks": ["10.244.0.0/16"]}}, "paused": "no"},
    }
    problem = only(validate_objects([cluster], crd_catalog))
    assert problem.path == "Cluster/acme.spec.paused"
    assert "must be boolean" in problem.message


def test_what_cannot_be_checked_is_named_by_where_it_sits() -> None:
    """An unchecked keyword is reported, never dropped silently: the report names its field path."""
    from tenantctl.validate.openapi import convert_crd_schema

    ungreedy = {"type": "string", "pattern": "(?U)a+"}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "tags": {"type": "array", "items": ungreedy},
        "labels": {"type": "object", "additionalProperties": ungreedy},
        "name": ungreedy}}}}
    why = "cannot be checked: RE2 flag U (ungreedy) has no Python equivalent"
    assert convert_crd_schema(schema).unchecked == [
        f"pattern at .spec.tags[*] {why}", f"pattern at .spec.labels[*] {why}", f"pattern at .spec.name {why}"]
    assert convert_crd_schema(ungreedy).unchecked == [f"pattern at . {why}"]


def test_a_node_with_properties_and_no_type_prunes_unknown_fields_as_an_object_does() -> None:
    from tenantctl.validate.openapi import convert_crd_schema

    untyped = {"properties": {"a": {"type": "string"}}}
    converted = convert_crd_schema({"type": "object", "properties": {"spec": untyped}})
    assert converted.schema["properties"]["spec"]["additionalProperties"] is False


def test_a_nullable_enum_takes_null_beside_its_values() -> None:
    """The apiserver accepts null for a nullable field before it looks at the enum."""
    import jsonschema

    from tenantctl.validate.openapi import convert_crd_schema

    converted = convert_crd_schema({"type": "string", "enum": ["a", "b"], "nullable": True}).schema
    jsonschema.validate(None, converted)
    jsonschema.validate("a", converted)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate("c", converted)

"""x-kubernetes-validations: every upstream rule compiles and runs; rules fail with their own words."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import cel
import pytest

from crd_support import example_crd
from tenantctl.problems import Problem, Severity
from tenantctl.validate import SchemaCatalog, validate_objects
from tenantctl.validate.cel_library import KUBERNETES_FUNCTIONS, NATIVE_FUNCTIONS
from tenantctl.validate.cel_rules import RuleCompileError, _error_text, compile_rule
from tenantctl.validate.custom import compiled_version

Widget = Callable[..., dict[str, Any]]
Pmt = Callable[..., dict[str, Any]]


def only(problems: list[Problem]) -> Problem:
    assert len(problems) == 1, "\n".join(map(str, problems))
    return problems[0]


# --- every rule in the upstream CRDs --------------------------------------------------------------


def rule_nodes(node: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Mapping[str, Any], Mapping[str, Any]]]:
    """(schema path, schema node, validation entry) for every x-kubernetes-validations entry under `node`."""
    for spec in node.get("x-kubernetes-validations") or ():
        yield path or ".", node, spec
    for name, child in (node.get("properties") or {}).items():
        yield from rule_nodes(child, f"{path}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), Mapping):
            yield from rule_nodes(node[key], f"{path}[*]")


def sample(node: Mapping[str, Any]) -> Any:
    """A minimal value of a schema node: required properties filled in, recursively."""
    if node.get("x-kubernetes-int-or-string"):
        return 1
    kind = node.get("type")
    if kind == "object":
        properties = node.get("properties") or {}
        return {name: sample(properties[name]) for name in node.get("required", ()) if name in properties}
    scalars: dict[Any, Any] = {"string": "a", "integer": 1, "number": 1.0, "boolean": True, "array": []}
    return scalars.get(kind, {})


def test_every_upstream_rule_compiles_and_none_is_dropped(crd_catalog: SchemaCatalog) -> None:
    compiled = transition = expected = 0
    for version in crd_catalog:
        built = compiled_version(version)
        assert built.unchecked == [], f"{version.crd_name} {version.version}: {built.unchecked}"
        compiled += built.converted.rules
        transition += built.converted.transition_rules
        expected += sum(1 for _ in rule_nodes(version.schema))
    assert compiled == expected > 80
    assert 0 < transition < compiled  # `self == oldSelf` immutability rules: counted, not evaluated


def test_every_upstream_rule_evaluates_on_a_minimal_value(crd_catalog: SchemaCatalog) -> None:
    evaluated = 0
    for version in crd_catalog:
        for path, node, spec in rule_nodes(version.schema):
            rule = compile_rule(spec, numeric_double=node.get("type") == "number")
            if rule.transition:
                continue
            failure = rule.check(sample(node))
            evaluated += 1
            # A rule may fail or error on a made-up value ("no such key"), but every name it uses must resolve.
            assert failure is None or "Undefined" not in failure.message, f"{version.crd_name} {path}: {failure}"
    assert evaluated > 70


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"storage": "local-lvm", "full": False}, "Must set full=true when specifying storage"),
        ({"format": "qcow2", "full": False}, "Must set full=true when specifying format"),
    ],
)
def test_capmox_refuses_a_linked_clone_with_storage_or_format(
    crd_catalog: SchemaCatalog, pmt: Pmt, spec: dict[str, Any], message: str
) -> None:
    problem = only(validate_objects([pmt(**spec)], crd_catalog))
    assert problem.path == "ProxmoxMachineTemplate/acme-md0-1a2b.spec.template.spec"
    assert problem.message.startswith(f"Invalid value: {message} (rule `self.full || !has(self.")
    assert '"full": false' in problem.message


def test_capmox_full_defaults_to_true_so_storage_alone_is_fine(crd_catalog: SchemaCatalog, pmt: Pmt) -> None:
    assert validate_objects([pmt(storage="local-lvm")], crd_catalog) == []


def test_capmox_rules_on_list_items_and_nested_fields(crd_catalog: SchemaCatalog, pmt: Pmt) -> None:
    pool = {"apiGroup": "ipam.cluster.x-k8s.io", "kind": "InClusterIPPool", "name": "pool"}
    network = {
        "default": {"bridge": "vmbr0", "model": "virtio", "mtu": 100},
        "additionalDevices": [
            {"name": "net1", "bridge": "vmbr1", "model": "virtio", "ipv6PoolRef": pool},
            {"name": "net0", "bridge": "vmbr1", "model": "virtio", "ipv4PoolRef": {**pool, "kind": "Pool"}},
        ],
    }
    problems = validate_objects([pmt(network=network)], crd_catalog)
    where = "ProxmoxMachineTemplate/acme-md0-1a2b.spec.template.spec.network"
    assert [(p.path, p.message.split(" (rule")[0]) for p in problems] == [
        (
            f"{where}.additionalDevices[1].ipv4PoolRef",
            "Invalid value: ipv4PoolRef allows either InClusterIPPool or GlobalInClusterIPPool",
        ),
        (f"{where}.additionalDevices[1].name", "Invalid value: additional network devices doesn't allow net0"),
        (f"{where}.default.mtu", "Invalid value: invalid MTU value"),
    ]


def test_a_rule_that_errors_is_a_failure_with_its_message(crd_catalog: SchemaCatalog, pmt: Pmt) -> None:
    network = {"default": {"bridge": "vmbr0"}, "additionalDevices": [{"name": "net1", "bridge": "vmbr1"}]}
    problem = only(validate_objects([pmt(network=network)], crd_catalog))
    assert problem.path.endswith(".network.additionalDevices[0]")
    assert "at least one pool reference must be set" in problem.message
    assert "could not be evaluated: no such key: ipv" in problem.message


@pytest.mark.parametrize(
    ("error", "text"),
    [(KeyError("ipv4PoolRef"), "no such key: ipv4PoolRef"), (KeyError(), "no such key"),
     (ValueError("bad\nvalue. Check the rule"), "bad value")],
)
def test_an_evaluation_error_is_told_in_one_line(error: Exception, text: str) -> None:
    """The evaluator's exceptions, retold: a key it could not find (named when the library names it), and
    its own texts on one line without the library's advice."""
    assert _error_text(error) == text


def test_flux_helm_release_needs_chart_or_chart_ref(crd_catalog: SchemaCatalog) -> None:
    release: dict[str, Any] = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "cilium", "namespace": "tenant-acme"},
        "spec": {"interval": "10m"},
    }
    problem = only(validate_objects([release], crd_catalog))
    assert (problem.path, "either chart or chartRef must be set" in problem.message) == (
        "HelmRelease/cilium.spec",
        True,
    )
    release["spec"]["chartRef"] = {"kind": "OCIRepository", "name": "cilium"}
    assert validate_objects([release], crd_catalog) == []


# --- the rule features, on the hand-written Widget CRD --------------------------------------------


def test_field_path_and_reason_place_and_name_the_failure(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    problem = only(validate_objects([widget(minReplicas=3, maxReplicas=2)], widget_catalog))
    assert problem.path == "Widget/w1.spec.minReplicas"
    assert problem.message.startswith("Forbidden: minReplicas must not exceed maxReplicas")


def test_message_expression_is_evaluated(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    problem = only(validate_objects([widget(mode="Legacy")], widget_catalog))
    assert problem.path == "Widget/w1.spec"
    assert problem.message.startswith("Invalid value: mode Legacy needs legacyConfig (rule `")


@pytest.mark.parametrize("expression", ["1", "'  '", "''", "null", "self.nope"])
def test_a_message_expression_without_words_falls_back_to_the_message(expression: str) -> None:
    """The apiserver shows `message` when messageExpression is not a non-blank string (or fails)."""
    rule = compile_rule({"rule": "self > 0", "message": "must be positive", "messageExpression": expression})
    failure = rule.check(0)
    assert failure is not None and failure.message.startswith("Invalid value: must be positive (rule `self > 0`")
    bare = compile_rule({"rule": "self > 0", "messageExpression": expression}).check(0)
    assert bare is not None and bare.message.startswith("Invalid value: failed rule: self > 0 (rule `self > 0`")


def test_a_number_fields_transition_rule_sees_both_values_as_doubles() -> None:
    """An integer in a `number` field is a double in CEL, in `oldSelf` as in `self`."""
    rule = compile_rule({"rule": "self - oldSelf < 1.5"}, numeric_double=True)
    assert rule.check(3, 2) is None
    failure = rule.check(5, 2)
    assert failure is not None and "could not be evaluated" not in failure.message, failure


def test_transition_rules_are_counted_but_not_evaluated(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    version = widget_catalog.lookup("example.com/v1", "Widget")
    assert version is not None
    converted = compiled_version(version).converted
    assert (converted.rules, converted.transition_rules) == (6, 1)
    # `self.size == oldSelf.size` would error on create if it were evaluated.
    assert validate_objects([widget()], widget_catalog) == []


def test_a_rule_on_list_items_reports_the_item(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    problem = only(validate_objects([widget(hosts=["ok.example", "Not.Lower"])], widget_catalog))
    assert problem.path == "Widget/w1.spec.hosts[1]"
    assert "hosts must be lowercase" in problem.message
    assert '"Not.Lower"' in problem.message


def test_an_integer_in_a_number_field_is_a_double_in_cel(widget_catalog: SchemaCatalog, widget: Widget) -> None:
    # `self * 2.0` has no int overload: the apiserver hands number fields to CEL as doubles.
    assert validate_objects([widget(ratio=0)], widget_catalog) == []
    assert "ratio above 0.5" in only(validate_objects([widget(ratio=1)], widget_catalog)).message


def test_kubernetes_library_functions_run_inside_rules(
    widget_catalog: SchemaCatalog, widget: Widget, caplog: pytest.LogCaptureFixture
) -> None:
    assert validate_objects([widget(memory=1024), widget("w2", memory="9Gi")], widget_catalog) == []
    problems = validate_objects([widget(memory="20Gi"), widget("w2", memory="lots")], widget_catalog)
    assert [p.path for p in problems] == ["Widget/w1.spec.memory", "Widget/w2.spec.memory"]
    assert "memory must be below 10Gi (rule" in problems[0].message
    assert "could not be evaluated" in problems[1].message and "quantities must match" in problems[1].message
    assert [r.getMessage() for r in caplog.records if r.name == "cel"] == []  # no stderr chatter from cel


BROKEN_SPEC = """\
type: object
x-kubernetes-validations:
- {rule: "self.a ==", message: syntax error}
- {rule: "self.a.noSuchFunction()", message: unknown function}
- {rule: "has(self.a) || sefl.b", message: unknown variable}
properties:
  a: {type: string}
"""


def test_a_rule_that_cannot_be_compiled_is_a_loud_error(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text(example_crd("Broken", BROKEN_SPEC))
    catalog = SchemaCatalog.from_dirs([tmp_path])
    obj = {"apiVersion": "example.com/v1", "kind": "Broken", "metadata": {"name": "b"}, "spec": {"a": "x"}}
    problems = validate_objects([obj], catalog)
    assert [p.severity for p in problems] == [Severity.ERROR] * 3
    assert all(p.path == "Broken/b" and p.message.startswith("CRD brokens.example.com v1 (") for p in problems)
    assert "rule `self.a ==` does not compile" in problems[0].message
    assert "calls noSuchFunction, which tenantctl's CEL environment does not provide" in problems[1].message
    assert "undeclared variable(s) sefl" in problems[2].message


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ({"message": "no rule"}, "validation entry without a rule"),
        ({"rule": "self > 0", "fieldPath": "spec..x"}, "is not a field path"),
        ({"rule": "self > 0", "reason": "FieldValueWrong"}, "unknown reason"),
        ({"rule": "self > 0", "messageExpression": "'a' +"}, "messageExpression `'a' +` does not compile"),
    ],
)
def test_malformed_validation_entries_are_refused(spec: dict[str, Any], error: str) -> None:
    with pytest.raises(RuleCompileError, match=re.escape(error)):
        compile_rule(spec)


# --- the CEL environment --------------------------------------------------------------------------

NATIVE_SAMPLES = {
    "size": "size('ab') == 2",
    "contains": "'abc'.contains('b')",
    "startsWith": "'abc'.startsWith('a')",
    "endsWith": "'abc'.endsWith('c')",
    "matches": "'abc'.matches('^a.c$')",
    "string": "string(1) == '1'",
    "bytes": "bytes('a') == b'a'",
    "double": "double(1) == 1.0",
    "int": "int(1.9) == 1",
    "uint": "uint(1) == 1u",
    "timestamp": "timestamp('2026-01-01T00:00:00Z') > timestamp('2025-01-01T00:00:00Z')",
    "duration": "duration('1m') == duration('60s')",
    "type": "type(1) == int",
    "dyn": "dyn(1) == 1",
    "getFullYear": "timestamp('2026-01-01T00:00:00Z').getFullYear() == 2026",
    "getMonth": "timestamp('2026-02-01T00:00:00Z').getMonth() == 1",
    "getDayOfYear": "timestamp('2026-01-02T00:00:00Z').getDayOfYear() == 1",
    "getDayOfMonth": "timestamp('2026-01-02T00:00:00Z').getDayOfMonth() == 1",
    "getDate": "timestamp('2026-01-02T00:00:00Z').getDate() == 2",
    "getDayOfWeek": "timestamp('2026-01-04T00:00:00Z').getDayOfWeek() == 0",
    "getHours": "timestamp('2026-01-01T03:00:00Z').getHours() == 3",
    "getMinutes": "timestamp('2026-01-01T00:04:00Z').getMinutes() == 4",
    "getSeconds": "timestamp('2026-01-01T00:00:05Z').getSeconds() == 5",
    "getMilliseconds": "timestamp('2026-01-01T00:00:00.006Z').getMilliseconds() == 6",
    "of": "optional.of(1).hasValue()",
    "none": "!optional.none().hasValue()",
    "ofNonZeroValue": "!optional.ofNonZeroValue(0).hasValue()",
    "hasValue": "optional.of(1).hasValue()",
    "value": "optional.of(1).value() == 1",
    "orValue": "optional.none().orValue(2) == 2",
    "or": "optional.none().or(optional.of(3)).value() == 3",
}


def test_functions_counted_as_native_are_really_built_into_cel() -> None:
    assert set(NATIVE_SAMPLES) == NATIVE_FUNCTIONS
    for name, expression in NATIVE_SAMPLES.items():
        assert cel.evaluate(expression) is True, name  # no tenantctl functions in this context


@pytest.mark.parametrize(
    "expression",
    [
        # strings (cel-go ext) and Kubernetes' string format
        "'Hello'.lowerAscii() == 'hello' && 'a'.upperAscii() == 'A'",
        "'a,b'.split(',') == ['a', 'b'] && ['a', 'b'].join('-') == 'a-b'",
        "' x '.trim() == 'x' && 'abc'.substring(1) == 'bc' && 'abc'.charAt(1) == 'b'",
        "'aXa'.replace('a', 'b') == 'bXb' && 'abc'.reverse() == 'cba' && 'abca'.lastIndexOf('a') == 3",
        "'%s=%d (%.1f%%)'.format(['x', 3, 50.0]) == 'x=3 (50.0%)'",
        "'%x'.format([255]) == 'ff' && '%s'.format([[1, true, null]]) == '[1, true, null]'",
        # lists (Kubernetes)
        "[1, 2, 3].isSorted() && ![2, 1].isSorted() && [1, 2].sum() == 3",
        "[3, 1].min() == 1 && [3, 1].max() == 3 && [1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2",
        "[1, 2, 3].slice(1, 2) == [2] && [[1], [2]].flatten() == [1, 2] && [1, 1].distinct() == [1]",
        # regex (Kubernetes)
        "'abc123'.find('[0-9]+') == '123' && 'a1b2'.findAll('[0-9]') == ['1', '2']",
        "'a1b2c3'.findAll('[0-9]', 2) == ['1', '2'] && 'abc'.find('x') == ''",
        # url
        "url('https://example.com:8443/a?x=1').getScheme() == 'https'",
        "url('https://example.com:8443/a?x=1').getHostname() == 'example.com'",
        "url('https://[::1]:80/').getHost() == '[::1]:80' && url('https://[::1]:80/').getHostname() == '::1'",
        "url('https://example.com:8443/a?x=1').getPort() == '8443'",
        # Go's parseHost: the port after the host's last ':' is digits, else the URL is refused
        "url('https://a:1:2/').getPort() == '2' && !isURL('https://a:xy/') && !isURL('https://[::1]x/')",
        "isURL('https://a:/') && url('https://[::1]/').getPort() == ''",
        "url('https://example.com/a%20b').getEscapedPath() == '/a%20b'",
        "url('https://e.com/?x=1&x=2').getQuery()['x'] == ['1', '2'] && !isURL('not a url')",
        # quantity
        "quantity('1Gi').isGreaterThan(quantity('1G')) && quantity('500m').isLessThan(quantity('1'))",
        "quantity('1') == quantity('1000m') && quantity('1.5').sign() == 1 && !quantity('1.5').isInteger()",
        "quantity('2k').asInteger() == 2000 && quantity('1.5').asApproximateFloat() == 1.5",
        "quantity('9223372036854775807').asInteger() == 9223372036854775807",
        "quantity('1Ki').add(quantity('1Ki')) == quantity('2Ki') && quantity('1').sub(1).sign() == 0",
        "quantity('1').compareTo(quantity('2')) == -1 && isQuantity('1e3') && !isQuantity('1.2.3')",
        # ip and cidr
        "ip('10.0.0.1').family() == 4 && ip('::1').isLoopback() && ip('0.0.0.0').isUnspecified()",
        "ip('169.254.1.1').isLinkLocalUnicast() && ip('ff02::1').isLinkLocalMulticast()",
        "ip('192.168.1.1').isGlobalUnicast() && !ip('127.0.0.1').isGlobalUnicast()",
        "isIP('10.0.0.1') && !isIP('::ffff:10.0.0.1') && ip.isCanonical('10.0.0.1') && !ip.isCanonical('2001:DB8::1')",
        "cidr('10.0.0.0/8').containsIP('10.1.2.3') && cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))",
        "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.0.0.0/16').containsCIDR('10.0.0.0/8')",
        "cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('10.1.2.3/8').ip() == ip('10.1.2.3')",
        "cidr('fd00::/64').prefixLength() == 64 && isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0')",
        # semver
        "semver('1.2.3').isLessThan(semver('1.10.0')) && semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))",
        "semver('v1.2', true).minor() == 2 && semver('1.2.3').major() == 1 && semver('1.2.3').patch() == 3",
        "isSemver('1.2.3') && !isSemver('1.2') && isSemver('v1.2', true)",
        "semver('2.0.0').compareTo(semver('1.0.0')) == 1",
        # format
        "!format.dns1123Label().validate('ok-name').hasValue() && format.dns1123Label().validate('Bad').hasValue()",
        "format.named('dns1123Subdomain').value().validate('a.b') == optional.none()",
        "!format.named('nope').hasValue() && format.labelValue().validate('x' + 'y') == optional.none()",
        "format.qualifiedName().validate('a/b/c').hasValue()",
        "!format.dns1123LabelPrefix().validate('abc-').hasValue()",
        "!format.dns1123SubdomainPrefix().validate('a.b-').hasValue()",
        "format.dns1035Label().validate('1a').hasValue()",
        "!format.dns1035LabelPrefix().validate('a-').hasValue() && !format.uri().validate('https://a').hasValue()",
        "format.uri().validate('not a uri').value() == ['invalid URI']",
        "format.uuid().validate('x').hasValue() && !format.byte().validate('aGk=').hasValue()",
        "!format.date().validate('2026-01-02').hasValue() && format.datetime().validate('2026-01-02').hasValue()",
        "format.dns1123Subdomain().validate('A').hasValue()",
        # math, sets, base64 (cel-go ext, from cel.stdlib)
        "math.greatest([1, 3, 2]) == 3 && math.least(1, 2) == 1 && math.abs(-2) == 2",
        "math.sign(-2) == -1 && math.ceil(1.2) == 2.0 && math.floor(1.8) == 1.0 && math.round(1.5) == 2.0",
        "math.trunc(-1.5) == -1.0 && !math.isNaN(1.0) && !math.isInf(1.0) && math.isFinite(1.0)",
        "math.sqrt(4) == 2.0 && math.bitOr(1, 2) == 3 && math.bitAnd(3, 1) == 1 && math.bitXor(3, 1) == 2",
        "math.bitNot(0) == -1 && math.bitShiftLeft(1, 2) == 4 && math.bitShiftRight(4, 2) == 1",
        "bool('true') && [3, 1].sort() == [1, 3] && [1, 2].first().value() == 1 && [1, 2].last().value() == 2",
        """lists.range(3) == [0, 1, 2] && strings.quote('a') == '"a"' && [1].reverse() == [1]""",
        "sets.contains([1, 2], [1]) && sets.intersects([1], [1, 3]) && sets.equivalent([1, 2], [2, 1])",
        "base64.decode(base64.encode(b'hi')) == b'hi'",
    ],
)
def test_kubernetes_cel_library(expression: str) -> None:
    rule = compile_rule({"rule": expression})
    assert rule.check(None) is None, rule.check(None)


@pytest.mark.parametrize(
    ("value", "text"),
    [("1.5", "1.5"), ("2.0", "2"), ("-0.25", "-0.25"), ("true", "true"), ("null", "null"), ("b'hi'", "hi"),
     ("{'a': 1.5}", "{a: 1.5}"), ("[{'k': [false]}, 'x']", "[{k: [false]}, x]"), ("duration('90s')", "90s"),
     ("timestamp('2026-12-01T00:00:00Z')", "2026-12-01T00:00:00Z")],
)
def test_format_s_prints_each_type_as_cel_go_does(value: str, text: str) -> None:
    """`'%s'.format([v])` in a rule's messageExpression: the text a refusal shows for the value."""
    rule = compile_rule({"rule": f"'%s'.format([{value}]) == {text!r}"})
    assert rule.check(None) is None, rule.check(None)


@pytest.mark.parametrize("verb", ["d", "f", "x", "b"])
def test_a_number_verb_refuses_a_bool_as_cel_go_does(verb: str) -> None:
    failure = compile_rule({"rule": f"'%{verb}'.format([true]) != ''"}).check(None)
    assert failure is not None and "could not be evaluated" in failure.message, failure


def test_functions_kubernetes_lacks_are_not_smuggled_in() -> None:
    # cel.stdlib's list `contains` is not Kubernetes CEL; on a list it must fail as the apiserver would.
    failure = compile_rule({"rule": "[1, 2].contains(1)"}).check(None)
    assert failure is not None and "could not be evaluated" in failure.message


def test_every_library_function_is_exercised_above() -> None:
    source = Path(__file__).read_text()
    untested = sorted(name for name in KUBERNETES_FUNCTIONS if f"{name.rpartition('.')[2]}(" not in source)
    assert untested == []

"""Kubernetes' CEL value types, function by function: the values, the edges and the refusals.

test_cel.py shows each function runs inside a rule; this module pins what each one answers, as the
Kubernetes CEL libraries do (k8s.io/apiserver/pkg/cel/library, Go's net/netip and net/url beneath), so a
rule in an upstream CRD that leans on an edge is judged as the apiserver would judge it.
"""

from __future__ import annotations

from typing import Any

import pytest

from tenantctl.validate import cel_types as t
from tenantctl.validate.cel_rules import compile_rule


def holds(expression: str) -> None:
    failure = compile_rule({"rule": expression}).check(None)
    assert failure is None, failure


def refusal(expression: str) -> str:
    """The error a rule's evaluation reports, as the judge prints it."""
    failure = compile_rule({"rule": expression}).check(None)
    assert failure is not None and "could not be evaluated" in failure.message, failure
    return failure.message


# --- quantity -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0), ("1", 1), ("+1", 1), ("-1", -1), ("1.", 1), (".5", t.Fraction(1, 2)), ("1.50", t.Fraction(3, 2)),
        ("1n", t.Fraction(1, 10**9)), ("1u", t.Fraction(1, 10**6)), ("1m", t.Fraction(1, 1000)),
        ("1k", 10**3), ("1M", 10**6), ("1G", 10**9), ("1T", 10**12), ("1P", 10**15), ("1E", 10**18),
        ("1Ki", 2**10), ("1Mi", 2**20), ("1Gi", 2**30), ("1Ti", 2**40), ("1Pi", 2**50), ("1Ei", 2**60),
        ("1e3", 1000), ("1E3", 1000), ("1e+3", 1000), ("1e-3", t.Fraction(1, 1000)), ("-1.5Gi", -(3 * 2**29)),
    ],
)
def test_quantity_values_are_exact(text: str, value: t.Fraction | int) -> None:
    assert t.parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "1.2.3", "Gi", "1 Gi", "1KI", "1ki", "1e", "0x10", "--1", "1Gib", "1mi"])
def test_malformed_quantities_are_refused_with_the_syntax(text: str) -> None:
    with pytest.raises(ValueError) as refused:
        t.parse_quantity(text)
    assert str(refused.value).startswith("quantities must match the regular expression '^([+-]?)")
    assert not t.is_quantity(text)


def test_quantity_integers_are_int64_only() -> None:
    largest, smallest = 2**63 - 1, -(2**63)
    assert t.quantity_is_integer(t.quantity(str(largest))) and t.quantity_is_integer(t.quantity(str(smallest)))
    assert not t.quantity_is_integer(t.quantity(str(largest + 1)))
    assert not t.quantity_is_integer(t.quantity(str(smallest - 1)))
    assert not t.quantity_is_integer(t.quantity("1500m"))
    assert t.quantity_as_integer(t.quantity("2k")) == 2000
    assert t.quantity_as_integer(t.quantity(str(smallest))) == smallest
    for text in ("1500m", str(largest + 1)):
        with pytest.raises(ValueError, match=r"^cannot convert value to integer$"):
            t.quantity_as_integer(t.quantity(text))


def test_quantity_arithmetic_takes_an_int_on_the_right() -> None:
    assert t.quantity_add(t.quantity("1Ki"), 24) == t.quantity("1048")
    assert t.quantity_sub(t.quantity("1"), t.quantity("250m")) == t.quantity("750m")
    assert [t.quantity_sign(t.quantity(q)) for q in ("-2m", "0", "3Gi")] == [-1, 0, 1]
    assert t.quantity_as_approximate_float(t.quantity("1.25")) == 1.25
    assert t.quantity("1") == t.quantity("1000m")  # equal quantities are equal maps, so CEL's == holds


def test_quantity_comparisons_order_by_value() -> None:
    one, kibi, kilo = t.quantity("1"), t.quantity("1Ki"), t.quantity("1k")
    assert (t.compare_to(kibi, kilo), t.compare_to(kilo, kibi), t.compare_to(one, t.quantity("1000m"))) == (1, -1, 0)
    assert t.is_greater_than(kibi, kilo) and not t.is_greater_than(kilo, kibi) and not t.is_greater_than(one, one)
    assert t.is_less_than(kilo, kibi) and not t.is_less_than(kibi, kilo) and not t.is_less_than(one, one)


# --- semver ---------------------------------------------------------------------------------------


def test_semver_precedence_follows_the_specification() -> None:
    """semver.org §11's own example, in ascending order, plus numeric identifiers compared as numbers."""
    ascending = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
                 "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "2.0.0"]
    values = [t.semver(v) for v in ascending]
    for i, left in enumerate(values):
        for j, right in enumerate(values):
            assert t.compare_to(left, right) == (i > j) - (i < j), (ascending[i], ascending[j])
    assert t.compare_to(t.semver("1.0.0+build.1"), t.semver("1.0.0+build.2")) == 0  # build metadata is ignored


@pytest.mark.parametrize(
    ("text", "normalized"),
    [("v1.2", "1.2.0"), ("1", "1.0.0"), ("01.02.03", "1.2.3"), ("v1.2.3-rc.1", "1.2.3-rc.1"), ("1.2+b", "1.2.0+b")],
)
def test_semver_normalizes_only_when_asked(text: str, normalized: str) -> None:
    assert t.semver(text, True) == t.semver(normalized)
    assert t.is_semver(text, True)
    assert not t.is_semver(text) and not t.is_semver(text, False)
    with pytest.raises(ValueError, match=f"^invalid semver: {text.replace('+', '[+]')}$"):
        t.semver(text)


@pytest.mark.parametrize("text", ["1.2.3.4", "1.2.x", "v", "", "1.2.3-", "1.2.3-01", "a.b.c"])
def test_malformed_semvers_are_refused_even_when_normalizing(text: str) -> None:
    assert not t.is_semver(text) and not t.is_semver(text, True)


def test_semver_parts() -> None:
    version = t.semver("10.20.30-rc.1+build")
    assert (t.semver_major(version), t.semver_minor(version), t.semver_patch(version)) == (10, 20, 30)


# --- ip and cidr ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("fe80::1%eth0", "IP address with zone value is not allowed: fe80::1%eth0"),
        ("::ffff:10.0.0.1", "IPv4-mapped IPv6 address is not allowed: ::ffff:10.0.0.1"),
        ("10.0.0.256", "does not appear to be an IPv4 or IPv6 address"),
    ],
)
def test_ip_refusals(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error.replace(".", "[.]")):
        t.ip(text)
    assert not t.is_ip(text)


# (address, family, unspecified, loopback, link-local multicast, link-local unicast, global unicast):
# Go's netip answers; private ranges are global unicast there.
IP_CLASSES = [
    ("0.0.0.0", 4, True, False, False, False, False),
    ("127.0.0.1", 4, False, True, False, False, False),
    ("127.255.255.254", 4, False, True, False, False, False),
    ("10.1.2.3", 4, False, False, False, False, True),
    ("192.168.1.1", 4, False, False, False, False, True),
    ("169.254.0.1", 4, False, False, False, True, False),
    ("169.255.0.1", 4, False, False, False, False, True),
    ("224.0.0.251", 4, False, False, True, False, False),
    ("224.0.1.1", 4, False, False, False, False, False),
    ("255.255.255.255", 4, False, False, False, False, False),
    ("255.255.255.254", 4, False, False, False, False, True),
    ("::", 6, True, False, False, False, False),
    ("::1", 6, False, True, False, False, False),
    ("fe80::1", 6, False, False, False, True, False),
    ("febf::1", 6, False, False, False, True, False),
    ("fec0::1", 6, False, False, False, False, True),
    ("ff02::1", 6, False, False, True, False, False),
    ("ff12::1", 6, False, False, True, False, False),
    ("ff05::1", 6, False, False, False, False, False),
    ("2001:db8::1", 6, False, False, False, False, True),
]


@pytest.mark.parametrize(("text", "family", "unspecified", "loopback", "llm", "llu", "gu"), IP_CLASSES)
def test_ip_classification(
    text: str, family: int, unspecified: bool, loopback: bool, llm: bool, llu: bool, gu: bool
) -> None:
    address = t.ip(text)
    assert t.ip_family(address) == family
    classes = [t.ip_is_unspecified, t.ip_is_loopback, t.ip_is_link_local_multicast, t.ip_is_link_local_unicast,
               t.ip_is_global_unicast]
    assert [is_class(address) for is_class in classes] == [unspecified, loopback, llm, llu, gu]


def test_ip_canonical_form_is_the_shortest_lowercase_one() -> None:
    assert t.ip_is_canonical("2001:db8::1") and t.ip_is_canonical("10.0.0.1")
    assert not t.ip_is_canonical("2001:DB8::1") and not t.ip_is_canonical("2001:db8:0::1")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("10.0.0.0", "network address must have a prefix length: 10.0.0.0"),
        ("::ffff:10.0.0.0/104", "IPv4-mapped IPv6 address is not allowed: ::ffff:10.0.0.0"),
        ("fe80::%eth0/64", "IP address with zone value is not allowed: fe80::%eth0"),
        ("10.0.0.0/33", "10.0.0.0/33"),
    ],
)
def test_cidr_refusals(text: str, error: str) -> None:
    with pytest.raises(ValueError) as refused:
        t.cidr(text)
    assert error in str(refused.value)
    assert not t.is_cidr(text)


def test_cidr_containment_by_string_or_value_within_one_family() -> None:
    eight = t.cidr("10.0.0.0/8")
    assert t.cidr_contains_ip(eight, "10.255.255.255") and not t.cidr_contains_ip(eight, "11.0.0.0")
    assert t.cidr_contains_ip(eight, t.ip("10.0.0.1")) and not t.cidr_contains_ip(eight, t.ip("::1"))
    assert t.cidr_contains_cidr(eight, "10.1.0.0/16") and t.cidr_contains_cidr(eight, t.cidr("10.0.0.0/8"))
    assert not t.cidr_contains_cidr(t.cidr("10.0.0.0/16"), eight)
    assert not t.cidr_contains_cidr(t.cidr("::/0"), "10.0.0.0/8")  # another family is never contained
    assert not t.cidr_contains_cidr(t.cidr("0.0.0.0/0"), t.cidr("::/0"))
    with pytest.raises(ValueError, match="IPv4-mapped"):
        t.cidr_contains_ip(eight, "::ffff:10.0.0.1")


def test_cidr_parts() -> None:
    prefix = t.cidr("10.1.2.3/8")
    assert t.ip(prefix) == t.ip("10.1.2.3") and t.cidr_masked(prefix) == t.cidr("10.0.0.0/8")
    assert t.cidr_prefix_length(prefix) == 8 and t.cidr_prefix_length(t.cidr("fd00::/64")) == 64


# --- url ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "scheme", "host", "hostname", "port", "path"),
    [
        ("https://example.com:8443/a/b?x=1", "https", "example.com:8443", "example.com", "8443", "/a/b"),
        ("https://user:pw@example.com/", "https", "example.com", "example.com", "", "/"),
        ("https://[fd00::1]:6443/", "https", "[fd00::1]:6443", "fd00::1", "6443", "/"),
        ("https://[fd00::1]/", "https", "[fd00::1]", "fd00::1", "", "/"),
        ("http://a:/", "http", "a:", "a", "", "/"),
        ("/absolute/path", "", "", "", "", "/absolute/path"),
        ("mailto:someone", "mailto", "", "", "", "someone"),
    ],
)
def test_url_parts(text: str, scheme: str, host: str, hostname: str, port: str, path: str) -> None:
    value = t.url(text)
    assert (t.url_scheme(value), t.url_host(value), t.url_hostname(value), t.url_port(value),
            t.url_escaped_path(value)) == (scheme, host, hostname, port, path)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("relative/path", "URL is not a valid request URI: relative/path"),
        ("https://a/#frag", "URL is not a valid request URI: https://a/#frag"),
        ("", "URL is not a valid request URI: "),
        ("https://a:8x/", "invalid port ':8x' after host"),
        ("https://[::1]x/", "invalid port 'x' after host"),
        ("https://u@a:b:c/", "invalid port ':c' after host"),
    ],
)
def test_url_refusals(text: str, error: str) -> None:
    with pytest.raises(ValueError) as refused:
        t.url(text)
    assert str(refused.value) == error
    assert not t.is_url(text)


def test_url_query_keeps_repeated_and_blank_values() -> None:
    assert t.url_query(t.url("https://e/?a=1&a=2&b=&c")) == {"a": ["1", "2"], "b": [""], "c": [""]}
    assert t.url_query(t.url("https://e/")) == {}


# --- every typed function refuses a value of another type, naming itself --------------------------

RECEIVERS = {"quantity": t.quantity("1"), "semver": t.semver("1.0.0"), "ip": t.ip("10.0.0.1"),
             "cidr": t.cidr("10.0.0.0/8"), "url": t.url("https://a/")}
ONE_ARGUMENT = [
    ("isInteger", "quantity"), ("asInteger", "quantity"), ("asApproximateFloat", "quantity"), ("sign", "quantity"),
    ("major", "semver"), ("minor", "semver"), ("patch", "semver"),
    ("family", "ip"), ("isUnspecified", "ip"), ("isLoopback", "ip"), ("isLinkLocalMulticast", "ip"),
    ("isLinkLocalUnicast", "ip"), ("isGlobalUnicast", "ip"),
    ("masked", "cidr"), ("prefixLength", "cidr"),
    ("getScheme", "url"), ("getHost", "url"), ("getHostname", "url"), ("getPort", "url"),
    ("getEscapedPath", "url"), ("getQuery", "url"),
]


@pytest.mark.parametrize(("function", "receiver"), ONE_ARGUMENT)
def test_a_function_on_the_wrong_type_names_itself(function: str, receiver: str) -> None:
    implementation = t.TYPE_FUNCTIONS[function]
    assert implementation(RECEIVERS[receiver]) is not None
    for other, value in RECEIVERS.items():
        if other != receiver:
            with pytest.raises(TypeError, match=f"^{function}: no such overload for dict$"):
                implementation(value)


@pytest.mark.parametrize(
    ("function", "receiver", "argument"),
    [("add", "quantity", "quantity"), ("sub", "quantity", "quantity"), ("compareTo", "quantity", "quantity"),
     ("compareTo", "semver", "semver"), ("containsIP", "cidr", "ip"), ("containsCIDR", "cidr", "cidr")],
)
def test_a_two_argument_function_names_itself_for_either_wrong_value(
    function: str, receiver: str, argument: str
) -> None:
    implementation = t.TYPE_FUNCTIONS[function]
    implementation(RECEIVERS[receiver], RECEIVERS[argument])
    wrong = RECEIVERS["url"]
    for left, right in ((wrong, RECEIVERS[argument]), (RECEIVERS[receiver], wrong)):
        if function == "compareTo" and left is wrong:
            continue  # a url receiver is taken for a quantity: covered below
        with pytest.raises(TypeError, match=f"^{function}: no such overload for dict$"):
            implementation(left, right)
    with pytest.raises(TypeError, match=r"^compareTo: no such overload for dict$"):
        t.compare_to(wrong, RECEIVERS["quantity"])


def test_an_int_is_a_quantity_but_a_bool_is_not() -> None:
    assert t.compare_to(t.quantity("2"), 2) == 0
    with pytest.raises(TypeError, match=r"^add: no such overload for bool$"):
        t.quantity_add(t.quantity("1"), True)


def test_a_tag_is_one_key_starting_with_the_library_prefix() -> None:
    lookalikes: list[Any] = [{"@k8s.ip": "10.0.0.1", "x": 1}, {"@other.ip": "10.0.0.1"}, {1: "x"}, "10.0.0.1"]
    for value in lookalikes:
        with pytest.raises(TypeError, match=r"^family: no such overload for "):
            t.ip_family(value)


def test_the_refusals_reach_the_judges_words() -> None:
    assert "invalid semver: v1.2" in refusal("semver('v1.2').major() == 1")
    assert "network address must have a prefix length: 10.0.0.1" in refusal("cidr('10.0.0.1').prefixLength() > 0")
    assert "containsCIDR: no such overload" in refusal("cidr('10.0.0.0/8').containsCIDR(url('https://a/'))")
    holds("semver('v1.2', true).major() == 1 && semver('1.0.0-rc.2').isLessThan(semver('1.0.0-rc.10'))")

"""The small pieces under the validators: Go regexes, defaulting, field paths, name syntaxes."""

from __future__ import annotations

import string
from typing import Any

import pytest

from tenantctl.validate.defaults import NO_DEFAULT, DefaultsTree, apply_defaults
from tenantctl.validate.formats import KUBERNETES_FORMATS
from tenantctl.validate.go_regex import GoRegexError, compile_go_regex, translate_go_regex
from tenantctl.validate.names import label_value_errors, path_segment_errors, qualified_name_errors
from tenantctl.validate.paths import field_path, object_label, parse_field_path


@pytest.mark.parametrize(
    ("go", "python", "matches", "misses"),
    [
        ("^(?i)[a-z0-9_][a-z0-9_\\-]*$", "(?i)^[a-z0-9_][a-z0-9_\\-]*\\Z", "ABC_d", "-a"),
        ("a(?i)b", "a(?i:b)", "aB", "AB"),
        ("(x(?i)y)z", "(x(?i:y))z", "xYz", "xYZ"),
        ("ab(?i)c|d", "ab(?i:c)|(?i:d)", "D", "aC"),
        ("^[[:alpha:]]+\\z", "^[A-Za-z]+\\Z", "abc", "ab1"),
        ("^[]a]+$", "^[]a]+\\Z", "]a", "b"),
        ("^[]]+$", "^[]]+\\Z", "]]", "a"),  # the leading `]` is a member: the next one closes the class
        # a POSIX class inside a class, after other members: its `:]` does not close the outer class
        ("^[x[:digit:]]+$", "^[x0-9]+\\Z", "x12", "x1y"),
        # RE2's `$` is the end of text: a trailing newline does not match (Python's `$` would).
        ("^[a-z]+$", "^[a-z]+\\Z", "abc", "abc\n"),
        # a class's escapes and its leading `]` (also after `^`) never close it early
        ("^[^]a]+$", "^[^]a]+\\Z", "bc", "b]"),
        ("^[\\]x]+$", "^[\\]x]+\\Z", "]x", "y"),
        ("^[a-c[:digit:]x]$", "^[a-c0-9x]\\Z", "5", "d"),
        # under `(?m)` a `$` is a line end, as in RE2
        ("(?m)^a$", "(?m)^a$", "a\nb", "ab"),
        # flags at the very start stay global; elsewhere they are scoped to their group
        ("(?s)a.b", "(?s)a.b", "a\nb", "ab"),
        ("(?is)^a.b", "(?is)^a.b", "A\nB", "ab"),
        ("x|(?i)y", "x|(?i:y)", "Y", "X"),
        ("(a(?i)b|c)d", "(a(?i:b)|(?i:c))d", "aBd", "aBD"),
        ("((?i)a)(b)", "((?i:a))(b)", "Ab", "AB"),
        ("a(?i)b(?s)c", "a(?i:b(?s:c))", "aBC", "ABC"),
        # `\z` is the end of text; other escapes pass through unchanged
        ("^\\d+\\z", "^\\d+\\Z", "12", "12\n"),
        ("^a\\$$", "^a\\$\\Z", "a$", "a"),
        ("", "", "", None),
    ],
)
def test_go_regexes_keep_their_meaning(go: str, python: str, matches: str, misses: str | None) -> None:
    assert translate_go_regex(go) == python
    assert compile_go_regex(go).search(matches)
    if misses is not None:
        assert not compile_go_regex(go).search(misses)


@pytest.mark.parametrize("go", ["\\pL+", "(?U)a+", "[[:^alpha:]]", "[[:nope:]]", "(unclosed", "[abc"])
def test_go_regexes_python_cannot_match_the_same_are_refused(go: str) -> None:
    with pytest.raises(GoRegexError):
        compile_go_regex(go)


def test_defaults_fill_missing_fields_without_touching_the_input() -> None:
    tree = DefaultsTree(
        properties={
            "full": (True, None),
            "ports": (NO_DEFAULT, DefaultsTree(items=DefaultsTree(properties={"number": (80, None)}))),
            "map": (NO_DEFAULT, DefaultsTree(additional=DefaultsTree(properties={"on": (False, None)}))),
            "nested": ({}, DefaultsTree(properties={"deep": ([1], None)})),
        }
    )
    value: dict[str, Any] = {"ports": [{"name": "a"}, {"name": "b", "number": 1}], "map": {"k": {}}, "full": None}
    defaulted = apply_defaults(value, tree)
    assert defaulted == {
        "full": None,  # present (even null) is not missing
        "ports": [{"name": "a", "number": 80}, {"name": "b", "number": 1}],
        "map": {"k": {"on": False}},
        "nested": {"deep": [1]},
    }
    assert value == {"ports": [{"name": "a"}, {"name": "b", "number": 1}], "map": {"k": {}}, "full": None}
    unchanged = {"full": False, "nested": {"deep": []}}
    assert apply_defaults(unchanged, DefaultsTree(properties={"full": (True, None)})) is unchanged


def test_field_paths_read_like_the_apiservers() -> None:
    assert field_path("Widget/w", ["spec", "ports", 0, "name"]) == "Widget/w.spec.ports[0].name"
    assert field_path("Widget/w", ["metadata", "labels", "app.kubernetes.io/name"]) == (
        "Widget/w.metadata.labels[app.kubernetes.io/name]"
    )
    assert parse_field_path(".spec['a.b'][2].c") == ("spec", "a.b", 2, "c")
    assert parse_field_path("spec") is None
    assert object_label({"kind": "Pod", "metadata": {"generateName": "web-"}}, 3) == "Pod/web-*"
    assert object_label({}, 3) == "object[3]"
    assert object_label({"kind": "Pod", "metadata": {"name": 5}}, 3) == "Pod", "a name that is no string is not shown"


@pytest.mark.parametrize(
    ("key", "ok"),
    [
        ("app", True),
        ("app.kubernetes.io/name", True),
        ("a/b/c", False),
        ("/x", False),
        ("x/", False),
        ("-x", False),
        ("Example.com/x", False),
        ("x" * 63, True),
        ("x" * 64, False),
    ],
)
def test_qualified_names(key: str, ok: bool) -> None:
    assert (qualified_name_errors(key) == []) is ok


@pytest.mark.parametrize(("value", "ok"), [("", True), ("a.b-c_d", True), ("-a", False), ("a b", False)])
def test_label_values(value: str, ok: bool) -> None:
    assert (label_value_errors(value) == []) is ok


@pytest.mark.parametrize(
    ("name", "errors"),
    [
        ("reader", []),
        ("system:tenantctl:reader", []),
        ("...", []),
        (".", ["may not be '.'"]),
        ("..", ["may not be '..'"]),
        ("a/b", ["may not contain '/'"]),
        ("100%", ["may not contain '%'"]),
        ("a/%", ["may not contain '/'", "may not contain '%'"]),
    ],
)
def test_path_segment_names_refuse_what_apimachinery_does(name: str, errors: list[str]) -> None:
    """apimachinery's IsValidPathSegmentName: an RBAC object's name ends up in a URL path."""
    assert path_segment_errors(name) == errors


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("int32", 2**31 - 1, -(2**31) - 1),
        ("int64", -(2**63), 2**63),
        ("date-time", "2026-01-02T03:04:05.5+01:00", "2026-01-02"),
        ("byte", "aGk=", "hi!"),
        ("uuid", "0b5e3f2a-9c1d-4e8b-a6f7-3d2c1b0a9e8f", "not-a-uuid"),
        ("ipv4", "10.0.0.1", "::1"),
        ("ipv6", "fd00::1", "10.0.0.1"),
        ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
        ("hostname", "pve1.example.com", "PVE_1"),
    ],
)
def test_formats_kubernetes_enforces(fmt: str, good: object, bad: object) -> None:
    assert KUBERNETES_FORMATS.conforms(good, fmt)
    assert not KUBERNETES_FORMATS.conforms(bad, fmt)
    assert KUBERNETES_FORMATS.conforms(None, fmt)  # other types are the `type` keyword's job


def test_a_kubernetes_cel_function_refuses_a_wrong_argument_in_its_own_name() -> None:
    """`quantity(...).asInteger()` on an IP says `asInteger: no such overload`, as the API server names it:
    each typed function's refusal carries the name the library registers it under."""
    import inspect

    from tenantctl.validate.cel_types import TYPE_FUNCTIONS

    # These compare through compareTo and refuse in its name.
    delegates = {"isGreaterThan": "compareTo", "isLessThan": "compareTo"}
    checked = 0
    for name, function in TYPE_FUNCTIONS.items():
        arity = len(inspect.signature(function).parameters)
        try:
            function(*[{"not": "a typed value"}] * arity)
        except TypeError as exc:
            if "no such overload" in str(exc):
                assert str(exc).startswith(f"{delegates.get(name, name)}: "), (name, str(exc))
                checked += 1
        except Exception:  # functions of plain values refuse in their own way
            continue
    assert checked >= 20, f"only {checked} typed functions checked"


# (POSIX class, its members among ASCII) from Python's own `string` tables: an oracle the translation
# table is not written from.
POSIX_MEMBERS = {
    "alnum": string.ascii_letters + string.digits,
    "alpha": string.ascii_letters,
    "ascii": "".join(map(chr, range(128))),
    "blank": " \t",
    "cntrl": "".join(map(chr, range(32))) + "\x7f",
    "digit": string.digits,
    "graph": "".join(c for c in string.printable if not c.isspace()),
    "lower": string.ascii_lowercase,
    "print": "".join(c for c in string.printable if not c.isspace()) + " ",
    "punct": string.punctuation,
    "space": " \t\n\v\f\r",
    "upper": string.ascii_uppercase,
    "word": string.ascii_letters + string.digits + "_",
    "xdigit": string.hexdigits,
}


@pytest.mark.parametrize("name", sorted(POSIX_MEMBERS))
def test_every_posix_class_matches_exactly_its_ascii_members(name: str) -> None:
    matcher = compile_go_regex(f"^[[:{name}:]]$")
    members = {chr(c) for c in range(128) if matcher.search(chr(c))}
    assert members == set(POSIX_MEMBERS[name])


@pytest.mark.parametrize(
    ("go", "error"),
    [
        ("\\pL+", "RE2 escape '\\\\p' has no Python equivalent"),
        ("\\PL", "RE2 escape '\\\\P' has no Python equivalent"),
        ("\\Qa.b\\E", "RE2 escape '\\\\Q' has no Python equivalent"),
        ("a\\C", "RE2 escape '\\\\C' has no Python equivalent"),
        ("(?U)a+", "RE2 flag U (ungreedy) has no Python equivalent"),
        ("a(?iU)b", "RE2 flag U (ungreedy) has no Python equivalent"),
        ("[[:^alpha:]]", "negated POSIX class [:^alpha:] has no Python equivalent"),
        ("[[:nope:]]", "unknown POSIX class [:nope:]"),
        ("[abc", "unterminated character class in '[abc'"),
        ("[]", "unterminated character class in '[]'"),
        ("[^]", "unterminated character class in '[^]'"),
        ("[a\\]", "unterminated character class in '[a\\\\]'"),
    ],
)
def test_untranslatable_go_regexes_say_why(go: str, error: str) -> None:
    with pytest.raises(GoRegexError) as refused:
        translate_go_regex(go)
    assert str(refused.value) == error


def test_a_pattern_python_refuses_names_itself_and_the_reason() -> None:
    with pytest.raises(GoRegexError) as refused:
        compile_go_regex("(unclosed")
    assert str(refused.value).startswith("'(unclosed' is not a regular expression Python can match: ")
    assert "missing )" in str(refused.value)


def test_a_key_with_two_slashes_is_refused_as_apimachinery_does_in_one_message() -> None:
    assert qualified_name_errors("a/b/c") == [
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
        "an alphanumeric character, with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    ]
    assert qualified_name_errors("example.com/b") == []
    assert qualified_name_errors("/b") == ["prefix part must be non-empty"]
    assert qualified_name_errors("a/") == ["name part must be non-empty"]


def test_short_value_prints_compact_sorted_json_and_falls_back_for_other_values() -> None:
    import datetime

    from tenantctl.validate.paths import short_value

    assert short_value({"b": 1, "a": [True, None]}) == '{"a": [true, null], "b": 1}'
    assert short_value(datetime.date(2026, 12, 1)) == '"2026-12-01"'
    assert short_value({"k": {1, 2} - {1, 2}}) == '{"k": "set()"}'
    assert short_value({1: "x", "a": 1}) == "{1: 'x', 'a': 1}"  # keys JSON cannot sort: repr
    long = short_value("x" * 500)
    assert len(long) < 500 and long.endswith("…")

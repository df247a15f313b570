"""The Kubernetes CEL functions cel-rust lacks, one by one: string format, list helpers, regex, formats."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tenantctl.validate import cel_library as lib

F = lib.KUBERNETES_FUNCTIONS


@pytest.mark.parametrize(
    ("template", "args", "text"),
    [
        ("plain", [], "plain"),
        ("%s and %s", ["a", 1], "a and 1"),
        ("100%%", [], "100%"),
        ("%d", [-7], "-7"),
        ("%f", [1.5], "1.500000"),
        ("%.2f", [2], "2.00"),
        ("%.f", [2.6], "3"),
        ("%.0f", [2.4], "2"),
        ("%e", [1500.0], "1.500000e+03"),
        ("%.1e", [1500], "1.5e+03"),
        ("%b", [5], "101"),
        ("%o", [8], "10"),
        ("%x", [255], "ff"),
        ("%X", [255], "FF"),
        ("%x", ["hi"], "6869"),
        ("%X", ["hi"], "6869"),
        ("%x", [b"\xab"], "ab"),
        ("%X", [b"\xab"], "AB"),
        ("%s|%s|%s", [True, False, None], "true|false|null"),
        ("%s", [2.0], "2"),
        ("%s", [2.5], "2.5"),
        ("%s", [float("inf")], "inf"),
        ("%s", [b"bytes"], "bytes"),
        ("%s", [{"a": [1, True]}], "{a: [1, true]}"),
        ("%s", [("x", None)], "[x, null]"),
        ("%s", [datetime(2026, 12, 1, tzinfo=UTC)], "2026-12-01T00:00:00Z"),
        ("%s", [timedelta(seconds=90)], "90s"),
        ("%s", [timedelta(milliseconds=1500)], "1.5s"),
    ],
)
def test_string_format_prints_as_cel_go_does(template: str, args: list[Any], text: str) -> None:
    assert F["format"](template, args) == text


@pytest.mark.parametrize(
    ("template", "args", "error"),
    [
        ("%", [], "format: unterminated verb at end of string"),
        ("%.2", [1], "format: unterminated verb at end of string"),
        ("%s %s", ["a"], "format: index 1 out of range"),
        ("%d", [True], "format: %d does not take a bool"),
        ("%s %x", ["a", False], "format: %x does not take a bool"),
        ("%d", [1.5], "format: %d does not take a float"),
        ("%d", ["1"], "format: %d does not take a str"),
        ("%f", ["1"], "format: %f does not take a str"),
        ("%b", [1.5], "format: %b does not take a float"),
        ("%o", ["a"], "format: %o does not take a str"),
        ("%X", [1.5], "format: %X does not take a float"),
        ("%q", [1], "format: %q does not take a int"),
    ],
)
def test_string_format_refuses_what_cel_go_refuses(template: str, args: list[Any], error: str) -> None:
    with pytest.raises(ValueError) as refused:
        F["format"](template, args)
    assert str(refused.value) == error


def test_index_of_works_on_strings_and_lists() -> None:
    assert F["indexOf"]("abcabc", "c") == 2 and F["indexOf"]("abcabc", "c", 3) == 5 and F["indexOf"]("ab", "z") == -1
    assert F["indexOf"]("abc", "a") == 0, "the search starts at the first character"
    assert F["indexOf"]([1, 2, 1], 1) == 0 and F["indexOf"]([1, 2, 1], 2) == 1 and F["indexOf"]([1], 3) == -1
    assert F["lastIndexOf"]("abcabc", "a") == 3 and F["lastIndexOf"]("abc", "z") == -1
    assert F["lastIndexOf"]([1, 2, 1], 1) == 2 and F["lastIndexOf"]([2, 1], 2) == 0 and F["lastIndexOf"]([], 1) == -1


def test_is_sorted_compares_neighbours() -> None:
    assert F["isSorted"]([]) and F["isSorted"]([1]) and F["isSorted"]([1, 1, 2]) and F["isSorted"](["a", "b"])
    assert not F["isSorted"]([1, 3, 2]) and not F["isSorted"]([2, 1])


def test_find_and_find_all_use_go_regexes() -> None:
    assert F["find"]("abc123def456", "[0-9]+") == "123" and F["find"]("abc", "[0-9]") == ""
    assert F["find"]("a\n", "a$") == ""  # RE2's $ is the end of text
    assert F["findAll"]("a1b2c3", "[0-9]") == ["1", "2", "3"]
    assert F["findAll"]("a1b2c3", "[0-9]", 2) == ["1", "2"]
    assert F["findAll"]("a1b2c3", "[0-9]", 0) == []
    assert F["findAll"]("a1b2c3", "[0-9]", -1) == ["1", "2", "3"]


# (format, a value it accepts, a value it refuses, the refusal's first words)
FORMATS = [
    ("dns1123Label", "ok-name", "Bad", "a lowercase RFC 1123 label"),
    ("dns1123Subdomain", "a.b-c", "a..b", "a lowercase RFC 1123 subdomain"),
    ("dns1035Label", "a1", "1a", "a DNS-1035 label"),
    ("qualifiedName", "example.com/name", "a/b/c", "a qualified name"),
    ("dns1123LabelPrefix", "abc-", "-abc", "a lowercase RFC 1123 label"),
    ("dns1123SubdomainPrefix", "a.b-", "a..", "a lowercase RFC 1123 subdomain"),
    ("dns1035LabelPrefix", "a-", "1-", "a DNS-1035 label"),
    ("labelValue", "v1.0", "-x", "a valid label"),
    ("uri", "https://a/b", "not a uri", "invalid URI"),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123", "invalid UUID"),
    ("byte", "aGk=", "a", "invalid base64"),
    ("date", "2026-01-02", "2026-1-2", "an RFC 3339 full-date (YYYY-MM-DD) is required"),
    ("datetime", "2026-01-02T03:04:05Z", "2026-01-02", "an RFC 3339 date-time is required"),
]


def test_every_named_format_is_in_the_table() -> None:
    assert sorted(name for name, *_ in FORMATS) == sorted(lib._NAMED_FORMATS)


@pytest.mark.parametrize(("name", "good", "bad", "words"), FORMATS)
def test_each_format_accepts_and_refuses_with_its_words(name: str, good: str, bad: str, words: str) -> None:
    fmt = F[f"format.{name}"]()
    assert not F["validate"](fmt, good).has_value()
    errors = F["validate"](fmt, bad).value()
    assert errors and words in errors[0], errors
    named = F["format.named"](name).value()
    assert named == fmt


def test_a_date_must_be_exactly_ten_characters() -> None:
    assert lib._date_errors("2026-01-02") == []
    assert lib._date_errors("20260102") == ["an RFC 3339 full-date (YYYY-MM-DD) is required"]
    assert lib._date_errors("2026-02-30") == ["an RFC 3339 full-date (YYYY-MM-DD) is required"]


def test_an_unknown_format_is_none_and_validate_refuses_a_non_format() -> None:
    assert not F["format.named"]("nope").has_value()
    for value in ({"@k8s.format": "uuid", "x": 1}, "uuid", {"@k8s.url": "https://a/"}):
        with pytest.raises(TypeError, match=r"^validate: no such overload$"):
            F["validate"](value, "x")


def test_a_prefix_format_judges_a_trailing_dash_as_if_more_followed() -> None:
    label = lib._NAMED_FORMATS["dns1123LabelPrefix"]
    assert label("abc-") == [] and label("abc") == [] and label("Abc-") != [] and label("-") != []


def test_operators_and_provided_functions_are_provided_and_nothing_else() -> None:
    for function in ("_&&_", "@in", "!_", "-_", "_[_]", "size", "quantity", "dns1123Label", "isSorted"):
        assert lib.is_provided(function), function
    for function in ("contains_list", "nope", "format.nope", "Size"):
        assert not lib.is_provided(function), function
    assert "contains" not in F

"""Kubernetes' CEL value types (quantity, IP, CIDR, URL, semver) as functions over tagged maps.

The `cel` package cannot carry opaque Python objects through an expression, so each typed value
travels as a one-key map, ``{"@k8s.quantity": "3/2"}``, whose payload is canonical: two quantities that
Kubernetes considers equal (``1`` and ``1000m``) are equal maps, so CEL's ``==`` keeps its meaning.
The functions follow the Kubernetes CEL libraries (``k8s.io/apiserver/pkg/cel/library``): same names,
same receivers, same refusals. ``string(x)`` and ``type(x)`` on these values are not supported.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["TYPE_FUNCTIONS"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPInterface = ipaddress.IPv4Interface | ipaddress.IPv6Interface

_QUANTITY = "@k8s.quantity"
_IP = "@k8s.ip"
_CIDR = "@k8s.cidr"
_URL = "@k8s.url"
_SEMVER = "@k8s.semver"


def _tag(value: Any) -> str | None:
    if isinstance(value, Mapping) and len(value) == 1:
        (key,) = value
        if isinstance(key, str) and key.startswith("@k8s."):
            return key
    return None


def _payload(value: Any, tag: str, function: str) -> Any:
    if _tag(value) != tag:
        raise TypeError(f"{function}: no such overload for {type(value).__name__}")
    return value[tag]


# --- quantity -------------------------------------------------------------------------------------

_QUANTITY_SYNTAX = re.compile(r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")
_SUFFIXES = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}
_INT64 = (-(2**63), 2**63 - 1)


def parse_quantity(text: str) -> Fraction:
    """The exact value of a Kubernetes quantity (``1.5Gi``, ``250m``, ``1e3``); ValueError when malformed."""
    match = _QUANTITY_SYNTAX.match(text)
    if match is None:
        raise ValueError(f"quantities must match the regular expression '{_QUANTITY_SYNTAX.pattern}'")
    sign, number, suffix = match.group(1), match.group(2), match.group(3) or ""
    value = Fraction(number if not number.endswith(".") else number[:-1])
    # "E" and "Ei" are exa and exbi; only an E or e followed by digits is a decimal exponent.
    scale = _SUFFIXES.get(suffix)
    value *= scale if scale is not None else Fraction(10) ** int(suffix[1:])
    return -value if sign == "-" else value


def _quantity_value(value: Any, function: str) -> Fraction:
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    return Fraction(_payload(value, _QUANTITY, function))


def _make_quantity(value: Fraction) -> dict[str, str]:
    return {_QUANTITY: str(value)}


def quantity(text: str) -> dict[str, str]:
    return _make_quantity(parse_quantity(text))


def is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


def _is_int64(value: Fraction) -> bool:
    return value.denominator == 1 and _INT64[0] <= value.numerator <= _INT64[1]


def quantity_is_integer(value: Any) -> bool:
    return _is_int64(_quantity_value(value, "isInteger"))


def quantity_as_integer(value: Any) -> int:
    exact = _quantity_value(value, "asInteger")
    if not _is_int64(exact):
        raise ValueError("cannot convert value to integer")
    return exact.numerator


def quantity_as_approximate_float(value: Any) -> float:
    return float(_quantity_value(value, "asApproximateFloat"))


def quantity_add(left: Any, right: Any) -> dict[str, str]:
    return _make_quantity(_quantity_value(left, "add") + _quantity_value(right, "add"))


def quantity_sub(left: Any, right: Any) -> dict[str, str]:
    return _make_quantity(_quantity_value(left, "sub") - _quantity_value(right, "sub"))


def quantity_sign(value: Any) -> int:
    exact = _quantity_value(value, "sign")
    return (exact > 0) - (exact < 0)


# --- semver ---------------------------------------------------------------------------------------

_SEMVER_SYNTAX = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


def _normalize_semver(text: str) -> str:
    """What ``semver(s, true)`` accepts: a ``v`` prefix, missing minor/patch, leading zeros."""
    text = text.removeprefix("v")
    core, sep, rest = _split_core(text)
    parts = core.split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        return text
    parts = [str(int(p)) for p in parts] + ["0"] * (3 - len(parts))
    return ".".join(parts) + sep + rest


def _split_core(text: str) -> tuple[str, str, str]:
    for i, char in enumerate(text):
        if char in "-+":
            return text[:i], char, text[i + 1 :]
    return text, "", ""


def _parse_semver(text: str, normalize: bool) -> str:
    candidate = _normalize_semver(text) if normalize else text
    if not _SEMVER_SYNTAX.match(candidate):
        raise ValueError(f"invalid semver: {text}")
    return candidate


def semver(text: str, normalize: bool = False) -> dict[str, str]:
    return {_SEMVER: _parse_semver(text, normalize)}


def is_semver(text: str, normalize: bool = False) -> bool:
    try:
        _parse_semver(text, normalize)
    except ValueError:
        return False
    return True


def _semver_parts(value: Any, function: str) -> tuple[int, int, int, str]:
    match = _SEMVER_SYNTAX.match(_payload(value, _SEMVER, function))
    assert match is not None  # payloads are parsed on construction
    return int(match.group(1)), int(match.group(2)), int(match.group(3)), match.group(4) or ""


def semver_major(value: Any) -> int:
    return _semver_parts(value, "major")[0]


def semver_minor(value: Any) -> int:
    return _semver_parts(value, "minor")[1]


def semver_patch(value: Any) -> int:
    return _semver_parts(value, "patch")[2]


def _prerelease_key(prerelease: str) -> tuple[int, tuple[tuple[int, int, str], ...]]:
    # A release sorts after its pre-releases; numeric identifiers sort before alphanumeric ones.
    if not prerelease:
        return (1, ())
    return (0, tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in prerelease.split(".")))


def _semver_compare(left: Any, right: Any) -> int:
    a, b = _semver_parts(left, "compareTo"), _semver_parts(right, "compareTo")
    key_a, key_b = (a[:3], _prerelease_key(a[3])), (b[:3], _prerelease_key(b[3]))
    return (key_a > key_b) - (key_a < key_b)


# --- ip and cidr ----------------------------------------------------------------------------------


def _parse_ip(text: str) -> IPAddress:
    if "%" in text:
        raise ValueError(f"IP address with zone value is not allowed: {text}")
    address = ipaddress.ip_address(text)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address is not allowed: {text}")
    return address


def _ip_value(value: Any, function: str) -> IPAddress:
    return ipaddress.ip_address(_payload(value, _IP, function))


def ip(value: Any) -> dict[str, str]:
    """``ip('10.0.0.1')`` parses; ``cidr('10.0.0.1/24').ip()`` takes the address of a prefix."""
    if _tag(value) == _CIDR:
        return {_IP: str(ipaddress.ip_interface(value[_CIDR]).ip)}
    return {_IP: str(_parse_ip(value))}


def is_ip(text: str) -> bool:
    try:
        _parse_ip(text)
    except ValueError:
        return False
    return True


def ip_is_canonical(text: str) -> bool:
    return str(_parse_ip(text)) == text


def ip_family(value: Any) -> int:
    return _ip_value(value, "family").version


def ip_is_unspecified(value: Any) -> bool:
    return _ip_value(value, "isUnspecified").is_unspecified


def ip_is_loopback(value: Any) -> bool:
    return _ip_value(value, "isLoopback").is_loopback


def ip_is_link_local_multicast(value: Any) -> bool:
    address = _ip_value(value, "isLinkLocalMulticast")
    if isinstance(address, ipaddress.IPv4Address):
        return address in ipaddress.ip_network("224.0.0.0/24")
    return address.is_multicast and (address.packed[1] & 0x0F) == 0x02


def ip_is_link_local_unicast(value: Any) -> bool:
    address = _ip_value(value, "isLinkLocalUnicast")
    if isinstance(address, ipaddress.IPv4Address):
        return address in ipaddress.ip_network("169.254.0.0/16")
    return address in ipaddress.ip_network("fe80::/10")


def ip_is_global_unicast(value: Any) -> bool:
    """Go's ``netip.Addr.IsGlobalUnicast``: private ranges count as global, unlike Python's ``is_global``."""
    address = _ip_value(value, "isGlobalUnicast")
    if address.is_unspecified or address.is_loopback or address.is_multicast:
        return False
    if isinstance(address, ipaddress.IPv4Address) and address == ipaddress.IPv4Address("255.255.255.255"):
        return False
    return not ip_is_link_local_unicast(value)


def _parse_cidr(text: str) -> IPInterface:
    if "/" not in text:
        raise ValueError(f"network address must have a prefix length: {text}")
    _parse_ip(text.split("/", 1)[0])
    return ipaddress.ip_interface(text)


def _cidr_value(value: Any, function: str) -> IPInterface:
    return ipaddress.ip_interface(_payload(value, _CIDR, function))


def cidr(text: str) -> dict[str, str]:
    return {_CIDR: str(_parse_cidr(text))}


def is_cidr(text: str) -> bool:
    try:
        _parse_cidr(text)
    except ValueError:
        return False
    return True


def cidr_contains_ip(value: Any, address: Any) -> bool:
    network = _cidr_value(value, "containsIP").network
    target = _parse_ip(address) if isinstance(address, str) else _ip_value(address, "containsIP")
    return target in network


def cidr_contains_cidr(value: Any, other: Any) -> bool:
    network = _cidr_value(value, "containsCIDR").network
    target = (_parse_cidr(other) if isinstance(other, str) else _cidr_value(other, "containsCIDR")).network
    return target.version == network.version and target.subnet_of(network)  # type: ignore[arg-type]


def cidr_masked(value: Any) -> dict[str, str]:
    return {_CIDR: str(_cidr_value(value, "masked").network)}


def cidr_prefix_length(value: Any) -> int:
    return _cidr_value(value, "prefixLength").network.prefixlen


# --- url ------------------------------------------------------------------------------------------


_GO_OPTIONAL_PORT = re.compile(r"(:[0-9]*)?")


def _parse_url(text: str) -> str:
    """Go's ``url.ParseRequestURI``: an absolute URL or an absolute path, no fragment, and after the host
    (its last ':', or the ']' closing an IPv6 literal) nothing but a port of digits (``parseHost``)."""
    parts = urlsplit(text)
    if "#" in text or not ((parts.scheme and (parts.netloc or parts.path)) or text.startswith("/")):
        raise ValueError(f"URL is not a valid request URI: {text}")
    tail = _after_host(parts.netloc.rpartition("@")[2])
    if not _GO_OPTIONAL_PORT.fullmatch(tail):
        raise ValueError(f"invalid port {tail!r} after host")
    return text


def _after_host(host: str) -> str:
    """What follows the host in `host[:port]`: after an IPv6 literal's ']', else from the last ':' (Go's
    ``splitHostPort``); '' when nothing does."""
    if host.startswith("["):
        return host[host.find("]") + 1 :]
    return host[host.rfind(":") :] if ":" in host else ""


def url(text: str) -> dict[str, str]:
    return {_URL: _parse_url(text)}


def is_url(text: str) -> bool:
    try:
        _parse_url(text)
    except ValueError:
        return False
    return True


def _url_parts(value: Any, function: str) -> Any:
    return urlsplit(_payload(value, _URL, function))


def url_scheme(value: Any) -> str:
    return str(_url_parts(value, "getScheme").scheme)


def _host(value: Any, function: str) -> str:
    """host[:port] of a URL value; a refusal names the CEL function that was called."""
    return str(_url_parts(value, function).netloc.rpartition("@")[2])


def url_host(value: Any) -> str:
    return _host(value, "getHost")


def url_hostname(value: Any) -> str:
    host = _host(value, "getHostname")
    if host.startswith("["):
        return host[1 : host.index("]")]
    return host.rpartition(":")[0] if ":" in host else host


def url_port(value: Any) -> str:
    return _after_host(_host(value, "getPort")).removeprefix(":")


def url_escaped_path(value: Any) -> str:
    return str(_url_parts(value, "getEscapedPath").path)


def url_query(value: Any) -> dict[str, list[str]]:
    return parse_qs(_url_parts(value, "getQuery").query, keep_blank_values=True)


# --- shared method names --------------------------------------------------------------------------


def compare_to(left: Any, right: Any) -> int:
    """``compareTo`` exists for quantities and for semvers; the receiver decides which."""
    if _tag(left) == _SEMVER:
        return _semver_compare(left, right)
    a, b = _quantity_value(left, "compareTo"), _quantity_value(right, "compareTo")
    return (a > b) - (a < b)


def is_greater_than(left: Any, right: Any) -> bool:
    return compare_to(left, right) > 0


def is_less_than(left: Any, right: Any) -> bool:
    return compare_to(left, right) < 0


TYPE_FUNCTIONS: dict[str, Callable[..., Any]] = {
    # quantity
    "quantity": quantity,
    "isQuantity": is_quantity,
    "isInteger": quantity_is_integer,
    "asInteger": quantity_as_integer,
    "asApproximateFloat": quantity_as_approximate_float,
    "add": quantity_add,
    "sub": quantity_sub,
    "sign": quantity_sign,
    # semver
    "semver": semver,
    "isSemver": is_semver,
    "major": semver_major,
    "minor": semver_minor,
    "patch": semver_patch,
    # quantity and semver
    "compareTo": compare_to,
    "isGreaterThan": is_greater_than,
    "isLessThan": is_less_than,
    # ip
    "ip": ip,
    "isIP": is_ip,
    "ip.isCanonical": ip_is_canonical,
    "family": ip_family,
    "isUnspecified": ip_is_unspecified,
    "isLoopback": ip_is_loopback,
    "isLinkLocalMulticast": ip_is_link_local_multicast,
    "isLinkLocalUnicast": ip_is_link_local_unicast,
    "isGlobalUnicast": ip_is_global_unicast,
    # cidr
    "cidr": cidr,
    "isCIDR": is_cidr,
    "containsIP": cidr_contains_ip,
    "containsCIDR": cidr_contains_cidr,
    "masked": cidr_masked,
    "prefixLength": cidr_prefix_length,
    # url
    "url": url,
    "isURL": is_url,
    "getScheme": url_scheme,
    "getHost": url_host,
    "getHostname": url_hostname,
    "getPort": url_port,
    "getEscapedPath": url_escaped_path,
    "getQuery": url_query,
}
"""CEL function name → implementation, for `cel.Context(functions=...)`."""

"""The shape of a Proxmox URL as capmox, the CCM and the CSI controller want it: `https://host[:port]`.

One rule set for the `secret` commands (refusals) and the doctor (rows): capmox appends `/api2/json`
itself, so a URL carrying it sends every call to `/api2/json/api2/json/…`, answered 501.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from tenantctl.redaction import redact

__all__ = ["API_SUFFIX", "UrlFault", "UrlProblem", "url_problems"]

API_SUFFIX = "/api2/json"


class UrlFault(StrEnum):
    NOT_A_URL = "NotAURL"
    PLAIN_HTTP = "PlainHTTP"
    """The one fault a spec with `insecure: true` may accept (the doctor warns instead of failing)."""
    API_SUFFIX = "APISuffix"
    PATH = "Path"
    USERINFO = "UserInfo"


@dataclass(frozen=True)
class UrlProblem:
    fault: UrlFault
    seen: str
    fix: str


def url_problems(url: str) -> list[UrlProblem]:
    """What is wrong with `url` as a Proxmox base URL; empty when it is `https://host[:port]`."""
    parts = urlsplit(url)
    shown = redact(url)
    try:
        parts.port  # noqa: B018  (raises on a port that is not a number)
    except ValueError:
        return [UrlProblem(UrlFault.NOT_A_URL, f"{shown!r} has a port that is not a number",
                           "give https://host:8006")]
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return [UrlProblem(UrlFault.NOT_A_URL, f"{shown!r} is not an https URL of a Proxmox VE host",
                           "give https://host:8006, e.g. https://pve.example:8006")]
    host = f"{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    base = f"https://{host}"
    found: list[UrlProblem] = []
    if "@" in parts.netloc:
        found.append(UrlProblem(UrlFault.USERINFO, f"{shown!r} carries a user name or password",
                                f"give only the host, {base}: the API token goes in the Secret's own keys, and a "
                                "credential in the URL is shown wherever the URL is"))
    if parts.scheme == "http":
        found.append(UrlProblem(UrlFault.PLAIN_HTTP, f"{shown!r} is plain http",
                                f"use {base} (Proxmox serves only HTTPS on 8006); the token would cross the "
                                "network unencrypted"))
    path = parts.path.rstrip("/")
    if path.endswith(API_SUFFIX):
        found.append(UrlProblem(UrlFault.API_SUFFIX, f"{shown!r} ends in {API_SUFFIX}",
                                f"drop {API_SUFFIX}: capmox appends it itself, so every call would go to "
                                f"{API_SUFFIX}{API_SUFFIX}/… and fail with 501; use {parts.scheme}://{host}"))
    elif path or parts.query or parts.fragment:
        found.append(UrlProblem(UrlFault.PATH, f"{shown!r} has a path, query or fragment",
                                f"give only scheme, host and port, e.g. {base}"))
    return found

"""The capmox credentials Secret capi-operator reads (`configSecret`), built from checked inputs.

The token secret comes from an environment variable, never from argv (which `ps` and shell history
show); no message here ever repeats it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from tenantctl.problems import Problems
from tenantctl.providers.render import MANAGED_LABELS

__all__ = ["check_proxmox_url", "check_token_id", "proxmox_secret", "read_token_secret"]

# Proxmox API token ids are USER@REALM!TOKENNAME.
_TOKEN_ID = re.compile(r"^[^@!\s]+@[A-Za-z][A-Za-z0-9._-]*![A-Za-z][A-Za-z0-9._-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_proxmox_url(url: str, problems: Problems) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        problems.error("--url", f"{url!r} is not an http(s) URL of a Proxmox VE host (e.g. https://pve.example:8006)")
        return
    if parts.path.rstrip("/").endswith("/api2/json"):
        base = url[: url.rstrip("/").rfind("/api2/json")]
        problems.error(
            "--url",
            f"{url!r} ends in /api2/json; capmox appends /api2/json itself, so every call would go to "
            f"/api2/json/api2/json/… and fail with 501. Use {base!r}",
        )


def check_token_id(token_id: str, problems: Problems) -> None:
    if not _TOKEN_ID.match(token_id):
        problems.error("--token-id", f"{token_id!r} is not a Proxmox API token id; expected USER@REALM!TOKENNAME "
                       "(e.g. capmox@pve!capi)")


def read_token_secret(variable: str, environ: Mapping[str, str], problems: Problems) -> str:
    """The token secret from `environ[variable]`; refusals name the variable, never the value."""
    if not _ENV_NAME.match(variable):
        problems.error("--token-secret-env", "not an environment variable name (value not shown: it may be the "
                       "secret itself); pass the NAME of a variable that holds the token secret")
        return ""
    value = environ.get(variable)
    if not value:
        problems.error("--token-secret-env", f"environment variable {variable} is unset or empty")
        return ""
    if value != value.strip() or any(c.isspace() for c in value):
        problems.error("--token-secret-env", f"environment variable {variable} contains whitespace (value not "
                       "shown); a Proxmox token secret has none")
        return ""
    return value


def proxmox_secret(name: str, namespace: str, url: str, token_id: str, token_secret: str) -> dict[str, Any]:
    """capmox reads PROXMOX_URL, PROXMOX_TOKEN (the id) and PROXMOX_SECRET from this Secret."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(MANAGED_LABELS)},
        "type": "Opaque",
        "stringData": {"PROXMOX_URL": url, "PROXMOX_TOKEN": token_id, "PROXMOX_SECRET": token_secret},
    }

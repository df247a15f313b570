"""Checks of what a `secret` command is given: URL, token id, the token secret's variable, a root CA.

The token secret comes from an environment variable, never from argv (which `ps` and shell history
show); no message here ever repeats it.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Mapping
from pathlib import Path

from tenantctl.credentials.url import url_problems
from tenantctl.problems import Problems

__all__ = ["check_proxmox_url", "check_root_ca", "check_token_id", "pem_problem", "read_token_secret"]

# Proxmox API token ids are USER@REALM!TOKENNAME.
_TOKEN_ID = re.compile(r"^[^@!\s]+@[A-Za-z][A-Za-z0-9._-]*![A-Za-z][A-Za-z0-9._-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_proxmox_url(url: str, problems: Problems) -> None:
    """Every fault of `--url`: a Secret written by the CLI is always for a verifying capmox, so plain HTTP too."""
    for found in url_problems(url):
        problems.error("--url", f"{found.seen}; {found.fix}")


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


def pem_problem(pem: str) -> str | None:
    """Why capmox could not add `pem` to its roots (Go's AppendCertsFromPEM), or None when it can."""
    if "-----BEGIN CERTIFICATE-----" not in pem:
        return "holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
    try:
        ssl.create_default_context().load_verify_locations(cadata=pem)
    except (ssl.SSLError, ValueError) as exc:
        return f"is not a decodable PEM certificate ({exc.__class__.__name__})"
    return None


def check_root_ca(path: Path, problems: Problems) -> str:
    """The PEM text of `path`, refused unless it decodes as at least one certificate."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.error("--root-ca", f"cannot read {str(path)!r}: {exc.__class__.__name__}")
        return ""
    why = pem_problem(text)
    if why is not None:
        problems.error("--root-ca", f"{str(path)!r} {why}")
        return ""
    return text

"""Every syntax a spec string must have, as data, and the one way to test it: a full match.

The syntaxes the CRD generator shares live in `syntax`; this module re-exports them beside the ones
only tenantctl's own checks read.

`re.match(r"^x$", "x\\n")` succeeds (`$` matches before a final newline), which once let names and
versions carry a newline into rendered objects. Patterns stay `^…$` strings so the CRD generator and
pydantic (`Field(pattern=...)`, where `$` is end-of-text as in Go's RE2) read the same text; Python
code tests them only through `full_match`.
"""

from __future__ import annotations

import re
from functools import cache

from tenantctl.spec.syntax import (
    DNS_LABEL,
    DNS_SUBDOMAIN,
    KUBE_VERSION,
    PERCENT_OR_INT,
    PVE_TAG,
    SCHEMATIC_ID,
    TALOS_VERSION,
)

__all__ = [
    "BASE64",
    "BOOTSTRAP_TOKEN_ID",
    "BOOTSTRAP_TOKEN_SECRET",
    "DNS_LABEL",
    "DNS_SUBDOMAIN",
    "FLUX_INTERVAL",
    "INT32_MAX",
    "INT64_MAX",
    "KUBE_VERSION",
    "LITERAL_IP_CHARS",
    "PERCENT_OR_INT",
    "PVE_TAG",
    "SCHEMATIC_ID",
    "SEMVER_TAG",
    "TALOS_MACHINE_TOKEN",
    "TALOS_VERSION",
    "URL",
    "full_match",
]

SEMVER_TAG = r"^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$"
"""capi-operator's preflight parses a provider's spec.version as semver and refuses it otherwise."""
LITERAL_IP_CHARS = r"^[0-9A-Fa-f:.]+$"
# Flux source-controller's own `interval` pattern (HelmRepository, OCIRepository).
FLUX_INTERVAL = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"
# A URL as the chart sources take it: a scheme Flux reads and no whitespace anywhere.
URL = r"^(https?|oci)://[^\s/]+(/[^\s]*)?$"
# The Talos secrets the operator generates once (see operator.observe): kubeadm-style tokens, base64.
TALOS_MACHINE_TOKEN = r"^[a-z0-9]{6}\.[a-z0-9]{16}$"
BOOTSTRAP_TOKEN_ID = r"^[a-z0-9]{6}$"
BOOTSTRAP_TOKEN_SECRET = r"^[a-z0-9]{16}$"
BASE64 = r"^[A-Za-z0-9+/]+={0,2}$"
# Kubernetes integer fields: replicas are int32, everything else int64.
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def full_match(pattern: str, value: str) -> bool:
    """True when all of `value` matches `pattern` (a trailing newline included)."""
    return _compiled(pattern).fullmatch(value) is not None

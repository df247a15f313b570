"""The per-tenant Secret capmox reads, and what its keys mean for TLS — the writer and the checker.

capmox v0.7.7 (`pkg/scope/cluster.go`) skips TLS verification when the `insecure` key is absent (its
pre-v0.7 behaviour) and when it holds a YAML true-ish word; any other present value verifies, against
the system roots plus `root_ca`. So tenantctl always writes `insecure`, and the operator and the
doctor hold a Secret to the spec's `insecure` with the same findings.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from tenantctl import MANAGED_BY
from tenantctl.credentials.findings import CredentialsFinding, Finding
from tenantctl.credentials.inputs import pem_problem
from tenantctl.credentials.keys import CapmoxKey

__all__ = [
    "CredentialsFinding",
    "Finding",
    "capmox_secret",
    "capmox_skips_verification",
    "check_capmox_secret",
    "secret_data",
]

# capmox compares the lower-cased value against exactly these.
_TRUE_ISH = frozenset({"1", "on", "true", "yes", "y"})
_REQUIRED = (CapmoxKey.URL, CapmoxKey.TOKEN, CapmoxKey.SECRET)
_MISSING = {
    CapmoxKey.URL: CredentialsFinding.MISSING_URL,
    CapmoxKey.TOKEN: CredentialsFinding.MISSING_TOKEN,
    CapmoxKey.SECRET: CredentialsFinding.MISSING_SECRET,
}


def capmox_skips_verification(data: Mapping[str, str]) -> bool:
    """Whether capmox v0.7.7 would connect without verifying the Proxmox certificate."""
    value = data.get(CapmoxKey.INSECURE)
    return value is None or value.lower() in _TRUE_ISH


def check_capmox_secret(data: Mapping[str, str], spec_insecure: bool) -> list[Finding]:
    """Every problem of a capmox Secret's `data` (decoded) against the spec's `insecure`."""
    found = [
        Finding(key, _MISSING[key], f"key {key} is missing or empty; capmox cannot reach Proxmox without it")
        for key in _REQUIRED
        if not data.get(key)
    ]
    if CapmoxKey.INSECURE not in data:
        if not spec_insecure:
            found.append(Finding(
                CapmoxKey.INSECURE, CredentialsFinding.MISSING_INSECURE,
                "key insecure is missing, so capmox v0.7.7 skips TLS verification while the spec says "
                "insecure: false; add insecure: \"false\" (`tenantctl secret proxmox-cluster` writes it)",
            ))
    elif capmox_skips_verification(data) != spec_insecure:
        says = "skip" if capmox_skips_verification(data) else "require"
        found.append(Finding(
            CapmoxKey.INSECURE, CredentialsFinding.INSECURE_CONTRADICTS_SPEC,
            f"key insecure makes capmox {says} TLS verification while the spec says insecure: "
            f"{str(spec_insecure).lower()}; write insecure: \"{str(spec_insecure).lower()}\"",
        ))
    root_ca = data.get(CapmoxKey.ROOT_CA)
    if root_ca:
        why = pem_problem(root_ca)
        if why is not None:
            found.append(Finding(CapmoxKey.ROOT_CA, CredentialsFinding.UNREADABLE_ROOT_CA,
                                 f"key root_ca {why}; capmox fails with 'certificate was not appended'"))
    return found


def secret_data(secret: Mapping[str, Any]) -> dict[str, str]:
    """A Secret's values as text (`data` decoded, `stringData` on top), as capmox sees them."""
    out: dict[str, str] = {}
    for key, value in (secret.get("data") or {}).items():
        try:
            out[key] = base64.b64decode(str(value), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            out[key] = ""
    out.update({k: str(v) for k, v in (secret.get("stringData") or {}).items()})
    return out


def capmox_secret(
    name: str,
    namespace: str,
    *,
    url: str,
    token_id: str,
    token_secret: str,
    insecure: bool,
    root_ca: str | None = None,
) -> dict[str, Any]:
    """The Secret `ProxmoxCluster.spec.credentialsRef` names; `insecure` is always written."""
    data = {
        CapmoxKey.URL.value: url,
        CapmoxKey.TOKEN.value: token_id,
        CapmoxKey.SECRET.value: token_secret,
        CapmoxKey.INSECURE.value: "true" if insecure else "false",
    }
    if root_ca:
        data[CapmoxKey.ROOT_CA.value] = root_ca
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/managed-by": MANAGED_BY}},
        "type": "Opaque",
        "stringData": data,
    }

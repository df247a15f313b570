"""The capmox Secret a tenant names, as a manifest: the keys capmox v0.7.7 reads and its TLS choice.

Offline and optional (`--credentials-secret`): the same findings the operator reports as
`CredentialsReady`, plus the Secret's URL against the rules and against the URL the doctor checked.
"""

from __future__ import annotations

from collections.abc import Mapping

from tenantctl.credentials.capmox import check_capmox_secret
from tenantctl.credentials.keys import CapmoxKey
from tenantctl.credentials.url import url_problems
from tenantctl.proxmox.checks._context import FAIL, PASS, WARN
from tenantctl.proxmox.client import Target
from tenantctl.proxmox.report import Row
from tenantctl.spec import TenantCluster

__all__ = ["check_credentials_secret"]

_ADVICE = "print a complete Secret with `tenantctl secret proxmox-cluster` and apply it"


def check_credentials_secret(
    tenant: TenantCluster, subject: str, data: Mapping[str, str], target: Target
) -> list[Row]:
    """Rows for the Secret's `data` (decoded); the token secret never appears in a row."""
    insecure = bool(tenant.spec.proxmox and tenant.spec.proxmox.insecure)
    rows = [Row("credentials", subject, FAIL, f.message, _ADVICE) for f in check_capmox_secret(data, insecure)]
    url = data.get(CapmoxKey.URL)
    if url:
        rows += [Row("credentials", subject, FAIL, f"key url: {p.seen}", p.fix) for p in url_problems(url)]
        if url.rstrip("/") != target.url.rstrip("/"):
            rows.append(Row("credentials", subject, WARN, "key url names another URL than --url",
                            "the doctor checked --url; give the URL the Secret holds"))
    token = data.get(CapmoxKey.TOKEN)
    if token and token != target.token_id:
        rows.append(Row("credentials", subject, WARN, "key token names another token id than --token-id",
                        "the privileges were checked for --token-id; give the token id the Secret holds"))
    verify = "skips" if insecure else "verifies"
    return rows or [Row("credentials", subject, PASS, f"url, token, secret and insecure set; capmox {verify} TLS")]

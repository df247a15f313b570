"""The connection itself: URL shape, TLS, the token, the PVE version."""

from __future__ import annotations

from urllib.parse import urlsplit

from tenantctl.proxmox.checks._context import FAIL, PASS, WARN, Context
from tenantctl.proxmox.client import API_SUFFIX
from tenantctl.proxmox.report import Row
from tenantctl.render.images import CATALOGUE

# ------------------------------------------------------------------ offline: URL and TLS


def check_url(ctx: Context) -> list[Row]:
    url = ctx.target.url
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    rows: list[Row] = []
    if path.endswith(API_SUFFIX):
        rows.append(Row("url", url, FAIL, f"the URL ends in {API_SUFFIX}",
                        f"drop {API_SUFFIX}: capmox appends it itself, so every call goes to "
                        f"{API_SUFFIX}{API_SUFFIX}/… and answers 501; use {parts.scheme}://{parts.netloc}"))
    elif path:
        rows.append(Row("url", url, FAIL, f"the URL has a path ({parts.path!r})",
                        f"give only scheme, host and port, e.g. https://{parts.netloc}"))
    if parts.scheme == "http" and not ctx.target.insecure:
        rows.append(Row("url", url, FAIL, "plain http while spec.proxmox.insecure is false",
                        f"use https://{parts.netloc} (Proxmox serves only HTTPS on 8006); "
                        "set insecure: true only for a stand with a self-signed certificate"))
    elif parts.scheme == "http":
        rows.append(Row("url", url, WARN, "plain http (spec.proxmox.insecure is true)",
                        "the token crosses the network unencrypted; prefer https"))
    elif parts.scheme != "https":
        rows.append(Row("url", url, FAIL, f"scheme {parts.scheme or '(none)'!r}", "use https://host:8006"))
    return rows or [Row("url", url, PASS, "https, no path: capmox can append /api2/json itself")]


def check_tls(ctx: Context) -> list[Row]:
    if ctx.target.insecure:
        return [Row("tls", ctx.target.url, WARN, "certificate not verified (spec.proxmox.insecure: true)",
                    "install a certificate your CA signs and set insecure: false")]
    source = f"CA file {ctx.target.ca_file}" if ctx.target.ca_file else "the system CA bundle"
    return [Row("tls", ctx.target.url, PASS, f"certificate verified against {source}")]


# ------------------------------------------------------------------ token and version


def check_auth(ctx: Context) -> list[Row]:
    err = ctx.inv.errors.get("version")
    if err is None:
        return [Row("auth", ctx.target.token_id, PASS, "the token authenticates (GET /version answered)")]
    if err.status == 401:
        advice = ("check the token id (user@realm!name), PROXMOX_TOKEN_SECRET and that the token is neither "
                  "expired nor deleted")
    elif err.status is None and "TLS" in err.message:
        advice = "pass --ca-file with the CA that signed the certificate, or set spec.proxmox.insecure: true"
    else:
        advice = "check that the URL reaches the Proxmox API (host, port 8006, firewall)"
    return [Row("auth", ctx.target.token_id, FAIL, err.message, advice)]


def check_version(ctx: Context) -> list[Row]:
    version = str((ctx.inv.version or {}).get("version", "?"))
    major = ctx.inv.pve_major
    if major >= 9:
        return [Row("version", f"PVE {version}", WARN, "PVE 9 replaced HA groups with HA rules",
                    f"the CCM image {CATALOGUE['proxmox-ccm'].tag} logs 'error get ha-groups 500' every five "
                    "minutes; node initialisation is unaffected")]
    if major < 8:
        return [Row("version", f"PVE {version}", WARN, "older than PVE 8",
                    "untested: SDN.Use and the privilege names in the tables assume PVE 8 or later")]
    return [Row("version", f"PVE {version}", PASS, "supported")]

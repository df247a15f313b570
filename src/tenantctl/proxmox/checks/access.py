"""The connection itself: URL shape, TLS, the token, the PVE version."""

from __future__ import annotations

from tenantctl.credentials.url import UrlFault, url_problems
from tenantctl.proxmox.checks._context import FAIL, PASS, WARN, Context
from tenantctl.proxmox.report import Row
from tenantctl.render.images import CATALOGUE

# ------------------------------------------------------------------ URL (offline) and TLS (the connection)


def check_url(ctx: Context) -> list[Row]:
    """The credentials room's URL rules; plain http is only a warning when the spec accepts insecure."""
    url = ctx.target.url
    rows: list[Row] = []
    for found in url_problems(url):
        if found.fault is UrlFault.PLAIN_HTTP and ctx.target.insecure:
            rows.append(Row("url", url, WARN, f"{found.seen} (spec.proxmox.insecure is true)", found.fix))
        elif found.fault is UrlFault.PLAIN_HTTP:
            rows.append(Row("url", url, FAIL, f"{found.seen} while spec.proxmox.insecure is false",
                            f"{found.fix}; set insecure: true only for a stand with a self-signed certificate"))
        else:
            rows.append(Row("url", url, FAIL, found.seen, found.fix))
    return rows or [Row("url", url, PASS, "https, no path: capmox can append /api2/json itself")]


def check_tls(ctx: Context) -> list[Row]:
    """Judged from the real connection GET /version made: a handshake only counts when one happened."""
    url = ctx.target.url
    err = ctx.inv.errors.get("version")
    if err is not None and err.status is None:
        if "TLS" in err.message:
            return [Row("tls", url, FAIL, err.message,
                        "pass --ca-file with the CA that signed the certificate, or set spec.proxmox.insecure: true")]
        return [Row("tls", url, FAIL, f"no TLS connection: {err.message}",
                    "check the host and port (8006) and that nothing between here and Proxmox drops the connection")]
    if ctx.target.insecure:
        return [Row("tls", url, WARN, "connected; certificate not verified (spec.proxmox.insecure: true)",
                    "install a certificate your CA signs and set insecure: false")]
    source = f"CA file {ctx.target.ca_file}" if ctx.target.ca_file else "the system CA bundle"
    return [Row("tls", url, PASS, f"connected; certificate verified against {source}")]


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

"""One doctor run: read the stand once, run the check table, return the report (no printing here)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tenantctl.problems import InvalidInput, Problem
from tenantctl.proxmox.checks import Context, run_checks
from tenantctl.proxmox.checks.credentials import check_credentials_secret
from tenantctl.proxmox.client import Api, Target, connect
from tenantctl.proxmox.inventory import collect
from tenantctl.proxmox.privileges import Controller
from tenantctl.proxmox.report import Report
from tenantctl.spec import TenantCluster, TenantInput

__all__ = ["doctor", "pick_cluster"]


def pick_cluster(tenant: TenantInput, name: str | None) -> TenantCluster:
    """The proxmox TenantCluster to check: the one named, or the only one in the input."""
    candidates = [c for c in tenant.clusters if name is None or c.metadata.name == name]
    proxmox = [c for c in candidates if c.spec.substrate == "proxmox"]
    if len(proxmox) == 1:
        return proxmox[0]
    names = ", ".join(f"{c.metadata.namespace}/{c.metadata.name} ({c.spec.substrate})" for c in tenant.clusters)
    why = "none on substrate proxmox" if not proxmox else "several on substrate proxmox; pass --cluster NAME"
    raise InvalidInput([Problem("--cluster" if name else "input", f"{why} (clusters: {names or 'none'})")])


def doctor(
    tenant: TenantInput,
    target: Target,
    cluster: str | None = None,
    controllers: Sequence[Controller] = tuple(Controller),
    api: Api | None = None,
    credentials: tuple[str, Mapping[str, str]] | None = None,
) -> Report:
    """Check `target` for the chosen cluster, and `credentials` (subject, decoded data) when given.

    `api` replaces the proxmoxer client only in tests of wiring.
    """
    tc = pick_cluster(tenant, cluster)
    pools = tenant.pools_of(tc)
    client = api or connect(target)
    try:
        inv = collect(client, tc, pools)
    finally:
        client.close()
    report = Report()
    report.extend(run_checks(Context(tc, pools, target, inv, tuple(controllers))))
    if credentials is not None:
        report.extend(check_credentials_secret(tc, *credentials, target))
    return report

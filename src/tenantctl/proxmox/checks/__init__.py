"""The doctor's checks: a table of functions, each turning the spec and the stand into PASS/WARN/FAIL rows.

Every row says what was seen and what to do; the causes that kept an earlier attempt from ever booting
a VM (URL suffix, template selection, guest agent) and capmox v0.7.7's clone rules come first. The
checks live in small modules by subject; this table fixes their order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tenantctl.proxmox.checks._context import Context, resolve_template
from tenantctl.proxmox.checks.access import check_auth, check_tls, check_url, check_version
from tenantctl.proxmox.checks.capacity import check_cores, check_memory
from tenantctl.proxmox.checks.cloning import (
    check_clone_storage,
    check_csi_storage,
    check_nodes,
    check_placement,
    check_templates,
)
from tenantctl.proxmox.checks.network import check_bridges, check_ipam, check_pool
from tenantctl.proxmox.checks.talos import check_cpu_type, check_talos
from tenantctl.proxmox.checks.token_privileges import check_privileges, holds, stand_facts
from tenantctl.proxmox.report import Row

__all__ = ["CHECKS", "Check", "CheckSpec", "Context", "holds", "resolve_template", "run_checks", "stand_facts"]

Check = Callable[[Context], list[Row]]


@dataclass(frozen=True)
class CheckSpec:
    """A check's row name and function; `needs_api` checks are left out when the token does not authenticate."""

    name: str
    run: Check
    needs_api: bool


CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec("url", check_url, False),
    CheckSpec("tls", check_tls, False),
    CheckSpec("auth", check_auth, False),
    CheckSpec("version", check_version, True),
    CheckSpec("nodes", check_nodes, True),
    CheckSpec("template", check_templates, True),
    CheckSpec("placement", check_placement, True),
    CheckSpec("clone", check_clone_storage, True),
    CheckSpec("cpu-type", check_cpu_type, True),
    CheckSpec("memory", check_memory, True),
    CheckSpec("cores", check_cores, True),
    CheckSpec("csi-storage", check_csi_storage, True),
    CheckSpec("pool", check_pool, True),
    CheckSpec("bridge", check_bridges, True),
    CheckSpec("ipam", check_ipam, True),
    CheckSpec("privileges", check_privileges, True),
    CheckSpec("talos", check_talos, False),
)


def run_checks(ctx: Context, checks: Iterable[CheckSpec] = CHECKS) -> list[Row]:
    """Every check in table order; the API checks only when the token authenticated."""
    return [row for c in checks if ctx.inv.authenticated or not c.needs_api for row in c.run(ctx)]

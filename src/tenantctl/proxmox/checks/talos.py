"""Talos on capmox: the guest agent capmox would wait for and Talos does not ship, and the CPU type
every clone inherits from its template (capmox v0.7.7 cannot set one)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tenantctl.proxmox.checks._context import FAIL, PASS, WARN, Context, pool_templates, resolve_template
from tenantctl.proxmox.inventory import agent_enabled
from tenantctl.proxmox.report import Row
from tenantctl.spec.tenant import DEFAULT_SCHEMATIC_ID


def check_talos(ctx: Context) -> list[Row]:
    rows = [Row("talos", "ProxmoxMachineTemplate.spec.checks", PASS,
                "tenantctl renders skipQemuGuestAgent and skipCloudInitStatus: true",
                "keep them if you edit the render: capmox otherwise waits for a qemu-guest-agent Talos "
                "does not ship (\"error waiting for agent: timed out\")")]
    vanilla = ctx.tenant.spec.talos.schematic_id == DEFAULT_SCHEMATIC_ID
    for name, spec in ctx.proxmox_pools:
        vm = resolve_template(spec, ctx.inv, ctx.tenant.spec.talos.version)
        if vm is None or not agent_enabled(ctx.inv.configs.get(int(vm["vmid"]), {})):
            continue
        if vanilla:
            rows.append(Row("talos", f"NodePool/{name}", WARN,
                            f"template {vm.get('vmid')} sets agent: 1 but spec.talos.schematicID is the vanilla "
                            "schematic (no qemu-guest-agent extension)",
                            "add siderolabs/qemu-guest-agent to the Image Factory schematic, or set agent: 0 on "
                            "the template (shutdowns otherwise wait for an agent that never answers)"))
        else:
            rows.append(Row("talos", f"NodePool/{name}", PASS,
                            f"template {vm.get('vmid')} sets agent: 1 with a custom schematic",
                            "make sure the schematic includes siderolabs/qemu-guest-agent"))
    return rows


# QEMU CPU models below x86-64-v2 (no SSE4.2/POPCNT), which Talos' kernel requires: a VM on one of
# them stops at boot. Proxmox uses kvm64 when a VM's config names no `cpu`.
PRE_V2_CPU_TYPES = frozenset({
    "486", "athlon", "core2duo", "coreduo", "kvm32", "kvm64", "pentium", "pentium2", "pentium3", "phenom",
    "qemu32", "qemu64", "Conroe", "Penryn", "Opteron_G1", "Opteron_G2", "Opteron_G3",
})
PROXMOX_DEFAULT_CPU = "kvm64"


def cpu_type(config: Mapping[str, Any]) -> str:
    """The VM's CPU model from `cpu: [cputype=]<model>[,flags=...]`, Proxmox's default when unset."""
    raw = str(config.get("cpu") or "").split(",")[0]
    return raw.partition("=")[2] if raw.startswith("cputype=") else raw or PROXMOX_DEFAULT_CPU


def check_cpu_type(ctx: Context) -> list[Row]:
    rows: list[Row] = []
    for pool, node, vm in pool_templates(ctx):
        config = ctx.inv.configs.get(int(vm["vmid"]), {})
        model = cpu_type(config)
        subject = f"NodePool/{pool.metadata.name}" + (f" on {node}" if node else "")
        named = "cpu" in config
        seen = f"template {vm.get('vmid')} has CPU type {model}" + ("" if named else " (no cpu set: Proxmox's default)")
        if model in PRE_V2_CPU_TYPES:
            rows.append(Row("cpu-type", subject, FAIL, seen + ", below x86-64-v2",
                            f"Talos needs x86-64-v2 and every clone inherits the template's CPU: "
                            f"`qm set {vm.get('vmid')} --cpu x86-64-v2-AES` (or host), then roll the pool"))
        else:
            rows.append(Row("cpu-type", subject, PASS, seen))
    return rows

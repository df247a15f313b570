"""Talos on capmox: the guest agent capmox would wait for and Talos does not ship."""

from __future__ import annotations

from tenantctl.proxmox.checks._context import PASS, WARN, Context, resolve_template
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

"""One read of everything the checks need, fetched once; a failed read is kept, not raised.

Checks are pure functions of this snapshot and the spec, so each can be tested on its own and a
forbidden endpoint becomes a row that names it instead of ending the run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tenantctl.proxmox.client import Api, ApiError
from tenantctl.spec import NodePool, TenantCluster

__all__ = ["Inventory", "agent_enabled", "collect", "config_ips", "relevant_nodes"]

_IPCONFIG = re.compile(r"(?:^|,)ip=([0-9.]+)(?:/\d+)?")


@dataclass
class Inventory:
    """The stand as the token sees it; `errors` maps what could not be read to why."""

    version: dict[str, Any] | None = None
    nodes: dict[str, str] = field(default_factory=dict)
    node_stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per online node, /nodes' usage fields: maxmem (bytes), maxcpu (threads), mem, cpu."""
    vms: list[dict[str, Any]] = field(default_factory=list)
    storages: dict[str, dict[str, Any]] = field(default_factory=dict)
    node_storages: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    networks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    pools: set[str] = field(default_factory=set)
    permissions: dict[str, set[str]] = field(default_factory=dict)
    configs: dict[int, dict[str, Any]] = field(default_factory=dict)
    agent_ips: dict[int, list[str]] = field(default_factory=dict)
    errors: dict[str, ApiError] = field(default_factory=dict)

    @property
    def authenticated(self) -> bool:
        return self.version is not None

    @property
    def pve_major(self) -> int:
        text = str((self.version or {}).get("version", "0"))
        match = re.match(r"(\d+)", text)
        return int(match.group(1)) if match else 0

    def vm(self, vmid: int) -> dict[str, Any] | None:
        return next((v for v in self.vms if int(v.get("vmid", -1)) == vmid), None)

    def templates(self) -> list[dict[str, Any]]:
        return [v for v in self.vms if v.get("template")]


def relevant_nodes(tc: TenantCluster, pools: Iterable[NodePool]) -> list[str]:
    """allowedNodes then each pool's own nodes and sourceNode, once each, in the order the spec names them."""
    px = tc.spec.proxmox
    names = list(px.allowed_nodes if px else [])
    for p in pools:
        if p.spec.proxmox is not None:
            names += [*(p.spec.proxmox.allowed_nodes or []), p.spec.proxmox.source_node]
    return list(dict.fromkeys(names))


def config_ips(config: dict[str, Any]) -> list[str]:
    """IPv4 addresses a guest's config assigns: a VM's cloud-init `ipconfigN`, a container's `netN`."""
    return [
        m.group(1)
        for k, v in config.items()
        if k.startswith(("ipconfig", "net"))
        for m in _IPCONFIG.finditer(str(v))
    ]


def agent_enabled(config: Mapping[str, Any]) -> bool:
    """Whether the VM config turns the QEMU guest agent on (`agent: 1` or `agent: enabled=1,...`): PVE reads
    a boolean as 1, on, yes or true in any case (`PVE::JSONSchema::parse_boolean`)."""
    first = str(config.get("agent", "0")).split(",")[0]
    return first.split("=")[-1].lower() in ("1", "on", "yes", "true")


def _read(api: Api, inv: Inventory, key: str, path: str, **params: Any) -> Any:
    try:
        return api.get(path, **params)
    except ApiError as exc:
        inv.errors[key] = exc
        return None


def collect(api: Api, tc: TenantCluster, pools: Iterable[NodePool]) -> Inventory:
    """Read the stand; stops after the first call when the token does not authenticate."""
    inv = Inventory()
    inv.version = _read(api, inv, "version", "/version")
    if inv.version is None:
        return inv
    listed = _read(api, inv, "nodes", "/nodes") or []
    inv.nodes = {n["node"]: str(n.get("status", "unknown")) for n in listed}
    inv.node_stats = {n["node"]: n for n in listed if n.get("status") == "online"}
    inv.vms = list(_read(api, inv, "resources", "/cluster/resources", type="vm") or [])
    inv.storages = {s["storage"]: s for s in _read(api, inv, "storage", "/storage") or []}
    inv.pools = {p["poolid"] for p in _read(api, inv, "pools", "/pools") or []}
    perms = _read(api, inv, "permissions", "/access/permissions") or {}
    inv.permissions = {path: {p for p, on in privs.items() if on} for path, privs in perms.items()}
    template_nodes = [str(v["node"]) for v in inv.templates()]
    for node in dict.fromkeys([*relevant_nodes(tc, pools), *template_nodes]):
        if inv.nodes.get(node) != "online":
            continue
        stores = _read(api, inv, f"storage on {node}", f"/nodes/{node}/storage") or []
        inv.node_storages[node] = {s["storage"]: s for s in stores}
        inv.networks[node] = list(_read(api, inv, f"network on {node}", f"/nodes/{node}/network") or [])
    for vm in inv.vms:
        node, vmid, kind = str(vm.get("node")), int(vm["vmid"]), str(vm.get("type", "qemu"))
        if inv.nodes.get(node) != "online":
            continue
        config = _read(api, inv, f"config of VM {vmid}", f"/nodes/{node}/{kind}/{vmid}/config")
        if config is None:
            continue
        inv.configs[vmid] = config
        if kind == "qemu" and vm.get("status") == "running" and agent_enabled(config):
            answer = _read(
                api, inv, f"guest agent of VM {vmid}", f"/nodes/{node}/qemu/{vmid}/agent/network-get-interfaces"
            )
            if answer is not None:
                inv.agent_ips[vmid] = [
                    str(a["ip-address"])
                    for iface in (answer.get("result") or [])
                    for a in iface.get("ip-addresses") or []
                    if a.get("ip-address-type") == "ipv4" and not str(a.get("ip-address", "")).startswith("127.")
                ]
    return inv

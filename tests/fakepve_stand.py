"""fakepve 0.5.0 as capmox v0.7.7 needs it: three answers it lacks, stood in for here (docs/testing.md).

Found by running capmox against it (issue 60): each is what a real Proxmox VE 8 answers, and without it
capmox stops at that step.
- `GET /nodes/{node}/status`: fakepve's generic answer has `memory.total` 0, so capmox's scheduler finds no
  room on any node ("0B available memory left") and fails the machine for good. Stood in: the node's
  memory and CPUs as `/nodes` already reports them.
- `POST /qemu/{vmid}/config` with a NIC without a MAC: Proxmox gives it a random one (fakepve does on
  create and clone, not on config), and capmox waits for `model=MAC` forever. Stood in: every NIC of every
  VM gets its MAC before a request is answered, as fakepve's own `with_mac` writes it.
- `PUT /qemu/{vmid}/resize`: the generic answer is a task that changes nothing, so the VM keeps the
  template's disk size. Stood in: the drive's `size=` grows (a shrink is refused, as Proxmox refuses it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from fakepve import FakePve  # type: ignore[import-untyped]
from fakepve.lxc import format_size, parse_size  # type: ignore[import-untyped]
from fakepve.qemu import with_mac  # type: ignore[import-untyped]

__all__ = ["CapmoxStand"]

_API = r"^/api2/json"
_NODE_STATUS = re.compile(_API + r"/nodes/([^/]+)/status$")
_RESIZE = re.compile(_API + r"/nodes/([^/]+)/qemu/(\d+)/resize$")
_NIC = re.compile(r"net\d+")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def _parameters(request: web.Request) -> dict[str, Any]:
    """A request's parameters, sent as JSON (go-proxmox) or as a form (what the body is read as is kept
    for the handler: aiohttp reads a body once and hands the same bytes again)."""
    if request.content_type == "application/json":
        loaded = json.loads(await request.read() or b"{}")
        return loaded if isinstance(loaded, dict) else {}
    return dict(await request.post())


class CapmoxStand(FakePve):  # type: ignore[misc]
    """A FakePve that answers what capmox v0.7.7 asks of it as Proxmox VE 8 does."""

    def _build_app(self) -> web.Application:
        app = super()._build_app()
        app.middlewares.insert(0, self._stand_ins)
        return app

    @web.middleware
    async def _stand_ins(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        self._give_macs()
        resize = _RESIZE.match(request.path)
        if resize and request.method == "PUT":
            asked = await _parameters(request)
            self._resize(int(resize.group(2)), str(asked.get("disk")), str(asked.get("size")))
        response = await handler(request)
        node = _NODE_STATUS.match(request.path)
        if node and request.method == "GET" and response.status == 200 and isinstance(response, web.Response):
            return self._with_memory(node.group(1), response)
        return response

    def _give_macs(self) -> None:
        for vm in self.vms:
            for key, value in list(vm.config.items()):
                if _NIC.fullmatch(key) and "=" not in str(value).split(",", 1)[0]:
                    vm.config[key] = with_mac(value)

    def _resize(self, vmid: int, disk: str, size: str) -> None:
        vm = next((v for v in self.vms if v.vmid == vmid), None)
        if vm is None or disk not in vm.config:
            return  # the generic handler answers what Proxmox answers for it
        found = re.search(r"size=(\d+(?:\.\d+)?[KMGT]?)", str(vm.config[disk]))
        have = parse_size(found.group(1)) if found else 0
        asked = parse_size(size.lstrip("+")) or 0
        wanted = have + asked if size.startswith("+") else asked
        if wanted < have:
            raise web.HTTPInternalServerError(reason="shrinking disks is not supported")
        if found:
            vm.config[disk] = re.sub(r"size=[^,]*", "size=" + format_size(wanted), str(vm.config[disk]))

    def _with_memory(self, node: str, response: web.Response) -> web.Response:
        stats = self._node_stats(self.nodes.get(node, {}).get("online", True))
        body: dict[str, Any] = json.loads(response.text or "{}")
        data = body.get("data") if isinstance(body.get("data"), dict) else {}
        total, used = int(stats.get("maxmem", 0)), int(stats.get("mem", 0))
        data["memory"] = {"total": total, "used": used, "free": total - used, "available": total - used}
        data.setdefault("cpuinfo", {})["cpus"] = int(stats.get("maxcpu", 0))
        body["data"] = data
        return web.json_response(body, status=response.status)

"""The emulated APIs of `operator_scale.py`, served from a process of their own.

One management API and one API per tenant, seeded as Kamaji, cert-manager, the cloud and the
platform admin leave them (Kamaji's other Secrets too, which the operator must not hold). Out of the
operator's process, the operator's peak memory is its own and this process's CPU time is the
emulators' share of a run. The parent drives it over a pipe: it
sends `(command, argument)` and reads one answer; see `COMMANDS`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import aiohttp.test_utils
import kmock
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "operator"))

from kube_emulator import CORE, KubeEmulator, declare
from operator_support import (
    TCP,
    TENANT_CONTROL_PLANES,
    management,
    provider_tenant_control_plane,
    seed_control_plane,
    seed_documents,
)

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "proxmox.yaml"
CRD_PLURAL = "apiextensions.k8s.io/v1/customresourcedefinitions"
# What Kamaji keeps beside each TenantControlPlane and the operator never reads: certificates and
# kubeconfigs of a few KiB each, in the tenant's namespace.
KAMAJI_SECRETS = (
    "api-server-certificate", "api-server-kubelet-client-certificate", "sa-certificate",
    "front-proxy-ca-certificate", "front-proxy-client-certificate", "controller-manager-kubeconfig",
    "scheduler-kubeconfig", "konnectivity-certificate", "datastore-certificate", "datastore-config",
)
PEM = base64.b64encode(bytes(range(256)) * 6).decode()


def tenant_documents(template: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    """The Proxmox example, renamed: tenant `t<i>` in namespace `tenant-<i>`."""
    out = []
    for doc in copy.deepcopy(template):
        doc["metadata"]["namespace"] = f"tenant-{index}"
        if doc["kind"] == "TenantCluster":
            doc["metadata"]["name"] = f"t{index}"
        else:
            doc["spec"]["cluster"] = f"t{index}"
        out.append(doc)
    return out


def upstream_crds(crds: Path) -> list[dict[str, Any]]:
    """Every CRD of the upstream releases (what a management cluster with these providers serves)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    docs = (d for path in sorted(crds.glob("*/*.yaml")) for d in yaml.load_all(path.read_text(), Loader=loader))
    return [d for d in docs if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"]


@dataclass
class Emulators:
    """The management API, the tenants' APIs, and what they were asked."""

    mgmt: KubeEmulator
    tenants: list[KubeEmulator] = field(default_factory=list)

    @property
    def every(self) -> list[KubeEmulator]:
        return [self.mgmt, *self.tenants]

    def is_ready(self, index: int) -> bool:
        obj = self.mgmt.get("tenantctl.io/v1alpha1/tenantclusters", f"tenant-{index}", f"t{index}", copied=False)
        conditions = ((obj or {}).get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)

    def ready(self, _: Any = None) -> int:
        return sum(self.is_ready(i) for i in range(len(self.tenants)))

    def counters(self, _: Any = None) -> dict[str, Any]:
        """A snapshot to subtract from a later one: CPU seconds of this process, requests by kind."""
        return {
            "cpu": time.process_time(),
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "busy": sum(e.busy for e in self.every),
            "received": sum(e.received for e in self.every),
            "reads": sum(e.reads for e in self.every),
            "writes": [len(e.writes()) for e in self.every],
        }

    def requests(self, _: Any = None) -> Counter[tuple[str, str]]:
        """Requests by (verb, resource) so far, every API together."""
        total: Counter[tuple[str, str]] = Counter()
        for emulator in self.every:
            total.update(emulator.tally)
        return total

    def writes_since(self, marks: list[int]) -> list[str]:
        """The state changes since `counters()["writes"]` was taken, one line each."""
        return [
            f"{entry.verb} {entry.plural} {entry.namespace}/{entry.name}"
            + (f" ({', '.join(entry.fields)})" if entry.fields else "")
            + (f" [{entry.said}]" if entry.said else "")
            for emulator, mark in zip(self.every, marks, strict=True)
            for entry in emulator.writes()[mark:]
        ]


COMMANDS: dict[str, Callable[[Emulators, Any], Any]] = {
    "ready": Emulators.ready,
    "counters": Emulators.counters,
    "requests": Emulators.requests,
    "writes_since": Emulators.writes_since,
}


async def tenant_api(stack: contextlib.AsyncExitStack) -> tuple[KubeEmulator, str]:
    """Each tenant has its own apiserver: its bootstrap objects share names across tenants.

    Served by a bare aiohttp test server: `kmock.Server` also installs a DNS interceptor per
    instance, and a thousand nested interceptors exceed the recursion limit.
    """
    emulator = await stack.enter_async_context(KubeEmulator())
    server = aiohttp.test_utils.RawTestServer(emulator, host="127.0.0.1")
    await server.start_server()
    stack.push_async_callback(server.close)
    declare(emulator, CORE)
    return emulator, f"http://127.0.0.1:{server.port}"


async def _serve(pipe: Connection, tenants: int, crds: Path | None) -> None:
    async with contextlib.AsyncExitStack() as stack:
        mgmt = await stack.enter_async_context(KubeEmulator())
        server = await stack.enter_async_context(kmock.Server(mgmt))
        declare(mgmt, CORE)
        management(mgmt)
        if crds is not None:
            declare(mgmt, [TENANT_CONTROL_PLANES])
            for crd in upstream_crds(crds):
                mgmt.put(CRD_PLURAL, crd)
        emulators = Emulators(mgmt)
        template = [d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d]
        for i in range(tenants):
            docs = tenant_documents(template, i)
            inside, inside_url = await tenant_api(stack)
            emulators.tenants.append(inside)
            seed_documents(mgmt, docs)
            seed_control_plane(mgmt, docs, inside_url, address=f"10.{i // 250}.{i % 250}.10")
            if crds is not None:
                mgmt.put(TCP, provider_tenant_control_plane(docs))
            for suffix in KAMAJI_SECRETS:
                labels = {"kamaji.clastix.io/name": f"t{i}"}
                meta = {"name": f"t{i}-{suffix}", "namespace": f"tenant-{i}", "labels": labels}
                mgmt.put("v1/secrets", {"metadata": meta, "data": {"tls.crt": PEM, "tls.key": PEM}})
        await mgmt.settle()
        pipe.send(str(server.url).rstrip("/"))
        loop = asyncio.get_running_loop()
        while True:
            command, argument = await loop.run_in_executor(None, pipe.recv)
            if command == "stop":
                pipe.send(None)
                return
            pipe.send(COMMANDS[command](emulators, argument))


def serve(pipe: Connection, tenants: int, crds: str | None) -> None:
    """The child process's entry point: seed, send the management URL, answer until told to stop."""
    asyncio.run(_serve(pipe, tenants, Path(crds) if crds else None))

"""The operator at scale: N tenants created at once against the emulated management and tenant APIs.

    .venv/bin/python benchmarks/operator_scale.py [--tenants 200]

    .venv/bin/python benchmarks/operator_scale.py --tenants 200 --direct-reads   # without the watch cache

Runs the real kopf engine with our handlers in-process against the test suite's emulator over
loopback HTTP (one management API, one API per tenant) and prints: time until every TenantCluster
is Ready and how much of it the emulators spent answering, API requests per tenant during creation,
peak memory of the process (operator and emulators together), then for one resync of every tenant
after convergence `reads per tenant per idle resync: <n>` (GETs other than watch streams, on the
management and the tenant APIs) and `idle resync writes: <count>` (target 0; exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import dataclasses
import resource
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp.test_utils
import kmock
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "operator"))

from kube_emulator import CORE, KubeEmulator, declare
from operator_support import FAST, management, running_operator, seed_control_plane, seed_documents

from tenantctl.operator.kube import RetryPolicy
from tenantctl.operator.settings import OperatorSettings

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "proxmox.yaml"


def tenant_documents(index: int) -> list[dict[str, Any]]:
    """The Proxmox example, renamed: tenant `t<i>` in namespace `tenant-<i>`."""
    docs = [d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d]
    out = []
    for doc in copy.deepcopy(docs):
        doc["metadata"]["namespace"] = f"tenant-{index}"
        if doc["kind"] == "TenantCluster":
            doc["metadata"]["name"] = f"t{index}"
        else:
            doc["spec"]["cluster"] = f"t{index}"
        out.append(doc)
    return out


def reads(mgmt: KubeEmulator, insides: list[KubeEmulator]) -> int:
    return mgmt.reads + sum(t.reads for t in insides)


def busy(mgmt: KubeEmulator, insides: list[KubeEmulator]) -> float:
    return mgmt.busy + sum(t.busy for t in insides)


def writes(mgmt: KubeEmulator, insides: list[KubeEmulator]) -> int:
    return len(mgmt.writes()) + sum(len(t.writes()) for t in insides)


def is_ready(mgmt: KubeEmulator, index: int) -> bool:
    obj = mgmt.get("tenantctl.io/v1alpha1/tenantclusters", f"tenant-{index}", f"t{index}") or {}
    return any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in (obj.get("status") or {}).get("conditions", [])
    )


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


async def run(tenants: int, timeout: float, direct_reads: bool = False) -> int:
    async with contextlib.AsyncExitStack() as stack:
        mgmt = await stack.enter_async_context(KubeEmulator())
        await stack.enter_async_context(kmock.Server(mgmt))
        declare(mgmt, CORE)
        management(mgmt)
        insides: list[KubeEmulator] = []
        for i in range(tenants):
            docs = tenant_documents(i)
            inside, inside_url = await tenant_api(stack)
            insides.append(inside)
            seed_documents(mgmt, docs)
            seed_control_plane(mgmt, docs, inside_url, address=f"10.{i // 250}.{i % 250}.10")
        settings = dataclasses.replace(
            FAST, retry=RetryPolicy(), resync_interval=3600.0, requeue_delay=5.0, read_from_watches=not direct_reads,
            tenant_probe_timeout=OperatorSettings().tenant_probe_timeout,
        )
        started = time.perf_counter()
        async with running_operator(mgmt, settings) as ctx:
            deadline = started + timeout
            while not all(is_ready(mgmt, i) for i in range(tenants)):
                if time.perf_counter() > deadline:
                    ready = sum(is_ready(mgmt, i) for i in range(tenants))
                    print(f"timed out: {ready}/{tenants} ready after {timeout:.0f}s")
                    return 1
                await asyncio.sleep(0.05)
            keys = [(f"tenant-{i}", f"t{i}") for i in range(tenants)]
            while not all(ctx.passes[key] for key in keys):  # Ready is written before a pass ends
                await asyncio.sleep(0.01)
            converged = time.perf_counter() - started
            emulator_share = busy(mgmt, insides)
            create_requests = mgmt.received + sum(t.received for t in insides)
            create_passes = sum(ctx.passes.values())
            # Let kopf finish its own bookkeeping (finalizers, diff-base annotations) before measuring.
            quiet_since, seen = time.perf_counter(), writes(mgmt, insides)
            while time.perf_counter() - quiet_since < 1.0:
                await asyncio.sleep(0.1)
                now = writes(mgmt, insides)
                if now != seen:
                    quiet_since, seen = time.perf_counter(), now
            before = {key: ctx.passes[key] for key in keys}
            writes_before, reads_before = writes(mgmt, insides), reads(mgmt, insides)
            marks = [len(t.writes()) for t in [mgmt, *insides]]
            for key in before:
                ctx.wakeup(key).set()
            while any(ctx.passes[key] <= count for key, count in before.items()):
                await asyncio.sleep(0.05)
            idle_writes = writes(mgmt, insides) - writes_before
            idle_reads = reads(mgmt, insides) - reads_before
            for t, mark in zip([mgmt, *insides], marks, strict=True):
                for entry in t.writes()[mark:]:
                    print(f"  idle write: {entry.verb} {entry.plural} {entry.namespace}/{entry.name}")
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"tenants: {tenants}")
        print(f"reads: {'direct' if direct_reads else 'from watches'}")
        print(f"time to converge: {converged:.2f}s"
              f" (emulators answering requests: {emulator_share:.2f}s, {100 * emulator_share / converged:.0f}%)")
        print(f"API requests per tenant at create: {create_requests / tenants:.1f}"
              f" ({create_passes / tenants:.1f} reconcile passes per tenant)")
        print(f"peak memory: {peak_mib:.0f} MiB (operator and all emulators, one process)")
        print(f"reads per tenant per idle resync: {idle_reads / tenants:.2f}")
        print(f"idle resync writes: {idle_writes}")
        return 0 if idle_writes == 0 else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tenants", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=600.0, help="give up after this many seconds")
    parser.add_argument("--direct-reads", action="store_true", help="no watch cache: every read asks the API")
    args = parser.parse_args()
    sys.exit(asyncio.run(run(args.tenants, args.timeout, args.direct_reads)))


if __name__ == "__main__":
    main()

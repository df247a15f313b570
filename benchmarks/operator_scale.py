"""The operator at scale: N tenants created at once against emulated management and tenant APIs.

    .venv/bin/python benchmarks/operator_scale.py [--tenants 200] [--requests] [--profile FILE]

    .venv/bin/python benchmarks/operator_scale.py --tenants 200 --direct-reads   # without the watch cache

    .venv/bin/python benchmarks/operator_scale.py --tenants 10000 --shards 6     # six shard processes

With `--shards N` the operator runs as N processes, `--shard I/N` each, as the StatefulSets of a sharded
install do, against the one emulator process: each prints its peak memory (target ≤ 300 MiB) and CPU;
time to converge counts from the shards' spawn (their interpreter start included).

The operator — the real kopf engine with our handlers, logging at INFO as in production — runs in
this process; the emulators (the test suite's, one management API and one API per tenant, seeded
with the upstream CRDs, each tenant's TenantControlPlane and Kamaji's other Secrets) run in a child process
(`scale_emulators.py`) over loopback HTTP. So the peak memory printed is the operator's alone, and
the emulators' share of the time is their process's CPU time over the wall time. Prints: time until
every TenantCluster is Ready, CPU seconds of both processes in that time, API requests per tenant
during creation (`--requests`: by verb and resource), the operator's peak memory, then for one
resync of every tenant after convergence `reads per tenant per idle resync: <n>` (GETs other than
watch streams, management and tenant APIs) and `idle resync writes: <count>` (target 0; exit 1
otherwise). The load average is printed too: the machine may be shared, CPU seconds are steadier.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import multiprocessing
import os
import resource
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from operator_driver import Key, log_to, passed_once, resync_every, running_operator

from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.config.sharding import Shard
from tenantctl.operator.kube.client import Connection
from tenantctl.operator.runtime.event_loop import run_in_loop
from tenantctl.operator.runtime.handlers import OperatorContext

if __name__ != "__mp_main__":  # a spawned shard re-imports this module: it runs the product alone (operator_driver)
    import scale_emulators

REPO = Path(__file__).resolve().parents[1]


class EmulatorProcess:
    """The child process serving every emulated API, asked over a pipe without blocking our loop."""

    def __init__(self, tenants: int, crds: Path | None) -> None:
        spawn = multiprocessing.get_context("spawn")
        self._pipe, child = spawn.Pipe()
        self._process = spawn.Process(
            target=scale_emulators.serve, args=(child, tenants, str(crds) if crds else None), daemon=True
        )
        self._lock = threading.Lock()
        self.url = ""

    def _roundtrip(self, command: str, argument: Any) -> Any:
        with self._lock:
            self._pipe.send((command, argument))
            return self._pipe.recv()

    async def ask(self, command: str, argument: Any = None) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, self._roundtrip, command, argument)

    async def __aenter__(self) -> EmulatorProcess:
        self._process.start()
        self.url = await asyncio.get_running_loop().run_in_executor(None, self._pipe.recv)
        return self

    async def __aexit__(self, *_: object) -> None:
        with contextlib.suppress(OSError, EOFError):
            await self.ask("stop")
        self._process.join(15)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def requests_table(requests: Counter[tuple[str, str]], tenants: int) -> list[str]:
    rows = sorted(requests.items(), key=lambda item: -item[1])
    return [f"  {count / tenants:7.2f}  {verb:<14} {what}" for (verb, what), count in rows]


async def wait_converged(emulators: EmulatorProcess, ctx: OperatorContext, keys: list[Key], deadline: float) -> bool:
    while await emulators.ask("ready") < len(keys):
        if time.perf_counter() > deadline:
            return False
        await asyncio.sleep(0.25)
    await passed_once(ctx, keys)
    return True


async def wait_quiet(emulators: EmulatorProcess, seconds: float = 1.0) -> None:
    """Until no write arrived for `seconds`: kopf finishes its bookkeeping (finalizers, diff bases)."""
    quiet_since, seen = time.perf_counter(), sum((await emulators.ask("counters"))["writes"])
    while time.perf_counter() - quiet_since < seconds:
        await asyncio.sleep(0.25)
        now = sum((await emulators.ask("counters"))["writes"])
        if now != seen:
            quiet_since, seen = time.perf_counter(), now


async def run(
    tenants: int, timeout: float, direct_reads: bool, crds: Path | None, show_requests: bool, profile: str | None
) -> int:
    settings = OperatorSettings(resync_interval=3600.0, requeue_delay=5.0, read_from_watches=not direct_reads)
    keys = [(f"tenant-{i}", f"t{i}") for i in range(tenants)]
    async with EmulatorProcess(tenants, crds) as emulators:
        load_at_start = load()
        before, requests_before = await emulators.ask("counters"), await emulators.ask("requests")
        profiler = cProfile.Profile(time.process_time) if profile else None
        started, cpu_started = time.perf_counter(), time.process_time()
        if profiler is not None:
            profiler.enable()
        async with running_operator(Connection.from_server(emulators.url), settings) as ctx:
            if not await wait_converged(emulators, ctx, keys, started + timeout):
                print(f"timed out: {await emulators.ask('ready')}/{tenants} ready after {timeout:.0f}s")
                return 1
            converged, operator_cpu = time.perf_counter() - started, time.process_time() - cpu_started
            if profiler is not None and profile is not None:
                profiler.disable()
                profiler.dump_stats(profile)
            at_create, requests_at_create = await emulators.ask("counters"), await emulators.ask("requests")
            load_at_converge = load()
            create_passes = sum(ctx.passes.values())
            await wait_quiet(emulators)
            idle_profiler = cProfile.Profile(time.process_time) if profile else None
            if idle_profiler is not None:
                idle_profiler.enable()
            idle_before, idle_cpu = await emulators.ask("counters"), time.process_time()
            await resync_every(ctx, keys)
            idle_cpu = time.process_time() - idle_cpu
            if idle_profiler is not None and profile is not None:
                idle_profiler.disable()
                idle_profiler.dump_stats(f"{profile}.idle")
            idle_after = await emulators.ask("counters")
            idle_writes = await emulators.ask("writes_since", idle_before["writes"])
            # The first resync after creation renders and compares everything; from then on a pass whose
            # inputs and inventory versions are those it verified renders nothing (`apply.Verified`).
            steady_cpu = time.process_time()
            await resync_every(ctx, keys)
            steady_cpu = time.process_time() - steady_cpu
            steady_after = await emulators.ask("counters")
            idle_writes += await emulators.ask("writes_since", idle_after["writes"])
    emulators_cpu = at_create["cpu"] - before["cpu"]
    operator_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    emulators_peak = at_create["peak_mib"]  # its own peak, asked over the pipe (after creation)
    print(f"tenants: {tenants} (reads {'direct' if direct_reads else 'from watches'}, "
          f"Kamaji and upstream CRDs {'seeded' if crds else 'absent'})")
    print(f"load average: {load_at_start} at start, {load_at_converge} at convergence")
    print(f"time to converge: {converged:.2f}s (emulators' CPU {emulators_cpu:.2f}s = "
          f"{100 * emulators_cpu / converged:.0f}% of it; operator's CPU {operator_cpu:.2f}s)")
    print(f"operator CPU per tenant at create: {1000 * operator_cpu / tenants:.1f} ms")
    print(f"API requests per tenant at create: {(at_create['received'] - before['received']) / tenants:.1f}"
          f" ({create_passes / tenants:.2f} reconcile passes per tenant)")
    if show_requests:
        print("\n".join(requests_table(requests_at_create - requests_before, tenants)))
    print(f"peak memory (operator process): {operator_peak:.0f} MiB (emulators' process: {emulators_peak:.0f} MiB)")
    print(f"operator CPU per tenant per idle resync: {1000 * idle_cpu / tenants:.2f} ms (the first after creation, "
          f"rendering and comparing everything); {1000 * steady_cpu / tenants:.2f} ms (the next, verified)")
    print(f"reads per tenant per idle resync: {(idle_after['reads'] - idle_before['reads']) / tenants:.2f} "
          f"(the next: {(steady_after['reads'] - idle_after['reads']) / tenants:.2f})")
    print(f"idle resync writes: {len(idle_writes)} (both resyncs)")
    for line in idle_writes:
        print(f"  idle write: {line}")
    return 0 if not idle_writes else 1


SHARD_MEMORY_TARGET_MIB = 300
EARLIER_CONVERGENCE_S = 561.0
"""Issue 41: 10,000 tenants over shards converge faster than this (5b78083's run, 2026-11). A machine's
figure, not a property of the code: printed beside the run's, never its exit code (docs/performance.md
has runs of one commit 2× apart on two days' machines)."""


def shard_worker(pipe: Any, url: str, index: int, count: int, keys: list[Key], log: str) -> None:
    """One shard's operator process, driven by the parent: `converged`, then `idle`, then `stop`."""
    log_to(log)
    run_in_loop(_shard(pipe, url, Shard(index, count), keys))


async def _shard(pipe: Any, url: str, shard: Shard, keys: list[Key]) -> None:
    loop = asyncio.get_running_loop()
    settings = OperatorSettings(resync_interval=3600.0, requeue_delay=5.0, shard=shard)
    cpu_started = time.process_time()
    async with running_operator(Connection.from_server(url), settings) as ctx:
        pipe.send("up")
        assert await loop.run_in_executor(None, pipe.recv) == "converged"
        await passed_once(ctx, keys)
        pipe.send({"cpu": time.process_time() - cpu_started, "passes": sum(ctx.passes.values())})
        assert await loop.run_in_executor(None, pipe.recv) == "idle"
        idle_cpu = time.process_time()
        await resync_every(ctx, keys)
        pipe.send({"idle_cpu": time.process_time() - idle_cpu})
        assert await loop.run_in_executor(None, pipe.recv) == "stop"
    pipe.send({"peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


async def run_sharded(tenants: int, shards: int, timeout: float, crds: Path | None, log: str) -> int:
    """N shard processes against one management emulator: what a sharded install costs per tenant."""
    keys = [(f"tenant-{i}", f"t{i}") for i in range(tenants)]
    owned = [[k for k in keys if Shard(i, shards).owns(*k)] for i in range(shards)]
    spawn = multiprocessing.get_context("spawn")
    loop = asyncio.get_running_loop()
    async with EmulatorProcess(tenants, crds) as emulators:
        load_at_start = load()
        before = await emulators.ask("counters")
        started = time.perf_counter()
        pipes, processes = [], []
        for index in range(shards):
            parent, child = spawn.Pipe()
            process = spawn.Process(
                target=shard_worker, args=(child, emulators.url, index, shards, owned[index], log), daemon=True
            )
            process.start()
            pipes.append(parent)
            processes.append(process)

        async def ask(pipe: Any, message: str | None) -> Any:
            if message is not None:
                pipe.send(message)
            return await loop.run_in_executor(None, pipe.recv)

        await asyncio.gather(*(ask(p, None) for p in pipes))
        while await emulators.ask("ready") < tenants:
            if time.perf_counter() > started + timeout:
                print(f"timed out: {await emulators.ask('ready')}/{tenants} ready after {timeout:.0f}s")
                for process in processes:
                    process.kill()
                return 1
            await asyncio.sleep(0.5)
        created = await asyncio.gather(*(ask(p, "converged") for p in pipes))
        converged = time.perf_counter() - started
        at_create, load_at_converge = await emulators.ask("counters"), load()
        await wait_quiet(emulators)
        idle_before = await emulators.ask("counters")
        idle = await asyncio.gather(*(ask(p, "idle") for p in pipes))
        idle_after = await emulators.ask("counters")
        idle_writes = await emulators.ask("writes_since", idle_before["writes"])
        peaks = await asyncio.gather(*(ask(p, "stop") for p in pipes))
        for process in processes:
            process.join(120)
    emulators_cpu = at_create["cpu"] - before["cpu"]
    emulators_peak = at_create["peak_mib"]  # its own peak, asked over the pipe (after creation)
    operator_cpu = sum(c["cpu"] for c in created)
    seeded = "seeded" if crds else "absent"
    print(f"tenants: {tenants} over {shards} shard processes, Kamaji and upstream CRDs {seeded}")
    print(f"load average: {load_at_start} at start, {load_at_converge} at convergence ({os.cpu_count()} CPUs)")
    print(f"time to converge: {converged:.1f}s from spawn (emulators' CPU {emulators_cpu:.1f}s = "
          f"{100 * emulators_cpu / converged:.0f}% of it; shards' CPU {operator_cpu:.1f}s); "
          f"(target < issue 41's {EARLIER_CONVERGENCE_S:.0f}s, measured on another machine: judged here, never "
          f"the exit code) {'ok' if converged < EARLIER_CONVERGENCE_S else 'MISSED'}")
    print(f"operator CPU per tenant at create: {1000 * operator_cpu / tenants:.1f} ms (process start included)")
    print(f"API requests per tenant at create: {(at_create['received'] - before['received']) / tenants:.1f}")
    failed = bool(idle_writes)
    for index, (mine, made, quiet, peak) in enumerate(zip(owned, created, idle, peaks, strict=True)):
        ok = peak["peak_mib"] <= SHARD_MEMORY_TARGET_MIB
        failed |= not ok
        print(f"  shard {index}/{shards}: {len(mine)} tenants, peak {peak['peak_mib']:.0f} MiB "
              f"(target ≤ {SHARD_MEMORY_TARGET_MIB}) {'ok' if ok else 'MISSED'}, CPU {made['cpu']:.1f}s at create, "
              f"{1000 * quiet['idle_cpu'] / max(len(mine), 1):.2f} ms per tenant per idle resync")
    print(f"emulators' peak memory: {emulators_peak:.0f} MiB")
    print(f"reads per tenant per idle resync: {(idle_after['reads'] - idle_before['reads']) / tenants:.2f}")
    print(f"idle resync writes: {len(idle_writes)} (target 0) {'MISSED' if idle_writes else 'ok'}")
    for line in idle_writes:
        print(f"  idle write: {line}")
    return 1 if failed else 0


def scale_arguments(doc: str, *, tenants: int, timeout: float, crds_help: str) -> argparse.ArgumentParser:
    """The options every scale run takes (this one and `operator_real_scale.py`), with its own defaults."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--tenants", type=int, default=tenants)
    parser.add_argument("--timeout", type=float, default=timeout, help="give up after this many seconds")
    parser.add_argument("--requests", action="store_true", help="list the requests at create by verb and resource")
    parser.add_argument("--log", default=os.devnull, help="where the operator's log lines go")
    parser.add_argument(
        "--crds", type=Path, default=Path(os.environ.get("TENANTCTL_SHARED", REPO.parent / "shared")) / "crds",
        help=crds_help,
    )
    return parser


def main() -> None:
    parser = scale_arguments(__doc__, tenants=200, timeout=600.0,
                             crds_help="upstream CRDs to serve (Kamaji's among them); a missing directory serves none")
    parser.add_argument("--shards", type=int, default=1, help="run the operator as this many shard processes")
    parser.add_argument("--direct-reads", action="store_true", help="no watch cache: every read asks the API")
    parser.add_argument(
        "--profile", metavar="FILE", help="cProfile until convergence into FILE, the idle resync into FILE.idle"
    )
    args = parser.parse_args()
    log_to(args.log)
    crds = args.crds if args.crds.is_dir() else None
    if args.shards > 1:
        sys.exit(asyncio.run(run_sharded(args.tenants, args.shards, args.timeout, crds, args.log)))
    sys.exit(run_in_loop(run(args.tenants, args.timeout, args.direct_reads, crds, args.requests, args.profile)))


if __name__ == "__main__":
    main()

"""The operator at scale on the real kube-apiserver: N tenants created at once, converged, resynced idle.

    .venv/bin/python benchmarks/operator_real_scale.py [--tenants 1000] [--timeout 900]

The management cluster is the real-API tier's control plane (`make envtest`: etcd and kube-apiserver built
from their Go modules), holding every upstream CRD and what `tenantctl install --apply` puts there. The
operator — the real kopf engine with our handlers, logging at INFO — runs in a child process as the
ServiceAccount `install` renders, with exactly its RBAC. The world around each tenant (the TenantCluster and
NodePools a user applies; the Service, CAs, admin kubeconfig and other Secrets Kamaji, cert-manager and the
cloud write; the capmox Secret of the platform admin) is written through the real API before the operator
starts, as `operator_scale.py` seeds its emulators.

What stays emulated is each tenant's own API server (the bootstrap token and node RBAC the operator writes
inside): a real kube-apiserver per tenant is ~100 MiB of memory and a second of CPU to start (the run prints
one's), a thousand of them are not on a 2-core, 24 GiB machine. They are served from this process, one
loopback HTTP server each, and their requests are counted apart.

The operator's requests are counted by the API server itself: an audit policy logs the operator's user alone
(level Metadata, at ResponseComplete), so the figures are what the server served to the operator, not what
the client believes it sent. Prints: time until every TenantCluster is Ready (from the operator's start, its
interpreter included), CPU of the operator, kube-apiserver and etcd in that time, requests per tenant at
create (by verb and resource with `--requests`), then for two resyncs of every tenant (the first after
creation, then the steady one) the operator's CPU per tenant, its reads per tenant, and every write (target
0; exit 1 otherwise). The readiness poll (a paged list every two seconds, as admin) is in the API server's CPU.

`--floor` also measures the floor under the create figure (`operator_floor.py`): the server audits that run's
bodies too (level Request, so its own CPU figures include writing them), then a fresh management cluster
holding the same world is given kopf, with the operator's handlers, and our client sending exactly those
requests with nothing computed; then a third is given our client alone, no kopf, sending them and kopf's
finalizer patches. The run ends with the create figure in four parts: the process start, the requests
alone, kopf, and the operator's own work.
"""

from __future__ import annotations

import asyncio
import contextlib
import cProfile
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "operator"), str(REPO / "benchmarks")]

from operator_driver import Key, log_to, passed_once, resync_every, running_operator  # noqa: E402

from tenantctl.operator.config.settings import OperatorSettings  # noqa: E402
from tenantctl.operator.kube.client import Connection  # noqa: E402
from tenantctl.operator.runtime.event_loop import run_in_loop  # noqa: E402

TARGET_CREATE_MS, TARGET_IDLE_MS = 20.0, 3.0
WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})

if __name__ != "__mp_main__":  # the spawned operator re-imports this module: it loads the product alone
    import scale_emulators
    from operator_floor import ENGINES, Replay, floor_worker, sent
    from operator_scale import load, scale_arguments
    from operator_support import b64, capmox_credentials, kamaji_labels, kubeconfig_for

    from real_api import Api, crd_documents
    from real_control_plane import ControlPlane, binaries
    from real_seed import OPERATOR_NAMESPACE, OPERATOR_SA, seed_tenant
    from tenantctl.render import Names
    from tenantctl.spec import parse_tenant_documents

    OPERATOR_USER = f"system:serviceaccount:{OPERATOR_NAMESPACE}:{OPERATOR_SA}"


def audit_policy(level: str) -> dict[str, Any]:
    """The operator's requests alone, at `level` (Metadata; Request adds each request's body)."""
    return {
        "apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived", "ResponseStarted"],
        "rules": [{"level": level, "users": [OPERATOR_USER]}, {"level": "None"}],
    }


# -- the servers' side ------------------------------------------------------------------------------------


@dataclass
class Served:
    """One process's CPU seconds and peak memory, read from /proc (the API server and etcd are Go binaries)."""

    pid: int

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def peak_mib(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0.0


class AuditLog:
    """The API server's record of the operator's requests; `mark()` and `since(mark)` delimit a phase."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def mark(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def since(self, mark: int) -> list[dict[str, Any]]:
        with self.path.open("rb") as log:
            log.seek(mark)
            return [json.loads(line) for line in log.read().splitlines() if line.strip()]


def what(event: dict[str, Any]) -> tuple[str, str]:
    ref = event.get("objectRef") or {}
    resource_ = ref.get("resource", event.get("requestURI", "?"))
    return event["verb"], resource_ + (f"/{ref['subresource']}" if ref.get("subresource") else "")


def describe_write(event: dict[str, Any]) -> str:
    ref = event.get("objectRef") or {}
    return f"{event['verb']} {what(event)[1]} {ref.get('namespace', '')}/{ref.get('name', '')} " \
           f"-> {event.get('responseStatus', {}).get('code')}"


# -- the world around the tenants ------------------------------------------------------------------------


def start_management(workdir: Path, audit_level: str = "Metadata") -> ControlPlane:
    policy = workdir / "audit-policy.yaml"
    workdir.mkdir(parents=True, exist_ok=True)
    policy.write_text(yaml.safe_dump(audit_policy(audit_level)))
    audit = [f"--audit-policy-file={policy}", f"--audit-log-path={workdir / 'audit.log'}",
             "--audit-log-maxsize=0", "--audit-log-format=json"]
    # Each tenant has a Service (Kamaji's, type LoadBalancer): the tier's /24 holds 254; a later flag wins.
    services = ["--service-cluster-ip-range=10.0.0.0/16"]
    plane = ControlPlane(workdir / "management", binaries(), controller_manager=False,
                         extra_args=(*audit, *services))
    return plane.start()


def install(admin: Api, plane: ControlPlane, crds: Path) -> None:
    """Every upstream CRD, then `tenantctl install --apply` as the platform admin runs it. The webhook
    configuration goes (no pod serves it here, and the tier's tests drop it too)."""
    from typer.testing import CliRunner

    from tenantctl.cli import app

    admin.install_crds(crd_documents(sorted(crds.glob("*/*.yaml"))))
    result = CliRunner().invoke(app, ["install", "--apply", "--kubeconfig", str(plane.admin_kubeconfig_path)])
    if result.exit_code != 0:
        raise SystemExit(f"install --apply failed:\n{result.output}")
    admin.delete("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", None, OPERATOR_SA)


def seed_one(api: Api, docs: list[dict[str, Any]], tenant_url: str, index: int) -> None:
    """What a user, Kamaji, cert-manager, the cloud and the platform admin write for tenant `index`."""
    seed_tenant(api, docs)
    cluster = parse_tenant_documents(docs).clusters[0]
    names, ns = Names(cluster), cluster.metadata.namespace
    api.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": names.apiserver_service, "namespace": ns},
               "spec": {"type": "LoadBalancer", "ports": [{"name": "kube-apiserver", "port": 6443}]}}, manager="kamaji")
    api.merge_status("v1", "Service", ns, names.apiserver_service,
                     {"loadBalancer": {"ingress": [{"ip": f"10.{index // 250}.{index % 250}.10"}]}})
    api.apply({"apiVersion": "v1", "kind": "Secret", **capmox_credentials(docs)}, manager="admin")
    pem = {"tls.crt": scale_emulators.PEM, "tls.key": scale_emulators.PEM}
    kamaji = {names.kubernetes_ca: ("ca", {"ca.crt": b64("KUBE CA")}),
              names.admin_kubeconfig: ("admin-kubeconfig", {"super-admin.svc": b64(kubeconfig_for(tenant_url))}),
              **{f"{names.control_plane}-{suffix}": (suffix, pem)
                 for suffix in scale_emulators.KAMAJI_SECRETS}}
    for name, (component, data) in kamaji.items():
        meta = {"name": name, "namespace": ns, "labels": kamaji_labels(names.control_plane, component)}
        api.apply({"apiVersion": "v1", "kind": "Secret", "metadata": meta, "data": data}, manager="kamaji")
    api.apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": names.talos_ca, "namespace": ns},
               "data": {"tls.crt": b64("TALOS CA")}}, manager="cert-manager")


def seed_all(plane: ControlPlane, urls: list[str], threads: int = 4) -> None:
    template = [d for d in yaml.safe_load_all(scale_emulators.EXAMPLE.read_text()) if d]
    local = threading.local()

    def one(index: int) -> None:
        if not hasattr(local, "api"):
            local.api = Api(plane.server, _session(plane))
        seed_one(local.api, scale_emulators.tenant_documents(template, index), urls[index], index)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, range(len(urls))))


def _session(plane: ControlPlane) -> Any:
    import requests

    session = requests.Session()
    session.verify, session.cert, session.trust_env = plane.admin.verify, plane.admin.cert, False
    return session


def tenant_server_floor(management: ControlPlane) -> tuple[float, float]:
    """(seconds to answer, MiB at rest) of one kube-apiserver started as a tenant's, on the management etcd."""
    workdir = management.workdir.parent / "tenant-floor"
    plane = ControlPlane(workdir, management.bin_dir, controller_manager=False, etcd_url=management.etcd_url,
                         etcd_prefix="/tenant-floor")
    try:
        plane.start()
        time.sleep(5.0)  # its first controllers' syncs settle
        server = next(p for p in plane.processes if p.name == "kube-apiserver")
        rss = next(int(line.split()[1]) for line in Path(f"/proc/{server.popen.pid}/status").read_text().splitlines()
                   if line.startswith("VmRSS:"))
        return plane.started["kube-apiserver"], rss / 1024
    finally:
        plane.stop()


def ready_count(api: Api) -> int:
    """TenantClusters whose Ready condition is True, listed in pages as a client of many objects should."""
    count, token = 0, ""
    path = api.path("tenantctl.io/v1alpha1", "TenantCluster")
    while True:
        params = {"limit": "500", **({"continue": token} if token else {})}
        page = api._answer(api._request("GET", path, params=params, timeout=30))
        count += sum(any(c.get("type") == "Ready" and c.get("status") == "True"
                         for c in (i.get("status") or {}).get("conditions") or []) for i in page["items"])
        token = page["metadata"].get("continue") or ""
        if not token:
            return count


async def unready_after(admin: Api, tenants: int, started: float, timeout: float) -> int | None:
    """None once every TenantCluster is Ready (polled every two seconds); the count Ready when `timeout`
    seconds since `started` passed first."""
    while (ready := await asyncio.to_thread(ready_count, admin)) < tenants:
        if time.perf_counter() > started + timeout:
            return ready
        await asyncio.sleep(2.0)
    return None


# -- the operator's process ------------------------------------------------------------------------------


def operator_worker(pipe: Any, kubeconfig: dict[str, Any], keys: list[Key], log: str, profile: Path | None) -> None:
    """The operator as `tenantctl operator` runs it, driven by the parent: `converged`, `idle`, `stop`."""
    log_to(log)
    run_in_loop(_operator(pipe, kubeconfig, keys, Profiles(profile)))


class Profiles:
    """With a directory, a cProfile of each phase (create, idle-1, idle-2) written there, timed in CPU
    seconds (user and system: a wall-clock profile charges every wait for the other processes to the
    call that yielded); else nothing."""

    def __init__(self, directory: Path | None) -> None:
        self.directory, self.profile = directory, cProfile.Profile(time.process_time) if directory else None
        if self.profile:
            self.profile.enable()

    def phase(self, name: str) -> None:
        if self.profile and self.directory:
            self.profile.disable()
            self.profile.dump_stats(self.directory / f"{name}.prof")
            self.profile = cProfile.Profile(time.process_time)
            self.profile.enable()


async def _operator(pipe: Any, kubeconfig: dict[str, Any], keys: list[Key], profiles: Profiles) -> None:
    loop = asyncio.get_running_loop()
    settings = OperatorSettings(resync_interval=3600.0, requeue_delay=5.0)
    async with running_operator(Connection.from_kubeconfig(kubeconfig), settings) as ctx:
        pipe.send("up")
        assert await loop.run_in_executor(None, pipe.recv) == "converged"
        await passed_once(ctx, keys)
        profiles.phase("create")
        pipe.send({"cpu": time.process_time(), "passes": sum(ctx.passes.values())})
        assert await loop.run_in_executor(None, pipe.recv) == "idle"
        for phase in ("idle-1", "idle-2"):
            cpu, passes = time.process_time(), sum(ctx.passes.values())
            await resync_every(ctx, keys)
            pipe.send({"cpu": time.process_time() - cpu, "passes": sum(ctx.passes.values()) - passes})
            profiles.phase(phase)
            if phase == "idle-1":
                assert await loop.run_in_executor(None, pipe.recv) == "idle"
        assert await loop.run_in_executor(None, pipe.recv) == "stop"
    pipe.send({"peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


@contextlib.contextmanager
def spawned(target: Any, *args: Any) -> Iterator[Any]:
    """`target(pipe, *args)` in a spawned process; the parent's end of the pipe is yielded. The child's end is
    closed here, so a child that dies ends the parent's wait (EOFError) instead of hanging it; leaving closes
    the parent's end, so a child still waiting for a word (after a timeout) ends on EOFError too."""
    spawn = multiprocessing.get_context("spawn")
    parent, child = spawn.Pipe()
    process = spawn.Process(target=target, args=(child, *args), daemon=True)
    process.start()
    child.close()
    try:
        yield parent
    except BaseException:
        process.terminate()
        raise
    finally:
        parent.close()
        process.join(120)
        if process.is_alive():
            process.kill()


def operator_process(kubeconfig: dict[str, Any], keys: list[Key], log: str,
                     profile: Path | None) -> contextlib.AbstractContextManager[Any]:
    return spawned(operator_worker, kubeconfig, keys, log, profile)


# -- the run ---------------------------------------------------------------------------------------------


async def ask(pipe: Any, message: str | None = None) -> Any:
    if message is not None:
        pipe.send(message)
    return await asyncio.get_running_loop().run_in_executor(None, pipe.recv)


async def wait_quiet(audit: AuditLog, seconds: float = 2.0) -> None:
    """Until the operator wrote nothing for `seconds`: kopf's bookkeeping after the last status is done."""
    mark = audit.mark()
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < seconds:
        await asyncio.sleep(0.25)
        if any(e["verb"] in WRITES for e in audit.since(mark)):
            mark, quiet_since = audit.mark(), time.monotonic()


def per_tenant(events: list[dict[str, Any]], tenants: int) -> list[str]:
    rows = Counter(what(e) for e in events)
    return [f"  {count / tenants:7.2f}  {verb:<8} {res}" for (verb, res), count in rows.most_common()]


async def run(tenants: int, timeout: float, crds: Path, log: str, show_requests: bool, workdir: Path,
              profile: Path | None, floor: bool) -> int:
    keys = [(f"tenant-{i}", f"t{i}") for i in range(tenants)]
    async with contextlib.AsyncExitStack() as stack:
        emulated = [await scale_emulators.tenant_api(stack) for _ in range(tenants)]
        urls = [url for _, url in emulated]
        async with managed(workdir / "operator", crds, urls, "Request" if floor else "Metadata") as world:
            plane, admin, kubeconfig, seeding = world
            code, at_create, created = await measure(
                plane, admin, AuditLog(plane.workdir.parent / "audit.log"), kubeconfig, keys,
                [e for e, _ in emulated], timeout, log, show_requests, seeding, profile)
        if floor and at_create:
            replay = replay_of(keys, at_create, [e for e, _ in emulated], urls)
            replay_path = workdir / "replay.json"  # written once, read by each floor's child
            replay_path.write_text(json.dumps(replay))
            floors: dict[str, dict[str, Any]] = {}
            for engine in ENGINES:
                async with managed(workdir / f"floor-{engine}", crds, urls, "Request") as (plane, admin, kubeconfig,
                                                                                            _):
                    failed, measured = await measure_floor(
                        plane, admin, AuditLog(plane.workdir.parent / "audit.log"), kubeconfig, replay, replay_path,
                        [e for e, _ in emulated], timeout, log, (created, at_create), engine)
                    code |= failed
                    if not failed:
                        floors[engine] = measured
            print(taken_apart(created, floors, len(keys)))
        elif floor:
            print("floor: not measured (the operator's run did not converge)")
        return code


@contextlib.asynccontextmanager
async def managed(workdir: Path, crds: Path, urls: list[str], audit_level: str) -> AsyncIterator[
        tuple[ControlPlane, Api, dict[str, Any], float]]:
    """A management cluster holding what `install --apply` and each tenant's world put there: the plane, an
    admin client, the operator's kubeconfig and the seconds seeding took. Stopped on leaving."""
    plane = await asyncio.to_thread(start_management, workdir, audit_level)
    try:
        admin = Api(plane.server, plane.admin)
        await asyncio.to_thread(install, admin, plane, crds)
        seeded = time.perf_counter()
        await asyncio.to_thread(seed_all, plane, urls)
        seeding = time.perf_counter() - seeded
        kubeconfig = await asyncio.to_thread(plane.kubeconfig_for, OPERATOR_NAMESPACE, OPERATOR_SA)
        yield plane, admin, kubeconfig, seeding
    finally:
        plane.stop()


async def measure(plane: ControlPlane, admin: Api, audit: AuditLog, kubeconfig: dict[str, Any], keys: list[Key],
                  emulated: list[Any], timeout: float, log: str, show_requests: bool, seeding: float,
                  profile: Path | None) -> tuple[int, list[dict[str, Any]], float]:
    """The run above; its exit code, the audit of its requests at create, and its CPU seconds then."""
    tenants = len(keys)
    apiserver, etcd = (Served(p.popen.pid) for p in sorted(plane.processes, key=lambda p: p.name != "kube-apiserver"))
    load_at_start = load()
    mark, server_cpu, etcd_cpu = audit.mark(), apiserver.cpu(), etcd.cpu()
    inside_before = sum(e.received for e in emulated)
    started = time.perf_counter()
    with operator_process(kubeconfig, keys, log, profile) as pipe:
        await ask(pipe)
        if (ready := await unready_after(admin, tenants, started, timeout)) is not None:
            print(f"timed out: {ready}/{tenants} ready after {timeout:.0f}s")
            return 1, [], 0.0
        converged = time.perf_counter() - started
        created = await ask(pipe, "converged")
        server_cpu, etcd_cpu = apiserver.cpu() - server_cpu, etcd.cpu() - etcd_cpu
        at_create, load_at_converge = audit.since(mark), load()
        inside_at_create = sum(e.received for e in emulated) - inside_before
        await wait_quiet(audit)
        idle: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        for _ in range(2):
            mark = audit.mark()
            resync = await ask(pipe, "idle")
            await asyncio.sleep(1.0)  # the audit backend writes each event as its response completes
            idle.append((resync, audit.since(mark)))
        peak = (await ask(pipe, "stop"))["peak_mib"]
    requests_at_create = [e for e in at_create if e["verb"] != "watch"]
    print(f"tenants: {tenants} on the real kube-apiserver {plane.bin_dir.name} (operator as {OPERATOR_USER}; "
          f"each tenant's own API emulated); seeded in {seeding:.0f}s")
    print(f"load average: {load_at_start} at start, {load_at_converge} at convergence ({os.cpu_count()} CPUs)")
    print(f"time to converge: {converged:.1f}s from the operator's spawn (CPU in it: operator {created['cpu']:.1f}s, "
          f"kube-apiserver {server_cpu:.1f}s, etcd {etcd_cpu:.1f}s)")
    ok_create = 1000 * created["cpu"] / tenants <= TARGET_CREATE_MS
    print(f"operator CPU per tenant at create: {1000 * created['cpu'] / tenants:.1f} ms, process start included "
          f"(target ≤ {TARGET_CREATE_MS:g} ms) {'ok' if ok_create else 'MISSED'}; "
          f"{created['passes'] / tenants:.2f} reconcile passes per tenant")
    print(f"kube-apiserver CPU per tenant at create: {1000 * server_cpu / tenants:.1f} ms; "
          f"etcd {1000 * etcd_cpu / tenants:.1f} ms")
    print(f"API requests per tenant at create (the server's audit of the operator): "
          f"{len(requests_at_create) / tenants:.1f}, and {inside_at_create / tenants:.1f} to the tenant's own API")
    if show_requests:
        print("\n".join(per_tenant(requests_at_create, tenants)))
    print(f"peak memory: operator {peak:.0f} MiB, kube-apiserver {apiserver.peak_mib():.0f} MiB, "
          f"etcd {etcd.peak_mib():.0f} MiB")
    start_s, rest_mib = tenant_server_floor(plane)
    print(f"why each tenant's API is emulated: one real tenant kube-apiserver takes {start_s:.1f}s to answer and "
          f"holds {rest_mib:.0f} MiB at rest, so {tenants} of them would need {tenants * rest_mib / 1024:.0f} GiB")
    failed = not ok_create
    for label, (resync, events) in zip(("the first after creation", "the next, verified"), idle, strict=True):
        ms = 1000 * resync["cpu"] / tenants
        reads = [e for e in events if e["verb"] in ("get", "list")]
        writes = [e for e in events if e["verb"] in WRITES]
        failed |= ms > TARGET_IDLE_MS or bool(writes)
        print(f"idle resync ({label}): operator CPU per tenant {ms:.2f} ms (target ≤ {TARGET_IDLE_MS:g}) "
              f"{'ok' if ms <= TARGET_IDLE_MS else 'MISSED'}; reads per tenant {len(reads) / tenants:.2f}; "
              f"{resync['passes'] / tenants:.2f} passes per tenant")
        print(f"idle resync ({label}): writes {len(writes)} (target 0) {'MISSED' if writes else 'ok'}")
        for event in writes[:20]:
            print(f"  idle write: {describe_write(event)}")
    return 1 if failed else 0, at_create, created["cpu"]


# -- the floor -------------------------------------------------------------------------------------------


def taken_apart(operator_cpu: float, floors: dict[str, dict[str, Any]], tenants: int) -> str:
    """The create figure in four parts, from the floors that passed their check (else why it is not)."""
    if set(floors) != set(ENGINES):
        return "create CPU per tenant, taken apart: not made (a floor failed: see above)"
    start, bare, on_kopf = floors["bare"]["start"], floors["bare"]["cpu"], floors["kopf"]["cpu"]
    ms = {part: 1000 * cpu / tenants for part, cpu in (
        ("start", start), ("requests", bare - start), ("kopf", on_kopf - bare), ("ours", operator_cpu - on_kopf),
        ("all", operator_cpu))}
    return (f"create CPU per tenant, taken apart: the process start {ms['start']:.1f} ms (the interpreter and "
            f"the imports, the same in all three); the requests alone {ms['requests']:.1f} ms; kopf "
            f"{ms['kopf']:.1f} ms; the operator's own work {ms['ours']:.1f} ms (of {ms['all']:.1f})")


def replay_of(keys: list[Key], at_create: list[dict[str, Any]], emulated: list[Any], urls: list[str]) -> dict[
        str, Replay]:
    """What each tenant's pass sent: the operator's requests at create by namespace, kopf's finalizer patches
    apart (the kopf floor's kopf sends its own, the bare floor sends these), and the objects it applied
    inside. The few outside any tenant's namespace (shared chart sources, reads) are dealt out over the
    tenants in the order they were sent."""
    namespaces = [namespace for namespace, _ in keys]
    replay: dict[str, Replay] = {
        namespace: {"management": [], "inside": _applied_inside(emulator), "url": url, "kopf": []}
        for namespace, emulator, url in zip(namespaces, emulated, urls, strict=True)
    }
    shared = 0
    for event in at_create:
        request = sent(event)
        if request is None:
            continue
        if _kopfs(event):
            if request["namespace"] in replay and request["verb"] == "patch":
                replay[request["namespace"]]["kopf"].append(request)
            continue
        plan = replay.get(request["namespace"] or "")
        if plan is None:
            plan, shared = replay[namespaces[shared % len(namespaces)]], shared + 1
        plan["management"].append(request)
    return replay


def _kopfs(event: dict[str, Any]) -> bool:
    """kopf's own request (its finalizers, its watches' lists), which the floor's kopf makes itself; not the
    Events its poster creates for the operator, which the floor sends for it."""
    ours = not str(event.get("userAgent", "")).startswith("kopf/")
    return not ours and (event.get("objectRef") or {}).get("resource") != "events"


def _applied_inside(emulator: Any) -> list[dict[str, Any]]:
    """The objects the operator applied in a tenant's API, in the order it created them, as it sent them
    (the emulator's own fields dropped). Nothing else writes there."""
    applied = []
    for stored in (o.raw for o in emulator.objects.values() if not o.deleted):
        meta = {k: v for k, v in stored["metadata"].items() if k in ("name", "namespace", "labels", "annotations")}
        applied.append({**{k: v for k, v in stored.items() if k not in ("metadata", "status")}, "metadata": meta})
    return applied


async def measure_floor(plane: ControlPlane, admin: Api, audit: AuditLog, kubeconfig: dict[str, Any],
                        replay: dict[str, Replay], replay_path: Path, emulated: list[Any], timeout: float, log: str,
                        operator: tuple[float, list[dict[str, Any]]], engine: str) -> tuple[int, dict[str, Any]]:
    """The floor's run on `engine` (`operator_floor.ENGINES`): its exit code and what the child measured
    (`cpu`, `start`: CPU seconds at create and of its process start). Exit 1
    when what it sent is not what the operator sent: an answer the operator was not given, or another
    number of requests of any verb and resource (watches and lists aside)."""
    tenants, (operator_cpu, operator_requests) = len(replay), operator
    apiserver = next(Served(p.popen.pid) for p in plane.processes if p.name == "kube-apiserver")
    mark, server_cpu = audit.mark(), apiserver.cpu()
    inside_before = sum(e.received for e in emulated)
    with spawned(floor_worker, kubeconfig, str(replay_path), f"{log}.floor-{engine}", engine) as pipe:
        started = time.perf_counter()
        if (up := await ask(pipe)) != "up":
            print(f"floor ({engine}): {up.get('error', up)}")
            return 1, {}
        if (ready := await unready_after(admin, tenants, started, timeout)) is not None:
            print(f"floor ({engine}) timed out: {ready}/{tenants} ready after {timeout:.0f}s")
            return 1, {}
        converged = time.perf_counter() - started
        floor = await ask(pipe, "converged")
        if "error" in floor:
            print(f"floor ({engine}): {floor['error']}")
            return 1, {}
        server_cpu = apiserver.cpu() - server_cpu
        requests = audit.since(mark)
        inside = sum(e.received for e in emulated) - inside_before
        peak = (await ask(pipe, "stop"))["peak_mib"]
    print(f"floor ({ENGINE_SAYS[engine]} sending the operator's requests, nothing rendered, validated, compared "
          f"or cached; operator_floor.py): {1000 * floor['cpu'] / tenants:.1f} ms CPU per tenant at create, process "
          f"start included (the replay's loading, {floor['loading']:.1f}s, left out); the operator above "
          f"{1000 * operator_cpu / tenants:.1f} ms, so the difference "
          f"{1000 * (operator_cpu - floor['cpu']) / tenants:.1f} ms")
    by_operator, by_floor = sends(operator_requests), sends(requests)
    print(f"floor ({engine}): converged in {converged:.1f}s; {by_floor.total() / tenants:.1f} requests per tenant to "
          f"the management API (watches and lists aside), {inside / tenants:.1f} to the tenant's; kube-apiserver "
          f"{1000 * server_cpu / tenants:.1f} ms per tenant; peak memory {peak:.0f} MiB (the replay held in it)")
    differ = {row: (by_operator[row], by_floor[row]) for row in {*by_operator, *by_floor}
              if abs(by_operator[row] - by_floor[row]) > max(1, by_operator[row] // 100)}
    for (verb, res), (ours, floors) in sorted(differ.items()):
        print(f"floor ({engine}): {verb} {res}: the operator sent {ours}, the floor {floors}")
    for what, count in sorted(floor["refused"].items()):
        print(f"floor ({engine}): answered otherwise than the operator: {what} ({count}x)")
    if differ or floor["refused"]:
        print(f"floor ({engine}): NOT the operator's requests: its figure is not the floor under the operator's")
        return 1, floor
    return 0, floor


ENGINE_SAYS = {"kopf": "kopf, with the operator's handlers, and our client", "bare": "our client alone, no kopf,"}


def sends(events: list[dict[str, Any]]) -> Counter[tuple[str, str]]:
    """Requests by verb and resource, whichever client sent them, watches and lists aside."""
    return Counter(what(e) for e in events if e["verb"] not in ("watch", "list"))


def main() -> None:
    parser = scale_arguments(__doc__, tenants=1000, timeout=900.0,
                             crds_help="the upstream CRDs the management cluster serves")
    parser.add_argument("--profile", type=Path, help="write the operator's cProfile of each phase to this directory "
                        "(create.prof, idle-1.prof, idle-2.prof; the CPU figures then include the profiler)")
    parser.add_argument("--floor", action="store_true", help="then measure the floor under the create figure "
                        "(operator_floor.py): the operator's requests sent again with nothing computed, on kopf "
                        "with the operator's handlers and by our client alone, and the figure taken apart")
    args = parser.parse_args()
    if not args.crds.is_dir():
        raise SystemExit(f"--crds {args.crds}: no such directory (the upstream CRDs, ../shared/crds)")
    if args.floor and args.profile:
        raise SystemExit("--floor with --profile would set a profiled operator against an unprofiled floor")
    with tempfile.TemporaryDirectory(prefix="tenantctl-real-scale-") as workdir:
        sys.exit(asyncio.run(run(args.tenants, args.timeout, args.crds, args.log, args.requests, Path(workdir),
                                     args.profile, args.floor)))


if __name__ == "__main__":
    main()

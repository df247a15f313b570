"""The operator killed (SIGKILL) at any write of a create pass: a fresh process converges on what an uncut
run leaves, with nothing duplicated, nothing missing and nothing left from the abandoned step.

Each case runs `tenantctl operator` as a process against the emulators, lets exactly N writes through
(management and tenant APIs counted together, kopf's own patches and events included), kills it on the
next one, starts a new process and waits for Ready. The final objects are compared with the uncut run's,
the Talos secrets each run generated standing in for one another. `make test` tries a spread of cut
points; `make slow` tries every one (docs/testing.md records the sweep).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import json
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import kmock
import pytest
from kube_emulator import CORE, PVC_PROTECTION, Fault, KubeEmulator, declare
from operator_support import condition, eventually, kubeconfig_for, management, seed_control_plane, seed_documents

from tenant_support import load_example
from tenantctl.operator.config.sharding import SHARD_LABEL, Shard, shard_of
from tenantctl.operator.kube.client import Connection, KubeClient, Resource
from tenantctl.operator.runtime.finalizers import finalizer_of, is_teardown_finalizer

pytestmark = [pytest.mark.timeout(600), pytest.mark.process]

TC = "tenantctl.io/v1alpha1/tenantclusters"
KEY = ("tenant-acme", "acme")
TALOS_SECRETS = "acme-talos-secrets"
# Fields that differ between any two runs (the server's bookkeeping, clocks).
_VOLATILE_META = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")
_VOLATILE_KEYS = frozenset({"lastTransitionTime", "lastUpdateTime", "lastHeartbeatTime", "time", "startedAt"})
_NOT_STATE = frozenset({"events", "leases"})


@dataclass
class Stand:
    mgmt: KubeEmulator
    tenant: KubeEmulator
    kubeconfig: Path
    writes: int = 0
    sequence: list[str] = field(default_factory=list)
    """The plural of each write, in order: where the steps of a pass begin."""
    cut: Callable[[str], bool] | None = None
    """Asked with the plural of each write before it is served: True kills the operator there."""
    killed: asyncio.Event = field(default_factory=asyncio.Event)
    process: asyncio.subprocess.Process | None = None
    outage_at: int | None = None
    """At this write, both APIs start answering every request 503 for `outage_seconds`."""
    outage_seconds: float = 3.0
    outage_reset: bool = False
    """The outage drops every connection (a reset) instead of answering 503."""
    outages: int = 0
    metrics_port: int = 0
    refused: list[Fault] = field(default_factory=list)
    args: tuple[str, ...] = ()
    """Further `tenantctl operator` flags for the next start (a shard layout)."""

    def outage(self) -> None:
        """Both APIs refuse everything (503, or a reset) for `outage_seconds`; open watch streams are cut."""
        faults = [Fault(m, status=503, times=10**9, message="injected outage", reset=self.outage_reset)
                  for m in ("GET", "POST", "PUT", "PATCH", "DELETE")]
        for emulator in (self.mgmt, self.tenant):
            emulator.faults.extend(faults)
            if self.outage_reset:
                emulator.cut_watches()
        self.outages += 1
        self.refused = faults

        def over() -> None:
            for emulator in (self.mgmt, self.tenant):
                emulator.faults[:] = [f for f in emulator.faults if f not in faults]

        asyncio.get_running_loop().call_later(self.outage_seconds, over)

    async def before_write(self, _method: str, plural: str) -> None:
        """Count writes across both APIs; at the cut, kill the operator and never answer this one."""
        if self.outage_at is not None and self.writes == self.outage_at:
            self.outage()
        if self.cut is not None and self.cut(plural) and self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGKILL)
            self.killed.set()
            await asyncio.Event().wait()
        self.writes += 1
        self.sequence.append(plural)

    async def start(self) -> None:
        """The operator as a process; its log goes to `operator.log` beside the kubeconfig (appended)."""
        log = (self.kubeconfig.parent / "operator.log").open("ab")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.metrics_port = int(probe.getsockname()[1])
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tenantctl", "operator", "--kubeconfig", str(self.kubeconfig),
            "--resync", "3600", "--metrics-port", str(self.metrics_port), *self.args, stdout=log, stderr=log,
        )
        log.close()

    async def passed(self) -> None:
        """Until the running process has finished a pass. `done` may hold before it started (a cut after
        the status write that makes it true): quiet alone then stopped the new process before its first
        pass when its start took longer than the quiet window, and its writes were never made."""

        async def passes() -> float:
            try:
                async with aiohttp.ClientSession() as http, \
                        http.get(f"http://127.0.0.1:{self.metrics_port}/metrics") as answer:
                    text = await answer.text()
            except aiohttp.ClientError:
                return 0.0
            return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                       if line.startswith("tenantctl_reconcile_passes_total{"))

        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while await passes() < 1:
            assert loop.time() < deadline, "the operator process finished no pass within 60s"
            await asyncio.sleep(0.1)

    async def stop(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), 20)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()

    def ready(self) -> bool:
        return condition(self.mgmt.get(TC, *KEY), "Ready").get("status") == "True"

    async def cut_pass(
        self, cut: Callable[[str], bool] | None, done: Callable[[], bool], what: str,
        change: Callable[[], None] | None = None,
    ) -> None:
        """With `cut` set, make `change` (if any) and start the operator unless it runs; restart it if the
        cut killed it, then wait for `done` and quiet, and stop it. A cut that never fired raises
        CutNotReached (the pass wrote fewer times than the cut's N)."""
        self.cut = cut
        if change is not None:
            change()
        if self.process is None or self.process.returncode is not None:
            await self.start()
        await eventually(lambda: self.killed.is_set() or done(), timeout=60)
        if cut is not None and not self.killed.is_set():
            # `done` can hold before the pass's last writes (kopf's bookkeeping after Ready): a cut there
            # has not been passed until the APIs are quiet.
            await self.quiet(until=self.killed.is_set)
            if not self.killed.is_set():
                raise CutNotReached(f"the {what} ended before its cut")
        if self.killed.is_set():
            assert self.process is not None
            await self.process.wait()
            self.cut = None
            await self.start()
        await eventually(done, timeout=60)
        await self.passed()
        await self.quiet()
        await self.stop()

    async def quiet(self, seconds: float = 1.5, until: Callable[[], bool] = lambda: False) -> None:
        """Until no write for `seconds` (kopf's bookkeeping after Ready has landed), or `until` holds."""
        seen, since = self.writes, asyncio.get_running_loop().time()
        while asyncio.get_running_loop().time() - since < seconds and not until():
            await asyncio.sleep(0.1)
            if self.writes != seen:
                seen, since = self.writes, asyncio.get_running_loop().time()


class CutNotReached(AssertionError):
    """The pass wrote fewer times in this run than the uncut one did (its Events and kopf's own patches
    vary from run to run), so a cut after its Nth write never fired: nothing was tested there."""


def after_writes(n: int) -> Callable[[str], bool]:
    """Cut once `n` writes have been served since the cut was set."""
    served = iter(range(n))
    return lambda _plural: next(served, None) is None


def on_write_of(plural: str, occurrence: int) -> Callable[[str], bool]:
    """Cut at the `occurrence`-th write of `plural` (1-based): a step, whatever the writes around it."""
    seen = 0

    def cut(written: str) -> bool:
        nonlocal seen
        seen += written == plural
        return written == plural and seen >= occurrence

    return cut


@contextlib.asynccontextmanager
async def stand(tmp_path: Path) -> AsyncIterator[Stand]:
    async with KubeEmulator() as mgmt, kmock.Server(mgmt), KubeEmulator() as tenant, kmock.Server(tenant):
        declare(mgmt, CORE)
        declare(tenant, CORE)
        docs = load_example("proxmox.yaml")
        management(mgmt)
        seed_documents(mgmt, docs)
        seed_control_plane(mgmt, docs, str(tenant.url).rstrip("/"))
        tmp_path.mkdir(parents=True, exist_ok=True)
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(kubeconfig_for(str(mgmt.url).rstrip("/")))
        here = Stand(mgmt, tenant, kubeconfig)
        mgmt.before_write = tenant.before_write = here.before_write
        try:
            yield here
        finally:
            await here.stop()


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if k not in _VOLATILE_KEYS}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def state(here: Stand, generated: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every object both APIs hold, without the server's bookkeeping, the generated secrets replaced by
    their names (each run generates its own)."""
    objects: dict[str, Any] = {}
    for where, emulator in (("mgmt", here.mgmt), ("tenant", here.tenant)):
        for (res, namespace, name), obj in emulator.objects.items():
            if obj.deleted or res.plural in _NOT_STATE:
                continue
            body = json.loads(json.dumps(obj.raw))
            if res.plural == "secrets":  # decoded, so the generated values and URLs below can be replaced
                data = body.get("data", {})
                body["data"] = {k: base64.b64decode(v).decode(errors="replace") for k, v in data.items()}
            meta = body.get("metadata", {})
            for volatile in _VOLATILE_META:
                meta.pop(volatile, None)
            objects[f"{where}/{res.plural}/{namespace}/{name}"] = _scrub(body)
    generated = generated or here.mgmt.get("v1/secrets", KEY[0], TALOS_SECRETS) or {}
    text = json.dumps(objects)
    for placeholder, url in (("<tenant-url>", here.tenant.url), ("<mgmt-url>", here.mgmt.url)):
        text = text.replace(str(url).rstrip("/"), placeholder)
    values = {k: base64.b64decode(v).decode() for k, v in generated.get("data", {}).items()}
    for key, value in sorted(values.items(), key=lambda kv: -len(kv[1])):  # longest first: no partial hits
        text = text.replace(value, f"<{key}>")
    scrubbed: dict[str, Any] = json.loads(text)
    return dict(sorted(scrubbed.items()))


async def converge(here: Stand, timeout: float = 60.0) -> None:
    await here.start()
    await eventually(here.ready, timeout=timeout)
    await here.quiet()


async def _create(tmp_path: Path, cut: Callable[[str], bool] | None) -> tuple[dict[str, Any], list[str]]:
    """A create pass cut where `cut` says and resumed by a fresh process (None: uncut): the state left,
    the plural of each write."""
    async with stand(tmp_path) as here:
        await here.cut_pass(cut, here.ready, "create pass")
        return state(here), here.sequence


@pytest.fixture(scope="module")
def uncut(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[str]]:
    """The uncut run: its final state, and the plural of each write its create pass made."""
    return asyncio.run(_create(tmp_path_factory.mktemp("uncut"), None))


# Steps a cut between them once broke or could break: the control plane written but no MachineDeployment
# yet (status.versions lost the pool until the next resync), the first TalosConfigTemplate, the first
# write inside the tenant, the first HelmRelease.
STEPS = ("machinedeployments", "talosconfigtemplates", "clusterrolebindings", "helmreleases")


Cuts = dict[str, Callable[[], Callable[[str], bool]]]
"""Cut points by what they are (`after N writes`, or a named step), each a factory of a fresh cut."""


def sweep_cuts(
    what: str, cuts: Cuts, tmp_path: Path, differences: Callable[[Path, Callable[[str], bool]], list[str]]
) -> None:
    """Run each cut in a directory of its own and fail naming every cut point whose resumed run differs
    or never converged. A cut after N writes that this run's pass did not reach is recorded as not
    reached; a named cut must fire (its CutNotReached fails the sweep)."""
    outcomes: dict[str, list[str]] = {}
    for i, (where, cut) in enumerate(cuts.items()):
        try:
            outcomes[where] = differences(tmp_path / f"cut-{i}", cut())
        except CutNotReached:
            if not where.startswith("after "):
                raise
            outcomes[where] = ["not reached"]
        except AssertionError as exc:  # never converged, or a check of the resumed run failed: the sweep goes on
            outcomes[where] = [f"failed: {str(exc)[:200]}"]
    broken = {where: d for where, d in outcomes.items() if d and d != ["not reached"]}
    unreached = [where for where, d in outcomes.items() if d == ["not reached"]]
    print(f"{what}: {len(outcomes)} cut points, {len(outcomes) - len(broken) - len(unreached)} equal to the uncut "
          f"end, not reached: {unreached or 'none'}")  # the sweep's table row (pytest -rP shows it)
    assert not broken, f"{what} cut points whose resumed run differs: {broken}"


def _diff(expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """What differs, object by object; a changed object names its first differing fields and both
    values, so a difference seen once (a flake) can be explained from the failure alone."""
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected))
    changed = sorted(k for k in set(expected) & set(got) if expected[k] != got[k])
    return [f"missing {k}" for k in missing] + [f"extra {k}" for k in extra] + [
        f"changed {k}: " + "; ".join(_fields_differing(expected[k], got[k])[:5]) for k in changed
    ]


def _fields_differing(expected: Any, got: Any, path: str = "") -> list[str]:
    if isinstance(expected, dict) and isinstance(got, dict):
        return [d for key in sorted(set(expected) | set(got), key=str)
                for d in _fields_differing(expected.get(key, "<absent>"), got.get(key, "<absent>"), f"{path}.{key}")]
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        return [d for i, (e, g) in enumerate(zip(expected, got, strict=True))
                for d in _fields_differing(e, g, f"{path}[{i}]")]
    return [] if expected == got else [f"{path or '.'}: {str(expected)[:120]!r} -> {str(got)[:120]!r}"]


def check_cuts(uncut: tuple[dict[str, Any], list[str]], tmp_path: Path, every: bool) -> None:
    """Killed at the create pass's first and last write and at the first write of each of STEPS; `every`
    adds each write of the pass."""
    expected, sequence = uncut
    assert len(sequence) > 10, "a create pass writes more than a handful of objects"
    assert set(STEPS) <= set(sequence), sequence
    cuts: Cuts = {f"after {n} writes": functools.partial(after_writes, n)
                  for n in (range(len(sequence)) if every else (0, len(sequence) - 1))}
    cuts |= {f"at the first {plural}": functools.partial(on_write_of, plural, 1) for plural in STEPS}
    sweep_cuts("create", cuts, tmp_path, lambda path, cut: _diff(expected, asyncio.run(_create(path, cut))[0]))


@pytest.mark.parametrize(
    ("step", "reset"), [("machinedeployments", False), ("clusterrolebindings", False), ("machinedeployments", True)]
)
def test_an_outage_of_both_apis_mid_pass_ends_in_the_same_objects(
    uncut: tuple[dict[str, Any], list[str]], tmp_path: Path, step: str, reset: bool
) -> None:
    """Every request answered 503 (or its connection reset, open watch streams cut) for 3 s from the
    first write of a step on: the same process retries and converges on what the uncut run left."""
    expected, sequence = uncut

    async def run() -> dict[str, Any]:
        async with stand(tmp_path) as here:
            here.outage_reset = reset
            here.outage_at = sequence.index(step)
            await converge(here, timeout=90)
            await here.stop()
            assert here.outages == 1
            assert sum(10**9 - f.times for f in here.refused) > 0, "the outage refused requests"
            return state(here)

    assert _diff(expected, asyncio.run(run())) == []


async def _delete_tenant(here: Stand) -> None:
    async with KubeClient(Connection.from_server(str(here.mgmt.url).rstrip("/"))) as api:
        await api.delete(Resource("tenantctl.io/v1alpha1", "TenantCluster", "tenantclusters", True), KEY[1], KEY[0])


def _tenant_gone(here: Stand) -> bool:
    return here.mgmt.get(TC, *KEY) is None


DISKS = {"pv-a": "local-zfs:vm-1-disk-a", "pv-b": "local-zfs:vm-1-disk-b"}


def _volumes(tenant: KubeEmulator) -> None:
    """Two disks in the tenant: claims, protected, mounted by one pod; the CSI driver frees them late."""
    tenant.pv_release_delay = 0.5
    for pv, disk in DISKS.items():
        tenant.put("v1/persistentvolumes", {"metadata": {"name": pv}, "spec": {"csi": {"volumeHandle": disk}}})
        tenant.put("v1/persistentvolumeclaims", {"metadata": {"name": f"data-{pv}", "namespace": "app",
                                                              "finalizers": [PVC_PROTECTION]},
                                                 "spec": {"volumeName": pv}})
    mounts = [{"name": pv, "persistentVolumeClaim": {"claimName": f"data-{pv}"}} for pv in DISKS]
    tenant.put("v1/pods", {"metadata": {"name": "db", "namespace": "app"}, "spec": {"volumes": mounts}})


def _teardown_records(here: Stand) -> list[dict[str, Any]]:
    """Every `status.teardown` the TenantCluster ever carried, in order (its history outlives it)."""
    held = next((o for (res, ns, name), o in here.mgmt.objects.items()
                 if res.plural == "tenantclusters" and (ns, name) == KEY), None)
    bodies = [dict(b) for b in (held.history if held is not None else []) if b is not None]
    return [(b.get("status") or {}).get("teardown") or {} for b in bodies]


def _freed_records(here: Stand) -> list[list[str]]:
    """Every `status.teardown.freed.volumes` the TenantCluster ever carried, in order."""
    return [(t.get("freed") or {}).get("volumes") or [] for t in _teardown_records(here)]


async def _teardown(
    tmp_path: Path, cut: Callable[[str], bool] | None, disks: bool = False
) -> tuple[dict[str, Any], list[str], dict[str, Any] | None]:
    """A tenant created, deleted, and its teardown cut where `cut` says and resumed (None: uncut): the
    state left, the teardown's writes, and the state at the kill if the TenantCluster was gone by then.
    `disks`: the tenant holds two volumes; no record may say a disk was freed before the CSI driver
    freed it, and the last record names both."""
    async with stand(tmp_path) as here:
        await converge(here)
        if disks:
            _volumes(here.tenant)
        generated = here.mgmt.get("v1/secrets", KEY[0], TALOS_SECRETS)  # the teardown deletes it
        await _delete_tenant(here)
        base = here.writes
        gone_at_kill = None
        if cut is None:
            await eventually(lambda: _tenant_gone(here), timeout=60)
        else:
            here.cut = cut
            await eventually(here.killed.is_set, timeout=60)
            await here.process.wait()  # type: ignore[union-attr]
            if _tenant_gone(here):
                gone_at_kill = state(here, generated)
            here.cut = None
            await here.start()
            await eventually(lambda: _tenant_gone(here), timeout=60)
        await here.quiet()
        await here.stop()
        if disks:
            records = [r for r in _freed_records(here) if r]
            assert records and set(records[-1]) == set(DISKS.values()), (records, _teardown_records(here)[-3:])
            assert all(set(r) <= set(here.tenant.freed_disks) for r in records), (records, here.tenant.freed_disks)
        return state(here, generated), here.sequence[base:], gone_at_kill


@pytest.fixture(scope="module")
def uncut_teardown(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[str]]:
    left, sequence, _ = asyncio.run(_teardown(tmp_path_factory.mktemp("uncut-teardown"), None))
    return left, sequence


def check_teardown_cuts(uncut: tuple[dict[str, Any], list[str]], tmp_path: Path, every: bool) -> None:
    """Cut at every write, or at the first, a middle one and the finalizer's release (the last write to
    the TenantCluster, found by its count: Events interleave differently from run to run). A TenantCluster
    gone at the kill must have had nothing left to tear down: the finalizer is never released early."""
    expected, sequence = uncut
    cuts: Cuts = {
        f"after {n} writes": functools.partial(after_writes, n)
        for n in (range(len(sequence)) if every else (0, len(sequence) // 2))
    }
    release = sequence.count("tenantclusters")
    cuts["at the finalizer's release"] = functools.partial(on_write_of, "tenantclusters", release)
    sweep_cuts("teardown", cuts, tmp_path, functools.partial(_teardown_differences, expected, disks=False))


def _teardown_differences(
    expected: dict[str, Any], path: Path, cut: Callable[[str], bool], *, disks: bool
) -> list[str]:
    """What a cut teardown left that the uncut one did not, and, if the TenantCluster was gone at the
    kill, what was still to tear down then (released early)."""
    left, _, gone_at_kill = asyncio.run(_teardown(path, cut, disks=disks))
    early = [] if gone_at_kill is None else [f"released early: {d}" for d in _diff(expected, gone_at_kill)]
    return _diff(expected, left) + early


def test_the_comparison_sees_a_difference(uncut: tuple[dict[str, Any], list[str]]) -> None:
    """Control: a state with one object dropped and one changed is reported, so an empty diff means equal."""
    expected, _ = uncut
    damaged = dict(expected)
    dropped = next(k for k in damaged if "/machinedeployments/" in k)
    del damaged[dropped]
    changed = next(k for k in damaged if "/talosconfigtemplates/" in k)
    damaged[changed] = {**damaged[changed], "spec": {}}
    missing, changed_line = _diff(expected, damaged)
    assert missing == f"missing {dropped}"
    assert changed_line.startswith(f"changed {changed}: .spec.template: ") and changed_line.endswith("-> '<absent>'")


SERVICES = "v1/services"


def _apiserver_service(here: Stand) -> dict[str, Any]:
    [service] = [obj.raw for (res, ns, _), obj in here.mgmt.objects.items()
                 if res.plural == "services" and ns == KEY[0] and not obj.deleted
                 and obj.raw.get("spec", {}).get("type") == "LoadBalancer"]
    return json.loads(json.dumps(service))


def _waiting_for_endpoint(here: Stand) -> bool:
    return condition(here.mgmt.get(TC, *KEY), "EndpointReady").get("reason") == "WaitingForEndpoint"


async def _endpoint_arrives(tmp_path: Path, cut: Callable[[str], bool] | None) -> tuple[dict[str, Any], list[str]]:
    """A tenant whose apiserver Service has no LoadBalancer address yet: the operator applies what it can
    and waits. Then the address arrives (the endpoint step: the machine config, the add-ons and the tenant
    bootstrap follow from it); that pass is cut where `cut` says and resumed. The state, the pass's writes."""
    async with stand(tmp_path) as here:
        service = _apiserver_service(here)
        address = service.pop("status")
        here.mgmt.put(SERVICES, service)
        await here.start()
        await eventually(lambda: _waiting_for_endpoint(here), timeout=60)
        await here.quiet()
        base = here.writes
        await here.cut_pass(cut, here.ready, "endpoint pass",
                            change=lambda: here.mgmt.put(SERVICES, {**_apiserver_service(here), "status": address}))
        return state(here), here.sequence[base:]


@pytest.fixture(scope="module")
def uncut_endpoint(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[str]]:
    return asyncio.run(_endpoint_arrives(tmp_path_factory.mktemp("uncut-endpoint"), None))


def check_endpoint_cuts(uncut: tuple[dict[str, Any], list[str]], tmp_path: Path, every: bool) -> None:
    """Killed at the endpoint pass's first TalosConfigTemplate (the machine config now has its endpoint);
    `every` adds its first write inside the tenant, its first HelmRelease and each of its writes."""
    expected, sequence = uncut
    assert "talosconfigtemplates" in sequence and "helmreleases" in sequence, sequence
    steps = ("talosconfigtemplates", "clusterrolebindings", "helmreleases") if every else ("talosconfigtemplates",)
    cuts: Cuts = {
        f"at the first {plural}": functools.partial(on_write_of, plural, 1) for plural in steps
    }
    if every:
        cuts |= {f"after {n} writes": functools.partial(after_writes, n) for n in range(len(sequence))}
    sweep_cuts("endpoint-step", cuts, tmp_path,
               lambda path, cut: _diff(expected, asyncio.run(_endpoint_arrives(path, cut))[0]))


def test_the_endpoint_pass_ends_where_a_create_with_the_address_does(
    uncut: tuple[dict[str, Any], list[str]], uncut_endpoint: tuple[dict[str, Any], list[str]]
) -> None:
    """Waiting for the address first changes nothing in the end: the uncut runs agree."""
    assert _diff(uncut[0], uncut_endpoint[0]) == []


NEW_OWNER = Shard(shard_of(*KEY, 2), 2)


def _teardown_finalizers(body: dict[str, Any] | None) -> list[str]:
    return [f for f in ((body or {}).get("metadata") or {}).get("finalizers") or [] if is_teardown_finalizer(f)]


def _unowned_versions(history: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """Stored versions, from the first holding a teardown finalizer on, that hold none (a deletion then
    would skip the teardown) or one of neither layout: (resourceVersion, their teardown finalizers)."""
    layouts = {finalizer_of(Shard()), finalizer_of(NEW_OWNER)}
    held = [_teardown_finalizers(version) for version in history]
    first = next((i for i, names in enumerate(held) if names), len(held))
    return [(str(history[i]["metadata"].get("resourceVersion")), names) for i, names in enumerate(held)
            if i >= first and (not names or not set(names) <= layouts)]


def _handed_over(here: Stand) -> bool:
    """The tenant and its pool hold the new owner's teardown finalizer alone and its shard label, and the
    tenant is Ready."""
    own = [finalizer_of(NEW_OWNER)]
    bodies = [here.mgmt.get(plural, KEY[0], name) for plural, name in ((TC, KEY[1]), (NODEPOOLS, "md0"))]
    return here.ready() and all(
        _teardown_finalizers(body) == own and ((body or {})["metadata"].get("labels") or {}).get(SHARD_LABEL)
        == NEW_OWNER.label for body in bodies)


async def _handover(tmp_path: Path, cut: Callable[[str], bool] | None) -> tuple[dict[str, Any], list[str], list[Any]]:
    """A tenant converged by the unsharded operator, then handed to its owner among two shards, whose
    first process is cut where `cut` says and started again. The state, the handover's writes, and every
    stored version of the tenant and its pool left without an owner's teardown finalizer (both layouts'
    at once is the handover itself: kopf adds the new owner's, the pass then drops the old)."""
    async with stand(tmp_path) as here:
        await converge(here)
        await here.stop()
        assert _teardown_finalizers(here.mgmt.get(TC, *KEY)) == [finalizer_of(Shard())]
        here.args = ("--shard", str(NEW_OWNER))
        base = here.writes
        await here.cut_pass(cut, lambda: _handed_over(here), "handover")
        ownerless = [(plural, *bad) for plural, name in ((TC, KEY[1]), ("tenantctl.io/v1alpha1/nodepools", "md0"))
                     for bad in _unowned_versions(here.mgmt.objects[plural, KEY[0], name].history)]
        return state(here), here.sequence[base:], ownerless


@pytest.fixture(scope="module")
def uncut_handover(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[str]]:
    left, sequence, ownerless = asyncio.run(_handover(tmp_path_factory.mktemp("uncut-handover"), None))
    assert ownerless == []
    return left, sequence


def check_handover_cuts(uncut: tuple[dict[str, Any], list[str]], tmp_path: Path, every: bool) -> None:
    """Killed at the new owner's first three writes of the TenantCluster (its shard label, its finalizer
    added by kopf, the old layout's replaced); `every` adds each write of the handover. The tenant and the pool
    are never without an owner's teardown finalizer, end with the new owner's alone, and the end state
    is the uncut handover's."""
    expected, sequence = uncut
    assert sequence.count("tenantclusters") >= 3, sequence
    cuts: Cuts = {
        f"at the TenantCluster's write {n}": functools.partial(on_write_of, "tenantclusters", n) for n in (1, 2, 3)
    }
    if every:
        cuts |= {f"after {n} writes": functools.partial(after_writes, n) for n in range(len(sequence))}

    def differences(path: Path, cut: Callable[[str], bool]) -> list[str]:
        left, _, ownerless = asyncio.run(_handover(path, cut))
        return _diff(expected, left) + [f"without an owner: {v}" for v in ownerless]

    sweep_cuts("handover", cuts, tmp_path, differences)


NODEPOOLS = "tenantctl.io/v1alpha1/nodepools"
MDS = "cluster.x-k8s.io/v1beta1/machinedeployments"
TCTS = "bootstrap.cluster.x-k8s.io/v1alpha3/talosconfigtemplates"


def _pool_changed(here: Stand) -> bool:
    """The change pass has landed: the pool grew and its machine config (replaced: CABPT's spec is
    immutable) carries the new label."""
    md, tct = here.mgmt.get(MDS, KEY[0], "acme-md0"), here.mgmt.get(TCTS, KEY[0], "acme-md0")
    data = json.dumps(tct or {})
    return bool(md and md["spec"].get("replicas") == 3 and "example.com/tier" in data)


def _grow(pool: dict[str, Any]) -> None:
    """The change, as the API server stores a spec edit: one replica more, a node label, a new generation."""
    pool["spec"] |= {"replicas": 3, "labels": {"example.com/tier": "gold"}}
    pool["metadata"]["generation"] = int(pool["metadata"].get("generation") or 1) + 1


async def _pool_change(
    tmp_path: Path, cut: Callable[[str], bool] | None
) -> tuple[dict[str, Any], list[str]]:
    """A converged tenant whose pool then grows by one and gains a node label (the TalosConfigTemplate is
    deleted and created again), that pass cut where `cut` says and resumed: the state, the pass's writes."""
    async with stand(tmp_path) as here:
        await converge(here)
        await here.stop()
        pool = here.mgmt.get(NODEPOOLS, KEY[0], "md0")
        assert pool is not None
        _grow(pool)
        here.mgmt.put(NODEPOOLS, pool)
        base = here.writes
        await here.cut_pass(cut, lambda: _pool_changed(here), "change pass")
        return state(here), here.sequence[base:]


@pytest.fixture(scope="module")
def uncut_pool_change(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[str]]:
    return asyncio.run(_pool_change(tmp_path_factory.mktemp("uncut-pool-change"), None))


def check_pool_change_cuts(uncut: tuple[dict[str, Any], list[str]], tmp_path: Path, every: bool) -> None:
    """The replace step: killed with the TalosConfigTemplate deleted but not yet created again. `every`
    adds the pass's every write, the template's delete and the MachineDeployment's update."""
    expected, sequence = uncut
    assert sequence.count("talosconfigtemplates") >= 2, f"the change replaces the template: {sequence}"
    cuts: Cuts = {
        "between the template's delete and create": functools.partial(on_write_of, "talosconfigtemplates", 2),
    }
    if every:
        cuts |= {f"after {n} writes": functools.partial(after_writes, n) for n in range(len(sequence))}
        cuts["at the template's delete"] = functools.partial(on_write_of, "talosconfigtemplates", 1)
        cuts["at the MachineDeployment's update"] = functools.partial(on_write_of, "machinedeployments", 1)
    sweep_cuts("pool-change", cuts, tmp_path,
               lambda path, cut: _diff(expected, asyncio.run(_pool_change(path, cut))[0]))


def test_a_change_made_while_the_watch_streams_were_cut_is_acted_on(
    uncut_pool_change: tuple[dict[str, Any], list[str]], tmp_path: Path
) -> None:
    """The running operator's watch streams are cut and every request reset for 3 s; the NodePool changes
    meanwhile. Its watches and cache must come back and act on the change (the resync is an hour away):
    the end state is the uncut change pass's."""
    expected, _ = uncut_pool_change

    async def run() -> dict[str, Any]:
        async with stand(tmp_path) as here:
            await converge(here)
            here.outage_reset = True
            here.outage()
            pool = here.mgmt.get(NODEPOOLS, KEY[0], "md0")
            assert pool is not None
            _grow(pool)
            here.mgmt.put(NODEPOOLS, pool)
            await eventually(lambda: _pool_changed(here), timeout=90)
            await here.quiet()
            await here.stop()
            assert sum(10**9 - f.times for f in here.refused) > 0, "the outage refused requests"
            return state(here)

    assert _diff(expected, asyncio.run(run())) == []


@pytest.fixture(scope="module")
def uncut_teardown_with_disks(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[str]]:
    left, sequence, _ = asyncio.run(_teardown(tmp_path_factory.mktemp("uncut-teardown-disks"), None, disks=True))
    return left, sequence


def check_disk_cuts(uncut: tuple[dict[str, Any], list[str]], tmp_path: Path, every: bool) -> None:
    """Killed between the two claims' deletes (and, `every`, at the first, at the pod's delete and at
    every write): the resumed process finishes, the CSI driver freed both disks, no record named a disk
    before it was freed, and the end state is the uncut teardown's."""
    expected, sequence = uncut
    assert sequence.count("persistentvolumeclaims") == len(DISKS) and "pods" in sequence, sequence
    cuts: Cuts = {
        "at the second claim's delete": functools.partial(on_write_of, "persistentvolumeclaims", 2),
    }
    if every:
        cuts |= {f"after {n} writes": functools.partial(after_writes, n) for n in range(len(sequence))}
        cuts["at the first claim's delete"] = functools.partial(on_write_of, "persistentvolumeclaims", 1)
        cuts["at the pod's delete"] = functools.partial(on_write_of, "pods", 1)
    sweep_cuts("teardown-with-disks", cuts, tmp_path, functools.partial(_teardown_differences, expected, disks=True))


Check = Callable[[tuple[dict[str, Any], list[str]], Path, bool], None]
SWEEPS: dict[str, tuple[str, Check]] = {
    "create": ("uncut", check_cuts),
    "teardown": ("uncut_teardown", check_teardown_cuts),
    "teardown-disks": ("uncut_teardown_with_disks", check_disk_cuts),
    "pool-change": ("uncut_pool_change", check_pool_change_cuts),
    "endpoint": ("uncut_endpoint", check_endpoint_cuts),
    "handover": ("uncut_handover", check_handover_cuts),
}
"""Each pass a process may die in: the fixture holding its uncut run, and its sweep (the named cut
points in `make test`; every write of the pass besides in `make slow`, about 20 s a cut)."""


@pytest.mark.parametrize("every", [
    pytest.param(False, id="named-cuts"),
    pytest.param(True, id="every-write", marks=[pytest.mark.slow, pytest.mark.timeout(3600)]),
])
@pytest.mark.parametrize("sweep", list(SWEEPS))
def test_a_pass_killed_midway_resumes_to_the_uncut_end(
    sweep: str, every: bool, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    fixture, check = SWEEPS[sweep]
    check(request.getfixturevalue(fixture), tmp_path, every)

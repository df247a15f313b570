"""A shard layout change on the real servers: `tenantctl operator --shard I/N` processes, three, then two.

Each tenant ends with the finalizer and the shard label of its owner under the running layout alone; a
tenant deleted while no shard ran, held only by the old layout's finalizer, is torn down by its new owner
and goes. A label edited by hand goes back to the owner. And what the shard label rests on: kube-apiserver
sends an object that stops matching a watch's selector as DELETED, with the labels it matched by.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from real_api import Api, wait_for
from real_control_plane import ControlPlane
from real_seed import OPERATOR_NAMESPACE, OPERATOR_SA, seed_tenant
from tenant_support import load_example
from tenantctl.operator.config.sharding import SHARD_LABEL, Shard, shard_of
from tenantctl.operator.kube.client import APIError, Connection, KubeClient, Resource
from tenantctl.operator.phases.conditions import StepOutcome, TeardownStep
from tenantctl.operator.phases.teardown import TeardownReport
from tenantctl.operator.runtime.finalizers import finalizer_of, is_teardown_finalizer, take_over
from tenantctl.operator.runtime.teardown_status import Reported, report_teardown

pytestmark = [pytest.mark.timeout(300), pytest.mark.process]

TC = ("tenantctl.io/v1alpha1", "TenantCluster")
NP = ("tenantctl.io/v1alpha1", "NodePool")
NAMESPACES = [f"shard-tenant-{i}" for i in range(4)]


@contextmanager
def layout(kubeconfig: Path, count: int, log: Path) -> Iterator[None]:
    """Every shard of `count` as its own `tenantctl operator` process, until the block ends."""
    binary = str(Path(sys.executable).with_name("tenantctl"))
    processes = []
    with log.open("ab") as out:
        for i in range(count):
            processes.append(subprocess.Popen(
                [binary, "operator", "--kubeconfig", str(kubeconfig), "--shard", f"{i}/{count}", "--resync", "2",
                 "--requeue", "1s"], stdout=out, stderr=subprocess.STDOUT, start_new_session=True))
    try:
        yield
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            process.wait(30)


def _ours(admin: Api, namespace: str) -> list[str] | None:
    body = admin.get(*TC, namespace, "demo")
    if body is None:
        return None
    return [f for f in body["metadata"].get("finalizers") or [] if is_teardown_finalizer(f)]


def _owner(namespace: str, count: int) -> str:
    return finalizer_of(Shard(shard_of(namespace, "demo", count), count))


def _labels(admin: Api, namespace: str) -> set[str | None]:
    """The shard labels of the tenant's TenantCluster and NodePools."""
    bodies = [admin.get(*TC, namespace, "demo"), *admin.list(*NP, namespace)]
    return {(b["metadata"].get("labels") or {}).get(SHARD_LABEL) for b in bodies if b is not None}


def _tracebacks(text: str) -> list[str]:
    """Each traceback in an operator log with the lines before it. Printed when the test fails, for the
    captured output keeps them whole (an assertion's message is cut at eight lines) and the temp dir goes."""
    lines = text.splitlines()
    return ["\n".join(lines[max(0, i - 8):i + 40]) for i, line in enumerate(lines) if "Traceback" in line]


def _settled(admin: Api, namespaces: list[str], count: int) -> bool:
    return all(
        _ours(admin, ns) == [_owner(ns, count)]
        and _labels(admin, ns) == {Shard(shard_of(ns, "demo", count), count).label}
        for ns in namespaces
    )


def test_three_shards_to_two_hand_every_tenant_over_and_a_deletion_between_completes(
    installed: Any, admin: Api, management: ControlPlane, tmp_path: Path,
) -> None:
    kubeconfig = tmp_path / "operator.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(management.kubeconfig_for(OPERATOR_NAMESPACE, OPERATOR_SA)))
    log = tmp_path / "operators.log"
    for namespace in NAMESPACES:
        docs = copy.deepcopy(load_example("kubevirt.yaml"))
        for d in docs:
            d["metadata"]["namespace"] = namespace
        seed_tenant(admin, docs)
    assert len({shard_of(ns, "demo", 3) for ns in NAMESPACES}) >= 2, "the tenants spread over the shards"
    with layout(kubeconfig, 3, log):
        wait_for(lambda: _settled(admin, NAMESPACES, 3), 90, 0.5, "every tenant held by its owner of 3")
    deleted, staying = NAMESPACES[0], NAMESPACES[1:]
    assert admin.delete(*TC, deleted, "demo")
    assert _ours(admin, deleted) == [_owner(deleted, 3)], "no shard runs: the old layout's finalizer holds it"
    with layout(kubeconfig, 2, log):
        wait_for(lambda: _ours(admin, deleted) is None, 90, 0.5, "the tenant deleted between layouts gone")
        wait_for(lambda: _settled(admin, staying, 2), 90, 0.5, "every tenant held by its owner of 2 alone")
        edited = staying[0]
        elsewhere = Shard(1 - shard_of(edited, "demo", 2), 2).label
        admin.merge(*TC, edited, "demo", {"metadata": {"labels": {SHARD_LABEL: elsewhere}}})
        wait_for(lambda: _settled(admin, staying, 2), 90, 0.5, "a label edited by hand given back to the owner")
    tracebacks = _tracebacks(log.read_text())
    print("\n\n".join(tracebacks))
    assert not tracebacks, f"{len(tracebacks)} traceback(s) in the operators' log: printed above"


async def test_an_object_leaving_a_selected_watch_arrives_deleted_with_the_labels_it_matched_by(
    installed: Any, admin: Api, management: ControlPlane,
) -> None:
    """The shard a tenant is relabelled away from learns it from its own selected watch: DELETED, carrying
    its own label, so kopf's event handlers (filtered by that label) see it. The emulator does the same
    (tests/operator/test_emulator.py)."""
    namespace = "shard-watch"
    docs = copy.deepcopy(load_example("kubevirt.yaml"))
    for d in docs:
        d["metadata"]["namespace"] = namespace
        if d["kind"] == "TenantCluster":
            d["metadata"]["labels"] = {SHARD_LABEL: "0-of-2"}
    seed_tenant(admin, docs)
    body = admin.get(*TC, namespace, "demo")
    assert body is not None
    res = Resource(TC[0], TC[1], "tenantclusters", True)
    async with KubeClient(Connection.from_kubeconfig(management.admin_kubeconfig)) as api:
        events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        async def follow(selector: str) -> None:
            async for event in api.watch(res, body["metadata"]["resourceVersion"], selector, timeout=60):
                if event.get("type") != "BOOKMARK":
                    await events.put(event)

        # Both watch from the version read: what happens after it reaches them, however late they start.
        watching = [asyncio.create_task(follow(selector)) for selector in (f"{SHARD_LABEL}=0-of-2", f"!{SHARD_LABEL}")]
        try:
            admin.merge(*TC, namespace, "demo", {"metadata": {"labels": {SHARD_LABEL: None}}})
            seen = [await asyncio.wait_for(events.get(), 30) for _ in range(2)]
        finally:
            for task in watching:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*watching)
    left = next(e for e in seen if e["type"] == "DELETED")
    came = next(e for e in seen if e["type"] == "ADDED")
    assert (left["object"]["metadata"].get("labels") or {}).get(SHARD_LABEL) == "0-of-2", "the labels it matched by"
    assert SHARD_LABEL not in (came["object"]["metadata"].get("labels") or {}), "the unlabelled watch: ADDED"
    assert left["object"]["metadata"]["resourceVersion"] == came["object"]["metadata"]["resourceVersion"]


async def test_a_take_over_from_a_copy_older_than_kopfs_finalizer_reads_again_and_leaves_the_owners_alone(
    admin: Api, management: ControlPlane,
) -> None:
    """The owner's first pass may read a cached copy from before kopf added the owner's finalizer. That
    add keeps the generation, so no event wakes another pass: a refused exchange must be read again from
    the server, or the old layout's finalizer stays until the next resync (seen in the handover crash
    sweep under load, where the resync is an hour)."""
    namespace, name = "shard-take-over", "handed"
    own, old = finalizer_of(Shard(1, 2)), finalizer_of(Shard())
    admin.namespace(namespace)
    meta = {"name": name, "namespace": namespace, "finalizers": ["example.com/keep", old]}
    admin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta})
    res = Resource("v1", "ConfigMap", "configmaps", True)
    try:
        async with KubeClient(Connection.from_kubeconfig(management.admin_kubeconfig)) as api:
            stale = await api.get(res, name, namespace)
            assert stale is not None
            admin.merge("v1", "ConfigMap", namespace, name, {"metadata": {"finalizers": [*meta["finalizers"], own]}})
            assert await take_over(api, res, stale, own)
        served = admin.get("v1", "ConfigMap", namespace, name)
        assert served is not None and served["metadata"]["finalizers"] == ["example.com/keep", own]
    finally:
        admin.merge("v1", "ConfigMap", namespace, name, {"metadata": {"finalizers": None}})


async def test_a_teardown_report_finished_after_the_read_is_kept_for_the_server_refuses_the_stale_write(
    installed: Any, admin: Api, management: ControlPlane,
) -> None:
    """Two layouts running at once both tear a deleted tenant down; the slower one's report, read before
    the faster one finished, must not replace the finished report. What that rests on: kube-apiserver
    refuses a JSON patch of the status subresource whose resourceVersion test is stale, with the 422 the
    report's retry is for."""
    namespace = "shard-teardown-report"
    docs = copy.deepcopy(load_example("kubevirt.yaml"))
    for d in docs:
        d["metadata"]["namespace"] = namespace
    seed_tenant(admin, docs)
    res = Resource(*TC, "tenantclusters", True)
    halfway, finished = TeardownReport(), TeardownReport()
    halfway.record(TeardownStep.TENANT_VOLUMES, StepOutcome.DONE, "no disks")
    for step in (TeardownStep.TENANT_VOLUMES, TeardownStep.FINALIZER):
        finished.record(step, StepOutcome.DONE, "done")
    async with KubeClient(Connection.from_kubeconfig(management.admin_kubeconfig)) as api:
        assert await report_teardown(api, res, namespace, "demo", halfway) is Reported.WRITTEN
        stale = await api.get(res, "demo", namespace)
        assert stale is not None and stale["status"]["teardown"] == halfway.as_status()
        admin.merge_status(*TC, namespace, "demo", {"teardown": finished.as_status()})
        with pytest.raises(APIError) as refused:
            await api.json_patch(res, "demo", namespace, [
                {"op": "test", "path": "/metadata/resourceVersion", "value": stale["metadata"]["resourceVersion"]},
                {"op": "add", "path": "/status/teardown", "value": halfway.as_status()},
            ], status=True)
        assert refused.value.status == 422
        assert await report_teardown(api, res, namespace, "demo", halfway) is Reported.ENDED
    served = admin.get(*TC, namespace, "demo")
    assert served is not None and served["status"]["teardown"] == finished.as_status()
    assert served["status"]["phase"] == "Deleting"

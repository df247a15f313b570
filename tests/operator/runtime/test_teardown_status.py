"""A tenant's teardown report: written step by step, and a finished report never replaced.

Two shard layouts running at once both tear a deleted tenant down. The slower one's progress write, read
before the faster one finished, replaced the final report just before the tenant went (seen as a flaky
`test_two_layouts_running_at_once...` in the shard-handover suite).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from kube_emulator import Fault, KubeEmulator
from operator_support import before_first_write, management, seed_documents

from tenant_support import load_example
from tenantctl.operator.config.settings import RetryPolicy
from tenantctl.operator.kube.cache import WatchCache
from tenantctl.operator.kube.client import APIError, Connection, KubeClient, Resource
from tenantctl.operator.phases.conditions import StepOutcome, TeardownStep
from tenantctl.operator.phases.teardown import TeardownReport
from tenantctl.operator.runtime.teardown_status import Reported, report_teardown, still_to_tear_down

pytestmark = [pytest.mark.timeout(30)]

TC = "tenantctl.io/v1alpha1/tenantclusters"
CLUSTERS = Resource("tenantctl.io/v1alpha1", "TenantCluster", "tenantclusters", True)
NAMESPACE = "tenant-0"
RETRY = RetryPolicy(backoffs=(0.01, 0.02))


def seed(mgmt: KubeEmulator, status: dict[str, Any] | None = None) -> None:
    management(mgmt)
    docs = copy.deepcopy(load_example("kubevirt.yaml"))
    for d in docs:
        d["metadata"]["namespace"] = NAMESPACE
        if d["kind"] == "TenantCluster" and status is not None:
            d["status"] = status
    seed_documents(mgmt, docs)


def report(*steps: TeardownStep) -> TeardownReport:
    made = TeardownReport()
    for step in steps:
        made.record(step, StepOutcome.DONE, f"{step} done")
    return made


FINISHED = report(TeardownStep.TENANT_VOLUMES, TeardownStep.FINALIZER)
HALFWAY = report(TeardownStep.TENANT_VOLUMES)


def status(mgmt: KubeEmulator) -> dict[str, Any]:
    return dict((mgmt.get(TC, NAMESPACE, "demo") or {}).get("status") or {})


def client(mgmt: KubeEmulator, *, cache: bool = False) -> KubeClient:
    return KubeClient(Connection.from_server(str(mgmt.url).rstrip("/")), retry=RETRY,
                      cache=WatchCache() if cache else None)


def test_a_report_is_finished_only_once_its_finalizer_step_is_there() -> None:
    assert TeardownReport.finished_in({"teardown": FINISHED.as_status()})
    assert not TeardownReport.finished_in({"teardown": HALFWAY.as_status()})
    assert not TeardownReport.finished_in({})
    assert not TeardownReport.finished_in({"teardown": {"steps": ["Finalizer"]}}), "not a step entry"


async def test_each_step_is_written_with_the_phase_and_the_same_report_again_writes_nothing(mgmt: KubeEmulator) -> None:
    seed(mgmt, {"phase": "Ready", "observedGeneration": 1})
    async with client(mgmt) as api:
        assert await report_teardown(api, CLUSTERS, NAMESPACE, "demo", HALFWAY) is Reported.WRITTEN
        writes = len(mgmt.write_requests)
        assert await report_teardown(api, CLUSTERS, NAMESPACE, "demo", HALFWAY) is Reported.UNCHANGED
        assert len(mgmt.write_requests) == writes, "an unchanged report is not written again"
    assert status(mgmt) == {"phase": "Deleting", "observedGeneration": 1, "teardown": HALFWAY.as_status()}


async def test_a_tenant_without_a_status_yet_gets_one(mgmt: KubeEmulator) -> None:
    """Deleted before its first pass wrote anything: the patch makes `status` before its keys."""
    seed(mgmt)
    assert "status" not in (mgmt.get(TC, NAMESPACE, "demo") or {})
    async with client(mgmt) as api:
        assert await report_teardown(api, CLUSTERS, NAMESPACE, "demo", HALFWAY) is Reported.WRITTEN
    assert status(mgmt) == {"phase": "Deleting", "teardown": HALFWAY.as_status()}


async def test_a_finished_report_is_never_replaced_by_another_teardowns_progress(mgmt: KubeEmulator) -> None:
    seed(mgmt, {"phase": "Deleting", "teardown": FINISHED.as_status()})
    async with client(mgmt) as api:
        assert await report_teardown(api, CLUSTERS, NAMESPACE, "demo", HALFWAY) is Reported.ENDED
    assert status(mgmt)["teardown"] == FINISHED.as_status()
    assert not [w for w in mgmt.write_requests if w[1] == "tenantclusters"]


@pytest.mark.parametrize("cache", [False, True], ids=["server", "watch-cache"])
async def test_a_report_finished_after_the_read_is_kept_the_write_being_conditional(
    mgmt: KubeEmulator, cache: bool
) -> None:
    """The race itself: our copy is read while the other teardown is still running, and its final report
    lands before our write. Our write is refused, the server is read again (every read asks the server,
    whatever the cache holds), the finished report stays, and our teardown is told it ended."""
    seed(mgmt, {"phase": "Deleting", "teardown": HALFWAY.as_status()})

    async def the_other_teardown_finishes() -> None:
        body = mgmt.get(TC, NAMESPACE, "demo")
        assert body is not None
        body["status"]["teardown"] = FINISHED.as_status()
        mgmt.put(TC, body)

    finished_first = before_first_write(mgmt, "PATCH", "tenantclusters", the_other_teardown_finishes)
    async with client(mgmt, cache=cache) as api:
        if cache:
            await api.get(CLUSTERS, "demo", NAMESPACE)  # the cache holds it
        reads = mgmt.named_reads["tenantclusters", NAMESPACE, "demo"]
        later = report(TeardownStep.TENANT_VOLUMES, TeardownStep.HELM_RELEASES)
        assert await report_teardown(api, CLUSTERS, NAMESPACE, "demo", later) is Reported.ENDED
        assert mgmt.named_reads["tenantclusters", NAMESPACE, "demo"] == reads + 2, "both reads asked the server"
    assert finished_first and status(mgmt)["teardown"] == FINISHED.as_status()


@pytest.mark.parametrize(
    ("teardown", "gone", "still"),
    [(None, False, True), (HALFWAY, False, True), (FINISHED, False, False), (None, True, False)],
    ids=["not-started", "halfway", "finished", "gone"],
)
async def test_only_a_tenant_there_and_not_finished_is_still_to_tear_down_as_the_server_says(
    mgmt: KubeEmulator, teardown: TeardownReport | None, gone: bool, still: bool
) -> None:
    seed(mgmt, {"phase": "Deleting"} | ({"teardown": teardown.as_status()} if teardown else {}))
    async with client(mgmt, cache=True) as api:
        await api.get(CLUSTERS, "demo", NAMESPACE)  # the cache holds it, and is behind below
        if gone:
            mgmt.objects[TC, NAMESPACE, "demo"].delete()
        reads = mgmt.named_reads["tenantclusters", NAMESPACE, "demo"]
        current = await still_to_tear_down(api, CLUSTERS, NAMESPACE, "demo")
        assert mgmt.named_reads["tenantclusters", NAMESPACE, "demo"] == reads + 1, "the server was asked"
    assert (current is not None) is still
    if still:
        assert current is not None and current["metadata"]["name"] == "demo"


async def test_a_write_refused_every_time_is_left_to_the_next_step_after_the_retry_budget(mgmt: KubeEmulator) -> None:
    """Another writer changing the tenant before each of our writes costs a bounded number of them and no
    failure: the teardown goes on, and its next step reports again."""
    seed(mgmt, {"phase": "Deleting"})
    patches = 0

    async def another_writer_first(method: str, plural: str) -> None:
        nonlocal patches
        if method == "PATCH" and plural == "tenantclusters":
            patches += 1
            body = mgmt.get(TC, NAMESPACE, "demo")
            assert body is not None
            body["metadata"].setdefault("annotations", {})["example.com/touched"] = str(patches)
            mgmt.put(TC, body)

    mgmt.before_write = another_writer_first
    async with client(mgmt) as api:
        assert await report_teardown(api, CLUSTERS, NAMESPACE, "demo", HALFWAY) is Reported.REFUSED
    assert patches == len(RETRY.backoffs) + 1
    assert "teardown" not in status(mgmt)


async def test_a_refusal_that_is_not_a_change_is_raised_and_a_tenant_gone_is_not(mgmt: KubeEmulator) -> None:
    seed(mgmt, {"phase": "Deleting"})
    mgmt.faults.append(Fault("PATCH", "tenantclusters", status=403, message="forbidden"))
    async with client(mgmt) as api:
        with pytest.raises(APIError) as refused:
            await report_teardown(api, CLUSTERS, NAMESPACE, "demo", HALFWAY)
        assert refused.value.status == 403
        assert await report_teardown(api, CLUSTERS, NAMESPACE, "gone", HALFWAY) is Reported.ENDED


async def test_a_tenant_gone_between_the_read_and_the_write_ends_the_teardown(mgmt: KubeEmulator) -> None:
    seed(mgmt, {"phase": "Deleting"})

    async def released_meanwhile() -> None:
        mgmt.objects[TC, NAMESPACE, "demo"].delete()

    before_first_write(mgmt, "PATCH", "tenantclusters", released_meanwhile)
    async with client(mgmt) as api:
        assert await report_teardown(api, CLUSTERS, NAMESPACE, "demo", HALFWAY) is Reported.ENDED

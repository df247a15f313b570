"""Flags Kamaji would keep running after the spec dropped them: the plan's warning (spec.kamaji_flags) and
the operator's ApiServerFlags condition, read from Kamaji's apiserver Deployment. What Kamaji 26.3.6-edge
does itself is in tests/real/test_upstream_kamaji.py."""

from __future__ import annotations

from typing import Any

import pytest

from tenant_support import clone, doc, load_example
from tenantctl.operator.phases.apiserver_flags import judge
from tenantctl.render.kamaji import apiserver_flags
from tenantctl.spec import parse_tenant_documents
from tenantctl.spec.compat import KamajiRelease
from tenantctl.spec.kamaji_flags import keeps_dropped_flags, stranded_flags, unapplied_change

OLD, FIXED = KamajiRelease("26.3.6-edge", "test"), KamajiRelease("26.6.2-edge", "test")


@pytest.mark.parametrize(("release", "keeps"), [("26.3.6-edge", True), ("edge-25.12.4", True),
                                               ("26.6.1-edge", True), ("26.6.2-edge", False),
                                               ("26.7.5-edge", False)])
def test_which_releases_keep_a_dropped_flag(release: str, keeps: bool) -> None:
    assert keeps_dropped_flags(release) is keeps


def test_only_a_dropped_flag_is_said_and_only_where_kamaji_keeps_it() -> None:
    live = ["--audit-log-maxsize=100", "--a=1"]
    assert unapplied_change(OLD.release, live, ["--audit-log-maxsize=200", "--a=1"]) is None, "a value reaches it"
    assert unapplied_change(OLD.release, live, [*live, "--b=2"]) is None, "an added flag reaches it"
    assert unapplied_change(OLD.release, live, list(reversed(live))) is None, "no change"
    swapped = unapplied_change(OLD.release, live, ["--audit-log-maxsize=100", "--b=1"])
    assert swapped is not None and "--a=1 would stay" in swapped and "26.6.2-edge" in swapped
    dropped = unapplied_change(OLD.release, live, [])
    assert dropped is not None and "--a=1, --audit-log-maxsize=100 would stay" in dropped
    assert unapplied_change(FIXED.release, live, []) is None
    assert stranded_flags(OLD.release, ["--a=1", "--a=1"], []) == ["--a=1"]


def deployment(args: list[str]) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": [
        {"name": "kube-apiserver", "command": ["kube-apiserver"], "args": ["--secure-port=6443", *args]},
        {"name": "talos-csr-signer", "args": ["--x"]}]}}}}


def test_the_condition_names_each_missing_flag_and_why() -> None:
    docs = clone(load_example("kubevirt.yaml"))
    doc(docs, "TenantCluster")["spec"].setdefault("controlPlane", {})["apiServer"] = {"audit": {}}
    cluster = parse_tenant_documents(docs).clusters[0]
    wanted = apiserver_flags(cluster)
    assert wanted == ["--audit-log-format=json", "--audit-log-path=-",
                      "--audit-policy-file=/etc/kubernetes/tenantctl/audit/policy.yaml"]
    ok = judge(wanted, deployment(wanted), OLD)
    assert ok is not None and ok.ok and ok.reason == "FlagsApplied"
    stale = judge(wanted, deployment(wanted[:2]), OLD)
    assert stale is not None and not stale.ok and stale.reason == "FlagsNotApplied"
    assert "lacks --audit-policy-file=/etc/kubernetes/tenantctl/audit/policy.yaml" in stale.message
    assert "has not rolled it yet" in stale.message
    kept = judge(wanted[:2], deployment(wanted), OLD)
    assert kept is not None and not kept.ok
    assert "still carries --audit-policy-file=/etc/kubernetes/tenantctl/audit/policy.yaml" in kept.message
    assert "26.6.2-edge" in kept.message
    all_dropped = judge([], deployment(wanted), OLD)
    assert all_dropped is not None and not all_dropped.ok, "a tenant that dropped every flag is still judged"
    assert judge(wanted[:2], deployment(wanted), FIXED) == judge(wanted[:2], deployment(wanted[:2]), FIXED)
    kamaji_own = judge(wanted, deployment([*wanted, "--etcd-prefix=/x", "--egress-selector-config-file=/e"]), OLD)
    assert kamaji_own is not None and kamaji_own.ok, "Kamaji's own flags are not taken for dropped ones"
    assert judge([], deployment([]), OLD) is None and judge(wanted, None, OLD) is None
    plain = parse_tenant_documents(load_example("kubevirt.yaml")).clusters[0]
    assert apiserver_flags(plain) == [], "a tenant without extra flags costs no read"


async def test_a_tenant_that_dropped_its_last_flag_is_read_while_its_status_reports_flags(mgmt: Any) -> None:
    """No extra flag left: the operator reads Kamaji's Deployment only while the status still has the
    condition (the last pass saw flags), and says which dropped flag the apiserver still carries."""
    from tenantctl.operator.kube.client import Connection, KubeClient
    from tenantctl.operator.phases.apiserver_flags import check_flags
    from tenantctl.render import Names

    plain = parse_tenant_documents(load_example("kubevirt.yaml")).clusters[0]
    names = Names(plain)
    mgmt.put("apps/v1/deployments", {"apiVersion": "apps/v1", "kind": "Deployment",
                                     "metadata": {"name": names.control_plane, "namespace": names.namespace},
                                     **deployment(["--event-ttl=3h0m0s"])})
    async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/"))) as api:
        assert await check_flags(api, plain, OLD) is None, "a tenant never reported: no read"
        kept = await check_flags(api, plain, OLD, reported=True)
    assert kept is not None and not kept.ok and "still carries --event-ttl=3h0m0s" in kept.message

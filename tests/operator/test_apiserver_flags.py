"""Flags Kamaji would not apply: the plan's warning (spec.kamaji_flags) and the operator's ApiServerFlags
condition, read from Kamaji's apiserver Deployment."""

from __future__ import annotations

from typing import Any

import pytest

from tenant_support import clone, doc, load_example
from tenantctl.operator.phases.apiserver_flags import judge
from tenantctl.render.kamaji import apiserver_flags
from tenantctl.spec import parse_tenant_documents
from tenantctl.spec.compat import KamajiRelease
from tenantctl.spec.kamaji_flags import flags_by_count_only, unapplied_change

OLD, FIXED = KamajiRelease("26.3.6-edge", "test"), KamajiRelease("26.6.2-edge", "test")


@pytest.mark.parametrize(("release", "by_count"), [("26.3.6-edge", True), ("edge-25.12.4", True),
                                                   ("26.6.1-edge", True), ("26.6.2-edge", False),
                                                   ("26.7.5-edge", False)])
def test_which_releases_count_flags(release: str, by_count: bool) -> None:
    assert flags_by_count_only(release) is by_count


def test_a_same_count_change_is_said_only_where_kamaji_would_miss_it() -> None:
    live, wanted = ["--audit-log-maxsize=100", "--a=1"], ["--audit-log-maxsize=200", "--a=1"]
    note = unapplied_change(OLD.release, live, wanted)
    assert note is not None and "--audit-log-maxsize=200 would not reach the running apiserver" in note
    assert "--audit-log-maxsize=100 would stay" in note and "26.6.2-edge" in note
    assert unapplied_change(FIXED.release, live, wanted) is None
    assert unapplied_change(OLD.release, live, [*wanted, "--b=2"]) is None, "a new count is seen"
    assert unapplied_change(OLD.release, live, list(reversed(live))) is None, "no change"


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
    assert "only by their number" in stale.message
    fixed = judge(wanted, deployment([]), FIXED)
    assert fixed is not None and "has not rolled the apiserver yet" in fixed.message
    assert judge([], deployment([]), OLD) is None and judge(wanted, None, OLD) is None
    plain = parse_tenant_documents(load_example("kubevirt.yaml")).clusters[0]
    assert apiserver_flags(plain) == [], "a tenant without extra flags costs no read"

"""Behaviour changes mutation testing showed passing every test: each is now caught here."""

from __future__ import annotations

import base64
from typing import Any

from tenant_support import load_example
from tenantctl.audit import audit_objects, credential_values
from tenantctl.operator.phases.teardown import TeardownReport
from tenantctl.spec import parse_observed, parse_tenant_documents

TOKEN_UUID = "0f3c2a9e-6f4b-4c1d-9a8e-2b7c5d1e0a44"


def _secret(name: str, token: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": "t"},
            "data": {"token_secret": base64.b64encode(token.encode()).decode()}}


def test_every_secret_given_is_scanned_not_only_the_last() -> None:
    values = credential_values([_secret("a", "first-token-value"), _secret("b", "second-token-value")])
    assert values == ["first-token-value", "second-token-value"]


def test_a_credential_value_in_a_management_object_is_reported() -> None:
    managed = {"kind": "Deployment", "metadata": {"name": "ccm", "namespace": "t"},
               "spec": {"template": {"spec": {"containers": [{"args": ["--token=first-token-value"]}]}}}}
    found = audit_objects([managed], [], [], ["first-token-value"])
    assert [p.path for p in found] == ["Deployment/t/ccm.spec.template.spec.containers[0].args[0]"]


def test_a_token_shape_in_a_management_object_is_reported() -> None:
    managed = {"kind": "ConfigMap", "metadata": {"name": "x", "namespace": "t"}, "data": {"k": TOKEN_UUID}}
    found = audit_objects([managed], [], [])
    assert [p.path for p in found] == ["ConfigMap/t/x.data.k"]


def test_teardown_volume_handles_survive_a_status_round_trip() -> None:
    """A resumed teardown reads back the disks it wrote: forgetting them would orphan Proxmox disks."""
    report = TeardownReport(volumes=["local-lvm:vm-9999-disk-0", "local-lvm:vm-9999-disk-1"])
    resumed = TeardownReport.from_status({"teardown": report.as_status()})
    assert resumed.volumes == report.volumes


def test_an_address_range_straddling_the_gateway_subnet_is_refused() -> None:
    docs = load_example("proxmox.yaml")
    cfg = docs[0]["spec"]["proxmox"]["ipv4Config"]
    gateway, prefix = cfg["gateway"], cfg["prefix"]
    base = gateway.rsplit(".", 1)[0]
    cfg["addresses"] = [f"{base}.250-{'.'.join(base.split('.')[:2])}.{int(base.split('.')[2]) + 1}.5"]
    try:
        parse_tenant_documents(docs)
    except Exception as exc:
        assert f"outside the /{prefix}" in str(exc), str(exc)
    else:
        raise AssertionError("a range reaching past the gateway's subnet was accepted")


def test_observed_states_of_two_clusters_in_one_namespace_stay_apart() -> None:
    first = load_example("observed-proxmox.yaml")[0]
    second = {**first, "metadata": {**first["metadata"], "name": "other"}}
    observed = parse_observed([first, second])
    assert sorted(observed) == [("tenant-acme", "acme"), ("tenant-acme", "other")]

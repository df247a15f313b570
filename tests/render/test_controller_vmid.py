"""`controllerVmID`: deterministic, in range, and different for same-named clusters of two tenants."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tenantctl.render.controller_vmid import CONTROLLER_VMID_MAX, CONTROLLER_VMID_MIN, controller_vm_id

labels = st.from_regex(r"\A[a-z]([a-z0-9-]{0,30}[a-z0-9])?\Z")


def test_value_is_pinned() -> None:
    """A change here re-owns every existing volume: it must be deliberate."""
    assert controller_vm_id("tenant-acme", "acme") == controller_vm_id("tenant-acme", "acme")
    assert controller_vm_id("tenant-acme", "acme") == 197615618


@settings(max_examples=300)
@given(labels, labels)
def test_in_range_and_deterministic(namespace: str, cluster: str) -> None:
    vmid = controller_vm_id(namespace, cluster)
    assert CONTROLLER_VMID_MIN <= vmid <= CONTROLLER_VMID_MAX
    assert vmid == controller_vm_id(namespace, cluster)


@settings(max_examples=300)
@given(labels, labels, labels)
def test_same_cluster_name_in_two_namespaces_differs(ns_a: str, ns_b: str, cluster: str) -> None:
    if ns_a != ns_b:
        assert controller_vm_id(ns_a, cluster) != controller_vm_id(ns_b, cluster)


@settings(max_examples=200)
@given(labels, labels)
def test_namespace_and_name_do_not_run_together(a: str, b: str) -> None:
    """("a-b", "c") and ("a", "b-c") are different clusters: the separator keeps them apart."""
    assert controller_vm_id(f"{a}-{b}", "x") != controller_vm_id(a, f"{b}-x")


def test_outside_the_default_next_id_window() -> None:
    assert CONTROLLER_VMID_MIN > 1_000_000
    assert CONTROLLER_VMID_MAX == 999_999_999

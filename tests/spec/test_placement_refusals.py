"""Refusals of a Proxmox pool's placement, VMIDs, tags, NICs and dual-stack pools: each names its field.

Each case breaks one thing in the Proxmox example; the expected paths and message fragments are written
out here, and the untouched example (and each boundary that must pass) renders.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from tenant_support import clone, doc, load_example, refused
from tenantctl.cli import app
from tenantctl.problems import InvalidInput
from tenantctl.spec import parse_tenant_documents

Docs = list[dict[str, Any]]
Edit = Callable[[dict[str, Any], dict[str, Any]], None]
CLUSTER = "TenantCluster/acme.spec.proxmox"
POOL = "NodePool/md0.spec.proxmox"
QPOOL = "NodePool/tenant-acme/md0.spec.proxmox"


def docs_with(edit: Edit) -> Docs:
    docs = clone(load_example("proxmox.yaml"))
    cluster, pool = doc(docs, "TenantCluster")["spec"], doc(docs, "NodePool")["spec"]
    cluster["proxmox"]["allowedNodes"] = ["pve1", "pve2", "pve3"]
    edit(cluster, pool)
    return docs


def errors(edit: Edit) -> dict[str, str]:
    return refused(docs_with(edit))


def _px(**values: Any) -> Edit:
    def edit(cluster: dict[str, Any], pool: dict[str, Any]) -> None:
        pool["proxmox"] |= values
    return edit


def _net(**values: Any) -> Edit:
    def edit(cluster: dict[str, Any], pool: dict[str, Any]) -> None:
        pool["proxmox"]["network"] |= values
    return edit


def _dev(**values: Any) -> Edit:
    device = {"name": "net1", "bridge": "vmbr1", "ipv4": {"addresses": ["10.30.0.10-10.30.0.40"], "prefix": 24}}
    return _net(additionalDevices=[device | values])


def _autoscaled_spread(low: int, high: int) -> Edit:
    def edit(cluster: dict[str, Any], pool: dict[str, Any]) -> None:
        pool.pop("replicas")
        pool |= {"minReplicas": low, "maxReplicas": high}
        pool["proxmox"]["placement"] = "spread"
    return edit


def _two_pools(first: dict[str, Any], second: dict[str, Any], namespace: str = "tenant-acme") -> Docs:
    docs = clone(load_example("proxmox.yaml"))
    pool = doc(docs, "NodePool")
    other = clone([pool])[0]
    other["metadata"] = {"name": "md1", "namespace": namespace}
    pool["spec"]["proxmox"] |= first
    other["spec"]["proxmox"] |= second
    if namespace != "tenant-acme":
        twin = clone([doc(docs, "TenantCluster")])[0]
        twin["metadata"]["namespace"] = namespace
        docs.append(twin)
    return [*docs, other]


CASES: dict[str, tuple[Edit, str, str]] = {
    "pool node outside the cluster's": (
        _px(allowedNodes=["pve1", "pve9"]), f"{POOL}.allowedNodes", "'pve9' not in TenantCluster 'acme'",
    ),
    "empty pool node list": (_px(allowedNodes=[]), f"{POOL}.allowedNodes", "at least one node"),
    "duplicate pool node": (_px(allowedNodes=["pve1", "pve1"]), f"{POOL}.allowedNodes[1]", "duplicate entry 'pve1'"),
    "pool node syntax": (_px(allowedNodes=["pve_1"]), f"{POOL}.allowedNodes[0]", "not a Proxmox node name"),
    "cluster node syntax": (
        lambda c, p: c["proxmox"].__setitem__("allowedNodes", ["pve1", "-bad"]),
        f"{CLUSTER}.allowedNodes[1]", "not a Proxmox node name",
    ),
    "nodes differing in case": (
        lambda c, p: (c["proxmox"].__setitem__("allowedNodes", ["PVE1", "pve1"]),
                      p["proxmox"].__setitem__("placement", "spread")),
        f"{POOL}.placement", "differ only in case",
    ),
    "autoscaled max below the node count": (
        _autoscaled_spread(0, 2), "NodePool/md0.spec.maxReplicas", "fewer than the 3 nodes",
    ),
    "per-node templates without spread": (
        _px(perNodeTemplates=True), f"{POOL}.perNodeTemplates", "placement: spread only",
    ),
    "per-node templates with a template id": (
        _px(placement="spread", perNodeTemplates=True, templateTags=None, templateID=9000),
        f"{POOL}.perNodeTemplates", "needs templateTags",
    ),
    "spread Machine names too long": (
        lambda c, p: (c["proxmox"].__setitem__("allowedNodes", ["n" * 46]),
                      p["proxmox"].__setitem__("placement", "spread")),
        "NodePool/md0.metadata.name", "over the 63-character label limit",
    ),
    "vmid range reversed": (
        _px(vmIDRange={"start": 5010, "end": 5000}), f"{POOL}.vmIDRange", "end 5000 is before start 5010",
    ),
    "vmid range too small": (
        _px(vmIDRange={"start": 5000, "end": 5001}), f"{POOL}.vmIDRange", "holds 2 VMIDs, but the pool can have 3",
    ),
    "vmid range too small for spread": (
        _px(vmIDRange={"start": 5000, "end": 5002}, placement="spread"),
        f"{POOL}.vmIDRange", "holds 3 VMIDs, but the pool can have 4 VMs at once (pve1 1+1, pve2 1+1, pve3 0+0)",
    ),
    "vmid below 100": (_px(vmIDRange={"start": 99, "end": 200}), f"{POOL}.vmIDRange.start", "greater than or equal"),
    "tag syntax": (_px(tags=["Team A"]), f"{POOL}.tags[0]", "not a Proxmox tag"),
    "tag upper case": (_px(tags=["Prod"]), f"{POOL}.tags[0]", "not a Proxmox tag"),
    "duplicate tag": (_px(tags=["prod", "prod"]), f"{POOL}.tags[1]", "duplicate tag 'prod'"),
    "default mtu below 1280": (_net(mtu=1000), f"{POOL}.network.mtu", "1000 is not an MTU capmox accepts"),
    "device mtu above the CRD's": (
        _dev(mtu=65521), f"{POOL}.network.additionalDevices[0].mtu", "65521 is not an MTU",
    ),
    "device named net0": (_dev(name="net0"), f"{POOL}.network.additionalDevices[0].name", "net1 … net31"),
    "device named net32": (_dev(name="net32"), f"{POOL}.network.additionalDevices[0].name", "net1 … net31"),
    "two devices named alike": (
        _net(additionalDevices=[
            {"name": "net1", "bridge": "vmbr1", "ipv4": {"addresses": ["10.30.0.10-10.30.0.40"], "prefix": 24}},
            {"name": "net2", "bridge": "vmbr2", "ipv4": {"addresses": ["10.40.0.10-10.40.0.40"], "prefix": 24}},
            {"name": "net1", "bridge": "vmbr3", "ipv4": {"addresses": ["10.50.0.10-10.50.0.40"], "prefix": 24}},
        ]),
        f"{POOL}.network.additionalDevices[2].name", "duplicate device 'net1' (already at index 0)",
    ),
    "device without a pool": (
        _dev(ipv4=None), f"{POOL}.network.additionalDevices[0]", "needs ipv4 and/or ipv6 addresses",
    ),
    "device with an empty bridge": (
        _dev(bridge=" "), f"{POOL}.network.additionalDevices[0].bridge", "must not be empty",
    ),
    "device pool of the wrong family": (
        _dev(ipv4={"addresses": ["fd00::1"], "prefix": 24}),
        f"{POOL}.network.additionalDevices[0].ipv4.addresses[0]", "is not an IPv4 address",
    ),
    "device pool outside its gateway's subnet": (
        _dev(ipv4={"addresses": ["10.31.0.5"], "prefix": 24, "gateway": "10.30.0.1"}),
        f"{POOL}.network.additionalDevices[0].ipv4.addresses[0]", "outside 10.30.0.0/24",
    ),
    "device pool entries in two subnets": (
        _dev(ipv4={"addresses": ["10.30.0.5", "10.99.0.5"], "prefix": 24}),
        f"{POOL}.network.additionalDevices[0].ipv4.addresses[1]", "outside 10.30.0.0/24",
    ),
    "device range reaching past its own subnet": (
        _dev(ipv4={"addresses": ["10.30.0.250-10.30.1.5"], "prefix": 24}),
        f"{POOL}.network.additionalDevices[0].ipv4.addresses[0]", "outside 10.30.0.0/24 (the /24 of addresses[0])",
    ),
    "device pool's subnet taken from the first entry that parses": (
        _dev(ipv4={"addresses": ["10.30.0.999", "10.30.0.5", "10.99.0.5"], "prefix": 24}),
        f"{POOL}.network.additionalDevices[0].ipv4.addresses[2]", "outside 10.30.0.0/24 (the /24 of addresses[1])",
    ),
    "device pool too small": (
        _dev(ipv4={"addresses": ["10.30.0.10-10.30.0.11"], "prefix": 24}),
        "NodePool/md0.spec.proxmox.network.additionalDevices[0].ipv4.addresses",
        "2 usable addresses, but net1 of this pool's machines can need 3",
    ),
    "ipv6 gateway of the wrong family": (
        lambda c, p: c["proxmox"].__setitem__("ipv6Config", {"addresses": ["2001:db8::10"], "prefix": 64,
                                                             "gateway": "192.0.2.1"}),
        f"{CLUSTER}.ipv6Config.gateway", "is not an IPv6 address",
    ),
    "ipv6 prefix over 128": (
        lambda c, p: c["proxmox"].__setitem__("ipv6Config", {"addresses": ["2001:db8::10"], "prefix": 129,
                                                             "gateway": "2001:db8::1"}),
        f"{CLUSTER}.ipv6Config.prefix", "129 is outside 0–128 for IPv6",
    ),
    "ipv6 address off the gateway's prefix": (
        lambda c, p: c["proxmox"].__setitem__("ipv6Config", {"addresses": ["2001:db9::10-2001:db9::20"],
                                                             "prefix": 64, "gateway": "2001:db8::1"}),
        f"{CLUSTER}.ipv6Config.addresses[0]", "outside 2001:db8::/64",
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_refused_with_the_field_named(case: tuple[Edit, str, str], snapshot: SnapshotAssertion) -> None:
    edit, path, fragment = case
    found = errors(edit)
    assert path in found, found
    assert fragment in found[path], found[path]
    assert found == snapshot, "every problem, word for word"


PASSING: dict[str, Edit] = {
    "pool nodes equal to the cluster's": _px(allowedNodes=["pve3", "pve1", "pve2"]),
    "autoscaled max equal to the node count": _autoscaled_spread(0, 3),
    "vmid range exactly the size": _px(vmIDRange={"start": 5000, "end": 5002}),
    # A group of 0 replicas never surges: 1+1, 1+1, 0+0.
    "vmid range exactly the size for spread": _px(vmIDRange={"start": 5000, "end": 5003}, placement="spread"),
    "mtu 1 and 1280 and 65520": _net(mtu=1, additionalDevices=[
        {"name": "net1", "bridge": "vmbr1", "mtu": 1280, "ipv4": {"addresses": ["10.30.0.0/28"], "prefix": 24}},
        {"name": "net31", "bridge": "vmbr2", "mtu": 65520, "ipv6": {"addresses": ["fd00::/120"], "prefix": 64}},
    ]),
    "device pool exactly the size": _dev(ipv4={"addresses": ["10.30.0.10-10.30.0.12"], "prefix": 24}),
    "tags with Proxmox's other characters": _px(tags=["_x", "a+b", "v1.2-3"]),
}


@pytest.mark.parametrize("edit", PASSING.values(), ids=PASSING.keys())
def test_boundaries_that_pass(edit: Edit) -> None:
    parse_tenant_documents(docs_with(edit))


def test_overlapping_vmid_ranges_of_two_pools_are_refused() -> None:
    docs = _two_pools({"vmIDRange": {"start": 5000, "end": 5010}}, {"vmIDRange": {"start": 5010, "end": 5020}})
    with pytest.raises(InvalidInput) as err:
        parse_tenant_documents(docs)
    (problem,) = [p for p in err.value.errors if "vmIDRange" in p.path]
    assert problem.path == f"{QPOOL.replace('md0', 'md1')}.vmIDRange"
    assert "overlaps NodePool tenant-acme/md0's vmIDRange (up to 5010)" in problem.message
    parse_tenant_documents(
        _two_pools({"vmIDRange": {"start": 5000, "end": 5009}}, {"vmIDRange": {"start": 5010, "end": 5020}})
    )


def test_overlapping_vmid_ranges_of_two_tenants_are_refused() -> None:
    docs = _two_pools({"vmIDRange": {"start": 5000, "end": 5100}}, {"vmIDRange": {"start": 5050, "end": 5060},
                                                                    "network": {"bridge": "vmbr0", "vlan": 200}},
                      namespace="tenant-two")
    with pytest.raises(InvalidInput) as err:
        parse_tenant_documents(docs)
    assert [p.path for p in err.value.errors] == ["NodePool/tenant-two/md1.spec.proxmox.vmIDRange"]


def test_two_tenants_sharing_addresses_on_one_segment_are_refused() -> None:
    docs = _two_pools({}, {}, namespace="tenant-two")
    with pytest.raises(InvalidInput) as err:
        parse_tenant_documents(docs)
    (problem,) = err.value.errors
    assert problem.path == "TenantCluster/tenant-two/acme.spec.proxmox.ipv4Config.addresses"
    assert problem.message.startswith("192.0.2.100-192.0.2.150 is also in TenantCluster/tenant-acme/acme")
    # On another VLAN the same range is another network.
    parse_tenant_documents(_two_pools({}, {"network": {"bridge": "vmbr0", "vlan": 200}}, namespace="tenant-two"))


def test_device_pools_sharing_an_address_on_one_bridge_are_refused() -> None:
    dev = {"name": "net1", "bridge": "vmbr9", "ipv4": {"addresses": ["10.9.0.10-10.9.0.20"], "prefix": 24}}
    other = dev | {"ipv4": {"addresses": ["10.9.0.20-10.9.0.30"], "prefix": 24}}
    docs = _two_pools({"network": {"additionalDevices": [dev]}}, {"network": {"additionalDevices": [other]}})
    with pytest.raises(InvalidInput) as err:
        parse_tenant_documents(docs)
    (problem,) = err.value.errors
    assert problem.path == f"{QPOOL.replace('md0', 'md1')}.network.additionalDevices[0].ipv4.addresses"
    assert problem.message == (
        "10.9.0.20 is also in NodePool/tenant-acme/md0.spec.proxmox.network.additionalDevices[0].ipv4 on bridge "
        "vmbr9: two pools would hand one address to two VMs; make the ranges disjoint"), "no VLAN: none named"
    moved = other | {"vlan": 9}
    parse_tenant_documents(_two_pools({"network": {"additionalDevices": [dev]}},
                                      {"network": {"additionalDevices": [moved]}}))


def test_an_address_shared_on_one_vlan_names_the_bridge_and_the_vlan() -> None:
    dev = {"name": "net1", "bridge": "vmbr9", "vlan": 7, "ipv4": {"addresses": ["10.9.0.10-10.9.0.20"], "prefix": 24}}
    other = dev | {"ipv4": {"addresses": ["10.9.0.20-10.9.0.30"], "prefix": 24}}
    with pytest.raises(InvalidInput) as err:
        parse_tenant_documents(_two_pools({"network": {"additionalDevices": [dev]}},
                                          {"network": {"additionalDevices": [other]}}))
    (problem,) = err.value.errors
    assert problem.message == (
        "10.9.0.20 is also in NodePool/tenant-acme/md0.spec.proxmox.network.additionalDevices[0].ipv4 on bridge "
        "vmbr9 VLAN 7: two pools would hand one address to two VMs; make the ranges disjoint")


def test_a_device_pool_inside_the_cluster_pool_on_the_same_segment_is_refused() -> None:
    dev = {"name": "net1", "bridge": "vmbr0", "vlan": 100,
           "ipv4": {"addresses": ["192.0.2.140-192.0.2.160"], "prefix": 24}}
    with pytest.raises(InvalidInput) as err:
        parse_tenant_documents(docs_with(_net(additionalDevices=[dev])))
    assert "192.0.2.140-192.0.2.150 is also in" in str(err.value)


def test_spread_ip_capacity_counts_each_groups_surge(tmp_path: Path) -> None:
    """51 addresses; 48 replicas over 3 nodes surge 1 each: 51 fit; 49 replicas need 52."""
    def edit(replicas: int) -> Edit:
        def apply(cluster: dict[str, Any], pool: dict[str, Any]) -> None:
            pool["replicas"] = replicas
            pool["proxmox"]["placement"] = "spread"
        return apply

    parse_tenant_documents(docs_with(edit(48)))
    spec = tmp_path / "tenant.yaml"
    spec.write_text(yaml.safe_dump_all(docs_with(edit(49))))
    result = CliRunner().invoke(app, ["validate", "-f", str(spec)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert ("TenantCluster/acme.spec.proxmox.ipv4Config.addresses: 51 usable addresses, but the node pools can "
            "claim 52 at once (max replicas + rolling-update surge: md0: pve1 17+1, pve2 16+1, pve3 16+1)"
            ) in result.stderr


CRD_CASES: dict[str, tuple[Edit, str]] = {
    "vmid range reversed": (_px(vmIDRange={"start": 5010, "end": 5000}), "end is before start"),
    "default mtu below 1280": (_net(mtu=1000), "is not an MTU capmox accepts"),
    "device without a pool": (_net(additionalDevices=[{"name": "net1", "bridge": "vmbr1"}]),
                              "needs ipv4 and/or ipv6 addresses"),
    "device named net0": (_dev(name="net0"), "additionalDevices[0].name"),
    "per-node templates without spread": (_px(perNodeTemplates=True), "perNodeTemplates applies to placement"),
    "pool node syntax": (_px(allowedNodes=["pve_1"]), "allowedNodes[0]"),
    "tag syntax": (_px(tags=["Team A"]), "tags[0]"),
}


@pytest.mark.parametrize("case", CRD_CASES.values(), ids=CRD_CASES.keys())
def test_the_generated_crd_refuses_what_one_pool_can_express(case: tuple[Edit, str], own_catalog: Any) -> None:
    from tenantctl.validate import validate_objects

    edit, fragment = case
    pool = doc(docs_with(edit), "NodePool")
    pool["spec"]["proxmox"] = {k: v for k, v in pool["spec"]["proxmox"].items() if v is not None}
    problems = [str(p) for p in validate_objects([pool], own_catalog)]
    assert any(fragment in p for p in problems), problems
    assert not validate_objects([doc(docs_with(lambda c, p: None), "NodePool")], own_catalog)


def test_a_percentage_that_rounds_to_zero_in_a_node_group_warns() -> None:
    def spread(max_unhealthy: object) -> Edit:
        def edit(cluster: dict[str, Any], pool: dict[str, Any]) -> None:
            pool["replicas"] = 4
            pool["proxmox"]["placement"] = "spread"
            pool["healthCheck"] = {"maxUnhealthy": max_unhealthy}
        return edit

    warned = parse_tenant_documents(docs_with(spread("50%"))).warnings
    (warning,) = [w for w in warned if w.path.endswith("healthCheck.maxUnhealthy")]
    assert warning.path == "NodePool/md0.spec.healthCheck.maxUnhealthy"
    assert warning.message.startswith("50% of a node group of 1 machine(s) is 0")
    for fine in ("100%", 1, "1"):
        assert not [w for w in parse_tenant_documents(docs_with(spread(fine))).warnings if "maxUnhealthy" in w.path]


def test_two_pools_with_the_same_vmid_range_are_refused_not_crashed_on() -> None:
    same = {"vmIDRange": {"start": 5000, "end": 5010}}
    with pytest.raises(InvalidInput) as err:
        parse_tenant_documents(_two_pools(same, same))
    assert [p.path for p in err.value.errors] == [f"{QPOOL.replace('md0', 'md1')}.vmIDRange"]


def test_a_dual_stack_cluster_pool_is_still_checked_for_ipv4_overlaps() -> None:
    """With ipv6Config beside ipv4Config, the cluster's IPv4 pool stays among the pools compared."""
    dev = {"name": "net1", "bridge": "vmbr0", "vlan": 100,
           "ipv4": {"addresses": ["192.0.2.140-192.0.2.160"], "prefix": 24}}

    def edit(cluster: dict[str, Any], pool: dict[str, Any]) -> None:
        cluster["proxmox"]["ipv6Config"] = {"addresses": ["2001:db8::10-2001:db8::80"], "prefix": 64,
                                          "gateway": "2001:db8::1"}
        _net(additionalDevices=[dev])(cluster, pool)

    with pytest.raises(InvalidInput) as err:
        parse_tenant_documents(docs_with(edit))
    assert [p.path for p in err.value.errors] == [f"{QPOOL}.network.additionalDevices[0].ipv4.addresses"]
    assert err.value.errors[0].message.startswith(
        "192.0.2.140-192.0.2.150 is also in TenantCluster/tenant-acme/acme.spec.proxmox.ipv4Config on bridge vmbr0")

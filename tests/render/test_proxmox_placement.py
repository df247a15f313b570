"""Proxmox pools per node: spread node groups, a pool's own nodes, VMIDs, tags, further NICs, dual stack.

Every render here is judged against the capmox v0.7.7, CAIP v1.0.3 and CAPI CRDs (schema and CEL), and
the split is checked against numbers worked out by hand, not against `spec.placement` itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest
import yaml

from tenant_support import clone, doc, load_example
from tenantctl.render import render_tenant
from tenantctl.spec import parse_observed, parse_tenant_documents

Docs = list[dict[str, Any]]
Validator = Callable[[Iterable[Mapping[str, Any]]], None]
MIN = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
MAX = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"


def _docs(nodes: list[str], **pool: Any) -> Docs:
    docs = clone(load_example("proxmox.yaml"))
    doc(docs, "TenantCluster")["spec"]["proxmox"]["allowedNodes"] = nodes
    spec = doc(docs, "NodePool")["spec"]
    for key, value in pool.items():
        if key == "proxmox":
            spec["proxmox"] |= value
        else:
            spec[key] = value
    if "minReplicas" in pool:
        spec.pop("replicas", None)
    return docs


def _render(docs: Docs, observed: bool = True) -> list[dict[str, Any]]:
    obs = parse_observed(load_example("observed-proxmox.yaml")) if observed else None
    return render_tenant(parse_tenant_documents(docs), obs)


def _kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def _by_name(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in _kind(objects, kind)}


def _template_of(objects: list[dict[str, Any]], md: Mapping[str, Any]) -> dict[str, Any]:
    ref = md["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    return _by_name(objects, "ProxmoxMachineTemplate")[ref]["spec"]["template"]["spec"]


@pytest.mark.parametrize(
    ("replicas", "nodes", "split"),
    [
        (5, ["pve1", "pve2", "pve3"], {"pve1": 2, "pve2": 2, "pve3": 1}),
        (3, ["pve3", "pve1", "pve2"], {"pve1": 1, "pve2": 1, "pve3": 1}),
        (2, ["pve1", "pve2", "pve3"], {"pve1": 1, "pve2": 1, "pve3": 0}),
        (7, ["b", "a"], {"a": 4, "b": 3}),
    ],
)
def test_spread_gives_one_machine_deployment_per_node_with_an_even_split(
    replicas: int, nodes: list[str], split: dict[str, int], assert_valid: Validator
) -> None:
    objects = _render(_docs(nodes, replicas=replicas, proxmox={"placement": "spread"}))
    assert_valid(objects)
    mds = _by_name(objects, "MachineDeployment")
    assert {name: md["spec"]["replicas"] for name, md in mds.items()} == {f"acme-md0-{n}": r for n, r in split.items()}
    for node in split:
        md = mds[f"acme-md0-{node}"]
        template = _template_of(objects, md)
        assert template["allowedNodes"] == [node]
        selector = md["spec"]["selector"]["matchLabels"]
        assert selector["tenantctl.io/node-group"] == node
        assert md["spec"]["template"]["metadata"]["labels"]["tenantctl.io/node-group"] == node
        # One machine config for the whole pool: every group boots the same TalosConfigTemplate.
        assert md["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"] == "acme-md0"
    mhcs = _by_name(objects, "MachineHealthCheck")
    assert set(mhcs) == set(mds)
    for name, mhc in mhcs.items():
        assert mhc["spec"]["selector"] == mds[name]["spec"]["selector"]
    assert len(_kind(objects, "TalosConfigTemplate")) == 1


def test_one_host_down_costs_at_most_the_ceiling_of_replicas_over_nodes() -> None:
    for replicas in range(0, 12):
        for count in range(1, 6):
            nodes = [f"pve{i}" for i in range(count)]
            mds = _kind(_render(_docs(nodes, replicas=replicas, proxmox={"placement": "spread"}), False),
                        "MachineDeployment")
            shares = [md["spec"]["replicas"] for md in mds]
            assert sum(shares) == replicas
            assert max(shares) == -(-replicas // count)


def test_spread_names_are_stable_when_the_list_is_reordered() -> None:
    nodes = ["pve1", "pve2", "pve3"]
    a = _render(_docs(nodes, replicas=4, proxmox={"placement": "spread", "allowedNodes": nodes}))
    b = _render(_docs(nodes, replicas=4, proxmox={"placement": "spread", "allowedNodes": nodes[::-1]}))
    assert a == b


def test_autoscaled_spread_splits_min_and_max_and_balances(assert_valid: Validator) -> None:
    objects = _render(_docs(["pve1", "pve2", "pve3"], minReplicas=1, maxReplicas=7,
                            proxmox={"placement": "spread"}))
    assert_valid(objects)
    mds = _by_name(objects, "MachineDeployment")
    bounds = {n: (md["metadata"]["annotations"][MIN], md["metadata"]["annotations"][MAX]) for n, md in mds.items()}
    assert bounds == {"acme-md0-pve1": ("1", "3"), "acme-md0-pve2": ("0", "2"), "acme-md0-pve3": ("0", "2")}
    for md in mds.values():
        assert "replicas" not in md["spec"]
        # Scale from zero: each group says what one node offers.
        assert "capacity.cluster-autoscaler.kubernetes.io/memory" in md["metadata"]["annotations"]
    (autoscaler,) = [d for d in _kind(objects, "Deployment") if d["metadata"]["name"] == "acme-cluster-autoscaler"]
    assert "--balance-similar-node-groups=true" in autoscaler["spec"]["template"]["spec"]["containers"][0]["args"]


def test_an_unspread_autoscaler_keeps_its_arguments() -> None:
    objects = _render(_docs(["pve1", "pve2"], minReplicas=1, maxReplicas=3))
    (autoscaler,) = [d for d in _kind(objects, "Deployment") if d["metadata"]["name"] == "acme-cluster-autoscaler"]
    assert "--balance-similar-node-groups=true" not in autoscaler["spec"]["template"]["spec"]["containers"][0]["args"]


def test_a_pool_narrows_the_cluster_nodes_without_spreading(assert_valid: Validator) -> None:
    objects = _render(_docs(["pve1", "pve2", "pve3"], proxmox={"allowedNodes": ["pve2", "pve3"]}))
    assert_valid(objects)
    (md,) = _kind(objects, "MachineDeployment")
    assert md["metadata"]["name"] == "acme-md0"
    assert "tenantctl.io/node-group" not in md["spec"]["selector"]["matchLabels"]
    assert _template_of(objects, md)["allowedNodes"] == ["pve2", "pve3"]
    (cluster,) = _kind(objects, "ProxmoxCluster")
    assert cluster["spec"]["allowedNodes"] == ["pve1", "pve2", "pve3"]


def test_spread_over_the_pools_own_nodes_only() -> None:
    objects = _render(_docs(["pve1", "pve2", "pve3"], replicas=4,
                            proxmox={"allowedNodes": ["pve3", "pve1"], "placement": "spread"}))
    assert {m["metadata"]["name"]: m["spec"]["replicas"] for m in _kind(objects, "MachineDeployment")} == {
        "acme-md0-pve1": 2, "acme-md0-pve3": 2,
    }


def test_node_names_with_capitals_name_objects_in_lower_case(assert_valid: Validator) -> None:
    objects = _render(_docs(["PVE-A", "pve-b"], replicas=2, proxmox={"placement": "spread"}))
    assert_valid(objects)
    mds = _by_name(objects, "MachineDeployment")
    assert set(mds) == {"acme-md0-pve-a", "acme-md0-pve-b"}
    assert _template_of(objects, mds["acme-md0-pve-a"])["allowedNodes"] == ["PVE-A"]


def test_per_node_templates_select_each_nodes_copy(assert_valid: Validator) -> None:
    objects = _render(_docs(["pve1", "PVE2"], replicas=2, proxmox={"placement": "spread", "perNodeTemplates": True}))
    assert_valid(objects)
    mds = _by_name(objects, "MachineDeployment")
    assert _template_of(objects, mds["acme-md0-pve2"])["templateSelector"]["matchTags"] == [
        "node-pve2", "talos", "talos-v1.13.6",
    ]


def test_vmid_range_tags_and_owner_tags_reach_the_template(assert_valid: Validator) -> None:
    objects = _render(_docs(["pve1"], proxmox={
        "vmIDRange": {"start": 5000, "end": 5009}, "tags": ["team-a", "prod"], "ownerTags": True,
    }))
    assert_valid(objects)
    (md,) = _kind(objects, "MachineDeployment")
    template = _template_of(objects, md)
    assert template["vmIDRange"] == {"start": 5000, "end": 5009}
    assert template["tags"] == ["nodepool.md0", "prod", "team-a", "tenant.tenant-acme.acme", "tenantctl"]


def test_owner_tags_by_default_and_no_tags_key_without_any() -> None:
    objects = _render(_docs(["pve1"]))
    (md,) = _kind(objects, "MachineDeployment")
    assert _template_of(objects, md)["tags"] == ["nodepool.md0", "tenant.tenant-acme.acme", "tenantctl"]
    objects = _render(_docs(["pve1"], proxmox={"ownerTags": False}))
    (md,) = _kind(objects, "MachineDeployment")
    assert "tags" not in _template_of(objects, md)


def test_further_nics_get_their_own_address_pools(assert_valid: Validator) -> None:
    devices = [
        {"name": "net1", "bridge": "vmbr1", "vlan": 30, "mtu": 9000,
         "ipv4": {"addresses": ["10.30.0.10-10.30.0.40"], "prefix": 24}},
        {"name": "net2", "bridge": "vmbr2", "model": "e1000",
         "ipv4": {"addresses": ["10.40.0.0/26"], "prefix": 24, "gateway": "10.40.0.1"},
         "ipv6": {"addresses": ["fd00:40::10-fd00:40::ff"], "prefix": 64}},
    ]
    objects = _render(_docs(["pve1", "pve2"], replicas=2,
                            proxmox={"placement": "spread", "network": {"bridge": "vmbr0", "mtu": 1,
                                                                        "additionalDevices": devices}}))
    assert_valid(objects)
    pools = _by_name(objects, "InClusterIPPool")
    assert set(pools) == {"acme-md0-net1-v4", "acme-md0-net2-v4", "acme-md0-net2-v6"}
    assert pools["acme-md0-net1-v4"]["spec"] == {"addresses": ["10.30.0.10-10.30.0.40"], "prefix": 24}
    assert pools["acme-md0-net2-v4"]["spec"]["gateway"] == "10.40.0.1"
    assert pools["acme-md0-net1-v4"]["metadata"]["labels"]["tenantctl.io/nodepool"] == "md0"
    for md in _kind(objects, "MachineDeployment"):
        net = _template_of(objects, md)["network"]
        assert net["default"] == {"bridge": "vmbr0", "model": "virtio", "mtu": 1}
        first, second = net["additionalDevices"]
        assert first == {"name": "net1", "bridge": "vmbr1", "model": "virtio", "vlan": 30, "mtu": 9000,
                         "ipv4PoolRef": {"apiGroup": "ipam.cluster.x-k8s.io", "kind": "InClusterIPPool",
                                         "name": "acme-md0-net1-v4"}}
        assert second["ipv6PoolRef"]["name"] == "acme-md0-net2-v6"
    # The pools come before the templates that claim from them.
    kinds = [o["kind"] for o in objects]
    assert kinds.index("InClusterIPPool") < kinds.index("ProxmoxMachineTemplate")
    (tct,) = _kind(objects, "TalosConfigTemplate")
    config = yaml.safe_load(tct["spec"]["template"]["spec"]["data"])
    # The kubelet registers the default NIC's address, not the storage network's.
    assert config["machine"]["kubelet"]["nodeIP"] == {"validSubnets": ["192.0.2.0/24"]}


def test_a_pool_without_further_nics_keeps_its_machine_config() -> None:
    (tct,) = _kind(_render(_docs(["pve1"])), "TalosConfigTemplate")
    assert "nodeIP" not in yaml.safe_load(tct["spec"]["template"]["spec"]["data"])["machine"]["kubelet"]


def test_dual_stack_worker_addresses(assert_valid: Validator) -> None:
    docs = _docs(["pve1"])
    doc(docs, "TenantCluster")["spec"]["proxmox"]["ipv6Config"] = {
        "addresses": ["2001:db8:100::10-2001:db8:100::50"], "prefix": 64, "gateway": "2001:db8:100::1",
    }
    objects = _render(docs)
    assert_valid(objects)
    (cluster,) = _kind(objects, "ProxmoxCluster")
    assert cluster["spec"]["ipv6Config"] == {
        "addresses": ["2001:db8:100::10-2001:db8:100::50"], "prefix": 64, "gateway": "2001:db8:100::1", "metric": 100,
    }
    assert list(cluster["spec"]).index("ipv6Config") < list(cluster["spec"]).index("credentialsRef")

"""The in-cluster IPAM provider (CAIP v1.0.3) allocates from the pools tenantctl renders (issue 37).

CAIP's manager runs beside the real API server, acting on this module's namespace. Two things are proven
by the allocator itself, not by our reading of it:
- tenantctl's count of a pool's usable addresses (what its capacity refusals compare against) is the count
  CAIP's pool controller reports, reserved addresses and all;
- every pool a Proxmox example's machines draw from — the further NICs' pools tenantctl renders, and the
  pools capmox makes from the ProxmoxCluster's ipv4Config/ipv6Config (capmox v0.7.7 copies addresses,
  prefix and gateway unchanged) — answers a claim for every machine the pools can hold at once.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from real_api import Api, wait_for
from real_control_plane import ControlPlane
from tenant_support import load_example
from tenantctl.render import render_cluster
from tenantctl.render.meta import POOL_LABEL
from tenantctl.spec import parse_tenant_documents
from tenantctl.spec.address_pools import pool_usable
from tenantctl.spec.placement import machines_at_once
from upstream_support import COMPONENTS, capmox_pools, in_cluster_pool, running

pytestmark = [pytest.mark.timeout(300)]

NS = "caip-acting"
CAIP = "ipam.cluster.x-k8s.io/v1alpha2"
CLAIMS = "ipam.cluster.x-k8s.io/v1beta1"


@pytest.fixture(scope="module")
def allocator(installed: Any, admin: Api, management: ControlPlane,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with running(COMPONENTS["caip"], admin, management, tmp_path_factory.mktemp("caip"), NS) as log:
        admin.namespace(NS)
        yield log


def _total(admin: Api, name: str) -> int:
    """What CAIP's pool controller counts: the addresses its allocator can hand out."""
    def counted() -> int | None:
        pool = admin.get(CAIP, "InClusterIPPool", NS, name) or {}
        return ((pool.get("status") or {}).get("ipAddresses") or {}).get("total")

    wait_for(lambda: counted() is not None, 30, what=f"CAIP's count of {name}")
    return int(counted() or 0)


# (addresses, prefix, gateway, family): each edge of what CAIP reserves.
POOLS = {
    "network-gateway-broadcast": (["192.0.2.0-192.0.2.3", "192.0.2.250-192.0.2.255"], 24, "192.0.2.1", 4),
    "cidr-entry": (["10.30.0.0/28"], 24, None, 4),
    "overlapping-entries": (["10.30.0.10-10.30.0.20", "10.30.0.16/30", "10.30.0.20"], 24, None, 4),
    "upper-half": (["192.0.2.128/25"], 24, "192.0.2.1", 4),
    "v4-slash-31": (["10.40.0.0-10.40.0.1"], 31, None, 4),
    "v4-slash-32": (["10.40.0.7"], 32, None, 4),
    "v6-anycast-gateway": (["2001:db8:100::-2001:db8:100::5"], 64, "2001:db8:100::1", 6),
    "v6-slash-127": (["2001:db8::6-2001:db8::7"], 127, None, 6),
    "v6-slash-128": (["2001:db8::7"], 128, None, 6),
}


@pytest.mark.parametrize("case", sorted(POOLS))
def test_tenantctl_counts_a_pools_usable_addresses_as_caip_does(allocator: Path, admin: Api, case: str) -> None:
    addresses, prefix, gateway, family = POOLS[case]
    admin.apply(in_cluster_pool(case, NS, addresses, prefix, gateway))
    try:
        assert pool_usable(addresses, prefix, gateway, family) == _total(admin, case)
    finally:
        admin.delete(CAIP, "InClusterIPPool", NS, case)


def _claim(name: str, pool: str) -> dict[str, Any]:
    return {"apiVersion": CLAIMS, "kind": "IPAddressClaim", "metadata": {"name": name, "namespace": NS},
            "spec": {"poolRef": {"apiGroup": CAIP.partition("/")[0], "kind": "InClusterIPPool", "name": pool}}}


def _bound(admin: Api) -> dict[str, str]:
    return {c["metadata"]["name"]: c["status"]["addressRef"]["name"]
            for c in admin.list(CLAIMS, "IPAddressClaim", NS) if ((c.get("status") or {}).get("addressRef") or {})}


def _pools_machines_draw_from(example: str) -> list[tuple[dict[str, Any], int]]:
    """Each pool an example's machines take an address from, and how many machines can hold one at once."""
    docs = copy.deepcopy(load_example(example))
    for d in docs:
        d["metadata"]["namespace"] = NS
    tenant = parse_tenant_documents(docs)
    cluster = tenant.clusters[0]
    pools = tenant.pools_of(cluster)
    px = cluster.spec.proxmox
    assert px is not None
    need = sum(machines_at_once(p, cluster) for p in pools)
    out = [(pool, need) for pool in capmox_pools(cluster, NS)]
    at_once = {p.metadata.name: machines_at_once(p, cluster) for p in pools}
    out += [(o, at_once[o["metadata"]["labels"][POOL_LABEL]])
            for o in render_cluster(cluster, pools, None) if o["kind"] == "InClusterIPPool"]
    return out


@pytest.mark.parametrize("example", ["proxmox.yaml", "proxmox-spread.yaml"])
def test_every_pool_answers_a_claim_for_every_machine_at_once(allocator: Path, admin: Api, example: str) -> None:
    drawn = _pools_machines_draw_from(example)
    try:
        for pool, _ in drawn:
            admin.apply(pool)
        # CAIP v1.0.3 drops a claim whose pool its cache does not hold yet (`ctrl.Result{}, nil` in
        # ipamutil's reconciler) and requeues claims on a pool's unpause or refill, never on its creation:
        # a claim applied milliseconds after its pool waited forever. Claims come from capmox well after
        # the pools in a tenant; here, once CAIP has counted every pool.
        for pool, _ in drawn:
            _total(admin, pool["metadata"]["name"])
        wanted = {}
        for pool, machines in drawn:
            for i in range(machines):
                claim = _claim(f"{pool['metadata']['name']}-{i}", pool["metadata"]["name"])
                admin.apply(claim)
                wanted[claim["metadata"]["name"]] = pool["metadata"]["name"]
        wait_for(lambda: len(_bound(admin)) == len(wanted), 120,
                 what=f"CAIP's addresses for {len(wanted)} claims ({allocator})")
        addresses = admin.list(CLAIMS, "IPAddress", NS)
        by_pool: dict[str, set[str]] = {}
        for address in addresses:
            by_pool.setdefault(address["spec"]["poolRef"]["name"], set()).add(address["spec"]["address"])
        assert {p: len(a) for p, a in by_pool.items()} == {p["metadata"]["name"]: n for p, n in drawn}
    finally:
        for claim in admin.list(CLAIMS, "IPAddressClaim", NS):
            admin.delete(CLAIMS, "IPAddressClaim", NS, claim["metadata"]["name"])
        wait_for(lambda: not admin.list(CLAIMS, "IPAddress", NS), 60, what="the addresses released")
        for pool, _ in drawn:
            admin.delete(CAIP, "InClusterIPPool", NS, pool["metadata"]["name"])

"""Two shards of the operator against one management API: every tenant is reconciled by exactly one."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from kube_emulator import KubeEmulator
from operator_support import FAST, eventually, management, running_operator, seed_documents

from tenant_support import load_example
from tenantctl.operator.config.sharding import Shard, peering_priority, shard_of
from tenantctl.operator.runtime.finalizers import finalizer_of

pytestmark = [pytest.mark.timeout(60)]

TC = "tenantctl.io/v1alpha1/tenantclusters"
PINNED = [2, 3, 1, 0, 1, 2]
TENANTS = [(f"tenant-{i}", "demo") for i in range(8)]


def tenant_documents(namespace: str) -> list[dict[str, Any]]:
    """The kubevirt example moved into `namespace`: same names, another tenant."""
    docs = copy.deepcopy(load_example("kubevirt.yaml"))
    for d in docs:
        d["metadata"]["namespace"] = namespace
    return docs


def status_written(mgmt: KubeEmulator, key: tuple[str, str]) -> bool:
    body = mgmt.get(TC, *key) or {}
    return bool((body.get("status") or {}).get("phase"))


async def test_two_shards_split_the_tenants_and_never_share_one(mgmt: KubeEmulator) -> None:
    management(mgmt)
    for namespace, _ in TENANTS:
        seed_documents(mgmt, tenant_documents(namespace))
    owners = {key: shard_of(*key, 2) for key in TENANTS}
    assert set(owners.values()) == {0, 1}, "the fixture names must land on both shards"
    first, second = (dataclasses.replace(FAST, shard=Shard(i, 2)) for i in (0, 1))
    async with running_operator(mgmt, first) as zero, running_operator(mgmt, second) as one:
        await eventually(lambda: all(status_written(mgmt, key) for key in TENANTS), timeout=20)
        await eventually(lambda: set(zero.passes) | set(one.passes) == set(TENANTS))
    assert not set(zero.passes) & set(one.passes), "a tenant was reconciled by both shards"
    assert {key for key, shard in owners.items() if shard == 0} == set(zero.passes)
    assert {key for key, shard in owners.items() if shard == 1} == set(one.passes)
    for key in TENANTS:
        finalizers = (mgmt.get(TC, *key) or {})["metadata"].get("finalizers")
        assert finalizers == [finalizer_of(Shard(owners[key], 2))], "the owner's finalizer, kept by the other"


def test_the_assignment_is_a_stable_hash_of_namespace_and_name() -> None:
    assert shard_of("tenant-0", "demo", 2) == shard_of("tenant-0", "demo", 2)
    assert [shard_of(f"ns-{i}", "c", 4) for i in range(6)] == PINNED, "changing the hash moves live tenants"
    assert Shard(0, 1).owns("any", "thing")
    spread = {shard_of(f"ns-{i}", "c", 4) for i in range(64)}
    assert spread == {0, 1, 2, 3}


@pytest.mark.parametrize(("text", "shard"), [("0/1", Shard(0, 1)), ("1/2", Shard(1, 2)), ("3/4", Shard(3, 4))])
def test_shard_specs_parse(text: str, shard: Shard) -> None:
    assert Shard.parse(text) == shard


@pytest.mark.parametrize("text", ["2/2", "3/2", "0/0", "-1/2", "1", "a/b", "1/2/3", "", " 3/4", "1/2\n"])
def test_bad_shard_specs_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"I/N|index"):
        Shard.parse(text)


@pytest.mark.parametrize(
    ("pod", "priority"),
    [("tenantctl-operator-0", 0), ("tenantctl-operator-shard-1-2", -2), ("laptop", 0), (None, 0)],
)
def test_the_first_replica_of_a_shard_has_the_highest_peering_priority(pod: str | None, priority: int) -> None:
    assert peering_priority(pod) == priority

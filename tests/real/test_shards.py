"""A shard layout change on the real servers: `tenantctl operator --shard I/N` processes, three, then two.

Each tenant ends with the finalizer of its owner under the running layout alone; a tenant deleted while
no shard ran, held only by the old layout's finalizer, is torn down by its new owner and goes.
"""

from __future__ import annotations

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
from tenantctl.operator.config.sharding import Shard, shard_of
from tenantctl.operator.runtime.finalizers import finalizer_of, is_teardown_finalizer

pytestmark = [pytest.mark.timeout(300), pytest.mark.process]

TC = ("tenantctl.io/v1alpha1", "TenantCluster")
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


def _settled(admin: Api, namespaces: list[str], count: int) -> bool:
    return all(_ours(admin, ns) == [_owner(ns, count)] for ns in namespaces)


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
    assert "Traceback" not in log.read_text()

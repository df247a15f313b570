"""An upgrade's guards on the real API servers: no pool moves ahead of its control plane.

The kubevirt example at v1.34, upgraded to v1.35. The test plays Kamaji and Cluster API by writing the
statuses of the KamajiControlPlane and the MachineDeployments through their status subresources, and
tries each way a pool could be released too early: the control plane reporting the target with one of
two apiservers ready, the TenantCluster's `status.upgrade` lost mid-upgrade, and the operator killed
between the control-plane and pool stages and started again.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from operator_support import FAST, condition, one_more_pass

from real_api import Api
from real_control_plane import ControlPlane
from real_seed import eventually, operator_connection, running_operator, seed_control_plane, seed_tenant
from tenant_support import load_example

pytestmark = [pytest.mark.timeout(300)]

TC = ("tenantctl.io/v1alpha1", "TenantCluster")
KCP = ("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane")
MD = ("cluster.x-k8s.io/v1beta1", "MachineDeployment")
NS, NAME = "upgrade-demo", "demo"
KEY = (NS, NAME)
OLD, NEW = "v1.34.9", "v1.35.6"


def _md_version(admin: Api, md: str) -> str | None:
    obj = admin.get(*MD, NS, md)
    return None if obj is None else str(obj["spec"]["template"]["spec"]["version"])


def _kcp_version(admin: Api) -> str | None:
    obj = admin.get(*KCP, NS, NAME)
    return None if obj is None else str(obj["spec"]["version"])


def _control_plane_reports(admin: Api, version: str, ready: int, wanted: int = 2) -> None:
    # The provider's CRD requires selector, updatedReplicas and unavailableReplicas in every status.
    admin.merge_status(*KCP, NS, NAME, {"version": version, "ready": True, "initialized": True,
                                        "readyReplicas": ready, "replicas": wanted, "updatedReplicas": ready,
                                        "unavailableReplicas": wanted - ready,
                                        "selector": f"cluster.x-k8s.io/cluster-name={NAME}"})


def _rolled_out(admin: Api, md: str) -> None:
    obj = admin.get(*MD, NS, md)
    assert obj is not None
    n = obj["spec"].get("replicas", 1)
    admin.merge_status(*MD, NS, md, {"observedGeneration": obj["metadata"]["generation"], "replicas": n,
                                     "updatedReplicas": n, "readyReplicas": n, "availableReplicas": n})


def _pools(admin: Api) -> tuple[str | None, str | None]:
    return _md_version(admin, "demo-big"), _md_version(admin, "demo-md0")


def _upgrade_status(admin: Api) -> dict[str, Any]:
    return dict(((admin.get(*TC, NS, NAME) or {}).get("status") or {}).get("upgrade") or {})


async def test_no_pool_moves_ahead_of_a_control_plane_that_has_not_fully_reached_the_target(
    installed: Any, admin: Api, management: ControlPlane, tenant_plane: ControlPlane,
) -> None:
    docs = copy.deepcopy(load_example("kubevirt.yaml"))
    for d in docs:
        d["metadata"]["namespace"] = NS
    docs[0]["spec"]["version"] = "v1.34"
    seed_tenant(admin, docs)
    seed_control_plane(admin, docs, tenant_plane)
    connection = operator_connection(management)
    async with running_operator(connection, FAST) as ctx:
        await eventually(lambda: condition(admin.get(*TC, *KEY), "Ready").get("status") == "True", 120)
        assert _kcp_version(admin) == OLD and _pools(admin) == (OLD, OLD)
        _control_plane_reports(admin, OLD, 2)
        _rolled_out(admin, "demo-big")
        _rolled_out(admin, "demo-md0")
        await one_more_pass(ctx, KEY)

        upgraded = copy.deepcopy(docs[0])
        upgraded["spec"]["version"] = "v1.35"
        admin.apply(upgraded, manager="kubectl")
        await eventually(lambda: _kcp_version(admin) == NEW, 60, what="the control plane moved first")
        await one_more_pass(ctx, KEY)
        assert _pools(admin) == (OLD, OLD)
        assert _upgrade_status(admin)["stage"] == "ControlPlane"

        # Kamaji reports the new version while one of two apiservers still runs the old one.
        _control_plane_reports(admin, NEW, 1)
        await one_more_pass(ctx, KEY)
        await one_more_pass(ctx, KEY)
        assert _pools(admin) == (OLD, OLD), "1 of 2 apiservers ready: no pool moves"
        assert "1/2 ready" in _upgrade_status(admin)["waiting"]

        # The operator's memory of the stage is lost (a status write that never landed).
        admin.merge_status(*TC, NS, NAME, {"upgrade": None})
        _control_plane_reports(admin, OLD, 2)
        await one_more_pass(ctx, KEY)
        await one_more_pass(ctx, KEY)
        assert _pools(admin) == (OLD, OLD), "status.upgrade gone, the control plane still on v1.34: no pool moves"
        _control_plane_reports(admin, NEW, 1)

    # Killed between the stages; a new operator process reads where the cluster is.
    async with running_operator(operator_connection(management), FAST) as ctx:
        await eventually(lambda: ctx.passes.get(KEY, 0) >= 1, 60, what="a pass of the new operator")
        await one_more_pass(ctx, KEY)
        assert _pools(admin) == (OLD, OLD), "a restarted operator holds the pools as the old one did"
        _control_plane_reports(admin, NEW, 2)
        await eventually(lambda: _md_version(admin, "demo-big") == NEW, 60, what="the first pool released")
        await one_more_pass(ctx, KEY)
        assert _md_version(admin, "demo-md0") == OLD, "the next pool waits for the first to roll out"
        _rolled_out(admin, "demo-big")
        await eventually(lambda: _md_version(admin, "demo-md0") == NEW, 60, what="the second pool released")
        _rolled_out(admin, "demo-md0")
        await eventually(lambda: condition(admin.get(*TC, *KEY), "Upgrading").get("reason") == "UpToDate", 60)

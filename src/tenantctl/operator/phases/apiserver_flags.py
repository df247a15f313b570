"""Whether the tenant's running apiserver carries the extra flags tenantctl gave its KamajiControlPlane.

Kamaji merges them into the TenantControlPlane's Deployment; a Kamaji that sees a change only by the
flags' number (spec.kamaji_flags) leaves a same-number change out, and the tenant runs with the old
authentication or audit settings while every object says otherwise. One read of the Deployment, only
for a tenant that has extra flags.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tenantctl.operator.kube.client import KubeClient
from tenantctl.operator.phases.conditions import Reason
from tenantctl.render import Names
from tenantctl.render.kamaji import apiserver_flags
from tenantctl.spec import TenantCluster
from tenantctl.spec.compat import KamajiRelease
from tenantctl.spec.kamaji_flags import FLAGS_BY_VALUE_FROM, flags_by_count_only

__all__ = ["APISERVER", "FlagsCheck", "check_flags", "running_flags"]

APISERVER = "kube-apiserver"


@dataclass(frozen=True)
class FlagsCheck:
    ok: bool
    reason: Reason
    message: str


def running_flags(deployment: Mapping[str, Any]) -> list[str]:
    for container in ((deployment.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or []:
        if container.get("name") == APISERVER:
            return [str(a) for a in [*(container.get("command") or []), *(container.get("args") or [])]]
    return []


def judge(wanted: list[str], deployment: Mapping[str, Any] | None, kamaji: KamajiRelease) -> FlagsCheck | None:
    if not wanted or deployment is None:
        return None
    running = set(running_flags(deployment))
    missing = [flag for flag in wanted if flag not in running]
    if not missing:
        return FlagsCheck(True, Reason.FLAGS_APPLIED, f"the apiserver runs with all {len(wanted)} extra flags")
    why = (f"Kamaji {kamaji.release} sees a change of the flags only by their number and leaves this one out; "
           f"upgrade Kamaji to {FLAGS_BY_VALUE_FROM} or later, or change the number of flags"
           if flags_by_count_only(kamaji.release) else "Kamaji has not rolled the apiserver yet")
    return FlagsCheck(False, Reason.FLAGS_NOT_APPLIED, f"the running apiserver lacks {', '.join(missing)}: {why}")


async def check_flags(api: KubeClient, cluster: TenantCluster, kamaji: KamajiRelease) -> FlagsCheck | None:
    wanted = apiserver_flags(cluster)
    if not wanted:
        return None
    names = Names(cluster)
    deployment = await api.get(await api.require("apps/v1", "Deployment"), names.control_plane, names.namespace)
    return judge(wanted, deployment, kamaji)

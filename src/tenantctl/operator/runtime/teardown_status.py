"""A TenantCluster's status while it is torn down: each step's report, a finished report kept, and a
teardown that another one finished stopped where it is.

Two shard layouts running at once (a rolling change of `--shards`) each hold a finalizer on a tenant, and
both tear it down when it is deleted. A progress write of the slower one, read before the faster one
finished, replaced the final report ("finalizer removed") with an unfinished one just before the tenant
went, and the slower one went on through its steps, warning that a proxmox tenant's disks may remain
once the faster one had deleted its control plane. Each write is therefore conditional on the
resourceVersion it read, every read asks the server (a cached outline of another shard's tenant has no
status, and a patch made from it would wipe the status), and a tenant gone or holding a finished report
ends the teardown that reads it.
"""

from __future__ import annotations

import asyncio
import logging
from enum import Enum
from typing import Any

from tenantctl.operator.kube.client import CHANGED_SINCE_READ, APIError, KubeClient, NotFoundError, Obj, Resource
from tenantctl.operator.phases.conditions import Phase
from tenantctl.operator.phases.teardown import TeardownReport

__all__ = ["Reported", "report_teardown", "still_to_tear_down"]

_log = logging.getLogger(__name__)


class Reported(Enum):
    WRITTEN = "written"
    UNCHANGED = "unchanged"
    REFUSED = "refused"
    """Refused as often as the client retries: the next report tries again (a final report is lost)."""
    ENDED = "ended"
    """The tenant is gone, or a teardown finished it: this one stops where it is."""


async def still_to_tear_down(api: KubeClient, res: Resource, namespace: str, name: str) -> Obj | None:
    """The tenant as the server holds it, or None when it is gone or its report reached the Finalizer step."""
    current = await api.get(res, name, namespace, cached=False)
    if current is None or TeardownReport.finished_in(current.get("status") or {}):
        return None
    return current


def _operations(body: Obj, report: TeardownReport) -> list[dict[str, Any]]:
    """The JSON patch that writes the report over `body` as read, or no operations when it is there."""
    status = body.get("status")
    wanted = {"phase": str(Phase.DELETING), "teardown": report.as_status()}
    changed = {key: value for key, value in wanted.items() if (status or {}).get(key) != value}
    if not changed:
        return []
    return [
        {"op": "test", "path": "/metadata/resourceVersion", "value": body["metadata"].get("resourceVersion")},
        *([] if isinstance(status, dict) else [{"op": "add", "path": "/status", "value": {}}]),
        *({"op": "add", "path": f"/status/{key}", "value": value} for key, value in changed.items()),
    ]


async def report_teardown(
    api: KubeClient, res: Resource, namespace: str, name: str, report: TeardownReport
) -> Reported:
    """Write `report` as the tenant's teardown status, unless the tenant is gone or finished (`ENDED`).

    A refusal is another writer's change since the read (kopf's annotations, the other layout's report):
    read again and retried at once, then after each of the client's backoffs but the first (the immediate
    retry takes its place), as `take_over` does.
    """
    for attempt, pause in enumerate((*api.retry.backoffs, None)):
        current = await still_to_tear_down(api, res, namespace, name)
        if current is None:
            return Reported.ENDED
        operations = _operations(current, report)
        if not operations:
            return Reported.UNCHANGED
        try:
            await api.json_patch(res, name, namespace, operations, status=True)
        except NotFoundError:
            return Reported.ENDED
        except APIError as exc:
            if exc.status != CHANGED_SINCE_READ:
                raise
            if pause is None:
                break
            if attempt:
                await asyncio.sleep(pause)
        else:
            return Reported.WRITTEN
    _log.warning("%s %s/%s: its teardown report was refused %d times; the next report tries again",
                 res.kind, namespace, name, len(api.retry.backoffs) + 1)
    return Reported.REFUSED

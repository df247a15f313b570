"""A TenantCluster's status while it is torn down: each step's report, and a finished report kept.

Two shard layouts running at once (a rolling change of `--shards`) each hold a finalizer on a tenant, and
both tear it down when it is deleted. A progress write of the slower one, read before the faster one
finished, replaced the final report ("finalizer removed") with an unfinished one just before the tenant
went. Each write is therefore conditional on the resourceVersion it read; a refused one reads the
server again, and a report that reached its last step is never replaced.
"""

from __future__ import annotations

import logging
from typing import Any

from tenantctl.operator.kube.client import APIError, KubeClient, NotFoundError, Resource
from tenantctl.operator.phases.conditions import Phase
from tenantctl.operator.phases.teardown import TeardownReport

__all__ = ["report_teardown"]

# A JSON patch `test` failing: the object changed since it was read.
_CHANGED = 422
_log = logging.getLogger(__name__)


def _operations(body: dict[str, Any], report: TeardownReport) -> list[dict[str, Any]]:
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


async def report_teardown(api: KubeClient, res: Resource, namespace: str, name: str, report: TeardownReport) -> bool:
    """Write `report` as the tenant's teardown status unless a finished one is there; True if written.

    The first read may come from the watch cache; after a refusal the server is read. Refused as often as
    the client retries, the write is left to the next step's report.
    """
    for attempt in range(len(api.retry.backoffs) + 1):
        current = await api.get(res, name, namespace, cached=not attempt)
        if current is None or TeardownReport.finished_in(current.get("status") or {}):
            return False
        operations = _operations(current, report)
        if not operations:
            return False
        try:
            await api.json_patch(res, name, namespace, operations, status=True)
        except NotFoundError:
            return False
        except APIError as exc:
            if exc.status != _CHANGED:
                raise
        else:
            return True
    _log.debug("%s %s/%s: its teardown report was refused %d times; the next step writes it",
               res.kind, namespace, name, len(api.retry.backoffs) + 1)
    return False

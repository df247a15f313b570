"""The upgrade phase of a pass: read what runs where, choose the patch the policy allows, decide the stage.

It replaces `scope.cluster` by the cluster at the patch its policy allows now (`live_pins.effective_version`):
every later phase renders that one, so a held patch is never rendered by accident.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping
from typing import Any

from tenantctl.operator.phases.conditions import Reason
from tenantctl.operator.phases.live_pins import effective_version
from tenantctl.operator.phases.outcome import announce
from tenantctl.operator.phases.scope import Scope
from tenantctl.operator.phases.upgrade import Stage, UpgradeDecision, decide, live_state
from tenantctl.render import Names, cluster_labels
from tenantctl.render.capi import CAPI_API
from tenantctl.render.kamaji import KAMAJI_API

__all__ = ["upgrade_stage"]


async def upgrade_stage(scope: Scope) -> None:
    """Read what runs (control plane, each pool) and decide the stage; announce a new stage once."""
    assert scope.cluster is not None
    cluster, api = scope.cluster, scope.api
    names = Names(cluster)
    labels = cluster_labels(cluster.metadata.name)
    kcp_res = await api.resource(KAMAJI_API, "KamajiControlPlane")
    md_res = await api.resource(CAPI_API, "MachineDeployment")
    mhc_res = await api.resource(CAPI_API, "MachineHealthCheck")
    kcp = await api.get(kcp_res, names.control_plane, names.namespace, ours=True) if kcp_res is not None else None
    mds = await api.list(md_res, names.namespace, labels) if md_res is not None else []
    mhcs = await api.list(mhc_res, names.namespace, labels) if mhc_res is not None else []
    live = live_state(kcp, mds, mhcs, cluster.spec.talos.version)
    scope.live_deployments = mds
    _choose_patch(scope, live.control_plane)
    cluster = scope.cluster
    previous = scope.current_status.get("upgrade") or {}
    decision, since = decide(
        cluster.spec.version, cluster.spec.talos.version, [p.metadata.name for p in scope.pools], live,
        scope.settings.pool_rollout_timeout, previous,
    )
    scope.upgrade_since = since.strftime("%Y-%m-%dT%H:%M:%SZ") if since is not None else None
    if decision.created:
        # A pool without a MachineDeployment yet (new, or its create cut short by a restart) runs what
        # this pass creates it at: else the status would leave it out until the next resync.
        joining = {p.metadata.name: decision.held.get(p.metadata.name, decision.target).as_status()
                   for p in scope.pools if p.metadata.name not in live.pools}
        running = {name: state.running.as_status() for name, state in live.pools.items()}
        scope.running = {
            **({"controlPlane": live.reported or live.control_plane} if live.control_plane else {}),
            "pools": dict(sorted({**joining, **running}.items())),
        }
    else:
        # A new tenant: this pass creates every part at the target, so that is what the status says runs
        # (the next pass reads the same from the objects and writes nothing).
        decision = dataclasses.replace(decision, created=True)
        scope.running = {"controlPlane": decision.target.kubernetes,
                         "pools": {p.metadata.name: decision.target.as_status() for p in scope.pools}}
    scope.upgrade = decision
    _announce_stage(scope, decision, previous)


def _announce_stage(scope: Scope, decision: UpgradeDecision, previous: Mapping[str, Any]) -> None:
    """A new stage once (and the end of an upgrade, not the quiet of a tenant that never had one); a
    stall once per reason."""
    stage = (decision.stage, decision.pool) if decision.upgrading else None
    before = (previous.get("stage"), previous.get("pool")) if previous.get("stage") else None
    target = decision.target
    if decision.stage is Stage.CONTROL_PLANE:
        announce(scope.recorder, before, stage, str(Reason.UPGRADING_CONTROL_PLANE),
                 f"control plane to {target.kubernetes}; pools wait: {', '.join(decision.remaining) or 'none to roll'}")
    elif decision.stage is Stage.POOL:
        announce(scope.recorder, before, stage, str(Reason.UPGRADING_POOL),
                 f"pool {decision.pool} to {target.kubernetes} / Talos {target.talos}; "
                 f"then: {', '.join(decision.remaining) or 'done'}")
    elif before is not None:
        announce(scope.recorder, before, stage, str(Reason.UP_TO_DATE),
                 f"every part runs {target.kubernetes} / Talos {target.talos}")
    if decision.stalled:
        announce(scope.recorder, previous.get("stalled"), decision.stalled, str(Reason.UPGRADE_STALLED),
                 decision.stalled, warning=True)


def _choose_patch(scope: Scope, running: str | None) -> None:
    """Render at the patch the tenant's policy allows now (live_pins.effective_version)."""
    assert scope.cluster is not None
    scope.cluster, choice = effective_version(scope.cluster, running, scope.platform.patch_upgrades,
                                              datetime.datetime.now(tz=datetime.UTC))
    scope.pending = choice if choice.pending is not None else None
    if scope.pending is not None:
        before = (scope.current_status.get("pending") or {}).get("kubernetes")
        announce(scope.recorder, before, scope.pending.pending, str(Reason.PATCH_PENDING),
                 f"runs {choice.version}; {scope.pending.pending} waits: {scope.pending.why}")

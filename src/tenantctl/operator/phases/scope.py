"""What one reconcile pass works on (`Scope`) and what it hands back (`PassResult`).

Every phase of the table in `reconcile` reads and fills the scope; the status is derived from it at the
end (`status.py`), so a phase never writes the status itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tenantctl.operator.config.identity import Subject
from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.kube.client import KubeClient
from tenantctl.operator.kube.tenants import TenantClients
from tenantctl.operator.phases.apiserver_flags import FlagsCheck
from tenantctl.operator.phases.apply import ApplyResult, Verified
from tenantctl.operator.phases.backup_freshness import BackupCheck
from tenantctl.operator.phases.bootstrap import BootstrapResult
from tenantctl.operator.phases.conditions import ConditionType, Reason
from tenantctl.operator.phases.credentials import CredentialsCheck
from tenantctl.operator.phases.derived import DerivedJudge
from tenantctl.operator.phases.events import Recorder
from tenantctl.operator.phases.observe import Observation
from tenantctl.operator.phases.outcome import Next
from tenantctl.operator.phases.platform import PlatformSettings
from tenantctl.operator.phases.restore import RestoreState
from tenantctl.operator.phases.talos_api import KamajiSchema, TalosAPIResult
from tenantctl.operator.phases.upgrade import UpgradeDecision
from tenantctl.render.restore import RestorePhase
from tenantctl.spec import NodePool, TalosSecrets, TenantCluster
from tenantctl.spec.compat import DEFAULT_KAMAJI, KamajiRelease
from tenantctl.spec.patch_policy import PatchChoice

__all__ = ["Obj", "PassResult", "Scope", "previous_condition"]

Obj = dict[str, Any]


@dataclass
class Scope:
    """Everything one pass works on; phases read and fill it, the status is derived from it."""

    api: KubeClient
    settings: OperatorSettings
    recorder: Recorder
    body: Mapping[str, Any]
    pool_bodies: Sequence[Mapping[str, Any]]
    cluster: TenantCluster | None = None
    pools: tuple[NodePool, ...] = ()
    refusal: str | None = None
    talos: TalosSecrets | None = None
    observation: Observation | None = None
    applied: ApplyResult | None = None
    apply_error: tuple[Reason, str] | None = None
    bootstrap: BootstrapResult | None = None
    credentials: CredentialsCheck | None = None
    talos_api: TalosAPIResult | None = None
    tenant_clients: TenantClients | None = None
    """The operator's open tenant clients (None: one client per pass)."""
    kamaji: KamajiSchema | None = None
    """The operator's shared verdict on the installed Kamaji (None: read it in this pass)."""
    derived: DerivedJudge | None = None
    """The operator's shared judge of what Cluster API builds from a render (None: read the CRDs now)."""
    kamaji_release: KamajiRelease = DEFAULT_KAMAJI
    """The management cluster's Kamaji release: which Kubernetes minors a tenant may run."""
    platform: PlatformSettings = field(default_factory=PlatformSettings)
    """The Platform's image and chart settings every object is rendered with (`render --platform`'s)."""
    upgrade: UpgradeDecision | None = None
    upgrade_since: str | None = None
    running: dict[str, Any] = field(default_factory=dict)
    """What runs where, for `status.versions`: the control plane's version and each pool's."""
    verified: Verified | None = None
    """The last pass's word that its render was in place (None: render and compare)."""
    deprecated: tuple[str, ...] = ()
    """The spec's deprecated spellings, as `path: warning` (spec.deprecations)."""
    pending: PatchChoice | None = None
    """A newer patch of the tenant's minor that its patch policy holds back (None: none)."""
    restore_phase: RestorePhase | None = None
    """spec.restore only: the phase this pass renders for (render/restore.py)."""
    restore: RestoreState | None = None
    """spec.restore only: the phase after this pass."""
    backup: BackupCheck | None = None
    """spec.backup only: whether the backups keep up with their schedule."""
    flags: FlagsCheck | None = None
    """A tenant with extra apiserver flags (or one whose status reports them): whether its running apiserver
    carries them, and none it dropped."""
    live_deployments: Sequence[Mapping[str, Any]] = ()
    """The tenant's MachineDeployments as this pass read them (their machine templates are kept)."""
    live_templates: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    """The machine templates those MachineDeployments name, by name (read before a render)."""
    waiting_for_roll: tuple[str, ...] = ()
    """Render changes a live pool's machine template waits with until the pool rolls anyway."""
    not_kept: tuple[str, ...] = ()
    """Pools whose live machine template this render does not keep, and why (said once applied)."""
    identity: Subject | None = None
    """Who the operator is, to bind its tenant role to in the namespace (None: a pass driven with rights of
    its own, as a test's; nothing is bound)."""

    @property
    def generation(self) -> int | None:
        gen = self.body.get("metadata", {}).get("generation")
        return int(gen) if gen is not None else None

    @property
    def current_status(self) -> Mapping[str, Any]:
        return self.body.get("status") or {}


@dataclass(frozen=True)
class PassResult:
    status: Obj
    pool_status: dict[str, Obj] = field(default_factory=dict)
    next: Next = Next.RESYNC
    """When the next pass runs: at the resync, soon and backing off, or polling a stage in progress."""


def previous_condition(status: Mapping[str, Any], kind: ConditionType) -> Mapping[str, Any]:
    """The condition of that type in a status (the last pass's), or an empty mapping."""
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), {})

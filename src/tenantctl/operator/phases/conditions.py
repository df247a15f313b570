"""Phases, condition types and reasons of the operator's status, each defined once.

Kubernetes conventions: a condition has type, status, reason (CamelCase), message,
observedGeneration and lastTransitionTime, which moves only when the status does.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any

from tenantctl.credentials.findings import CredentialsFinding
from tenantctl.redaction import redact

__all__ = ["ConditionType", "Phase", "Reason", "StepOutcome", "TeardownStep", "condition", "merge_conditions"]


class Phase(StrEnum):
    """A one-word summary for `kubectl get`; the conditions carry the detail."""

    PENDING = "Pending"
    INVALID = "Invalid"
    PROVISIONING = "Provisioning"
    READY = "Ready"
    DELETING = "Deleting"


class ConditionType(StrEnum):
    READY = "Ready"
    """Everything rendered is applied, the endpoint is known and the tenant is bootstrapped."""
    APPLIED = "Applied"
    """The rendered management objects are applied and stale ones pruned."""
    ENDPOINT_READY = "EndpointReady"
    """The apiserver Service has an address and both CAs exist; TalosConfigTemplates are applied."""
    TENANT_BOOTSTRAPPED = "TenantBootstrapped"
    """The bootstrap-token Secret and the Talos node RBAC are applied inside the tenant."""
    CREDENTIALS_READY = "CredentialsReady"
    """Proxmox only: capmox's Secret has its keys and `insecure` agrees with the spec."""
    TALOS_API = "TalosAPI"
    """trustd is published on the apiserver Service, so workers get a Talos API; Ready does not wait for it."""
    UPGRADING = "Upgrading"
    """True while a version change rolls through the control plane and the pools, one stage at a time."""
    DEPRECATED = "Deprecated"
    """True while the spec uses a spelling an earlier release accepted and a newer one replaced."""
    RESTORED = "Restored"
    """spec.restore only: the backup is imported and the tenant scrubbed; Ready waits for it."""
    APISERVER_FLAGS = "ApiServerFlags"
    """The running apiserver carries every extra flag rendered (authentication, audit, extraArgs)."""
    BACKUP_FRESH = "BackupFresh"
    """spec.backup only: the last backup is at most twice the schedule old; Ready does not wait for it."""


class Reason(StrEnum):
    INVALID_SPEC = "InvalidSpec"
    """The spec is refused; the message names every field. Nothing is applied until it is fixed."""
    CLUSTER_NOT_FOUND = "ClusterNotFound"
    """A NodePool names a TenantCluster that does not exist in its namespace."""
    APPLIED = "Applied"
    API_ERROR = "APIError"
    """The management API refused or failed a request after retries; the operator retries later."""
    MISSING_API = "MissingAPI"
    """A rendered kind is not served by the management cluster (its provider is not installed)."""
    NAMESPACE_CLOSED = "NamespaceClosed"
    """The tenant's namespace is not opened to the operator (`install --tenant-namespace`): nothing is written."""
    WAITING_FOR_ENDPOINT = "WaitingForEndpoint"
    WAITING_FOR_CA = "WaitingForCA"
    ENDPOINT_READY = "EndpointReady"
    WAITING_FOR_TENANT_API = "WaitingForTenantAPI"
    """The tenant apiserver has no admin kubeconfig yet, or does not answer within the probe bound."""
    BOOTSTRAPPED = "Bootstrapped"
    RECONCILED = "Reconciled"
    TEMPLATE_REPLACED = "TemplateReplaced"
    """An immutable TalosConfigTemplate was deleted and created again with the new spec."""
    CREDENTIALS_CHECKED = "CredentialsChecked"
    CREDENTIALS_NOT_FOUND = "CredentialsNotFound"
    """The Secret `spec.proxmox.credentialsSecretName` does not exist in the tenant namespace."""
    # Findings on capmox's Secret; each names the key (values from the one place that checks them).
    MISSING_URL_KEY = CredentialsFinding.MISSING_URL.value
    MISSING_TOKEN_KEY = CredentialsFinding.MISSING_TOKEN.value
    MISSING_SECRET_KEY = CredentialsFinding.MISSING_SECRET.value
    MISSING_INSECURE_KEY = CredentialsFinding.MISSING_INSECURE.value
    """capmox v0.7.7 skips TLS verification when `insecure` is absent, whatever the spec says."""
    INSECURE_KEY_CONTRADICTS_SPEC = CredentialsFinding.INSECURE_CONTRADICTS_SPEC.value
    UNREADABLE_ROOT_CA_KEY = CredentialsFinding.UNREADABLE_ROOT_CA.value
    TRUSTD_PUBLISHED = "TrustdPublished"
    WAITING_FOR_TENANT_CONTROL_PLANE = "WaitingForTenantControlPlane"
    """The control-plane provider has not created the TenantControlPlane the port goes on yet."""
    KAMAJI_TOO_OLD = "KamajiTooOld"
    """The installed TenantControlPlane CRD has no `additionalPorts`: Kamaji older than 26.3.2-edge."""
    KAMAJI_MISSING = "KamajiMissing"
    TEARDOWN = "Teardown"
    LEFTOVER = "Leftover"
    UPGRADING_CONTROL_PLANE = "UpgradingControlPlane"
    """The KamajiControlPlane moves to the target version; no pool moves until it reports it, ready."""
    UPGRADING_POOL = "UpgradingPool"
    """One pool rolls to the target; the pools after it wait for its rollout."""
    UPGRADE_STALLED = "UpgradeStalled"
    """A pool is being remediated, or its rollout outlived --pool-rollout-timeout: the sequence stops there."""
    UP_TO_DATE = "UpToDate"
    """The control plane and every pool run the spec's versions."""
    PATCH_PENDING = "PatchPending"
    """A newer patch of the tenant's minor waits for its patch policy (status.pending)."""
    TEMPLATE_NOT_KEPT = "TemplateNotKept"
    """An Event: a live pool's machine template this release cannot keep (it could make no machine)."""
    DEPRECATED_SPELLING = "DeprecatedSpelling"
    """The spec uses a deprecated spelling; the message names each field and its replacement."""
    CURRENT_SPELLING = "CurrentSpelling"
    """The spec uses no deprecated spelling."""
    RESTORE_IMPORTING = "Importing"
    """The control plane is held at zero replicas while the restore Job imports the backup."""
    RESTORE_SCRUBBING = "Scrubbing"
    """The restored tenant's Nodes and bootstrap tokens go, its PersistentVolumes turn Retain."""
    RESTORE_DONE = "Restored"
    """The backup is in and the tenant scrubbed: controllers and add-ons are released."""
    FLAGS_APPLIED = "FlagsApplied"
    """Kamaji's apiserver Deployment carries every extra flag."""
    FLAGS_NOT_APPLIED = "FlagsNotApplied"
    """A rendered flag is missing from the running apiserver: not rolled yet, or a Kamaji that counts flags."""
    BACKED_UP = "BackedUp"
    """The last backup is recent enough for its schedule."""
    BACKUP_STALE = "BackupStale"
    """No backup succeeded in twice the schedule's longest gap."""
    BACKUP_SCHEDULED = "BackupScheduled"
    """No backup yet, and none is overdue."""
    BACKUP_SUSPENDED = "BackupSuspended"
    """spec.backup.suspend: nothing is scheduled."""
    RESTORE_FAILED = "RestoreFailed"
    """The restore Job failed; its message says why. Delete the TenantCluster and create it again."""


class TeardownStep(StrEnum):
    """The deletion phases, in the order they run."""

    TENANT_VOLUMES = "TenantVolumes"
    HELM_RELEASES = "HelmReleases"
    CLUSTER_API = "ClusterAPI"
    SUBSTRATE = "Substrate"
    FINALIZER = "Finalizer"


class StepOutcome(StrEnum):
    DONE = "Done"
    SKIPPED = "Skipped"
    LEFTOVER = "Leftover"


def _now() -> str:
    return datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def merge_conditions(
    current: Sequence[Mapping[str, Any]],
    wanted: Sequence[Mapping[str, Any]],
    now: Callable[[], str] = _now,
) -> list[dict[str, Any]]:
    """The wanted conditions, keeping lastTransitionTime where the status did not change."""
    previous = {c.get("type"): c for c in current}
    merged: list[dict[str, Any]] = []
    for cond in wanted:
        old = previous.get(cond["type"])
        same = old is not None and old.get("status") == cond["status"] and old.get("lastTransitionTime")
        merged.append({**cond, "lastTransitionTime": old["lastTransitionTime"] if same and old else now()})
    return merged


def condition(
    kind: ConditionType, ok: bool, reason: Reason, message: str, generation: int | None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": str(kind),
        "status": "True" if ok else "False",
        "reason": str(reason),
        "message": redact(message),
    }
    if generation is not None:
        out["observedGeneration"] = generation
    return out

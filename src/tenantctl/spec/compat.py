"""What the provider stack accepts of a version: the Kamaji it runs on, and a change from the live one.

These checks read more than one object (the spec and the management cluster's Kamaji, or the spec and
its live predecessor), so they are not part of parsing. `render`, `validate`, `plan` and the webhook
call them; the CRD's transition rules (`crd_rules`) say the same words for the version change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tenantctl.problems import Problems
from tenantctl.spec.tenant import TenantCluster
from tenantctl.spec.versions import (
    DEFAULT_KAMAJI_RELEASE,
    DEFAULT_KUBERNETES_MINOR,
    DEFAULT_TALOS_VERSION,
    KAMAJI_RELEASE,
    KAMAJI_SERVES,
    KUBERNETES,
    TALOS_KUBERNETES_WINDOW,
    kamaji_key,
    kamaji_serves,
    minor_key,
    minor_number,
    minor_of,
    patch_key,
)

__all__ = [
    "DEFAULT_KAMAJI",
    "KUBERNETES_DOWNGRADE",
    "KUBERNETES_SKIP",
    "TALOS_DOWNGRADE",
    "KamajiRelease",
    "check_change_from_live",
    "check_input_against_live",
    "check_kamaji_release",
    "check_kamaji_serves",
    "check_version_change",
    "installed_patch",
    "spec_versions",
]

# The refusals of a version change, shared word for word with the CRD's CEL (`crd_rules`).
KUBERNETES_DOWNGRADE = "Kubernetes {new} is older than the running {old}: Kamaji refuses to downgrade a control plane"
KUBERNETES_SKIP = (
    "{old} → {new} skips a minor: Kamaji and the Kubernetes skew policy upgrade one minor at a time"
)
TALOS_DOWNGRADE = (
    "Talos {new} is a minor older than the running {old}: the workers' machine config is written for the "
    "running minor"
)


@dataclass(frozen=True)
class KamajiRelease:
    """The management cluster's Kamaji release and where it was learnt (said in every refusal it causes)."""

    release: str
    source: str


DEFAULT_KAMAJI = KamajiRelease(
    DEFAULT_KAMAJI_RELEASE, "the tested default: declare yours in Platform spec.kamaji.version"
)


def installed_patch(version: str) -> str:
    """`v1.33` -> the patch from the versions table; a full `v1.33.4` is taken as given."""
    return version if version.count(".") == 2 else KUBERNETES[version].patch


def check_kamaji_release(at: str, release: str, problems: Problems) -> None:
    """A Kamaji release named by a user (Platform, operator flag) must be one whose served minors we know."""
    if kamaji_key(release) is None:
        problems.error(at, f"{release!r} is not a Kamaji edge release like 26.3.6-edge or edge-25.12.4 "
                           f"(pattern {KAMAJI_RELEASE})")
    elif kamaji_serves(release) is None:
        oldest = KAMAJI_SERVES[0][0]
        problems.error(at, f"Kamaji {release} is older than any release tenantctl knows (oldest: {oldest})")


def check_kamaji_serves(at: str, version: str, kamaji: KamajiRelease, problems: Problems) -> None:
    """Refuse a version the management cluster's Kamaji would refuse, or install without a fix it needs.

    `source` says where the release was learnt (a Platform, the operator's flag, the controller's image,
    the tested default), so the refusal names what to change. Versions outside the table are left to
    the spec checks, which refuse them already.
    """
    release, source = kamaji.release, kamaji.source
    minor = minor_of(version)
    row = KUBERNETES.get(minor)
    served = kamaji_serves(release)
    if row is None or served is None:
        return
    if minor_key(minor) > minor_key(served):
        problems.error(
            f"{at}.spec.version",
            f"Kubernetes {minor} needs Kamaji {row.kamaji} or newer; the management cluster runs Kamaji "
            f"{release} ({source}), which serves up to {served} and refuses the TenantControlPlane",
        )
        return
    patch = installed_patch(version)
    for need in row.needs:
        if patch_key(patch) >= patch_key(need.patch) and (kamaji_key(release) or ()) < (kamaji_key(need.release) or ()):
            problems.error(
                f"{at}.spec.version",
                f"Kubernetes {patch} needs Kamaji {need.release} or newer: {need.why}; the management cluster "
                f"runs Kamaji {release} ({source}): pin spec.version below {need.patch} or upgrade Kamaji",
            )


def check_version_change(
    at: str, old_version: str, new_version: str, old_talos: str, new_talos: str, problems: Problems
) -> None:
    """Refuse what Kamaji's webhook refuses of an update (a lower or skipped minor), and a Talos minor
    downgrade. Versions the table does not know are left to the spec checks."""
    old_minor, new_minor = minor_of(old_version), minor_of(new_version)
    if old_minor in KUBERNETES and new_minor in KUBERNETES:
        old_number, new_number = minor_number(old_minor), minor_number(new_minor)
        if new_number < old_number:
            problems.error(f"{at}.spec.version", KUBERNETES_DOWNGRADE.format(new=new_version, old=old_version))
        elif new_number - old_number > 1:
            problems.error(f"{at}.spec.version", KUBERNETES_SKIP.format(new=new_version, old=old_version))
    old_t, new_t = minor_of(old_talos), minor_of(new_talos)
    if old_t in TALOS_KUBERNETES_WINDOW and new_t in TALOS_KUBERNETES_WINDOW and minor_key(new_t) < minor_key(old_t):
        problems.error(f"{at}.spec.talos.version", TALOS_DOWNGRADE.format(new=new_talos, old=old_talos))


def spec_versions(obj: Mapping[str, Any]) -> tuple[str, str]:
    """(spec.version, spec.talos.version) of a TenantCluster as the API holds it, with the models' defaults."""
    raw_spec = obj.get("spec")
    spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
    raw_talos = spec.get("talos")
    talos: Mapping[str, Any] = raw_talos if isinstance(raw_talos, Mapping) else {}
    return str(spec.get("version", DEFAULT_KUBERNETES_MINOR)), str(talos.get("version", DEFAULT_TALOS_VERSION))


def check_change_from_live(
    at: str, version: str, talos: str, live: Mapping[str, Any] | None, problems: Problems
) -> None:
    """`check_version_change` from a TenantCluster as the management cluster holds it (None: a new one)."""
    if live is None:
        return
    old_version, old_talos = spec_versions(live)
    check_version_change(at, old_version, version, old_talos, talos, problems)


def _held_clusters(docs: Iterable[Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
    """TenantClusters of a `kubectl get -o yaml` output: single objects, Lists, several documents."""
    held: dict[tuple[str, str], Mapping[str, Any]] = {}
    for doc in docs:
        if not isinstance(doc, Mapping):
            continue
        listed = doc.get("items")
        items: list[Any] = listed if isinstance(listed, list) else [doc]
        for obj in items:
            meta = obj.get("metadata") if isinstance(obj, Mapping) else None
            if isinstance(meta, Mapping) and obj.get("kind") == "TenantCluster":
                held[str(meta.get("namespace")), str(meta.get("name"))] = obj
    return held


def check_input_against_live(clusters: Iterable[TenantCluster], live: Iterable[Any], problems: Problems) -> None:
    """Each input cluster's version change from the live one of the same namespace and name."""
    held = _held_clusters(live)
    for cluster in clusters:
        meta = cluster.metadata
        check_change_from_live(f"TenantCluster/{meta.name}", cluster.spec.version, cluster.spec.talos.version,
                               held.get((meta.namespace, meta.name)), problems)

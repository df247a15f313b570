"""Version tables: data, not branches. Updating a patch release is a one-line change here.

One row per Kubernetes minor ties it to the provider stack: the patch tenantctl installs, the
konnectivity tag where Kamaji derives an unpublished one, the oldest Kamaji release that serves the
minor, and the Kamaji releases a patch needs for a fix. Kamaji refuses a TenantControlPlane above its
`upgrade.KubeadmVersion` (clastix/kamaji `internal/webhook/handlers/tcp_version.go`), so a minor newer
than the management cluster's Kamaji serves never gets a control plane.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "DEFAULT_KAMAJI_RELEASE",
    "DEFAULT_KUBERNETES_MINOR",
    "DEFAULT_TALOS_VERSION",
    "KAMAJI_RELEASE",
    "KAMAJI_SERVES",
    "KONNECTIVITY_VERSIONS",
    "KUBERNETES",
    "KUBERNETES_PATCHES",
    "TALOS_KUBERNETES_WINDOW",
    "KamajiNeed",
    "KubernetesMinor",
    "kamaji_key",
    "kamaji_serves",
    "minor_key",
    "minor_number",
    "minor_of",
    "patch_key",
]


@dataclass(frozen=True)
class KamajiNeed:
    """From `patch` on, the minor needs Kamaji `release` or newer, for the reason `why`."""

    patch: str
    release: str
    why: str


@dataclass(frozen=True)
class KubernetesMinor:
    patch: str
    """The patch tenantctl installs for the minor (Cozystack `files/versions.yaml` at 3c780ac where it has one)."""
    kamaji: str
    """The oldest Kamaji release whose KubeadmVersion reaches this minor (older releases refuse it)."""
    konnectivity: str | None = None
    """The konnectivity proxy tag, only where Kamaji's derivation (v0.<minor>.0) names one never published."""
    needs: tuple[KamajiNeed, ...] = ()


# The oldest row is the oldest Kamaji edge release tenantctl knows (edge-24.7.1, KubeadmVersion v1.30.2);
# the releases are those that moved `internal/upgrade/kubeadm_version.go` to a new minor.
KUBERNETES: dict[str, KubernetesMinor] = {
    "v1.29": KubernetesMinor("v1.29.15", kamaji="edge-24.7.1"),
    "v1.30": KubernetesMinor("v1.30.14", kamaji="edge-24.7.1"),
    "v1.31": KubernetesMinor("v1.31.14", kamaji="edge-24.9.1"),
    "v1.32": KubernetesMinor("v1.32.13", kamaji="edge-25.3.1"),
    "v1.33": KubernetesMinor("v1.33.13", kamaji="edge-25.4.1"),
    "v1.34": KubernetesMinor("v1.34.9", kamaji="edge-25.9.2"),
    # proxy-server:v0.35.0 was never published (Cozystack files/konnectivity-versions.yaml pins v0.34.0).
    "v1.35": KubernetesMinor("v1.35.6", kamaji="edge-25.12.4", konnectivity="v0.34.0"),
    "v1.36": KubernetesMinor(
        "v1.36.1",
        kamaji="26.5.3-edge",
        needs=(
            KamajiNeed(
                "v1.36.1",
                "26.6.5-edge",
                "the bootstrap token must allow the apiserver to reach the kubelet API (clastix/kamaji 0466706); "
                "without it logs, exec and port-forward fail",
            ),
        ),
    ),
}

KUBERNETES_PATCHES: dict[str, str] = {minor: row.patch for minor, row in KUBERNETES.items()}
"""Kubernetes minor -> the patch release tenantctl installs for it."""
KONNECTIVITY_VERSIONS: dict[str, str] = {m: r.konnectivity for m, r in KUBERNETES.items() if r.konnectivity}

# Talos minor -> (oldest, newest) Kubernetes minor it supports, inclusive.
TALOS_KUBERNETES_WINDOW: dict[str, tuple[str, str]] = {
    "v1.11": ("v1.29", "v1.34"),
    "v1.12": ("v1.30", "v1.35"),
    "v1.13": ("v1.31", "v1.36"),
}

DEFAULT_KUBERNETES_MINOR = "v1.35"
DEFAULT_TALOS_VERSION = "v1.13.6"
DEFAULT_KAMAJI_RELEASE = "26.3.6-edge"
"""What this project is tested against (the CRDs in shared/crds/kamaji-26.3.6-edge, what Cozystack runs)."""

KAMAJI_RELEASE = r"^(edge-[0-9]{2}[.][0-9]{1,2}[.][0-9]{1,3}|[0-9]{2}[.][0-9]{1,2}[.][0-9]{1,3}-edge)$"
"""Kamaji's edge release tags: `edge-YY.M.N` until 26.2, `YY.M.N-edge` since 26.3."""
_RELEASE = re.compile(KAMAJI_RELEASE)


def minor_of(version: str) -> str:
    """`v1.33.4` -> `v1.33`; input is assumed to be `vMAJOR.MINOR[.PATCH]`."""
    return ".".join(version.split(".")[:2])


def minor_key(minor: str) -> tuple[int, int]:
    """Sortable form of `vMAJOR.MINOR`."""
    major, _, rest = minor.lstrip("v").partition(".")
    return int(major), int(rest)


def minor_number(minor: str) -> int:
    """`v1.33` -> 1033: one number per minor, so "the next minor" is +1 (the CRD's CEL compares these)."""
    major, number = minor_key(minor)
    return major * 1000 + number


def patch_key(version: str) -> tuple[int, int, int]:
    """Sortable form of `vMAJOR.MINOR.PATCH` (a bare minor sorts as its `.0`)."""
    parts = [int(p) for p in version.lstrip("v").split(".")]
    return parts[0], parts[1], parts[2] if len(parts) > 2 else 0


def kamaji_key(release: str) -> tuple[int, int, int] | None:
    """Sortable form of a Kamaji edge release (`edge-25.03.1` and `25.3.1-edge` alike), None if not one."""
    if not _RELEASE.match(release):
        return None
    year, month, number = release.removeprefix("edge-").removesuffix("-edge").split(".")
    return int(year), int(month), int(number)


KAMAJI_SERVES: tuple[tuple[str, str], ...] = tuple(
    sorted(
        {(row.kamaji, max((m for m, r in KUBERNETES.items() if r.kamaji == row.kamaji), key=minor_key))
         for row in KUBERNETES.values()},
        key=lambda pair: kamaji_key(pair[0]) or (0, 0, 0),
    )
)
"""(first Kamaji release, newest minor it serves), oldest first: derived from the table above."""


_SERVES_FROM: tuple[tuple[tuple[int, int, int], str], ...] = tuple(
    (kamaji_key(first) or (0, 0, 0), minor) for first, minor in KAMAJI_SERVES
)
"""`KAMAJI_SERVES` by sortable release: every render asks, with the one release its platform runs."""


def kamaji_serves(release: str) -> str | None:
    """The newest Kubernetes minor a Kamaji release serves; None for a release older than any tenantctl knows."""
    key = kamaji_key(release)
    if key is None:
        return None
    served = [minor for first, minor in _SERVES_FROM if first <= key]
    return served[-1] if served else None

"""Version tables: data, not branches. Updating a patch release is a one-line change here."""

from __future__ import annotations

__all__ = [
    "DEFAULT_KUBERNETES_MINOR",
    "DEFAULT_TALOS_VERSION",
    "KONNECTIVITY_VERSIONS",
    "KUBERNETES_PATCHES",
    "TALOS_KUBERNETES_WINDOW",
    "minor_of",
]

# Kubernetes minor -> the patch release tenantctl installs for it.
KUBERNETES_PATCHES: dict[str, str] = {
    "v1.29": "v1.29.15",
    "v1.30": "v1.30.14",
    "v1.31": "v1.31.14",
    "v1.32": "v1.32.12",
    "v1.33": "v1.33.8",
    "v1.34": "v1.34.4",
    "v1.35": "v1.35.6",
    "v1.36": "v1.36.1",
}

# Kubernetes minor -> konnectivity proxy tag, only where Kamaji's derivation (v0.<minor>.0) names a tag
# that was never published. v1.35: proxy-server:v0.35.0 does not exist (Cozystack files/konnectivity-versions.yaml).
KONNECTIVITY_VERSIONS: dict[str, str] = {
    "v1.35": "v0.34.0",
}

# Talos minor -> (oldest, newest) Kubernetes minor it supports, inclusive.
TALOS_KUBERNETES_WINDOW: dict[str, tuple[str, str]] = {
    "v1.11": ("v1.29", "v1.34"),
    "v1.12": ("v1.30", "v1.35"),
    "v1.13": ("v1.31", "v1.36"),
}

DEFAULT_KUBERNETES_MINOR = "v1.35"
DEFAULT_TALOS_VERSION = "v1.13.6"


def minor_of(version: str) -> str:
    """`v1.33.4` -> `v1.33`; input is assumed to be `vMAJOR.MINOR[.PATCH]`."""
    return ".".join(version.split(".")[:2])


def minor_key(minor: str) -> tuple[int, int]:
    """Sortable form of `vMAJOR.MINOR`."""
    major, _, rest = minor.lstrip("v").partition(".")
    return int(major), int(rest)

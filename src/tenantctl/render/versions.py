"""Resolve what the spec says about versions into what the objects need."""

from __future__ import annotations

from tenantctl.spec import TenantCluster
from tenantctl.spec.versions import KONNECTIVITY_VERSIONS, KUBERNETES_PATCHES, minor_of

__all__ = ["kamaji_konnectivity_tag", "konnectivity_version", "kubernetes_patch"]


def kubernetes_patch(cluster: TenantCluster) -> str:
    """`v1.33` -> the patch from the versions table; a full `v1.33.4` is taken as given."""
    version = cluster.spec.version
    if version.count(".") == 2:
        return version
    return KUBERNETES_PATCHES[version]


def konnectivity_version(cluster: TenantCluster) -> str | None:
    """The table's pin for the cluster's minor; None leaves Kamaji to derive v0.<minor>.0."""
    return KONNECTIVITY_VERSIONS.get(minor_of(kubernetes_patch(cluster)))


def kamaji_konnectivity_tag(cluster: TenantCluster) -> str:
    """The tag the konnectivity pods run: the table's, else what Kamaji derives from the minor."""
    pinned = konnectivity_version(cluster)
    if pinned is not None:
        return pinned
    minor = minor_of(kubernetes_patch(cluster)).split(".")[1]
    return f"v0.{minor}.0"

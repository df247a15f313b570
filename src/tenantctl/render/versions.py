"""Resolve what the spec says about versions into what the objects need."""

from __future__ import annotations

from tenantctl.spec import TenantCluster
from tenantctl.spec.compat import installed_patch
from tenantctl.spec.versions import KONNECTIVITY_VERSIONS, minor_of

__all__ = ["kamaji_konnectivity_tag", "konnectivity_version", "kubernetes_patch"]


def kubernetes_patch(cluster: TenantCluster) -> str:
    """`v1.33` -> the patch from the versions table; a full `v1.33.4` is taken as given."""
    return installed_patch(cluster.spec.version)


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

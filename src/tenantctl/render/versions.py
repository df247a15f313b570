"""Resolve what the spec says about versions into what the objects need."""

from __future__ import annotations

from tenantctl.spec import TenantCluster
from tenantctl.spec.versions import KUBERNETES_PATCHES

__all__ = ["kubernetes_patch"]


def kubernetes_patch(cluster: TenantCluster) -> str:
    """`v1.33` -> the patch from the versions table; a full `v1.33.4` is taken as given."""
    version = cluster.spec.version
    if version.count(".") == 2:
        return version
    return KUBERNETES_PATCHES[version]

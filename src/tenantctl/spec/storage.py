"""The tenant's StorageClasses, either substrate: valid names, no duplicates, exactly one default.

A tenant with no default StorageClass leaves every PVC without `storageClassName` Pending; one with two
gets whichever the apiserver's admission picks (the newest). So at most one may be marked, and when
none is, the first listed becomes the default: the order the user wrote is the one stable choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from tenantctl.problems import Problems
from tenantctl.spec.names import is_dns_subdomain

__all__ = ["NamedClass", "check_storage_class_names", "check_storage_classes", "default_storage_class"]


class NamedClass(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def default(self) -> bool: ...


def default_storage_class(classes: Sequence[NamedClass]) -> str | None:
    """The one default: the marked class, else the first; None when the tenant has no class at all."""
    marked = [sc.name for sc in classes if sc.default]
    if marked:
        return marked[0]
    return classes[0].name if classes else None


def check_storage_classes(base: str, classes: Sequence[NamedClass], problems: Problems) -> None:
    """`base` is the list's path (`TenantCluster/acme.spec.proxmox.csi.storageClasses`)."""
    if not classes:
        problems.warn(base, "no StorageClass: the tenant has no default, so a PVC naming no class stays Pending")
    marked = [i for i, sc in enumerate(classes) if sc.default]
    if len(marked) > 1:
        shown = ", ".join(f"[{i}] {classes[i].name!r}" for i in marked)
        for i in marked:
            problems.error(
                f"{base}[{i}].default",
                f"more than one default StorageClass ({shown}); mark one, or none to make the first the default",
            )
    check_storage_class_names(base, classes, problems)


def check_storage_class_names(base: str, classes: Sequence[NamedClass], problems: Problems) -> None:
    """What the CRD holds of a StorageClass list (names unique, each an object name), also where the list
    is ignored: the API server refuses it there all the same."""
    seen: set[str] = set()
    for i, sc in enumerate(classes):
        if sc.name in seen:
            problems.error(f"{base}[{i}].name", f"duplicate StorageClass name {sc.name!r}")
        seen.add(sc.name)
        if not is_dns_subdomain(sc.name):
            problems.error(f"{base}[{i}].name", f"{sc.name!r} is not a valid object name")

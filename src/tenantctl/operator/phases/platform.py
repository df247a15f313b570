"""The Platform the operator renders every tenant with: the same document `render --platform` takes.

One cluster-scoped `Platform` per management cluster (named `default` unless the operator is told
otherwise) carries the image mirror and overrides, the chart mirror and sources, and the Kamaji
release. It is parsed with the very checks of the file (`providers.platform.parse_platform`) and only
when its resourceVersion changes, so a thousand tenants' passes share one parse. A Platform that the
checks refuse stops every tenant's pass with the refusal: rendering past it would pull from wherever
the refused field pointed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tenantctl.operator.kube.client import KubeClient, Resource
from tenantctl.problems import InvalidInput
from tenantctl.render.chart_sources import ChartSourcesSpec
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.spec.compat import KamajiRelease
from tenantctl.spec.patch_policy import PatchUpgrades

__all__ = ["DEFAULT_PLATFORM", "PLATFORMS", "PlatformReader", "PlatformSettings", "platform_settings"]

PLATFORMS = Resource("tenantctl.io/v1alpha1", "Platform", "platforms", False)
DEFAULT_PLATFORM = "default"


@dataclass(frozen=True)
class PlatformSettings:
    """What a tenant's render takes from the Platform; all None: no Platform (the catalogue's pins)."""

    charts: ChartSourcesSpec | None = None
    images: ImagesSpec | None = None
    kamaji: KamajiRelease | None = None
    refusal: str | None = None
    patch_upgrades: PatchUpgrades | None = None
    """Every tenant's patch policy unless its own says otherwise (None: Manual)."""
    restore_across_namespaces: bool = False
    """Whether a tenant may be restored from another namespace's tenant's backup (Platform spec.restore)."""


def platform_settings(body: Mapping[str, Any]) -> PlatformSettings:
    """A Platform object as the API holds it, checked as its file would be."""
    from tenantctl.providers.catalogue import load_catalogue
    from tenantctl.providers.platform import parse_platform

    meta = body.get("metadata") or {}
    document = {"apiVersion": body.get("apiVersion"), "kind": body.get("kind"),
                "metadata": {"name": meta.get("name")}, "spec": body.get("spec") or {}}
    try:
        platform = parse_platform([document], load_catalogue(), Path("."), f"Platform/{meta.get('name')}")
    except InvalidInput as exc:
        return PlatformSettings(refusal="; ".join(str(p) for p in exc.errors))
    return PlatformSettings(platform.charts, platform.images, platform.kamaji,
                            patch_upgrades=platform.patch_upgrades,
                            restore_across_namespaces=platform.restore_across_namespaces)


@dataclass
class PlatformReader:
    """The named Platform's settings, parsed once per resourceVersion and shared by every pass."""

    name: str = DEFAULT_PLATFORM
    _parsed: tuple[str, PlatformSettings] | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def settings(self, api: KubeClient) -> PlatformSettings:
        if await api.resource(PLATFORMS.api_version, PLATFORMS.kind) is None:
            return PlatformSettings()  # the CRD is not installed yet: no Platform can exist
        body = await api.get(PLATFORMS, self.name)
        if body is None:
            return PlatformSettings()
        version = str((body.get("metadata") or {}).get("resourceVersion") or "")
        async with self._lock:
            if self._parsed is None or self._parsed[0] != version or not version:
                self._parsed = (version, platform_settings(body))
            return self._parsed[1]

"""From a workspace to the objects `providers render` prints: verify what ships, check contracts, render."""

from __future__ import annotations

from typing import Any

from tenantctl.problems import Problems
from tenantctl.providers.check import check_vendored
from tenantctl.providers.contract import check_contracts
from tenantctl.providers.layout import METADATA
from tenantctl.providers.render import render_providers
from tenantctl.providers.workspace import Workspace

__all__ = ["PLANNING_MODE", "render_workspace"]

PLANNING_MODE = (
    "not given: ConfigMaps left out (planning mode); capi-operator installs nothing until they exist"
)


def render_workspace(ws: Workspace, with_components: bool) -> tuple[list[dict[str, Any]], Problems]:
    """Objects for every enabled package; raise `InvalidInput` if anything that would ship is wrong."""
    problems = Problems(ws.warnings)
    if with_components:
        found, vendored = check_vendored(ws)
        problems.extend(found)
    else:
        problems.warn("--components", PLANNING_MODE)
        vendored = None
        sources = {
            name: ws.contract_source(p, ws.vendored_metadata(p), str(ws.layout.file(name, METADATA)))
            for name in ws.selection.packages
            for p in [ws.catalogue.get(name)]
        }
        core = ws.catalogue.core.name
        problems.extend(check_contracts(sources[core], [s for n, s in sources.items() if n != core]))
    problems.raise_if_errors()
    return render_providers(ws.platform, ws.selection.packages, ws.catalogue, vendored), problems

"""Requests and limits of the control plane's containers, from a preset or the spec's explicit values."""

from __future__ import annotations

from tenantctl.spec.control_plane import ComponentResourcesSpec, ResourceAmountsSpec
from tenantctl.spec.resource_presets import DEFAULT_PRESETS, PRESETS

__all__ = ["CSR_SIGNER_RESOURCES", "component_resources"]

# Cozystack's csr-signer figures (templates/cluster.yaml): it signs a handful of CSRs per worker boot.
CSR_SIGNER_RESOURCES: dict[str, dict[str, str]] = {
    "requests": {"cpu": "10m", "memory": "32Mi"},
    "limits": {"cpu": "200m", "memory": "128Mi"},
}


def _amounts(amounts: ResourceAmountsSpec | None) -> dict[str, str]:
    if amounts is None:
        return {}
    return {k: str(v) for k, v in (("cpu", amounts.cpu), ("memory", amounts.memory)) if v is not None}


def component_resources(field: str, spec: ComponentResourcesSpec) -> dict[str, dict[str, str]]:
    """`field` names the component as under `spec.controlPlane.resources`; an unset one gets its default
    preset, so no component of the tenant runs BestEffort."""
    if spec.requests is None and spec.limits is None:
        return PRESETS[spec.preset or DEFAULT_PRESETS[field]].requirements()
    explicit = {"requests": _amounts(spec.requests), "limits": _amounts(spec.limits)}
    return {k: v for k, v in explicit.items() if v}

"""Refusals for `spec.controlPlane`: resources that parse and can be honoured, flags Kamaji leaves free."""

from __future__ import annotations

import difflib
from decimal import Decimal

from tenantctl.problems import Problems
from tenantctl.spec.apiserver_flags import FLAG_NAME, OWNED_APISERVER_FLAGS
from tenantctl.spec.control_plane import ComponentResourcesSpec, ResourceAmountsSpec
from tenantctl.spec.quantity import positive_quantity
from tenantctl.spec.resource_presets import PRESETS, preset_grammar
from tenantctl.spec.tenant import ControlPlaneSpec

__all__ = ["check_control_plane"]

_RESOURCES = ("cpu", "memory")


def check_control_plane(at: str, control_plane: ControlPlaneSpec, problems: Problems) -> None:
    """`at` is the cluster's path prefix (`TenantCluster/acme`)."""
    base = f"{at}.spec.controlPlane"
    resources = control_plane.resources
    for field, component in (
        ("apiServer", resources.api_server),
        ("controllerManager", resources.controller_manager),
        ("scheduler", resources.scheduler),
        ("konnectivity", resources.konnectivity),
    ):
        _check_component(f"{base}.resources.{field}", component, problems)
    _check_extra_args(f"{base}.apiServer.extraArgs", control_plane.api_server.extra_args, problems)


def _check_component(path: str, spec: ComponentResourcesSpec, problems: Problems) -> None:
    explicit = spec.requests is not None or spec.limits is not None
    if spec.preset is not None:
        if explicit:
            problems.error(f"{path}.preset", "a preset and explicit requests/limits are exclusive; give one")
        elif spec.preset not in PRESETS:
            close = difflib.get_close_matches(spec.preset, list(PRESETS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.error(
                f"{path}.preset",
                f"{spec.preset!r} is not a preset{hint} (known: {preset_grammar()})",
            )
        return
    if not explicit:
        return
    requests = _amounts(f"{path}.requests", spec.requests, problems)
    limits = _amounts(f"{path}.limits", spec.limits, problems)
    if not _names_any(spec.requests) and not _names_any(spec.limits):
        problems.error(
            path,
            "requests/limits name no cpu or memory: the container would run BestEffort, first evicted under "
            "pressure and refused in a namespace with a compute quota",
        )
    for resource in _RESOURCES:
        request, limit = requests.get(resource), limits.get(resource)
        if request is not None and limit is not None and limit < request:
            problems.error(
                f"{path}.limits.{resource}",
                f"limit {_raw(spec.limits, resource)!r} is below the request {_raw(spec.requests, resource)!r}",
            )


def _names_any(amounts: ResourceAmountsSpec | None) -> bool:
    return amounts is not None and any(_raw(amounts, r) is not None for r in _RESOURCES)


def _raw(amounts: ResourceAmountsSpec | None, resource: str) -> str | int | float | None:
    if amounts is None:
        return None
    value: str | int | float | None = getattr(amounts, resource)
    return value


def _amounts(path: str, amounts: ResourceAmountsSpec | None, problems: Problems) -> dict[str, Decimal]:
    """The parsed, positive quantities of a requests or limits block."""
    parsed: dict[str, Decimal] = {}
    for resource in _RESOURCES:
        raw = _raw(amounts, resource)
        if raw is None:
            continue
        value = positive_quantity(f"{path}.{resource}", raw, problems)
        if value is not None:
            parsed[resource] = value
    return parsed


def _check_extra_args(path: str, extra_args: dict[str, str], problems: Problems) -> None:
    for flag in extra_args:
        bare = flag.lstrip("-")
        owner = OWNED_APISERVER_FLAGS.get(bare)
        if owner is not None:
            problems.error(f"{path}.{flag}", f"--{bare} is set by {owner}; it cannot be overridden here")
        elif not FLAG_NAME.match(flag):
            hint = f"; write it as {bare!r}" if bare != flag and FLAG_NAME.match(bare) else ""
            problems.error(
                f"{path}.{flag}",
                f"{flag!r} is not a flag name: lower-case letters and digits joined by single dashes, without "
                f"the leading --{hint}",
            )

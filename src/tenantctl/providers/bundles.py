"""Which packages a platform gets: always-on ones, opted-in ones, and what they bring with them.

Rules (cozystack#4087): `disabledPackages` wins over `enabledPackages`; enabling a package enables its
dependencies (proxmox brings ipam-in-cluster), and a dependency that is disabled stops the render
naming both list entries — the cluster would only say `DependenciesNotReady`. A package that needs
credentials is refused without a Secret name, since capi-operator would silently never deploy it.
"""

from __future__ import annotations

from dataclasses import dataclass

from tenantctl.problems import InvalidInput, Problems
from tenantctl.providers.catalogue import Catalogue, Enablement
from tenantctl.providers.platform import Platform, suggest

__all__ = ["Selection", "select_packages"]


@dataclass(frozen=True)
class Selection:
    """Enabled packages in catalogue order, each with the reason it is on (for messages)."""

    packages: tuple[str, ...]
    reasons: dict[str, str]


def _entries(platform: Platform, field: str, names: list[str]) -> dict[str, str]:
    """First list entry per name: `Platform/x.spec.bundles.enabledPackages[0]`."""
    out: dict[str, str] = {}
    for i, name in enumerate(names):
        out.setdefault(name, f"{platform.at}.spec.bundles.{field}[{i}]")
    return out


def _check_names(entries: dict[str, str], catalogue: Catalogue, problems: Problems) -> None:
    for name, where in entries.items():
        if name not in catalogue.names:
            hint = suggest(name, catalogue.names)
            problems.error(where, f"unknown package {name!r}{hint} (valid: {', '.join(catalogue.names)})")


def select_packages(platform: Platform, catalogue: Catalogue) -> tuple[Selection, Problems]:
    """Resolve the bundle lists; raise `InvalidInput` on conflicts, return warnings with the result."""
    problems = Problems()
    enabled = _entries(platform, "enabledPackages", platform.bundles.enabled_packages)
    disabled = _entries(platform, "disabledPackages", platform.bundles.disabled_packages)
    _check_names(enabled, catalogue, problems)
    _check_names(disabled, catalogue, problems)
    problems.raise_if_errors()

    reasons: dict[str, str] = {}
    for package in catalogue.packages:
        if package.enablement is Enablement.ALWAYS:
            if package.name in disabled:
                problems.error(disabled[package.name], f"{package.name} is always on and cannot be disabled")
            reasons[package.name] = "always on"
    for name, where in enabled.items():
        if name in disabled:
            problems.warn(where, f"{name} is also in {disabled[name]}; disabledPackages wins, {name} stays off")
        elif name not in reasons:
            reasons[name] = where
    _add_dependencies(catalogue, disabled, reasons, problems)

    for name in reasons:
        _require_credentials(platform, catalogue, name, reasons[name], problems)
    for name in platform.settings:
        if name not in reasons:
            problems.warn(f"{platform.at}.spec.packages.{name}", f"{name} is not enabled; its settings are unused")
    if problems.errors:
        raise InvalidInput(problems)
    ordered = tuple(n for n in catalogue.names if n in reasons)
    return Selection(ordered, {n: reasons[n] for n in ordered}), problems


def _add_dependencies(
    catalogue: Catalogue, disabled: dict[str, str], reasons: dict[str, str], problems: Problems
) -> None:
    queue = list(reasons)
    while queue:
        name = queue.pop(0)
        for dep in catalogue.get(name).dependencies:
            if dep in reasons:
                continue
            if dep in disabled:
                problems.error(
                    disabled[dep],
                    f"{dep} is disabled, but {name} ({reasons[name]}) needs it; "
                    f"enable both or neither",
                )
                continue
            reasons[dep] = f"needed by {name} ({reasons[name]})"
            queue.append(dep)


def _require_credentials(
    platform: Platform, catalogue: Catalogue, name: str, reason: str, problems: Problems
) -> None:
    if not catalogue.get(name).credentials:
        return
    secret = platform.setting(name).credentials_secret
    if secret is None or not secret.name:
        problems.error(
            f"{platform.at}.spec.packages.{name}.credentialsSecret.name",
            f"required: {name} is enabled ({reason}) and capi-operator reads its credentials Secret "
            "before installing anything; without one it never deploys the provider and reports nothing "
            f"(create it with `tenantctl providers secret {catalogue.get(name).provider}`)",
        )

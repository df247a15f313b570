"""Which packages a platform gets (cozystack#4087): both enable paths, precedence, and the refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tenantctl.problems import InvalidInput
from tenantctl.providers.bundles import Selection, select_packages
from tenantctl.providers.catalogue import load_catalogue
from tenantctl.providers.platform import parse_platform

CATALOGUE = load_catalogue()
ALWAYS = ("core", "bootstrap-talos", "controlplane-kamaji", "infrastructure-kubevirt")
SECRET = {"infrastructure-proxmox": {"credentialsSecret": {"name": "capmox-credentials"}}}


def select(enabled: list[str] | None = None, disabled: list[str] | None = None,
           packages: dict[str, Any] | None = None) -> tuple[Selection, list[str]]:
    spec = {"bundles": {"enabledPackages": enabled or [], "disabledPackages": disabled or []},
            "packages": packages or {}}
    doc = {"apiVersion": "tenantctl.io/v1alpha1", "kind": "Platform", "metadata": {"name": "default"}, "spec": spec}
    selection, problems = select_packages(parse_platform([doc], CATALOGUE, Path(".")), CATALOGUE)
    return selection, [str(w) for w in problems.warnings]


def refusals(**kwargs: Any) -> list[str]:
    with pytest.raises(InvalidInput) as exc:
        select(**kwargs)
    return [str(p) for p in exc.value.errors]


def test_by_default_only_the_always_on_packages() -> None:
    selection, warnings = select()
    assert selection.packages == ALWAYS
    assert warnings == []


def test_enabling_proxmox_brings_ipam_with_it() -> None:
    selection, _ = select(["infrastructure-proxmox"], packages=SECRET)
    assert selection.packages == (*ALWAYS, "infrastructure-proxmox", "ipam-in-cluster")
    assert selection.reasons["ipam-in-cluster"] == (
        "needed by infrastructure-proxmox (Platform/default.spec.bundles.enabledPackages[0])")


def test_ipam_is_enableable_on_its_own() -> None:
    selection, _ = select(["ipam-in-cluster"])
    assert selection.packages == (*ALWAYS, "ipam-in-cluster")


def test_both_named_gives_both_once() -> None:
    selection, _ = select(["ipam-in-cluster", "infrastructure-proxmox"], packages=SECRET)
    assert selection.packages == (*ALWAYS, "infrastructure-proxmox", "ipam-in-cluster")


def test_proxmox_enabled_while_ipam_disabled_names_both_entries() -> None:
    [problem] = refusals(enabled=["infrastructure-proxmox"], disabled=["ipam-in-cluster"], packages=SECRET)
    assert problem.startswith("Platform/default.spec.bundles.disabledPackages[0]: ipam-in-cluster is disabled")
    assert "infrastructure-proxmox (Platform/default.spec.bundles.enabledPackages[0]) needs it" in problem


def test_disabled_wins_over_enabled_for_the_same_package() -> None:
    selection, warnings = select(["infrastructure-proxmox"], ["infrastructure-proxmox"], packages=SECRET)
    assert selection.packages == ALWAYS
    assert warnings[0].startswith("warning: Platform/default.spec.bundles.enabledPackages[0]:")
    assert "disabledPackages[0]; disabledPackages wins" in warnings[0]


def test_disabling_ipam_alone_is_fine() -> None:
    selection, _ = select(disabled=["ipam-in-cluster"])
    assert selection.packages == ALWAYS


@pytest.mark.parametrize("name", ALWAYS)
def test_always_on_packages_cannot_be_disabled(name: str) -> None:
    [problem] = refusals(disabled=[name])
    assert problem == f"Platform/default.spec.bundles.disabledPackages[0]: {name} is always on and cannot be disabled"


@pytest.mark.parametrize("field", ["enabledPackages", "disabledPackages"])
def test_unknown_names_in_either_list_suggest_the_closest(field: str) -> None:
    kwargs = {"enabled" if field == "enabledPackages" else "disabled": ["ipam-incluster"]}
    [problem] = refusals(**kwargs)
    assert problem.startswith(f"Platform/default.spec.bundles.{field}[0]: unknown package 'ipam-incluster'")
    assert "did you mean 'ipam-in-cluster'" in problem


def test_proxmox_without_a_credentials_secret_is_refused() -> None:
    [problem] = refusals(enabled=["infrastructure-proxmox"])
    assert problem.startswith("Platform/default.spec.packages.infrastructure-proxmox.credentialsSecret.name: required")
    assert "never deploys the provider" in problem


def test_proxmox_with_an_empty_credentials_secret_is_refused() -> None:
    [problem] = refusals(enabled=["infrastructure-proxmox"],
                         packages={"infrastructure-proxmox": {"credentialsSecret": {"namespace": "capmox-system"}}})
    assert ".credentialsSecret.name: required" in problem


def test_settings_of_a_package_that_is_not_enabled_are_a_warning() -> None:
    selection, warnings = select(packages=SECRET)
    assert "infrastructure-proxmox" not in selection.packages
    assert warnings == ["warning: Platform/default.spec.packages.infrastructure-proxmox: "
                        "infrastructure-proxmox is not enabled; its settings are unused"]


def test_every_conflict_is_reported_at_once() -> None:
    problems = refusals(enabled=["infrastructure-proxmox"], disabled=["ipam-in-cluster", "core"])
    assert len(problems) == 3


def test_a_name_listed_twice_is_reported_at_its_first_entry() -> None:
    [problem] = refusals(disabled=["ipam-in-cluster", "core", "core"])
    assert problem.startswith("Platform/default.spec.bundles.disabledPackages[1]: core is always on")

"""The Platform document: every structural refusal names the field path and the value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tenantctl.problems import InvalidInput
from tenantctl.providers.catalogue import load_catalogue
from tenantctl.providers.platform import Platform, parse_platform

CATALOGUE = load_catalogue()


def doc(spec: dict[str, Any] | None = None, name: str = "default") -> dict[str, Any]:
    return {"apiVersion": "tenantctl.io/v1alpha1", "kind": "Platform", "metadata": {"name": name},
            "spec": spec or {}}


def parse(*docs: dict[str, Any]) -> Platform:
    return parse_platform(list(docs), CATALOGUE, Path("."), "platform.yaml")


def refusals(*docs: dict[str, Any]) -> list[str]:
    with pytest.raises(InvalidInput) as exc:
        parse(*docs)
    return [str(p) for p in exc.value.errors]


def test_a_minimal_platform_has_no_settings() -> None:
    platform = parse(doc())
    assert platform.name == "default"
    assert platform.settings == {}
    assert platform.bundles.enabled_packages == []


def test_unknown_field_suggests_the_closest_name() -> None:
    [problem] = refusals(doc({"bundles": {"enabledPackage": ["ipam-in-cluster"]}}))
    assert problem.startswith("Platform/default.spec.bundles.enabledPackage:")
    assert "did you mean 'enabledPackages'" in problem


def test_unknown_field_in_package_settings_suggests_the_closest_name() -> None:
    [problem] = refusals(doc({"packages": {"infrastructure-proxmox": {"credentalsSecret": {"name": "x"}}}}))
    assert problem.startswith("Platform/default.spec.packages.infrastructure-proxmox.credentalsSecret:")
    assert "did you mean 'credentialsSecret'" in problem


def test_unknown_package_name_in_settings_suggests_the_closest_one() -> None:
    [problem] = refusals(doc({"packages": {"infrastructure-proxmux": {}}}))
    assert problem.startswith("Platform/default.spec.packages.infrastructure-proxmux:")
    assert "did you mean 'infrastructure-proxmox'" in problem


def test_all_problems_are_reported_together() -> None:
    problems = refusals(doc({"packages": {
        "infrastructure-proxmux": {},
        "core": {"version": "1.10"},
        "infrastructure-kubevirt": {"credentialsSecret": {"name": "x"}},
    }}))
    assert len(problems) == 3


@pytest.mark.parametrize("version", ["1.10.1", "v1.10", "latest", "v1.10.1+build"])
def test_version_must_be_a_semver_tag(version: str) -> None:
    [problem] = refusals(doc({"packages": {"core": {"version": version}}}))
    assert problem.startswith("Platform/default.spec.packages.core.version:")
    assert repr(version) in problem


def test_prerelease_tags_are_versions() -> None:
    platform = parse(doc({"packages": {"core": {"version": "v1.11.0-rc.1"}}}))
    assert platform.version(CATALOGUE.core) == ("v1.11.0-rc.1", "Platform/default.spec.packages.core.version")


def test_without_override_the_catalogue_version_is_used() -> None:
    assert parse(doc()).version(CATALOGUE.core) == ("v1.10.1", "core (tenantctl catalogue version)")


def test_credentials_only_on_packages_that_take_them() -> None:
    [problem] = refusals(doc({"packages": {"infrastructure-kubevirt": {"credentialsSecret": {"name": "x"}}}}))
    assert problem == (
        "Platform/default.spec.packages.infrastructure-kubevirt.credentialsSecret: infrastructure-kubevirt takes "
        "no credentials; only packages that drive something outside the cluster do"
    )


@pytest.mark.parametrize(
    ("secret", "field", "value"),
    [({"name": "Capmox_Creds"}, "name", "Capmox_Creds"), ({"name": "ok", "namespace": "a.b"}, "namespace", "a.b")],
)
def test_credentials_secret_names_must_be_kubernetes_names(secret: dict[str, str], field: str, value: str) -> None:
    [problem] = refusals(doc({"packages": {"infrastructure-proxmox": {"credentialsSecret": secret}}}))
    assert problem.startswith(f"Platform/default.spec.packages.infrastructure-proxmox.credentialsSecret.{field}:")
    assert repr(value) in problem


def test_resource_quantities_are_checked() -> None:
    [problem] = refusals(doc({"packages": {"core": {"resources": {"requests": {"cpu": "lots"}}}}}))
    assert problem.startswith("Platform/default.spec.packages.core.resources.requests.cpu:")
    assert "'lots'" in problem


def test_resource_limits_are_checked_too() -> None:
    [problem] = refusals(doc({"packages": {"core": {"resources": {"limits": {"memory": "1 Gi"}}}}}))
    assert problem.startswith("Platform/default.spec.packages.core.resources.limits.memory:")


def test_metadata_name_must_be_a_dns_label() -> None:
    [problem] = refusals(doc(name="Default"))
    assert problem.startswith("Platform/Default.metadata.name:")


def test_no_platform_document_names_the_kinds_found() -> None:
    [problem] = refusals({**doc(), "kind": "Platfrom"})
    assert "no Platform document" in problem
    assert "did you mean 'Platform'" in problem


def test_two_platform_documents_are_refused() -> None:
    [problem] = refusals(doc(), doc(name="other"))
    assert "more than one Platform document (document 0, document 1)" in problem


def test_other_documents_in_the_file_are_ignored() -> None:
    tenant = {"apiVersion": "tenantctl.io/v1alpha1", "kind": "TenantCluster", "metadata": {"name": "t"}}
    assert parse(tenant, doc()).name == "default"


def test_wrong_api_version_is_refused_with_its_value() -> None:
    [problem] = refusals({**doc(), "apiVersion": "tenantctl.io/v1"})
    assert problem.startswith("Platform/default.apiVersion:")
    assert "'tenantctl.io/v1'" in problem


def test_the_kamaji_release_is_declared_here_and_said_as_coming_from_here() -> None:
    assert parse(doc()).kamaji is None
    platform = parse(doc({"kamaji": {"version": "26.6.5-edge"}}))
    assert platform.kamaji is not None
    assert (platform.kamaji.release, platform.kamaji.source) == ("26.6.5-edge", "Platform/default spec.kamaji.version")


def test_a_kamaji_release_that_is_none_is_refused_at_its_path() -> None:
    [problem] = refusals(doc({"kamaji": {"version": "latest"}}))
    assert problem.startswith("Platform/default.spec.kamaji.version: 'latest' is not a Kamaji edge release")

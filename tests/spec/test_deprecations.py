"""Template tags that name the Talos version: accepted as before `talos-<version>`, warned, rendered as then."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from tenant_support import clone, doc, load_example, refused
from tenantctl.cli import app
from tenantctl.render import render_cluster
from tenantctl.spec import parse_tenant_documents
from tenantctl.spec.deprecations import DEPRECATIONS, TALOS_VERSION_TAG, version_tag

PROXMOX = load_example("proxmox.yaml")
TALOS = doc(PROXMOX, "TenantCluster")["spec"]["talos"]["version"]


def _with_tags(tags: list[str]) -> list[dict[str, Any]]:
    docs = clone(PROXMOX)
    doc(docs, "NodePool")["spec"]["proxmox"]["templateTags"] = tags
    return docs


def _match_tags(docs: list[dict[str, Any]]) -> list[str]:
    tenant = parse_tenant_documents(docs)
    cluster = tenant.clusters[0]
    objects = render_cluster(cluster, tenant.pools_of(cluster), None)
    template = next(o for o in objects if o["kind"] == "ProxmoxMachineTemplate")
    return list(template["spec"]["template"]["spec"]["templateSelector"]["matchTags"])


@pytest.mark.parametrize("tag", [TALOS, f"talos-{TALOS}", ".".join(TALOS.split(".")[:2])])
def test_a_tag_naming_the_running_talos_is_accepted_with_the_deprecation_warning(tag: str) -> None:
    warnings = parse_tenant_documents(_with_tags([tag, "talos"])).warnings
    found = [w for w in warnings if w.path == "NodePool/md0.spec.proxmox.templateTags[0]"]
    assert len(found) == 1, warnings
    message = found[0].message
    assert f"{tag!r} names the Talos version" in message
    assert TALOS_VERSION_TAG.id in message and TALOS_VERSION_TAG.since in message
    assert "talos-<spec.talos.version>" in message and "rolls the pool's machines once" in message


def test_such_a_pool_selects_by_its_tags_as_written_as_before_the_version_tag() -> None:
    assert _match_tags(_with_tags([TALOS, "talos"])) == sorted([TALOS, "talos"])
    assert _match_tags(_with_tags([f"talos-{TALOS}", "talos"])) == sorted([f"talos-{TALOS}", "talos"])


def test_a_new_pool_gets_the_version_tag_added() -> None:
    assert _match_tags(_with_tags(["talos"])) == ["talos", f"talos-{TALOS}"]
    assert not parse_tenant_documents(_with_tags(["talos"])).warnings or all(
        "deprecated" not in w.message for w in parse_tenant_documents(_with_tags(["talos"])).warnings)


@pytest.mark.parametrize("tag", ["v1.13.5", "talos-v1.12.0", "v1.12"])
def test_a_talos_version_the_tags_do_not_name_is_refused_with_what_to_do(tag: str) -> None:
    problems = refused(_with_tags([tag, "talos"]))
    message = problems["NodePool/md0.spec.proxmox.templateTags[0]"]
    assert f"selects a Talos {version_tag(tag)} template but spec.talos.version is {TALOS}" in message
    assert "leave the version out of templateTags" in message and "rolls the pool once" in message


def test_validate_prints_the_warning_and_exits_zero(tmp_path: Any) -> None:
    import yaml

    spec = tmp_path / "tenant.yaml"
    spec.write_text(yaml.safe_dump_all(_with_tags([TALOS, "talos"])))
    result = CliRunner().invoke(app, ["validate", "-f", str(spec)])
    assert result.exit_code == 0, result.output
    assert "templateTags[0]" in result.stderr and TALOS_VERSION_TAG.id in result.stderr


@pytest.mark.parametrize("tag", ["talos", "node-pve1", "v1", "v1.x", "talos-latest", "xv1.13.6"])
def test_tags_that_name_no_version_are_not_version_tags(tag: str) -> None:
    assert version_tag(tag) is None


def test_every_deprecation_names_a_release_of_the_history_and_a_field() -> None:
    from compat.corpus import releases

    for row in DEPRECATIONS:
        assert row.since in releases(), row
        kind, _, path = row.field.partition(" ")
        assert kind in ("TenantCluster", "NodePool") and path.startswith("spec."), row

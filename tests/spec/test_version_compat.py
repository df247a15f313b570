"""Versions Kamaji accepts: the minor its release serves, and a change from the live version.

The same words come from the generated CRD's transition rules (judged with an old object, as the API
server does), from `check_version_change` (what `plan` and the webhook say) and from the render.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tenant_support import load_example
from tenantctl.problems import InvalidInput, Problems
from tenantctl.render import render_tenant
from tenantctl.spec import parse_tenant_documents
from tenantctl.spec.compat import (
    DEFAULT_KAMAJI,
    KamajiRelease,
    check_kamaji_release,
    check_kamaji_serves,
    check_version_change,
)
from tenantctl.spec.versions import DEFAULT_TALOS_VERSION, KAMAJI_SERVES, KUBERNETES, kamaji_key, kamaji_serves
from tenantctl.validate import SchemaCatalog
from tenantctl.validate.transitions import validate_transition

AT = "TenantCluster/demo"


def _changed(version: str | None = None, talos: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    old = load_example("kubevirt.yaml")[0]
    new = copy.deepcopy(old)
    if version is not None:
        new["spec"]["version"] = version
    if talos is not None:
        new["spec"]["talos"]["version"] = talos
    return new, old


def _python(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    problems = Problems()
    check_version_change(AT, old["spec"]["version"], new["spec"]["version"], old["spec"]["talos"]["version"],
                         new["spec"]["talos"]["version"], problems)
    return [f"{p.path}: {p.message}" for p in problems]


REFUSED = [
    ("v1.32", None, "spec.version",
     "Kubernetes v1.32 is older than the running v1.33: Kamaji refuses to downgrade a control plane"),
    ("v1.35", None, "spec.version",
     "v1.33 → v1.35 skips a minor: Kamaji and the Kubernetes skew policy upgrade one minor at a time"),
    (None, "v1.12.9", "spec.talos.version",
     "Talos v1.12.9 is a minor older than the running v1.13.6: the workers' machine config is written for the "
     "running minor"),
]


@pytest.mark.parametrize(("version", "talos", "field", "message"), REFUSED)
def test_a_refused_change_says_the_same_in_the_crd_and_in_python(
    version: str | None, talos: str | None, field: str, message: str, own_catalog: SchemaCatalog
) -> None:
    new, old = _changed(version, talos)
    assert _python(new, old) == [f"{AT}.{field}: {message}"]
    cel = validate_transition(new, old, own_catalog)
    assert len(cel) == 1 and cel[0].message.startswith(f"Invalid value: {field}: {message} (rule "), cel
    assert cel[0].path.endswith(f".{field}")


@pytest.mark.parametrize(("version", "talos"), [
    ("v1.34", None),          # one minor up
    ("v1.33.2", None),        # a patch, even a lower one: Kamaji ignores patches
    ("v1.33", None),          # unchanged
    (None, "v1.13.7"),
    ("v1.34", "v1.13.1"),     # a Talos patch down is no minor down
])
def test_a_step_of_one_minor_and_patch_changes_pass(version: str | None, talos: str | None,
                                                    own_catalog: SchemaCatalog) -> None:
    new, old = _changed(version, talos)
    assert _python(new, old) == []
    assert validate_transition(new, old, own_catalog) == []


def test_versions_outside_the_table_are_left_to_the_spec_checks(own_catalog: SchemaCatalog) -> None:
    new, old = _changed("v1.99")
    assert _python(new, old) == []
    assert [p for p in validate_transition(new, old, own_catalog) if "skips" in p.message] == []


def test_the_table_says_which_kamaji_serves_each_minor() -> None:
    assert kamaji_serves("26.3.6-edge") == "v1.35", "KubeadmVersion v1.35.0 (internal/upgrade/kubeadm_version.go)"
    assert kamaji_serves("26.5.2-edge") == "v1.35"
    assert kamaji_serves("26.5.3-edge") == "v1.36", "v1.36 arrived in 26.5.3-edge (0e5ba57)"
    assert kamaji_serves("edge-25.03.1") == kamaji_serves("25.3.1-edge") == "v1.32", "both spellings, zero-padded"
    assert kamaji_serves("edge-24.1.1") is None
    assert kamaji_serves("v1.0.0") is None
    assert kamaji_key("edge-25.12.4") < kamaji_key("26.3.2-edge")  # type: ignore[operator]
    assert [minor for _, minor in KAMAJI_SERVES] == sorted({minor for _, minor in KAMAJI_SERVES})
    assert all(row.kamaji in {first for first, _ in KAMAJI_SERVES} for row in KUBERNETES.values())
    assert all(kamaji_key(row.kamaji) is not None for row in KUBERNETES.values()), "every release of the table parses"


def _kamaji(version: str, release: str) -> list[str]:
    problems = Problems()
    check_kamaji_serves(AT, version, KamajiRelease(release, "test"), problems)
    return [p.message for p in problems]


def test_a_minor_the_kamaji_cannot_serve_is_refused_naming_both_versions() -> None:
    assert _kamaji("v1.36", "26.3.6-edge") == [
        "Kubernetes v1.36 needs Kamaji 26.5.3-edge or newer; the management cluster runs Kamaji 26.3.6-edge (test), "
        "which serves up to v1.35 and refuses the TenantControlPlane"]
    assert _kamaji("v1.35", "26.3.6-edge") == []
    assert _kamaji("v1.35.6", "edge-25.12.4") == []
    assert _kamaji("v1.35", "edge-25.9.2") != []


def test_a_patch_that_needs_a_kamaji_fix_is_refused_below_it_and_an_earlier_patch_is_not() -> None:
    refused = _kamaji("v1.36", "26.5.3-edge")
    assert len(refused) == 1 and "Kubernetes v1.36.1 needs Kamaji 26.6.5-edge or newer" in refused[0]
    assert "pin spec.version below v1.36.1 or upgrade Kamaji" in refused[0]
    assert _kamaji("v1.36.0", "26.5.3-edge") == []
    assert _kamaji("v1.36", "26.6.5-edge") == []


def test_a_kamaji_release_is_checked_where_it_is_named() -> None:
    problems = Problems()
    check_kamaji_release("--kamaji-version", "latest", problems)
    check_kamaji_release("Platform/p.spec.kamaji.version", "edge-23.1.1", problems)
    check_kamaji_release("x", "26.3.6-edge", problems)
    assert [(p.path, p.message.split(" (")[0]) for p in problems] == [
        ("--kamaji-version", "'latest' is not a Kamaji edge release like 26.3.6-edge or edge-25.12.4"),
        ("Platform/p.spec.kamaji.version", "Kamaji edge-23.1.1 is older than any release tenantctl knows"),
    ]


def test_render_refuses_v136_with_the_default_kamaji_and_accepts_it_with_one_that_serves_it() -> None:
    docs = load_example("kubevirt.yaml")
    docs[0]["spec"]["version"] = "v1.36"
    tenant = parse_tenant_documents(docs)
    with pytest.raises(InvalidInput) as refused:
        render_tenant(tenant)
    assert [str(p) for p in refused.value.problems] == [
        f"{AT}.spec.version: Kubernetes v1.36 needs Kamaji 26.5.3-edge or newer; the management cluster runs Kamaji "
        f"26.3.6-edge ({DEFAULT_KAMAJI.source}), which serves up to v1.35 and refuses the TenantControlPlane"]
    objects = render_tenant(tenant, kamaji=KamajiRelease("26.8.2-edge", "Platform/p spec.kamaji.version"))
    kcp = next(o for o in objects if o["kind"] == "KamajiControlPlane")
    assert kcp["spec"]["version"] == "v1.36.1"


def test_a_template_id_pool_is_warned_that_talos_upgrades_never_reach_it() -> None:
    docs = load_example("proxmox.yaml")
    ppx = docs[1]["spec"]["proxmox"]
    ppx.pop("templateTags")
    ppx["templateID"] = 9000
    warnings = parse_tenant_documents(docs).warnings
    assert [w for w in warnings if w.path == "NodePool/md0.spec.proxmox.templateID"
            and w.message.startswith("template 9000 holds one Talos version on its disk")]


def _against_live(live: list[Any], version: str = "v1.35", talos: str | None = None) -> list[str]:
    from tenantctl.spec.compat import check_input_against_live

    docs = load_example("kubevirt.yaml")
    docs[0]["spec"]["version"] = version
    if talos is not None:
        docs[0]["spec"]["talos"]["version"] = talos
    problems = Problems()
    check_input_against_live(parse_tenant_documents(docs).clusters, live, problems)
    return [f"{p.path}: {p.message}" for p in problems.errors]


def test_the_live_cluster_is_found_in_a_list_in_single_documents_and_beside_other_kinds() -> None:
    held = load_example("kubevirt.yaml")[0]  # demo at v1.33
    namesake = {"apiVersion": "tenantctl.io/v1alpha1", "kind": "NodePool",
                "metadata": dict(held["metadata"]), "spec": {"cluster": "demo", "version": "v1.34"}}
    skipped = "TenantCluster/demo.spec.version: v1.33 → v1.35 skips a minor"
    for live in ([{"apiVersion": "v1", "kind": "List", "items": [held, namesake, "junk", {"kind": "TenantCluster"}]}],
                 [held, namesake], ["junk", None, held]):
        refused = _against_live(live)
        assert len(refused) == 1 and refused[0].startswith(skipped), (live, refused)
    assert _against_live([namesake]) == [], "a NodePool of that name is not the cluster"
    assert _against_live([held], "v1.34") == []


def test_a_talos_downgrade_from_live_names_the_live_version() -> None:
    """The live cluster's own Talos version is the one compared (and named), and a live cluster without a
    talos block runs the default."""
    held = copy.deepcopy(load_example("kubevirt.yaml")[0])  # demo at v1.33
    held["spec"]["talos"]["version"] = "v1.12.4"
    at = "TenantCluster/demo.spec.talos.version"
    assert _against_live([held], "v1.33", talos="v1.11.5") == [
        f"{at}: Talos v1.11.5 is a minor older than the running v1.12.4: the workers' machine config is written "
        "for the running minor"]
    del held["spec"]["talos"]
    assert [line.split(": the workers")[0] for line in _against_live([held], "v1.33", talos="v1.11.5")] == [
        f"{at}: Talos v1.11.5 is a minor older than the running {DEFAULT_TALOS_VERSION}"]

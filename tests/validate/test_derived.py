"""What Cluster API builds from each template tenantctl renders is judged with its own CRD (issue 67).

The sweep covers every template kind of both substrates, every example with and without its observed
state, and each Proxmox placement (any, spread, per-node templates, templateID): each derived object is
built and admitted. A template the API server admits but whose clone its CRD refuses (capmox's
`sourceNode` beside `templateSelector`) is refused at the template's field.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from typer.testing import CliRunner

from proxmox_variants import Edit, by_template_id, full_clone, per_node_templates
from tenant_support import EXAMPLES, load_example
from tenantctl.cli import app
from tenantctl.render import render_tenant
from tenantctl.spec import parse_observed, parse_tenant_documents
from tenantctl.validate import SchemaCatalog, schema_coverage, validate_objects
from tenantctl.validate.derived import DERIVATIONS, derived_objects
from tenantctl.validate.objects import derived_problems

Docs = list[dict[str, Any]]


CASES: dict[str, tuple[str, str | None, Edit | None]] = {
    "kubevirt": ("kubevirt.yaml", "observed-kubevirt.yaml", None),
    "kubevirt-unobserved": ("kubevirt.yaml", None, None),
    "proxmox": ("proxmox.yaml", "observed-proxmox.yaml", None),
    "proxmox-unobserved": ("proxmox.yaml", None, None),
    "proxmox-template-id": ("proxmox.yaml", "observed-proxmox.yaml", by_template_id),
    "proxmox-full-clone": ("proxmox.yaml", "observed-proxmox.yaml", full_clone),
    "spread": ("proxmox-spread.yaml", "observed-proxmox.yaml", None),
    "spread-per-node-templates": ("proxmox-spread.yaml", "observed-proxmox.yaml", per_node_templates),
    "spread-template-id": ("proxmox-spread.yaml", "observed-proxmox.yaml", by_template_id),
}


def _render(case: str) -> list[dict[str, Any]]:
    spec, observed, edit = CASES[case]
    docs = copy.deepcopy(load_example(spec))
    if edit is not None:
        edit(docs)
    tenant = parse_tenant_documents(docs)
    if observed is None:
        return render_tenant(tenant)
    obs = load_example(observed)
    for doc in obs:  # the spread example's tenant is the proxmox example's: the same observation
        doc["metadata"]["namespace"] = tenant.clusters[0].metadata.namespace
    return render_tenant(tenant, parse_observed(obs))


@pytest.mark.parametrize("case", list(CASES))
def test_every_object_built_from_a_render_is_admitted_by_its_crd(case: str, crd_catalog: SchemaCatalog) -> None:
    objects = _render(case)
    sources = [o for o in objects if (o["apiVersion"].rpartition("/")[0], o["kind"]) in DERIVATIONS]
    built = [d for i, o in enumerate(sources) for d in derived_objects(o, f"{o['kind']}/{o['metadata']['name']}")]
    assert len(built) == len(sources) > 0
    kinds = {d.obj["kind"] for d in built}
    substrate = "Proxmox" if case.startswith(("proxmox", "spread")) else "Kubevirt"
    assert {"Machine", f"{substrate}Machine"} <= kinds
    if "unobserved" not in case:
        assert "TalosConfig" in kinds, "with the endpoint observed, every pool has its TalosConfigTemplate"
    for derived in built:
        assert crd_catalog.lookup(derived.obj["apiVersion"], derived.obj["kind"]) is not None, derived.obj["kind"]
    assert derived_problems(objects, crd_catalog) == []
    assert validate_objects(objects, crd_catalog) == []
    coverage = schema_coverage(objects, crd_catalog)
    assert coverage.derived == len(built) and not coverage.unchecked


def test_a_proxmox_template_naming_source_node_beside_the_selector_is_refused_at_the_template(
    crd_catalog: SchemaCatalog,
) -> None:
    """The shape every templateTags pool rendered before this fix: admitted as a template, refused as a clone."""
    objects = _render("proxmox")
    (template,) = [o for o in objects if o["kind"] == "ProxmoxMachineTemplate"]
    old = copy.deepcopy(template)
    old["spec"]["template"]["spec"]["sourceNode"] = "pve1"
    label = f"ProxmoxMachineTemplate/{old['metadata']['name']}"
    (problem,) = validate_objects([old], crd_catalog)
    assert problem.path == f"{label}.spec.template.spec"
    assert problem.message.startswith("the ProxmoxMachine Cluster API clones from it is refused: Invalid value: "
                                      "must define either SourceNode with TemplateID, OR TemplateSelector"), problem
    assert [str(p) for p in derived_problems([old], crd_catalog)] == [str(problem)]
    # The template's own CRD lacks the rule: only the derived judge sees it.
    alone = copy.deepcopy(old)
    alone["kind"] = "ProxmoxMachine"
    alone["spec"] = alone["spec"]["template"]["spec"]
    assert validate_objects([alone], crd_catalog) != []


@pytest.mark.parametrize("kind", ["ProxmoxMachineTemplate", "TalosConfigTemplate", "MachineDeployment"])
def test_a_problem_of_the_template_itself_is_said_once(kind: str, crd_catalog: SchemaCatalog) -> None:
    """A field both CRDs refuse is the template's own problem; the clone's verdict on it is not repeated."""
    objects = _render("proxmox")
    (obj,) = copy.deepcopy([o for o in objects if o["kind"] == kind])
    obj["spec"]["template"]["spec"]["unknownFieldX"] = 1
    problems = validate_objects([obj], crd_catalog)
    assert [p.path for p in problems] == [f"{kind}/{obj['metadata']['name']}.spec.template.spec.unknownFieldX"]
    assert "is refused" not in problems[0].message


def test_the_clone_carries_the_templates_metadata_and_spec_as_cluster_api_builds_it() -> None:
    template = {"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "ProxmoxMachineTemplate",
                "metadata": {"name": "t", "namespace": "ns", "labels": {"source": "label"}},
                "spec": {"template": {"metadata": {"labels": {"a": "b"}, "annotations": {"c": "d"}},
                                      "spec": {"templateID": 100, "sourceNode": "pve1"}}}}
    (derived,) = derived_objects(template, "ProxmoxMachineTemplate/t")
    assert derived.obj == {"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "ProxmoxMachine",
                           "metadata": {"name": "t", "namespace": "ns", "labels": {"a": "b"},
                                        "annotations": {"c": "d"}},
                           "spec": {"templateID": 100, "sourceNode": "pve1"}}
    assert derived.label == "ProxmoxMachineTemplate/t.spec.template"
    assert derived.why == "the ProxmoxMachine Cluster API clones from it"
    assert list(derived_objects({**template, "kind": "ProxmoxCluster"}, "x")) == []
    assert list(derived_objects({**template, "spec": {"template": "not an object"}}, "x")) == []


def test_a_derived_kind_without_its_crd_is_a_gap_not_an_ok(crd_catalog: SchemaCatalog) -> None:
    objects = _render("proxmox")
    without = SchemaCatalog(crd_catalog.dirs, [v for v in crd_catalog if v.kind != "ProxmoxMachine"])
    coverage = schema_coverage(objects, without)
    assert coverage.unchecked == {"infrastructure.cluster.x-k8s.io/v1alpha1 ProxmoxMachine": 1}
    assert "ProxmoxMachine" in coverage.gap(without)


def test_validate_says_how_many_built_objects_it_judged(shared: Any) -> None:
    result = CliRunner().invoke(app, ["validate", "-f", str(EXAMPLES / "proxmox.yaml"), "--observed",
                                      str(EXAMPLES / "observed-proxmox.yaml"), "--crds", str(shared / "crds")])
    assert result.exit_code == 0, result.output
    # The example's one pool: its Machine, ProxmoxMachine and TalosConfig.
    assert "; 3 objects their controllers build from them, judged too)" in result.stdout


def test_a_refused_talos_config_names_the_field_never_the_value(crd_catalog: SchemaCatalog) -> None:
    """A TalosConfig carries the machine token and cluster secrets in its patches: a refusal of one may
    reach the operator's condition and Events, so it says where and which rule, not what was there."""
    from tenantctl.validate.crds import CrdVersion

    objects = _render("proxmox")
    (template,) = [o for o in objects if o["kind"] == "TalosConfigTemplate"]
    secret = "SECRET-JOIN-TOKEN-abcdef"
    template = copy.deepcopy(template)
    template["spec"]["template"]["spec"]["talosVersion"] = secret
    # A TalosConfig CRD stricter than its template's (as a later CABPT might serve): talosVersion a v-version.
    versions = []
    for version in crd_catalog:
        if version.kind == "TalosConfig" and "talosVersion" in version.schema["properties"]["spec"]["properties"]:
            schema = copy.deepcopy(dict(version.schema))
            schema["properties"]["spec"]["properties"]["talosVersion"]["pattern"] = "^v[0-9.]+$"
            version = CrdVersion(version.crd_name, version.group, version.kind, version.version, version.served,
                                 version.deprecated, version.deprecation_warning, version.namespaced, schema,
                                 version.source)
        versions.append(version)
    stricter = SchemaCatalog(crd_catalog.dirs, versions)
    (problem,) = derived_problems([template], stricter)
    assert problem.path.endswith(".spec.template.spec.talosVersion")
    assert problem.message.startswith("the TalosConfig Cluster API clones from it is refused: Invalid value")
    assert secret not in problem.message and "not shown" in problem.message

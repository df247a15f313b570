"""capmox v0.7.7, built from its own tree, judges every Proxmox object tenantctl renders (issue 60).

The manager runs with its webhooks (ProxmoxCluster, ProxmoxMachine) registered from its tree's
configuration, its CRDs from the same tree, against a management control plane of its own: it takes no
namespace and would act on every other test's objects. Each ProxmoxCluster and ProxmoxMachineTemplate of
each Proxmox render is applied for real, and so is the ProxmoxMachine Cluster API clones from each
template (`validate.derived`): admitted, stored with every field tenantctl wrote unchanged, and any
field capmox's webhooks or CRDs default is one this file has judged.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from proxmox_variants import Edit, by_template_id, dual_stack, full_clone, per_node_templates, pools
from real_api import Api, APIRefusal, crd_documents
from real_control_plane import ControlPlane
from tenant_support import load_example
from tenantctl.render import render_tenant
from tenantctl.spec import parse_observed, parse_tenant_documents
from tenantctl.validate.derived import derived_objects
from upstream_support import COMPONENTS, added_and_changed, running

pytestmark = [pytest.mark.timeout(300)]

CAPMOX_DEFAULTS: dict[str, str] = {}
"""What capmox's CRDs or webhooks add to what tenantctl writes, each judged: nothing. Every field capmox
defaults (`full`, a NIC's `model`) tenantctl writes out, so no apply fights over it."""


CASES: dict[str, tuple[str, Edit | None]] = {
    "proxmox": ("proxmox.yaml", None),
    "template-id": ("proxmox.yaml", by_template_id),
    "full-clone": ("proxmox.yaml", full_clone),
    "dual-stack": ("proxmox.yaml", dual_stack),
    "spread": ("proxmox-spread.yaml", None),
    "spread-per-node-templates": ("proxmox-spread.yaml", per_node_templates),
}


@pytest.fixture(scope="module")
def capmox_management(tmp_path_factory: pytest.TempPathFactory, envtest_bin: Path) -> Iterator[ControlPlane]:
    plane = ControlPlane(tmp_path_factory.mktemp("capmox-management"), envtest_bin)
    try:
        yield plane.start()
    finally:
        plane.stop()


@pytest.fixture(scope="module")
def capmox(capmox_management: ControlPlane, shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """capmox with its webhooks; Cluster API's and CAIP's CRDs first (its controllers watch their kinds)."""
    admin = Api(capmox_management.server, capmox_management.admin)
    admin.install_crds(crd_documents(sorted([*(shared / "crds" / "cluster-api-v1.10.1").glob("*.yaml"),
                                             *(shared / "crds" / "caip-v1.0.3").glob("*.yaml")])))
    with running(COMPONENTS["capmox"], admin, capmox_management, tmp_path_factory.mktemp("capmox"), ""):
        yield admin


def _render(case: str, namespace: str) -> list[dict[str, Any]]:
    example, edit = CASES[case]
    docs = copy.deepcopy(load_example(example))
    for doc in docs:
        doc["metadata"]["namespace"] = namespace
    if edit is not None:
        edit(docs)
    observed = copy.deepcopy(load_example("observed-proxmox.yaml"))
    for doc in observed:
        doc["metadata"]["namespace"] = namespace
    rendered = render_tenant(parse_tenant_documents(docs), parse_observed(observed))
    objects = [o for o in rendered if o["kind"] in ("ProxmoxCluster", "ProxmoxMachineTemplate")]
    clones = [d.obj for o in objects for d in derived_objects(o, o["kind"])]
    return [*objects, *clones]


@pytest.mark.parametrize("case", list(CASES))
def test_capmox_admits_every_proxmox_object_and_changes_nothing_tenantctl_wrote(capmox: Api, case: str) -> None:
    namespace = f"capmox-{case}"
    capmox.namespace(namespace)
    objects = _render(case, namespace)
    kinds = {o["kind"] for o in objects}
    assert kinds == {"ProxmoxCluster", "ProxmoxMachineTemplate", "ProxmoxMachine"}, kinds
    defaults: set[str] = set()
    for obj in objects:
        stored = capmox.apply(obj, manager="tenantctl")
        added: list[str] = []
        changed: list[str] = []
        added_and_changed(obj["spec"], stored["spec"], "spec", added, changed)
        assert changed == [], f"{obj['kind']}/{obj['metadata']['name']}: capmox changed what tenantctl wrote: {changed}"
        defaults |= {f"{obj['kind']} {path}" for path in added}
    unjudged = {d for d in defaults if not any(d == k or d.startswith(k + ".") for k in CAPMOX_DEFAULTS)}
    assert unjudged == set(), f"capmox defaults fields nobody has judged: {sorted(unjudged)}"


def test_capmox_refuses_source_node_beside_the_selector_as_our_judge_does(capmox: Api) -> None:
    """The shape every templateTags pool rendered before issue 67, as capmox's own webhook and CRD see it."""
    namespace = "capmox-refusal"
    capmox.namespace(namespace)
    (machine,) = [o for o in _render("proxmox", namespace) if o["kind"] == "ProxmoxMachine"]
    machine["spec"]["sourceNode"] = "pve1"
    with pytest.raises(APIRefusal, match="must define either SourceNode with TemplateID, OR TemplateSelector"):
        capmox.apply(machine, manager="tenantctl")


def test_capmox_webhook_and_tenantctl_refuse_the_same_mtu(capmox: Api) -> None:
    """An MTU below 1280 passes capmox's CRD (576–65520) but not its webhook (validateNetworkDeviceMTU):
    the webhook is the judge here, and tenantctl refuses the same value first, naming the pool's field."""
    from tenant_support import refused

    namespace = "capmox-mtu"
    capmox.namespace(namespace)
    (machine,) = [o for o in _render("proxmox", namespace) if o["kind"] == "ProxmoxMachine"]
    machine["spec"]["network"]["default"]["mtu"] = 1000
    with pytest.raises(APIRefusal, match="mtu must be at least 1280 or 1, but was 1000"):
        capmox.apply(machine, manager="tenantctl")
    machine["spec"]["network"]["default"]["mtu"] = 1280
    assert capmox.apply(machine, manager="tenantctl")["spec"]["network"]["default"]["mtu"] == 1280
    docs = copy.deepcopy(load_example("proxmox.yaml"))
    pools(docs)[0]["spec"]["proxmox"]["network"]["mtu"] = 1000
    assert "NodePool/md0.spec.proxmox.network.mtu" in refused(docs)

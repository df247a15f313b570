"""`tenantctl describe tenant` against emulated management and tenant clusters in mid-provisioning."""

from __future__ import annotations

import asyncio
import datetime
import json
from pathlib import Path
from typing import Any

import pytest
from daytwo_support import (
    MACHINES,
    NAME,
    NOW,
    NS,
    PLURALS,
    PROXMOX_MACHINES,
    UPGRADING,
    machine,
    seed_day_two,
    set_status,
    url,
)
from kube_emulator import Fault, KubeEmulator
from operator_support import kubeconfig_for
from pinning import pin
from typer.testing import CliRunner

from tenantctl.cli import app
from tenantctl.cli.tree import render_tree
from tenantctl.operator.daytwo.describe import Mark, TreeNode, describe_tenant
from tenantctl.operator.kube.client import Connection, KubeClient

pytestmark = [pytest.mark.timeout(20)]
FIXED_NOW = datetime.datetime.fromisoformat(NOW.replace("Z", "+00:00"))
README = Path(__file__).resolve().parents[3] / "docs" / "day-two.md"


async def tree_of(mgmt: KubeEmulator, timeout: float = 2.0, pinned: bool = True) -> TreeNode:
    """The tree, pinned whole unless what answers before `timeout` varies run to run."""
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        root = await describe_tenant(api, NS, NAME, FIXED_NOW, timeout)
    if pinned:
        pin(render_tree(root))
    return root


def find(root: TreeNode, label: str) -> TreeNode:
    if root.label == label:
        return root
    for child in root.children:
        try:
            return find(child, label)
        except LookupError:
            continue
    raise LookupError(label)


async def test_what_is_wrong_is_marked_with_what_to_look_at_next(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    await seed_day_two(mgmt, tenant)
    root = await tree_of(mgmt)
    wrong = {n.label for n in root.wrong()}
    assert wrong == {
        f"Machine {NAME}-md0-c", f"Node {NAME}-md0-b", f"CSI controller Deployment {NAME}-pcsi-controller",
        f"on {NAME}-md0-b", f"{NAME}-csi",
    }
    stuck = find(root, f"Machine {NAME}-md0-c")
    assert "phase Provisioning" in stuck.detail
    assert stuck.next.startswith(f"ProxmoxMachine {NAME}-md0-c: no node in allowedNodes has 8G of free memory")
    tainted = find(root, f"Node {NAME}-md0-b")
    assert "uninitialized" in tainted.detail and f"deploy/{NAME}-pccm" in tainted.next
    assert find(root, f"Node {NAME}-md0-a").mark is Mark.OK
    assert find(root, f"Machine {NAME}-md0-a").detail == (
        f"phase Running, node {NAME}-md0-a, providerID proxmox://1b0d7a1e-aaaa, age 20m")
    assert find(root, f"{NAME}-csi").detail == "Helm install failed: context deadline exceeded"
    assert find(root, f"KamajiControlPlane {NAME}").detail == "ready 2/2, version v1.33.6"
    assert find(root, "pve-zfs").detail == "csi.proxmox.sinextra.dev, default"


async def test_a_silent_tenant_api_is_shown_as_such(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    await seed_day_two(mgmt, tenant)
    tenant.fail(Fault("GET", hang=5.0, times=100))
    root = await tree_of(mgmt, timeout=0.5, pinned=False)
    node = find(root, "tenant API")
    assert node.mark is Mark.WRONG and "did not answer within 0.5s" in node.detail
    assert find(root, f"{NAME}-csi").mark is Mark.WRONG, "the management side is still described"
    storage = find(root, "CSI node pods, StorageClasses")
    assert (storage.mark, storage.detail) == (Mark.INFO, "not read: the tenant API did not answer")


async def test_a_garbled_admin_kubeconfig_is_the_tenant_api_line_and_the_rest_is_described(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    await seed_day_two(mgmt, tenant)
    secret = mgmt.get(PLURALS["Secret"], NS, f"{NAME}-admin-kubeconfig")
    assert secret is not None
    secret["data"]["super-admin.svc"] = "bm90IHlhbWw6IFs="  # "not yaml: ["
    mgmt.put(PLURALS["Secret"], secret)
    root = await tree_of(mgmt, pinned=False)
    node = find(root, "tenant API")
    assert node.mark is Mark.WRONG
    assert node.detail.startswith(
        f"admin kubeconfig Secret {NAME}-admin-kubeconfig is not a base64-encoded YAML kubeconfig (")
    assert find(root, f"{NAME}-csi").mark is Mark.WRONG, "the management side is still described"


async def test_each_condition_is_marked_by_its_status_and_a_failure_reason(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    await seed_day_two(mgmt, tenant)
    set_status(mgmt, "TenantCluster", NAME, {"phase": "Provisioning", "conditions": [
        {"type": "Applied", "status": "True", "reason": "Applied", "message": "21 objects"},
        {"type": "EndpointReady", "status": "False", "reason": "WaitingForEndpoint", "message": "no address"},
        {"type": "Ready", "status": "False", "reason": "InvalidSpec", "message": "spec.version"},
    ]})
    conditions = find(await tree_of(mgmt, pinned=False), "conditions")
    assert [(c.label, c.mark, c.detail) for c in conditions.children] == [
        ("Applied=True", Mark.OK, "Applied: 21 objects"),
        ("EndpointReady=False", Mark.PROGRESS, "WaitingForEndpoint: no address"),
        ("Ready=False", Mark.WRONG, "InvalidSpec: spec.version"),
    ]


async def test_storage_classes_are_listed_in_name_order(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    await seed_day_two(mgmt, tenant)
    for name in ("zz-retain", "aa-fast"):
        tenant.put("storage.k8s.io/v1/storageclasses", {"metadata": {"name": name}, "provisioner": "csi.example"})
    classes = find(await tree_of(mgmt, pinned=False), "StorageClasses")
    assert [(c.label, c.detail) for c in classes.children] == [
        ("aa-fast", "csi.example"), ("pve-zfs", "csi.proxmox.sinextra.dev, default"), ("zz-retain", "csi.example")]


async def test_capi_objects_not_created_yet_point_at_the_applied_condition(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    await seed_day_two(mgmt, tenant)
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        for api_version, kind in (("cluster.x-k8s.io/v1beta1", "Cluster"),
                                  ("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane")):
            res = await api.resource(api_version, kind)
            assert res is not None
            await api.delete(res, NAME, NS)
    root = await tree_of(mgmt)
    for label in (f"Cluster {NAME}", f"KamajiControlPlane {NAME}"):
        node = find(root, label)
        assert (node.mark, node.detail, node.next) == (Mark.WRONG, "not found", "the TenantCluster's Applied condition")


async def test_a_missing_tenant_is_one_marked_line(mgmt: KubeEmulator) -> None:
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        root = await describe_tenant(api, NS, "nope", FIXED_NOW)
    assert (root.mark, root.detail, root.children) == (Mark.WRONG, "not found", [])


async def test_the_command_prints_the_tree_and_json(mgmt: KubeEmulator, tenant: KubeEmulator, tmp_path: Path) -> None:
    await seed_day_two(mgmt, tenant)
    config = tmp_path / "kubeconfig"
    config.write_text(kubeconfig_for(url(mgmt)))

    def invoke(*args: str) -> Any:
        return CliRunner().invoke(app, ["describe", "tenant", NAME, "-n", NS, "--kubeconfig", str(config), *args])

    text = await asyncio.to_thread(invoke)
    assert text.exit_code == 0, text.output
    assert f"✗ Machine {NAME}-md0-c" in text.output
    data = json.loads((await asyncio.to_thread(invoke, "-o", "json")).output)
    assert data["label"] == f"TenantCluster {NS}/{NAME}" and data["children"][0]["label"] == "conditions"


async def test_readme_shows_a_tree_from_this_fixture(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    await seed_day_two(mgmt, tenant)
    text = render_tree(await tree_of(mgmt))
    block = f"```text\n$ tenantctl describe tenant {NAME} -n {NS}\n{text}```"
    assert block in README.read_text(), f"docs/day-two.md's describe example is stale; it now reads:\n{block}"


async def test_an_upgrade_shows_its_stage_what_it_waits_for_and_what_runs_where(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    await seed_day_two(mgmt, tenant)
    set_status(mgmt, "TenantCluster", NAME, UPGRADING)
    root = await tree_of(mgmt)
    node = find(root, "upgrade")
    assert node.mark is Mark.PROGRESS
    assert node.detail == ("to v1.34.9 / Talos v1.13.6: stage ControlPlane, waiting for the control plane to report "
                           "v1.34.9; then pools md0")
    assert find(node, "pool md0").detail == "v1.33.13 / Talos v1.13.6"
    stalled = {**UPGRADING, "upgrade": {**UPGRADING["upgrade"], "stalled": "pool md0 is being remediated"}}
    set_status(mgmt, "TenantCluster", NAME, stalled)
    node = find(await tree_of(mgmt), "upgrade")
    assert (node.mark, node.next) == (Mark.WRONG, "pool md0 is being remediated")


async def test_versions_without_an_upgrade_say_what_the_control_plane_runs(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    await seed_day_two(mgmt, tenant)
    set_status(mgmt, "TenantCluster", NAME, {"phase": "Ready", "versions": {"controlPlane": "v1.33.13"}})
    node = find(await tree_of(mgmt), "versions")
    assert (node.mark, node.detail) == (Mark.OK, "control plane v1.33.13")
    set_status(mgmt, "TenantCluster", NAME, {"phase": "Ready", "versions": {"pools": {}}})
    assert find(await tree_of(mgmt), "versions").detail == "control plane -"


async def test_an_invalid_pool_of_this_tenant_is_the_spec_line_and_other_tenants_pools_are_not_read(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    await seed_day_two(mgmt, tenant)
    pools = "tenantctl.io/v1alpha1/nodepools"
    ours = mgmt.get(pools, NS, "md0")
    assert ours is not None
    theirs = {**ours, "metadata": {**ours["metadata"], "name": "other-md0", "uid": "other"},
              "spec": {**ours["spec"], "cluster": "other", "replicas": -1}}
    mgmt.put(pools, theirs)
    root = await tree_of(mgmt)
    assert all(child.label != "spec" for child in root.children), "another tenant's pool was read"
    mgmt.put(pools, {**ours, "spec": {**ours["spec"], "replicas": -1}})
    spec = find(await tree_of(mgmt), "spec")
    assert spec.mark is Mark.WRONG and "replicas" in spec.detail
    assert spec.next == "fix the TenantCluster/NodePools; the operator applies nothing until then"


async def test_a_condition_without_a_reason_shows_its_message_alone(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    await seed_day_two(mgmt, tenant)
    set_status(mgmt, "TenantCluster", NAME, {"phase": "Provisioning", "conditions": [
        {"type": "Ready", "status": "False", "message": "waiting for the tenant apiserver"}]})
    assert find(await tree_of(mgmt), "Ready=False").detail == "waiting for the tenant apiserver"


async def test_an_infrastructure_machine_failing_by_condition_is_what_to_look_at(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """capmox reports a failed clone as a False condition, not always as failureMessage."""
    await seed_day_two(mgmt, tenant)
    set_status(mgmt, PROXMOX_MACHINES[0], f"{NAME}-md0-c", {"ready": False, "conditions": [
        {"type": "Ready", "status": "True"},
        {"type": "VMProvisioned", "status": "False", "reason": "CloningFailed", "message": "storage full"}]})
    stuck = find(await tree_of(mgmt), f"Machine {NAME}-md0-c")
    assert stuck.mark is Mark.WRONG
    assert stuck.next.startswith(f"ProxmoxMachine {NAME}-md0-c: VMProvisioned CloningFailed: storage full; ")


async def test_a_machine_failing_by_reason_alone_shows_the_reason(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    """Cluster API may set failureReason without failureMessage; the reason is then the failure shown."""
    await seed_day_two(mgmt, tenant)
    set_status(mgmt, MACHINES[0], f"{NAME}-md0-c", {"phase": "Failed", "failureReason": "CreateError"})
    stuck = find(await tree_of(mgmt), f"Machine {NAME}-md0-c")
    assert stuck.mark is Mark.WRONG
    assert stuck.detail.endswith(", failure: CreateError"), stuck.detail


async def test_a_failing_machine_whose_reference_names_no_kind_is_still_told(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """The Machine CRD requires infrastructureRef but not its kind: the advice then says what it is."""
    await seed_day_two(mgmt, tenant)
    held = mgmt.get(MACHINES[0], NS, f"{NAME}-md0-c")
    assert held is not None
    held["spec"]["infrastructureRef"] = {"name": f"{NAME}-md0-c"}
    held["status"] = {"phase": "Failed", "failureMessage": "no such template"}
    mgmt.put(MACHINES[0], held)
    stuck = find(await tree_of(mgmt), f"Machine {NAME}-md0-c")
    assert stuck.next == (
        f"infrastructure machine {NAME}-md0-c: no message; kubectl -n {NS} describe infrastructure machine "
        f"{NAME}-md0-c, then the infrastructure provider's controller logs"
    )


async def test_a_deleting_tenant_shows_its_teardown_record(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    await seed_day_two(mgmt, tenant)
    tc = mgmt.get(PLURALS["TenantCluster"], NS, NAME)
    assert tc is not None
    tc["metadata"]["deletionTimestamp"] = NOW
    tc["metadata"]["finalizers"] = ["tenantctl.io/teardown"]
    tc["status"] = {"phase": "Deleting", "teardown": {"volumes": ["local-zfs:vm-1-disk-a"], "leftovers": []}}
    mgmt.put(PLURALS["TenantCluster"], tc)
    node = find(await tree_of(mgmt), "teardown")
    assert (node.mark, node.detail) == (Mark.PROGRESS, "deleting")
    assert [(c.label, c.mark, c.detail) for c in node.children] == [
        ("volumes", Mark.INFO, "['local-zfs:vm-1-disk-a']"), ("leftovers", Mark.INFO, "[]")]


async def test_a_control_plane_without_any_version_shows_a_dash(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    await seed_day_two(mgmt, tenant)
    kcp = mgmt.get(PLURALS["KamajiControlPlane"], NS, NAME)
    assert kcp is not None
    kcp["spec"].pop("version", None)
    kcp["status"] = {"readyReplicas": 2}
    mgmt.put(PLURALS["KamajiControlPlane"], kcp)
    node = find(await tree_of(mgmt), f"KamajiControlPlane {NAME}")
    assert node.detail.endswith(", version -"), node.detail


async def test_an_upgrade_at_a_pool_names_the_pool_in_its_stage(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    await seed_day_two(mgmt, tenant)
    upgrade = {**UPGRADING["upgrade"], "stage": "Pool", "pool": "md0", "remaining": [],
               "waiting": "pool md0 to finish its rollout"}
    set_status(mgmt, "TenantCluster", NAME, {**UPGRADING, "upgrade": upgrade})
    node = find(await tree_of(mgmt), "upgrade")
    assert node.detail == "to v1.34.9 / Talos v1.13.6: stage Pool md0, waiting for pool md0 to finish its rollout"


async def test_machine_deployments_are_shown_in_name_order(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    await seed_day_two(mgmt, tenant)
    plural = PLURALS["MachineDeployment"]
    (live,) = [md for md in mgmt.live(plural.rsplit("/", 1)[-1]) if md["metadata"]["namespace"] == NS]
    for pool in ("zz", "aa"):
        meta = {**live["metadata"], "name": f"{NAME}-{pool}", "uid": pool,
                "labels": {**live["metadata"]["labels"], "tenantctl.io/nodepool": pool}}
        mgmt.put(plural, {**live, "metadata": meta})
    root = await tree_of(mgmt)
    shown = [c.label for c in root.children if c.label.startswith("NodePool ")]
    assert shown == [f"NodePool aa → MachineDeployment {NAME}-aa", f"NodePool md0 → MachineDeployment {NAME}-md0",
                     f"NodePool zz → MachineDeployment {NAME}-zz"], shown


@pytest.mark.parametrize(("phase", "mark"), [
    ("Running", Mark.OK), ("Provisioned", Mark.OK), ("Provisioning", Mark.PROGRESS), ("Pending", Mark.PROGRESS),
    ("Deleting", Mark.PROGRESS), ("Failed", Mark.WRONG), ("Unknown", Mark.WRONG),
])
async def test_a_machine_is_marked_by_its_phase(
    mgmt: KubeEmulator, tenant: KubeEmulator, phase: str, mark: Mark
) -> None:
    await seed_day_two(mgmt, tenant)
    mgmt.put(MACHINES[0], machine(f"{NAME}-md0-d", phase, None, None))
    node = find(await tree_of(mgmt, pinned=False), f"Machine {NAME}-md0-d")
    assert node.mark is mark and node.detail.startswith(f"phase {phase}, node -, providerID -"), node


async def test_machines_are_listed_in_name_order(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    await seed_day_two(mgmt, tenant)
    mgmt.put(MACHINES[0], machine(f"{NAME}-md0-0", "Running", None, None))
    md = find(await tree_of(mgmt, pinned=False), f"NodePool md0 → MachineDeployment {NAME}-md0")
    assert [c.label for c in md.children] == [f"Machine {NAME}-md0-{x}" for x in "0abc"]


async def test_a_csi_node_pod_is_known_by_its_name_or_its_component_label(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    await seed_day_two(mgmt, tenant)
    tenant.put("v1/pods", {"metadata": {"name": "kubevirt-csi-driver-q2w4e", "namespace": "csi",
                                        "labels": {"app.kubernetes.io/component": "node"}},
                           "spec": {"nodeName": f"{NAME}-md0-b"}, "status": {"phase": "Pending"}})
    tenant.put("v1/pods", {"metadata": {"name": "csi-controller-0", "namespace": "csi",
                                        "labels": {"app.kubernetes.io/component": "controller"}},
                           "spec": {"nodeName": f"{NAME}-md0-b"}, "status": {"phase": "Running"}})
    csi = find(await tree_of(mgmt, pinned=False), "CSI node pods")
    assert [(c.label, c.mark, c.detail) for c in csi.children] == [
        (f"on {NAME}-md0-a", Mark.OK, "proxmox-csi-plugin-node-x7k2p Running"),
        (f"on {NAME}-md0-b", Mark.WRONG, "kubevirt-csi-driver-q2w4e Pending"),
    ]

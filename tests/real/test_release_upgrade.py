"""Upgrading the operator under a live tenant, on the real API servers: nothing rolls that nobody changed.

The live tenant is what an earlier release left: its spec as that release accepted it and every object
that release rendered of it, byte for byte from the compatibility corpus (tests/compat), applied under
the operator's field manager, with Kamaji and Cluster API reporting it settled. Then this release's
operator starts, as its ServiceAccount. Both substrates, from the previous landing (cedb3c1) and from
the release before the version tag, the owner tags and the v1.33.13 patch (a21db75), whose pools a
naive upgrade would roll.
"""

from __future__ import annotations

import asyncio
import copy
import datetime
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from operator_support import FAST, condition, one_more_pass
from typer.testing import CliRunner

from compat.corpus import Render, renders
from real_api import Api
from real_control_plane import ControlPlane
from real_seed import OPERATOR_SA, eventually, operator_connection, running_operator, seed_control_plane, seed_tenant
from tenantctl.cli import app
from tenantctl.spec.versions import KUBERNETES_PATCHES

pytestmark = [pytest.mark.timeout(300), pytest.mark.usefixtures("forgotten")]

TC = ("tenantctl.io/v1alpha1", "TenantCluster")
NP = ("tenantctl.io/v1alpha1", "NodePool")
KCP = ("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane")
MD = ("cluster.x-k8s.io/v1beta1", "MachineDeployment")
TEMPLATES = {"proxmox": ("infrastructure.cluster.x-k8s.io/v1alpha1", "ProxmoxMachineTemplate"),
             "kubevirt": ("infrastructure.cluster.x-k8s.io/v1alpha1", "KubevirtMachineTemplate")}
PREVIOUS, BEFORE_VERSION_TAG = "cedb3c1", "a21db75"


@pytest.fixture()
def forgotten(admin: Api) -> Iterator[None]:
    """After each test, what it left in its namespaces deleted (the finalizers no operator is left to release
    dropped first), so the next test's live tenant is only what its release rendered."""
    yield
    # Only the kinds rendered into these namespaces: a cluster-scoped kind listed "in" a namespace is listed
    # cluster-wide, and deleting those would take the operator's own RBAC with it.
    kinds = {(o["apiVersion"], o["kind"]) for r in renders() if r.source.endswith("@compat") and r.observed
             and r.release in (PREVIOUS, BEFORE_VERSION_TAG) for o in r.objects()
             if o["metadata"].get("namespace") in ("compat-acme", "compat-demo")}
    for ns in ("compat-acme", "compat-demo"):
        for kind in (TC, NP):
            for obj in admin.list(*kind, ns):
                admin.merge(*kind, ns, obj["metadata"]["name"], {"metadata": {"finalizers": None}})
                admin.delete(*kind, ns, obj["metadata"]["name"])
        for api_version, kind in sorted(kinds):
            for obj in admin.list(api_version, kind, ns):
                admin.delete(api_version, kind, ns, obj["metadata"]["name"])


def _release_render(release: str, example: str) -> Render:
    return next(r for r in renders() if r.release == release and r.source == f"examples/{example}@compat"
                and r.observed is not None)


def _install_for(admin: Api, management: ControlPlane, spec: Path) -> None:
    """What a platform admin runs for a new tenant namespace: `install --apply -f` its spec (the webhook's
    configuration it writes is removed again, as the `installed` fixture does)."""
    result = CliRunner().invoke(app, ["install", "--apply", "--kubeconfig", str(management.admin_kubeconfig_path),
                                      "-f", str(spec)])
    assert result.exit_code == 0, result.output
    admin.delete("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", None, OPERATOR_SA)


def _live_tenant(admin: Api, management: ControlPlane, tenant: ControlPlane, render: Render,
                 spec_edit: Any = None) -> dict[str, Any]:
    """The tenant as `render.release` left it: spec, objects, and the controllers' reports of them."""
    accepted = [d for d in yaml.safe_load_all(render.spec_path().read_text()) if d]
    docs = copy.deepcopy(accepted)
    if spec_edit is not None:
        spec_edit(docs)
    ns = docs[0]["metadata"]["namespace"]
    admin.namespace(ns)
    _install_for(admin, management, render.spec_path())
    seed_tenant(admin, docs)
    seed_control_plane(admin, accepted, tenant)
    objects = render.objects()
    for obj in objects:
        admin.namespace(obj["metadata"].get("namespace") or ns)
        admin.apply(obj, manager="tenantctl")
    name = docs[0]["metadata"]["name"]
    kcp = next(o for o in objects if o["kind"] == "KamajiControlPlane")
    version = kcp["spec"]["version"]
    admin.merge_status(*KCP, ns, name, {"version": version, "ready": True, "initialized": True, "readyReplicas": 2,
                                        "replicas": 2, "updatedReplicas": 2, "unavailableReplicas": 0,
                                        "selector": f"cluster.x-k8s.io/cluster-name={name}"})
    for md in (o for o in objects if o["kind"] == "MachineDeployment"):
        _rolled_out(admin, ns, md["metadata"]["name"])
    return {"namespace": ns, "name": name, "version": version}


def _rolled_out(admin: Api, ns: str, md: str) -> None:
    obj = admin.get(*MD, ns, md)
    assert obj is not None
    n = obj["spec"].get("replicas", 1)
    admin.merge_status(*MD, ns, md, {"observedGeneration": obj["metadata"]["generation"], "replicas": n,
                                     "updatedReplicas": n, "readyReplicas": n, "availableReplicas": n})


def _what_rolls(admin: Api, substrate: str, ns: str, name: str) -> dict[str, Any]:
    """Everything whose change replaces a machine or moves a Kubernetes version."""
    mds = {md["metadata"]["name"]: md["spec"]["template"] for md in admin.list(*MD, ns)}
    templates = {t["metadata"]["name"]: t["spec"] for t in admin.list(*TEMPLATES[substrate], ns)}
    kcp = admin.get(*KCP, ns, name) or {}
    return {"machineDeployments": mds, "templates": templates, "controlPlane": kcp["spec"]["version"]}


def _resource_versions(admin: Api, render: Render, ns: str) -> dict[str, str]:
    """Kind/name -> resourceVersion of every object of the kinds the release rendered into `ns`."""
    kinds = {(o["apiVersion"], o["kind"]) for o in render.objects() if o["metadata"].get("namespace") == ns}
    return {f"{kind}/{o['metadata']['name']}": o["metadata"]["resourceVersion"]
            for api_version, kind in kinds for o in admin.list(api_version, kind, ns)}


def _tenant(admin: Api, ns: str, name: str) -> dict[str, Any]:
    return admin.get(*TC, ns, name) or {}


def _passed(ctx: Any, key: tuple[str, str]) -> bool:
    return bool(ctx.passes.get(key, 0) >= 1)


@pytest.mark.parametrize("release", [PREVIOUS, BEFORE_VERSION_TAG])
@pytest.mark.parametrize(("example", "substrate"), [("proxmox.yaml", "proxmox"), ("kubevirt.yaml", "kubevirt")])
async def test_an_operator_upgrade_on_an_unchanged_spec_rolls_nothing_and_moves_no_patch(
    installed: Any, admin: Api, management: ControlPlane, tenant_plane: ControlPlane, release: str, example: str,
    substrate: str,
) -> None:
    render = _release_render(release, example)
    tenant = await asyncio.to_thread(_live_tenant, admin, management, tenant_plane, render)
    ns, name = tenant["namespace"], tenant["name"]
    before = _what_rolls(admin, substrate, ns, name)
    plan = await asyncio.to_thread(CliRunner().invoke, app, [
        "plan", "--against-release", "-n", ns, "-o", "json", "--kubeconfig", str(management.admin_kubeconfig_path)])
    # Exit 3: a tenant rolls (the Proxmox pools, whose templates could make no machine).
    assert plan.exit_code == (3 if substrate == "proxmox" else 0), plan.output
    verdicts = {f"{t['namespace']}/{t['name']}": t for t in yaml.safe_load(plan.stdout)["tenants"]}
    verdict = verdicts[f"{ns}/{name}"]
    written_before = _resource_versions(admin, render, ns)
    if substrate == "proxmox":
        # Both releases wrote sourceNode beside templateSelector, which capmox's ProxmoxMachine CRD refuses on
        # every clone: the pool never had a worker, so its template is not kept. It rolls once, said first.
        assert verdict["verdict"] == "roll", verdict
        assert verdict["why"][0].startswith("pool md0 rolls once: sourceNode left out beside templateSelector")
    else:
        assert verdict["verdict"] in ("none", "re-apply"), verdict
    async with running_operator(operator_connection(management), FAST) as ctx:
        await eventually(lambda: _passed(ctx, (ns, name)), 90, what="a pass of the upgraded operator")
        await one_more_pass(ctx, (ns, name))
    after = _what_rolls(admin, substrate, ns, name)
    if substrate == "proxmox":
        (md,) = after["machineDeployments"].values()
        template = after["templates"][md["spec"]["infrastructureRef"]["name"]]["template"]["spec"]
        assert "sourceNode" not in template and "templateSelector" in template, template
        assert md["spec"]["version"] == next(m["spec"]["version"] for m in before["machineDeployments"].values())
        assert after["controlPlane"] == before["controlPlane"]
    else:
        assert after == before
        written = {ref for ref, version in _resource_versions(admin, render, ns).items()
                   if written_before.get(ref) != version}
        planned = {line.rsplit(" ", 1)[-1] for line in verdict["why"]}
        assert written <= planned, f"the operator wrote what plan --against-release did not say: {written - planned}"
    status = _tenant(admin, ns, name).get("status") or {}
    assert condition(_tenant(admin, ns, name), "Applied").get("status") == "True", status
    table = KUBERNETES_PATCHES["v1.33"]
    if tenant["version"] != table:
        assert status["pending"]["kubernetes"] == table and "Manual" in status["pending"]["reason"], status
        assert verdict["pending"]["kubernetes"] == table, verdict
        kubeconfig = str(management.admin_kubeconfig_path)
        listed = await asyncio.to_thread(CliRunner().invoke, app,
                                         ["get", "tenants", "-n", ns, "-o", "json", "--kubeconfig", kubeconfig])
        assert f"{tenant['version']} ({table} pending)" in listed.stdout, listed.output
        described = await asyncio.to_thread(CliRunner().invoke, app, ["describe", "tenant", name, "-n", ns, "-o",
                                                                       "json", "--kubeconfig", kubeconfig])
        assert f"patch {table}" in described.stdout, described.output
    if release == BEFORE_VERSION_TAG and substrate == "proxmox":
        # It rolled with every change at once: nothing waits for a next roll.
        assert not (status.get("pending") or {}).get("render"), status
        assert condition(_tenant(admin, ns, name), "Deprecated").get("status") == "True"
        assert "templateTags[0]" in condition(_tenant(admin, ns, name), "Deprecated")["message"]


async def test_an_automatic_policy_moves_the_patch_inside_its_window_control_plane_first(
    installed: Any, admin: Api, management: ControlPlane, tenant_plane: ControlPlane,
) -> None:
    now = datetime.datetime.now(tz=datetime.UTC) - datetime.timedelta(hours=1)
    window = {"start": now.strftime("%H:%M"), "duration": "3h"}

    def automatic(docs: list[dict[str, Any]]) -> None:
        docs[0]["spec"]["patchUpgrades"] = {"policy": "Automatic", "window": window}

    render = _release_render(BEFORE_VERSION_TAG, "kubevirt.yaml")
    tenant = await asyncio.to_thread(_live_tenant, admin, management, tenant_plane, render, automatic)
    ns, name, old = tenant["namespace"], tenant["name"], tenant["version"]
    new = KUBERNETES_PATCHES["v1.33"]
    assert old != new, "the release before the table moved v1.33's patch"

    def versions() -> tuple[str, ...]:
        live = _what_rolls(admin, "kubevirt", ns, name)
        mds = live["machineDeployments"]
        return (live["controlPlane"], *(mds[md]["spec"]["version"] for md in sorted(mds)))

    async with running_operator(operator_connection(management), FAST) as ctx:
        await eventually(lambda: versions()[0] == new, 90, what="the control plane moved inside the window")
        await one_more_pass(ctx, (ns, name))
        assert versions() == (new, old, old), "the pools wait for the control plane"
        admin.merge_status(*KCP, ns, name, {"version": new, "readyReplicas": 2, "updatedReplicas": 2})
        await eventually(lambda: versions() == (new, new, old), 60, what="the first pool released")
        _rolled_out(admin, ns, f"{name}-big")
        await eventually(lambda: versions() == (new, new, new), 60, what="the second pool released")
    assert "pending" not in (_tenant(admin, ns, name).get("status") or {})


async def test_a_spec_this_release_refuses_leaves_every_live_object_as_it_is(
    installed: Any, admin: Api, management: ControlPlane, tenant_plane: ControlPlane,
) -> None:
    def names_another_talos(docs: list[dict[str, Any]]) -> None:
        pool = next(d for d in docs if d["kind"] == "NodePool")
        pool["spec"]["proxmox"]["templateTags"] = ["v1.13.5", "talos"]  # a21db75 took any tags as written

    render = _release_render(BEFORE_VERSION_TAG, "proxmox.yaml")
    tenant = await asyncio.to_thread(_live_tenant, admin, management, tenant_plane, render, names_another_talos)
    ns, name = tenant["namespace"], tenant["name"]
    before = _resource_versions(admin, render, ns)
    plan = await asyncio.to_thread(CliRunner().invoke, app, [
        "plan", "--against-release", "-n", ns, "-o", "json", "--kubeconfig", str(management.admin_kubeconfig_path)])
    assert plan.exit_code == 3, plan.output
    (verdict,) = yaml.safe_load(plan.stdout)["tenants"]
    assert verdict["verdict"] == "refused" and "NodePool/md0.spec.proxmox.templateTags[0]" in verdict["why"][0]
    async with running_operator(operator_connection(management), FAST) as ctx:
        await eventually(lambda: condition(_tenant(admin, ns, name), "Ready").get("reason") == "InvalidSpec", 90,
                         what="the refusal reported")
        await one_more_pass(ctx, (ns, name))
    ready = condition(_tenant(admin, ns, name), "Ready")
    assert ready["status"] == "False" and "NodePool/md0.spec.proxmox.templateTags[0]" in ready["message"], ready
    assert _resource_versions(admin, render, ns) == before, "nothing applied, rolled or pruned"

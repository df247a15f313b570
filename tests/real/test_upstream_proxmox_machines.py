"""A Proxmox tenant's pools get their Machines and ProxmoxMachines from Cluster API (issue 67).

Cluster API core, CABPT and CAIP run beside the real API server, which holds capmox v0.7.7's own CRDs;
the operator applies each Proxmox example (the getting-started tenant is `examples/proxmox.yaml`) as
its ServiceAccount. Cluster API then clones each pool's ProxmoxMachineTemplate into a ProxmoxMachine per
Machine, and the API server judges that clone with the ProxmoxMachine CRD's own CEL rules, which the
template CRD lacks: a render with `sourceNode` beside `templateSelector` got a MachineSet with no Machine
(`must define either SourceNode with TemplateID, OR TemplateSelector`). The test plays what has no
manager here: Kamaji's status, and capmox itself (nothing acts on a ProxmoxMachine once admitted).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from operator_support import FAST, condition

from real_api import Api
from real_control_plane import ControlPlane
from real_seed import eventually, operator_connection, running_operator, seed_control_plane, seed_tenant
from tenant_support import load_example
from tenantctl.render import render_tenant
from tenantctl.spec import parse_tenant_documents
from upstream_support import all_running, kamaji_reports

pytestmark = [pytest.mark.timeout(300)]

NS = "capmox-clones"
CAPI = "cluster.x-k8s.io/v1beta1"
CAPMOX = "infrastructure.cluster.x-k8s.io/v1alpha1"
TC = ("tenantctl.io/v1alpha1", "TenantCluster")
KCP = ("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane")
ACTED_ON = dataclasses.replace(FAST, cluster_deletion_timeout=90.0)
EXAMPLES = {"proxmox.yaml": "acme", "proxmox-spread.yaml": "spread"}
"""Each example under a name of its own, in the one namespace Cluster API's manager acts on."""


@pytest.fixture(scope="module")
def actors(installed: Any, admin: Api, management: ControlPlane,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """CABPT, CAIP and Cluster API with their webhooks; capmox's CRDs are the installed upstream ones."""
    with all_running(("cabpt", "caip", "capi"), admin, management, tmp_path_factory, NS) as logs:
        yield logs


def _docs(example: str) -> list[dict[str, Any]]:
    name = EXAMPLES[example]
    docs = copy.deepcopy(load_example(example))
    for doc in docs:
        doc["metadata"]["namespace"] = NS
        if doc["kind"] == "TenantCluster":
            doc["metadata"]["name"] = name
            doc["spec"]["proxmox"]["credentialsSecretName"] = f"capmox-{name}"
        else:
            doc["metadata"]["name"] = f"{name}-{doc['metadata']['name']}"
            doc["spec"]["cluster"] = name
    return docs


def _deployments(admin: Api, name: str) -> list[dict[str, Any]]:
    return admin.list(CAPI, "MachineDeployment", NS, f"cluster.x-k8s.io/cluster-name={name}")


def _machines(admin: Api, md: str) -> list[dict[str, Any]]:
    return admin.list(CAPI, "Machine", NS, f"cluster.x-k8s.io/deployment-name={md}")


def _refusals(admin: Api, md: str) -> list[str]:
    """What Cluster API's MachineSets of `md` say when they cannot create a Machine."""
    said = []
    for ms in admin.list(CAPI, "MachineSet", NS, f"cluster.x-k8s.io/deployment-name={md}"):
        created = condition(ms, "MachinesCreated")
        if created.get("status") == "False":
            said.append(str(created.get("message")))
    return said


def _admitted(admin: Api, md: str) -> bool:
    wanted = (admin.get(CAPI, "MachineDeployment", NS, md) or {}).get("spec", {}).get("replicas", 0)
    machines = _machines(admin, md)
    return len(machines) == wanted and all(
        admin.get(CAPMOX, "ProxmoxMachine", NS, m["spec"]["infrastructureRef"]["name"]) is not None for m in machines)


@pytest.mark.parametrize("example", list(EXAMPLES))
async def test_cluster_api_clones_a_proxmox_machine_for_every_worker(
    actors: dict[str, Path], admin: Api, management: ControlPlane, tenant_plane: ControlPlane, example: str,
) -> None:
    docs = _docs(example)
    name = EXAMPLES[example]
    seed_tenant(admin, docs)
    seed_control_plane(admin, docs, tenant_plane)
    async with running_operator(operator_connection(management), ACTED_ON):
        rendered = render_tenant(parse_tenant_documents(docs))
        expected = sorted(o["metadata"]["name"] for o in rendered if o["kind"] == "MachineDeployment")
        await eventually(lambda: admin.get(*KCP, NS, name) is not None
                         and sorted(md["metadata"]["name"] for md in _deployments(admin, name)) == expected, 90,
                         what="the operator applied the tenant")
        kcp = admin.get(*KCP, NS, name)
        assert kcp is not None
        kamaji_reports(admin, NS, name, kcp["spec"]["version"])
        deployments = _deployments(admin, name)
        wanted = {md["metadata"]["name"]: md["spec"].get("replicas", 0) for md in deployments}
        assert sum(wanted.values()) >= 2, wanted
        for md in sorted(wanted):
            # A MachineSet may say MachinesCreated False for a moment (its preflight checks read the control
            # plane's status as it lands); a refused clone says so until the end, and is what fails here.
            try:
                await eventually(lambda md=md: _admitted(admin, md), 90, what=f"Cluster API's Machines of {md}")
            except AssertionError as exc:
                raise AssertionError(f"{exc}; its MachineSets say {_refusals(admin, md)} ({actors['capi']})") from exc
        for md in deployments:
            source_ref = md["spec"]["template"]["spec"]["infrastructureRef"]
            source = admin.get(CAPMOX, "ProxmoxMachineTemplate", NS, source_ref["name"])
            assert source is not None
            for machine in _machines(admin, md["metadata"]["name"]):
                clone = admin.get(CAPMOX, "ProxmoxMachine", NS, machine["spec"]["infrastructureRef"]["name"])
                assert clone is not None
                # The clone is tenantctl's template, every field as written (plus the CRD's defaults).
                assert clone["spec"] == source["spec"]["template"]["spec"] | clone["spec"]
                selector = clone["spec"].get("templateSelector")
                assert ("sourceNode" in clone["spec"]) == (selector is None), clone["spec"]
                config = machine["spec"]["bootstrap"]["configRef"]
                assert admin.get(config["apiVersion"], config["kind"], NS, config["name"]) is not None

        assert admin.delete(*TC, NS, name)
        await eventually(lambda: admin.get(*TC, NS, name) is None, 120, what="the TenantCluster gone")
    for kind in ("MachineDeployment", "MachineSet", "Machine"):
        assert admin.list(CAPI, kind, NS, f"cluster.x-k8s.io/cluster-name={name}") == [], kind
    assert [m for m in admin.list(CAPMOX, "ProxmoxMachine", NS)
            if (m["metadata"].get("labels") or {}).get("cluster.x-k8s.io/cluster-name") == name] == []

"""The upstream providers' own webhooks judge tenantctl's renders on the real API server (issue 37).

Each manager `make upstream` built (Cluster API core, CABPT, the in-cluster IPAM provider) runs in turn
with its CRDs and webhook configurations from its own module version (tests/upstream_support.py). Each
object of the examples' renders is then applied for real
(not dry-run), so CAPI's defaulting webhooks run: the object as stored must hold every field tenantctl
applied, unchanged, and what the webhooks add is listed here and judged.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml

from compat.corpus import CORPUS, renders
from real_api import Api, APIRefusal
from real_control_plane import ControlPlane
from real_seed import operator_connection
from tenant_support import load_example
from tenantctl.operator.kube.client import KubeClient
from tenantctl.operator.phases.apply import apply_inventory
from tenantctl.problems import InvalidInput
from tenantctl.render import render_cluster
from tenantctl.spec import parse_observed, parse_tenant_documents
from upstream_support import COMPONENTS, Component, added_and_changed, capmox_pools, running

pytestmark = [pytest.mark.timeout(300)]

NS = "capi-judged"


# What CAPI's defaulting webhooks add to tenantctl's objects, and the verdict on each: a field another
# manager sets is one our apply would fight over only if we rendered it too; these we leave to CAPI.
UPSTREAM_DEFAULTS: dict[str, str] = {
    "MachineDeployment spec.minReadySeconds": "0: a machine is available once its node is Ready, as tenantctl "
                                              "wants; rendering CAPI's own default adds nothing",
    "MachineDeployment spec.progressDeadlineSeconds": "600, a field CAPI v1beta1 keeps but no longer reads",
    "MachineDeployment spec.revisionHistoryLimit": "1 old MachineSet kept: CAPI's choice, none of tenantctl's",
    "MachineDeployment spec.replicas": "an autoscaled pool's size: CAPI sets the autoscaler's min-size on "
                                       "create and the cluster-autoscaler owns it after; tenantctl must never "
                                       "render it, or each apply would undo the autoscaler",
    "Cluster spec.controlPlaneEndpoint": "empty (host '', port 0) until Kamaji's provider writes the endpoint; "
                                         "tenantctl must not render it, or it would fight the provider",
}


@pytest.fixture(scope="module", params=sorted(n for n, c in COMPONENTS.items() if not c.source))
def upstream(request: pytest.FixtureRequest, installed: Any, admin: Api, management: ControlPlane,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Component]:
    """One upstream manager running with its webhooks registered, its CRDs from its own module."""
    component = COMPONENTS[request.param]
    with running(component, admin, management, tmp_path_factory.mktemp(component.name), NS):
        admin.namespace(NS)
        yield component


def _namespace(example: str) -> str:
    """Each example in a namespace of its own: proxmox and proxmox-spread name the same objects."""
    return NS if example == "proxmox.yaml" else f"{NS}-{example.removesuffix('.yaml')}"


def _rendered(example: str, kinds: tuple[str, ...], namespace: str | None = None) -> list[dict[str, Any]]:
    ns = namespace or _namespace(example)
    docs = copy.deepcopy(load_example(example))
    for d in docs:
        d["metadata"]["namespace"] = ns
    observed = copy.deepcopy(load_example(f"observed-{example.replace('-spread', '')}"))
    for d in observed:
        d["metadata"]["namespace"] = ns
    tenant = parse_tenant_documents(docs)
    cluster = tenant.clusters[0]
    state = parse_observed(observed)[(ns, cluster.metadata.name)]
    rendered = [o for o in render_cluster(cluster, tenant.pools_of(cluster), state) if o["kind"] in kinds]
    if "InClusterIPPool" in kinds and cluster.spec.proxmox is not None:
        # The pools capmox v0.7.7 makes from the ProxmoxCluster's ipv4Config/ipv6Config, its fields copied
        # unchanged (what every worker's first NIC draws from): CAIP's webhook judges them as it does ours.
        rendered += capmox_pools(cluster, ns)
    return rendered


NOTHING_TO_JUDGE = {
    ("caip", "kubevirt.yaml"): "a KubeVirt tenant's workers take their addresses from the pod network: no IP pool is "
                               "rendered, and capmox makes none",
}
"""(component, example) pairs where the example has no object of the component's kinds, and why."""


def _judged(upstream: Component, admin: Api, rendered: list[dict[str, Any]]) -> None:
    """Apply each object for real; nothing tenantctl wrote may change, and every default must be judged."""
    defaults: set[str] = set()
    for obj in rendered:
        admin.namespace(obj["metadata"]["namespace"])
        stored = admin.apply(obj, manager="tenantctl")
        added: list[str] = []
        changed: list[str] = []
        added_and_changed(obj["spec"], stored["spec"], "spec", added, changed)
        assert changed == [], f"{obj['kind']}/{obj['metadata']['name']}: {upstream.name} changed what tenantctl " \
                              f"wrote: {changed}"
        defaults |= {f"{obj['kind']} {path}" for path in added}
    unjudged = {d for d in defaults if not any(d == k or d.startswith(k + ".") for k in UPSTREAM_DEFAULTS)}
    assert unjudged == set(), f"{upstream.name}'s webhooks default fields nobody has judged: {sorted(unjudged)}"


@pytest.mark.parametrize("example", ["proxmox.yaml", "proxmox-spread.yaml", "kubevirt.yaml"])
def test_upstream_webhooks_admit_every_render_and_change_nothing_tenantctl_wrote(
    upstream: Component, admin: Api, example: str,
) -> None:
    rendered = _rendered(example, upstream.kinds)
    if (upstream.name, example) in NOTHING_TO_JUDGE:
        assert rendered == [], "the example renders what the table says it does not"
        return
    assert rendered, f"{upstream.name} would judge nothing of {example}"
    _judged(upstream, admin, rendered)


def _corpus_renders(kinds: tuple[str, ...]) -> list[dict[str, Any]]:
    """Today's render of every spec the compatibility corpus holds (each spec an earlier release accepted,
    alone and with its observed state), each pair in a namespace of its own."""
    out = []
    pairs = sorted({(r.spec, r.observed) for r in renders()}, key=str)
    for i, (spec, observed) in enumerate(pairs):
        ns = f"{NS}-corpus-{i}"
        docs = [d for d in yaml.safe_load_all((CORPUS / "specs" / f"{spec}.yaml").read_text()) if d]
        seen = [d for d in yaml.safe_load_all((CORPUS / "specs" / f"{observed}.yaml").read_text()) if d] \
            if observed else []
        for d in docs + seen:
            d["metadata"]["namespace"] = ns
        try:
            tenant = parse_tenant_documents(docs)
            states = parse_observed(seen) if seen else {}
        except InvalidInput:
            continue  # refused today, with a CHANGES.md entry (tests/compat proves it)
        for cluster in tenant.clusters:
            state = states.get((ns, cluster.metadata.name))
            out += [o for o in render_cluster(cluster, tenant.pools_of(cluster), state) if o["kind"] in kinds]
    return out


def test_upstream_webhooks_admit_todays_render_of_every_spec_an_earlier_release_accepted(
    upstream: Component, admin: Api,
) -> None:
    rendered = _corpus_renders(upstream.kinds)
    assert rendered, upstream.kinds
    _judged(upstream, admin, rendered)


@dataclass
class _Told:
    """The operator's recorder, kept: what it told, as (reason, message)."""

    told: list[tuple[str, str]] = field(default_factory=list)

    def info(self, reason: str, message: str) -> None:
        self.told.append((reason, message))

    def warn(self, reason: str, message: str) -> None:
        self.told.append((reason, message))


@pytest.mark.parametrize("upstream", ["cabpt"], indirect=True)
async def test_the_operator_replaces_a_talos_config_template_cabpts_webhook_holds_immutable(
    upstream: Component, admin: Api, management: ControlPlane,
) -> None:
    """CABPT v0.6.12's webhook refuses any change of a TalosConfigTemplate's spec, so a plain apply of a
    patch upgrade's template is refused; the operator, as its ServiceAccount with the tenant's Role that
    `install -f` rendered, deletes it and creates it again, and says so."""
    ns = "tenant-acme"
    (template,) = _rendered("proxmox.yaml", ("TalosConfigTemplate",), namespace=ns)
    name = template["metadata"]["name"]
    changed = copy.deepcopy(template)
    changed["spec"]["template"]["spec"]["talosVersion"] = "v1.13.7"
    admin.apply(template, manager="tenantctl")
    try:
        with pytest.raises(APIRefusal) as refused:
            admin.apply(changed, manager="tenantctl")
        assert refused.value.status == 400 and "TalosConfigTemplate.Spec is immutable" in str(refused.value)

        told = _Told()
        async with KubeClient(operator_connection(management)) as api:
            result = await apply_inventory(api, [changed], cluster="acme", namespace=ns, previous_kinds=(),
                                           keep=(), recorder=told, prune=False)
        assert result.replaced == [f"TalosConfigTemplate/{name}"] and result.applied == []
        stored = admin.get(changed["apiVersion"], "TalosConfigTemplate", ns, name)
        assert stored is not None and stored["spec"]["template"]["spec"]["talosVersion"] == "v1.13.7"
        assert [reason for reason, _ in told.told] == ["TemplateReplaced", "TemplateReplaced"], told.told
    finally:
        admin.delete(template["apiVersion"], "TalosConfigTemplate", ns, name)

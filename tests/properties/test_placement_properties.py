"""Random Proxmox placements, tags and NICs: refused with a field of the input, or rendered valid against
the capmox, CAIP and CAPI CRDs with the replica split the HA arithmetic promises."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tenant_support import clone, doc, load_example
from tenantctl.problems import InvalidInput
from tenantctl.render import render_tenant
from tenantctl.spec import parse_observed, parse_tenant_documents

NODE = st.from_regex(r"\A[A-Za-z0-9]([A-Za-z0-9-]{0,6}[A-Za-z0-9])?\Z")
# Mostly valid values, with the refused ones often enough that both branches run (about half each).
VALID_TAG = st.from_regex(r"\A[a-z0-9_][a-z0-9_+.-]{0,8}\Z")
BAD_TAG = st.sampled_from(["Prod", "a b", "-x", ""])
MTU = st.one_of(st.none(), st.none(), st.sampled_from([1, 1280, 1500, 9000, 65520, 1, 1500, 576, 0, 70000]))
RARELY = st.sampled_from([False] * 7 + [True])


@st.composite
def family(draw: st.DrawFn, version: int, third: int) -> dict[str, Any]:
    if version == 4:
        return {"addresses": [f"10.{third}.0.10-10.{third}.0.{draw(st.integers(10, 250))}"], "prefix": 24}
    return {"addresses": [f"fd00:{third:x}::10-fd00:{third:x}::{draw(st.integers(16, 4000)):x}"], "prefix": 64}


@st.composite
def devices(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(0, 3))):
        name = draw(st.one_of(*[st.just(f"net{i + 1}")] * 6, st.integers(0, 33).map(lambda n: f"net{n}")))
        dev: dict[str, Any] = {"name": name, "bridge": f"vmbr{i + 1}",
                               "model": draw(st.sampled_from(["virtio", "e1000"]))}
        if draw(st.booleans()):
            dev["vlan"] = draw(st.integers(1, 4094))
        if (mtu := draw(MTU)) is not None:
            dev["mtu"] = mtu
        kinds = draw(st.sampled_from([(4,), (6,), (4, 6), (4,), (4, 6), ()]))
        for version in kinds:
            dev[f"ipv{version}"] = draw(family(version, 20 + i))
        out.append(dev)
    return out


@st.composite
def tenants(draw: st.DrawFn) -> list[dict[str, Any]]:
    docs = clone(load_example("proxmox.yaml"))
    nodes = draw(st.lists(NODE, min_size=1, max_size=5, unique=True))
    doc(docs, "TenantCluster")["spec"]["proxmox"]["allowedNodes"] = nodes
    spec = doc(docs, "NodePool")["spec"]
    px = spec["proxmox"]
    if draw(st.booleans()):
        spec.pop("replicas")
        low = draw(st.integers(0, 6))
        spec |= {"minReplicas": low, "maxReplicas": low + draw(st.integers(0, 8)) + 5 * (not draw(RARELY))}
    else:
        spec["replicas"] = draw(st.integers(0, 12))
    spec["healthCheck"] = {"maxUnhealthy": draw(st.sampled_from(["50%", "100%", 1, 2]))}
    if draw(st.booleans()):
        own = draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=len(nodes), unique=True))
        px["allowedNodes"] = own + (["elsewhere"] if draw(RARELY) else [])
    px["placement"] = draw(st.sampled_from(["any", "spread", "spread"]))
    px["perNodeTemplates"] = (px["placement"] == "spread" and draw(st.booleans())) or draw(RARELY)
    px["ownerTags"] = draw(st.booleans())
    px["tags"] = draw(st.lists(VALID_TAG, max_size=4, unique=True)) + ([draw(BAD_TAG)] if draw(RARELY) else [])
    if draw(st.booleans()):
        start = draw(st.integers(100, 5000)) - (10 if draw(RARELY) else 0)
        px["vmIDRange"] = {"start": start, "end": start + draw(st.integers(-2, 60))}
    px["network"] |= {"additionalDevices": draw(devices())}
    if (mtu := draw(MTU)) is not None:
        px["network"]["mtu"] = mtu
    if draw(st.booleans()):
        doc(docs, "TenantCluster")["spec"]["proxmox"]["ipv6Config"] = {
            "addresses": ["2001:db8:100::10-2001:db8:100::ff"], "prefix": 64, "gateway": "2001:db8:100::1",
        }
    return docs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=tenants())
def test_random_placements_are_refused_by_field_or_render_valid(
    docs: list[dict[str, Any]], assert_valid: Callable[[list[dict[str, Any]]], None]
) -> None:
    try:
        tenant = parse_tenant_documents(docs)
    except InvalidInput as exc:
        assert exc.errors
        for problem in exc.problems:
            assert problem.path.startswith(("TenantCluster/", "NodePool/")), problem
            assert problem.message
        return
    objects = render_tenant(tenant, parse_observed(load_example("observed-proxmox.yaml")))
    assert_valid(objects)
    spec = doc(docs, "NodePool")["spec"]
    mds = [o for o in objects if o["kind"] == "MachineDeployment"]
    templates = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ProxmoxMachineTemplate"}
    nodes = spec["proxmox"].get("allowedNodes") or doc(docs, "TenantCluster")["spec"]["proxmox"]["allowedNodes"]
    spread = spec["proxmox"]["placement"] == "spread"
    assert len(mds) == (len(set(nodes)) if spread else 1)
    assert len([o for o in objects if o["kind"] == "MachineHealthCheck"]) == len(mds)
    if "replicas" in spec:
        shares = [md["spec"]["replicas"] for md in mds]
        assert sum(shares) == spec["replicas"]
        assert max(shares) - min(shares) <= 1
    for md in mds:
        allowed = templates[md["spec"]["template"]["spec"]["infrastructureRef"]["name"]]["spec"]["template"][
            "spec"].get("allowedNodes")
        if spread:
            assert allowed is not None and len(allowed) == 1
    pools = [o for o in objects if o["kind"] == "InClusterIPPool"]
    wanted = sum(("ipv4" in d) + ("ipv6" in d) for d in spec["proxmox"]["network"]["additionalDevices"])
    assert len(pools) == wanted

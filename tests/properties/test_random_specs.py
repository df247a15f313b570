"""Random specs either render objects the upstream schemas accept, or are refused with field paths.

Never an exception, never a render that capmox's own CEL rules (or any other CRD) would reject.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tenant_support import load_example
from tenantctl.problems import InvalidInput
from tenantctl.render import render_tenant
from tenantctl.spec import parse_observed, parse_tenant_documents

PROXMOX = load_example("proxmox.yaml")
KUBEVIRT = load_example("kubevirt.yaml")
OBSERVED = {"proxmox": load_example("observed-proxmox.yaml"), "kubevirt": load_example("observed-kubevirt.yaml")}

quantities = st.one_of(
    st.sampled_from(["1500m", "1", "2", "4", "100m", "8G", "8Gi", "512Mi", "1e9", "0", "-1", "2x", "", "1.5"]),
    st.integers(min_value=-2, max_value=64),
    st.none(),
)
ip_like = st.one_of(
    st.sampled_from(["192.0.2.53", "2001:db8::53", "$(reboot)", "dns.example", "`id`", "10.0.0.1 ", "::1", "1.2.3"]),
    st.ip_addresses().map(str),
    st.text(max_size=8),
)
address_entries = st.one_of(
    st.sampled_from(
        ["192.0.2.100-192.0.2.150", "192.0.2.0/28", "192.0.2.7", "198.51.100.0/24", "a-b", "10.0.0.9-10.0.0.1"]
    ),
    st.text(max_size=6),
)
names = st.from_regex(r"[a-z][a-z0-9-]{0,30}[a-z0-9]", fullmatch=True)
tags = st.lists(st.one_of(st.sampled_from(["talos", "v1.13.6", "base", "Bad Tag"]), st.text(max_size=5)), max_size=4)


@st.composite
def tenants(draw: st.DrawFn) -> tuple[list[dict[str, Any]], str]:
    base = draw(st.sampled_from(["proxmox", "kubevirt"]))
    docs = copy.deepcopy(PROXMOX if base == "proxmox" else KUBEVIRT)
    tc, pools = docs[0], docs[1:]
    spec = tc["spec"]
    spec["version"] = draw(st.sampled_from(["v1.31", "v1.33", "v1.35.2", "v1.36", "v1.30", "v1.99", "1.33", "latest"]))
    if draw(st.booleans()):
        spec["substrate"] = draw(st.sampled_from(["kubevirt", "proxmox", "vmware"]))
    spec.setdefault("talos", {})["version"] = draw(st.sampled_from(["v1.13.6", "v1.12.3", "v1.11.0", "v1.9.0"]))
    if draw(st.booleans()):
        spec["controlPlane"] = {"replicas": draw(st.integers(min_value=-1, max_value=5))}
    if draw(st.integers(0, 9)) == 0:
        spec["osImage"] = "https://example.org/talos.raw.xz"
    if "proxmox" in spec:
        px = spec["proxmox"]
        px["dnsServers"] = draw(st.lists(ip_like, max_size=3))
        px["ipv4Config"] = {
            "addresses": draw(st.lists(address_entries, min_size=0, max_size=3)),
            "prefix": draw(st.integers(min_value=-1, max_value=33)),
            "gateway": draw(st.sampled_from(["192.0.2.1", "198.51.100.1", "192.0.2.300", "gw"])),
        }
        if draw(st.booleans()):
            px["csi"] = {"enabled": draw(st.booleans())}
        if draw(st.integers(0, 9)) == 0:
            px["dnsServer"] = ["192.0.2.53"]
    for pool in pools:
        p = pool["spec"]
        choice = draw(st.integers(0, 3))
        p.pop("replicas", None), p.pop("minReplicas", None), p.pop("maxReplicas", None)
        if choice == 1:
            p["replicas"] = draw(st.integers(min_value=-1, max_value=60))
        elif choice >= 2:
            p["minReplicas"] = draw(st.integers(min_value=0, max_value=8))
            p["maxReplicas"] = draw(st.integers(min_value=0, max_value=8))
        sizes = {"cpu": draw(quantities), "memory": draw(quantities)}
        p["resources"] = {k: v for k, v in sizes.items() if v is not None}
        if "proxmox" in p:
            ppx = p["proxmox"]
            ppx["full"] = draw(st.booleans())
            for field, values in (("storage", ["local-zfs", "ceph"]), ("format", ["raw", "qcow2", "iso"])):
                if draw(st.booleans()):
                    ppx[field] = draw(st.sampled_from(values))
            ppx.pop("templateTags", None)
            which = draw(st.integers(0, 3))
            if which in (0, 2):
                ppx["templateTags"] = draw(tags)
            if which in (1, 2):
                ppx["templateID"] = draw(st.integers(min_value=0, max_value=10_000))
            ppx["diskSizeGB"] = draw(st.integers(min_value=1, max_value=200))
            if draw(st.booleans()):
                ppx["network"] = {"bridge": "vmbr1", "vlan": draw(st.integers(min_value=0, max_value=5000))}
        if draw(st.integers(0, 5)) == 0:
            pool["metadata"]["name"] = draw(names)
    return docs, base


def _refs(docs: Iterable[Mapping[str, Any]]) -> set[str]:
    return {f"{d['kind']}/{d['metadata']['name']}" for d in docs} | {"input"}


def _refused_with_paths(exc: InvalidInput, docs: list[dict[str, Any]]) -> None:
    assert exc.errors
    refs = _refs(docs)
    for problem in exc.problems:
        assert problem.message
        assert any(problem.path.startswith(r + ".") or problem.path == r for r in refs), problem


def check(docs: list[dict[str, Any]], base: str, validate: Callable[[list[dict[str, Any]]], None]) -> None:
    """Parsed and rendered valid, or refused naming an input document's field (a version the default
    Kamaji cannot serve is refused by the render, not the parse: it depends on the platform)."""
    try:
        tenant = parse_tenant_documents(docs)
        objects = render_tenant(tenant)
    except InvalidInput as exc:
        _refused_with_paths(exc, docs)
        return
    validate(objects)
    cluster = tenant.clusters[0]
    if cluster.spec.substrate == base:
        validate(render_tenant(tenant, parse_observed(OBSERVED[base])))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=tenants())
def test_random_specs_render_valid_or_are_refused(
    case: tuple[list[dict[str, Any]], str], assert_valid: Callable[[list[dict[str, Any]]], None]
) -> None:
    check(*case, assert_valid)

"""`spec.expose` on the KamajiControlPlane: each type's fields, the defaults, the public name's SAN."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest

from tenant_support import clone, doc, load_example
from tenantctl.render import render_tenant
from tenantctl.spec import parse_tenant_documents

Validator = Callable[[Iterable[Mapping[str, Any]]], None]
SANS = {"kubevirt.yaml": ["demo.tenant-demo.svc", "demo.tenant-demo.svc.cluster.local"],
        "proxmox.yaml": ["acme.tenant-acme.svc", "acme.tenant-acme.svc.cluster.local"]}


def network(example: str, expose: dict[str, Any] | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    docs = clone(load_example(example))
    if expose is not None:
        doc(docs, "TenantCluster")["spec"]["expose"] = expose
    objects = render_tenant(parse_tenant_documents(docs))
    kcp = next(o for o in objects if o["kind"] == "KamajiControlPlane")
    return kcp["spec"]["network"], objects


@pytest.mark.parametrize(
    ("example", "expose", "expected"),
    [
        ("kubevirt.yaml", None, {"serviceType": "ClusterIP"}),
        ("kubevirt.yaml", {}, {"serviceType": "ClusterIP"}),
        ("proxmox.yaml", None, {"serviceType": "LoadBalancer"}),
        ("proxmox.yaml", {}, {"serviceType": "LoadBalancer"}),
        (
            "kubevirt.yaml",
            {"type": "Ingress", "hostname": "demo.example.com", "ingressClassName": "tenants"},
            {
                "serviceType": "ClusterIP",
                "ingress": {
                    "hostname": "demo.example.com",
                    "extraAnnotations": {"nginx.ingress.kubernetes.io/ssl-passthrough": "true"},
                    "className": "tenants",
                },
                "extraSANs": ["demo.example.com"],
            },
        ),
        (
            "proxmox.yaml",
            {"type": "Ingress", "hostname": "acme.example.com"},
            {
                "serviceType": "LoadBalancer",
                "ingress": {
                    "hostname": "acme.example.com",
                    "extraAnnotations": {"nginx.ingress.kubernetes.io/ssl-passthrough": "true"},
                },
                "extraSANs": ["acme.example.com"],
            },
        ),
        (
            "kubevirt.yaml",
            {"type": "LoadBalancer", "hostname": "demo.example.com", "address": "192.0.2.10",
             "loadBalancerClass": "metallb", "loadBalancerSourceRanges": ["203.0.113.0/24"]},
            {
                "serviceType": "LoadBalancer",
                "serviceAddress": "192.0.2.10",
                "loadBalancerConfig": {"loadBalancerClass": "metallb", "loadBalancerSourceRanges": ["203.0.113.0/24"]},
                "extraSANs": ["demo.example.com"],
            },
        ),
        ("kubevirt.yaml", {"type": "LoadBalancer"}, {"serviceType": "LoadBalancer"}),
    ],
    ids=["kubevirt default", "kubevirt empty", "proxmox default", "proxmox empty", "kubevirt ingress",
         "proxmox ingress", "load balancer with everything", "bare load balancer"],
)
def test_expose_maps_onto_the_control_plane_network(
    example: str, expose: dict[str, Any] | None, expected: dict[str, Any], assert_valid: Validator
) -> None:
    got, objects = network(example, expose)
    wanted = {k: v for k, v in expected.items() if k != "extraSANs"}
    wanted["certSANs"] = SANS[example] + expected.get("extraSANs", [])
    assert got == wanted
    assert_valid(objects)

"""trustd is reachable where workers reach the apiserver: same host, a port Kamaji publishes, a matching name."""

from __future__ import annotations

import copy
import ipaddress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tenant_support import load_example
from tenantctl.render import render_tenant
from tenantctl.render.talos_api import ADDITIONAL_PORTS_PATH, TRUSTD_PORT, trustd_service_port
from tenantctl.spec import parse_observed, parse_tenant_documents

CASES = {
    "proxmox (LoadBalancer address)": ("proxmox.yaml", "observed-proxmox.yaml", None),
    "kubevirt (ClusterIP behind the Service name)": ("kubevirt.yaml", "observed-kubevirt.yaml", None),
    "proxmox (LoadBalancer hostname)": ("proxmox.yaml", "observed-proxmox.yaml", "acme.lb.example"),
}


def render(example: str, observed: str, endpoint: str | None) -> list[dict[str, Any]]:
    obs = load_example(observed)
    if endpoint is not None:
        obs = copy.deepcopy(obs)
        obs[0]["endpoint"] = endpoint
    return render_tenant(parse_tenant_documents(load_example(example)), parse_observed(obs))


def one(objects: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name))


def trustd_addresses(config: dict[str, Any]) -> set[str]:
    """What a worker dials for trustd: the endpoint's host and what /etc/hosts resolves it to."""
    host = urlsplit(config["cluster"]["controlPlane"]["endpoint"]).hostname
    assert host is not None
    resolved = {e["ip"] for e in config["machine"]["network"].get("extraHostEntries", []) if host in e["aliases"]}
    return {host, *resolved}


@pytest.mark.parametrize(("example", "observed", "endpoint"), CASES.values(), ids=CASES.keys())
def test_workers_reach_trustd_where_they_reach_the_apiserver(example: str, observed: str, endpoint: str | None) -> None:
    objects = render(example, observed, endpoint)
    cluster = parse_tenant_documents(load_example(example)).clusters[0]
    address = endpoint or load_example(observed)[0]["endpoint"]
    tct = next(o for o in objects if o["kind"] == "TalosConfigTemplate")
    config = yaml.safe_load(tct["spec"]["template"]["spec"]["data"])
    dialed = trustd_addresses(config)
    assert address in dialed, "the endpoint host is (or resolves to) the apiserver Service's address"
    cert = one(objects, "Certificate", f"{cluster.metadata.name}-talos-tls-cert")["spec"]
    names = set(cert.get("dnsNames", [])) | set(cert.get("ipAddresses", []))
    assert dialed <= names, "every address a worker dials is a name of the trustd certificate"
    for ip in cert.get("ipAddresses", []):
        ipaddress.ip_address(ip)
    kcp = one(objects, "KamajiControlPlane")
    assert kcp["metadata"]["name"] == trustd_service_port(cluster)["metadata"]["name"]
    sidecar = next(c for c in kcp["spec"]["deployment"]["extraContainers"] if c["name"] == "talos-csr-signer")
    served = {p["containerPort"] for p in sidecar["ports"]}
    published = trustd_service_port(cluster)["spec"]["controlPlane"]["service"]["additionalPorts"]
    assert [(p["port"], p["targetPort"]) for p in published] == [(TRUSTD_PORT, TRUSTD_PORT)]
    # The name is the port's identity on the live Service: a rename is a second port beside the first.
    assert published == [{"name": "talos-trustd", "port": 50001, "targetPort": 50001, "protocol": "TCP"}]
    assert TRUSTD_PORT in served, "the Service port targets the port the sidecar serves"


def test_without_an_observed_address_the_certificate_names_only_the_service() -> None:
    objects = render_tenant(parse_tenant_documents(load_example("proxmox.yaml")))
    cert = one(objects, "Certificate", "acme-talos-tls-cert")["spec"]
    assert "ipAddresses" not in cert
    assert cert["dnsNames"] == ["acme.tenant-acme.svc", "acme.tenant-acme.svc.cluster.local"]


def test_the_trustd_port_is_applied_to_the_kind_and_field_kamaji_serves(shared: Path) -> None:
    """Server-side apply resolves the object by apiVersion and kind: a mismatch publishes nothing."""
    crd_file = next((shared / "crds").glob("kamaji-*/kamaji.clastix.io_tenantcontrolplanes.yaml"))
    crd = yaml.safe_load(crd_file.read_text())["spec"]
    served = {f"{crd['group']}/{v['name']}": v for v in crd["versions"] if v["served"]}
    applied = trustd_service_port(parse_tenant_documents(load_example("proxmox.yaml")).clusters[0])
    assert applied["kind"] == crd["names"]["kind"]
    assert applied["apiVersion"] in served
    schema, ports = served[applied["apiVersion"]]["schema"]["openAPIV3Schema"], applied
    for key in ADDITIONAL_PORTS_PATH:
        schema, ports = schema["properties"][key], ports[key]
    assert schema["type"] == "array" and [p["port"] for p in ports] == [TRUSTD_PORT]

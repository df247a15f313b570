"""`TenantCluster.spec.expose`: how the tenant's apiserver is reached from outside the management cluster."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import Field

from tenantctl.problems import Problems
from tenantctl.spec import syntax
from tenantctl.spec.addresses import is_literal_ip
from tenantctl.spec.base import SpecModel
from tenantctl.spec.names import is_dns_subdomain

__all__ = ["EXPOSE_FIELDS", "ExposeSpec", "ExposeType", "check_expose", "default_expose_type"]

ExposeType = Literal["ClusterIP", "LoadBalancer", "Ingress"]
# The Service type each substrate needs when nothing is asked: a Proxmox worker cannot reach a ClusterIP.
_DEFAULT_TYPE: dict[str, ExposeType] = {"kubevirt": "ClusterIP", "proxmox": "LoadBalancer"}
# Which optional fields each type honours, as (wire name, attribute); any other one set is refused.
EXPOSE_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "ClusterIP": (),
    "LoadBalancer": (
        ("hostname", "hostname"),
        ("loadBalancerClass", "load_balancer_class"),
        ("loadBalancerSourceRanges", "load_balancer_source_ranges"),
        ("address", "address"),
    ),
    "Ingress": (("hostname", "hostname"), ("ingressClassName", "ingress_class_name")),
}
_ALL_FIELDS = (
    ("hostname", "hostname"),
    ("ingressClassName", "ingress_class_name"),
    ("loadBalancerClass", "load_balancer_class"),
    ("loadBalancerSourceRanges", "load_balancer_source_ranges"),
    ("address", "address"),
)


class ExposeSpec(SpecModel):
    type: ExposeType | None = Field(
        default=None,
        description="ClusterIP, LoadBalancer or Ingress (default: kubevirt ClusterIP, proxmox LoadBalancer).",
    )
    hostname: str | None = Field(
        default=None,
        max_length=253,
        json_schema_extra={"pattern": syntax.DNS_SUBDOMAIN},
        description="DNS name users reach the API at (required for Ingress); added to the certificate."
    )
    ingress_class_name: str | None = Field(
        default=None,
        max_length=253,
        json_schema_extra={"minLength": 1},
        description="Ingress only: the IngressClass (its controller must pass TLS through)."
    )
    load_balancer_class: str | None = Field(
        default=None,
        max_length=253,
        json_schema_extra={"minLength": 1},
        description="LoadBalancer only: the Service's class.",
    )
    load_balancer_source_ranges: list[Annotated[str, Field(max_length=49)]] = Field(
        default_factory=list, max_length=64, description="LoadBalancer only: CIDRs allowed to reach the API."
    )
    address: str | None = Field(
        default=None, max_length=45, description="LoadBalancer only: a pre-assigned IPv4 address."
    )


def default_expose_type(substrate: str) -> ExposeType:
    return _DEFAULT_TYPE.get(substrate, "ClusterIP")


def check_expose(at: str, expose: ExposeSpec | None, substrate: str, problems: Problems) -> None:
    if expose is None:
        return
    base = f"{at}.spec.expose"
    kind = expose.type or default_expose_type(substrate)
    if kind == "ClusterIP" and substrate == "proxmox":
        problems.error(
            f"{base}.type",
            "ClusterIP is refused on substrate proxmox: the workers live on the hypervisor's network and "
            "cannot reach a ClusterIP of the management cluster (use LoadBalancer or Ingress)",
        )
    honoured = {wire for wire, _ in EXPOSE_FIELDS[kind]}
    for wire, attr in _ALL_FIELDS:
        value = getattr(expose, attr)
        if value not in (None, []) and wire not in honoured:
            problems.error(f"{base}.{wire}", f"{value!r} does not apply to type {kind}")
    if kind == "Ingress" and not expose.hostname:
        problems.error(f"{base}.hostname", "required for type Ingress: the Ingress routes on this host name")
    if expose.hostname is not None and (is_literal_ip(expose.hostname) or not is_dns_subdomain(expose.hostname)):
        problems.error(
            f"{base}.hostname", f"{expose.hostname!r} is not a DNS name (no port, no scheme; an IP goes in address)"
        )
    classes = (("ingressClassName", expose.ingress_class_name), ("loadBalancerClass", expose.load_balancer_class))
    for field, value in classes:
        if value is not None and not value:
            problems.error(f"{base}.{field}", "must not be empty")
    for i, cidr in enumerate(expose.load_balancer_source_ranges):
        try:
            ipaddress.ip_network(cidr, strict=True)
            valid = "/" in cidr and is_literal_ip(cidr.split("/", 1)[0])
        except ValueError:
            valid = False
        if not valid:
            problems.error(
                f"{base}.loadBalancerSourceRanges[{i}]", f"{cidr!r} is not a network CIDR like 203.0.113.0/24"
            )
    if expose.address is not None and not (is_literal_ip(expose.address) and "." in expose.address):
        problems.error(f"{base}.address", f"{expose.address!r} is not an IPv4 address literal like 192.0.2.10")

"""Where a Proxmox tenant's worker subnet meets its other networks: clashes that route traffic astray.

A pod or service CIDR overlapping the subnet the workers sit on makes node traffic go to the CNI
(or kube-proxy) instead of the wire; a LoadBalancer address inside the worker pool is handed to a
worker by IPAM sooner or later, and then two hosts answer for it.
"""

from __future__ import annotations

from tenantctl.problems import Problems
from tenantctl.spec.addresses import AddressEntry, literal_ipv4, network, parse_address_entry
from tenantctl.spec.tenant import TenantCluster

__all__ = ["check_worker_network"]


def check_worker_network(at: str, tc: TenantCluster, problems: Problems) -> None:
    """Only what parses is compared; malformed values are refused by their own checks."""
    px = tc.spec.proxmox
    cfg = px.ipv4_config if px is not None else None
    if cfg is None or not 0 <= cfg.prefix <= 32 or literal_ipv4(cfg.gateway) is None:
        return
    subnet = network(f"{cfg.gateway}/{cfg.prefix}", strict=False)
    for field, value in (("podCIDR", tc.spec.network.pod_cidr), ("serviceCIDR", tc.spec.network.service_cidr)):
        try:
            net = network(value, strict=True)
        except ValueError:
            continue
        if net.overlaps(subnet):
            problems.error(
                f"{at}.spec.network.{field}",
                f"{value} overlaps the worker subnet {subnet} (spec.proxmox.ipv4Config gateway {cfg.gateway}/"
                f"{cfg.prefix}): node traffic to those addresses would be routed into the cluster network",
            )
    _check_expose_address(at, tc, _pool_entries(cfg.addresses), problems)


def _pool_entries(addresses: list[str]) -> list[tuple[int, str, AddressEntry]]:
    entries: list[tuple[int, str, AddressEntry]] = []
    for i, text in enumerate(addresses):
        try:
            entries.append((i, text, parse_address_entry(text)))
        except ValueError:
            continue
    return entries


def _check_expose_address(
    at: str, tc: TenantCluster, pool: list[tuple[int, str, AddressEntry]], problems: Problems
) -> None:
    expose = tc.spec.expose
    address = literal_ipv4(expose.address) if expose is not None and expose.address is not None else None
    if address is None:
        return
    for i, text, entry in pool:
        if int(entry.first) <= int(address) <= int(entry.last):
            problems.error(
                f"{at}.spec.expose.address",
                f"{address} is inside the worker address pool (spec.proxmox.ipv4Config.addresses[{i}] "
                f"{text!r}): IPAM would hand it to a worker too; take an address outside the pool",
            )

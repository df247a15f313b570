"""Object names derived from a tenant's names, and the limits they must stay within."""

from __future__ import annotations

from tenantctl.spec.patterns import DNS_LABEL, DNS_SUBDOMAIN, full_match

__all__ = [
    "DNS_LABEL",
    "LABEL_MAX",
    "MACHINE_SUFFIX_LEN",
    "is_dns_label",
    "is_dns_subdomain",
    "machine_name_length",
]

LABEL_MAX = 63
# CAPI names a MachineSet `<md>-<5 chars>` and its Machines `<ms>-<5 chars>`; the Machine name becomes
# the node's hostname and a label value, so it is the longest name a pool produces.
MACHINE_SUFFIX_LEN = 12


def is_dns_label(name: str) -> bool:
    return len(name) <= LABEL_MAX and full_match(DNS_LABEL, name)


def is_dns_subdomain(name: str) -> bool:
    return len(name) <= 253 and full_match(DNS_SUBDOMAIN, name)


def machine_name_length(cluster: str, pool: str) -> int:
    """Length of the Machine names of pool `pool`: `<cluster>-<pool>-xxxxx-xxxxx`."""
    return len(cluster) + 1 + len(pool) + MACHINE_SUFFIX_LEN

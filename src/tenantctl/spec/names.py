"""Object names derived from a tenant's names, and the limits they must stay within."""

from __future__ import annotations

import re

from tenantctl.spec import syntax

__all__ = [
    "DNS_LABEL",
    "LABEL_MAX",
    "MACHINE_SUFFIX_LEN",
    "is_dns_label",
    "is_dns_subdomain",
    "is_host_name",
    "machine_name_length",
]

LABEL_MAX = 63
# CAPI names a MachineSet `<md>-<5 chars>` and its Machines `<ms>-<5 chars>`; the Machine name becomes
# the node's hostname and a label value, so it is the longest name a pool produces.
MACHINE_SUFFIX_LEN = 12
DNS_LABEL = re.compile(syntax.DNS_LABEL)
_DNS_SUBDOMAIN = re.compile(syntax.DNS_SUBDOMAIN)


def is_dns_label(name: str) -> bool:
    return len(name) <= LABEL_MAX and bool(DNS_LABEL.fullmatch(name))


def is_dns_subdomain(name: str) -> bool:
    return len(name) <= 253 and bool(_DNS_SUBDOMAIN.fullmatch(name))


def is_host_name(name: str) -> bool:
    """A DNS name that can name a host: RFC 1123 §2.1 says a host name never has the dotted-decimal form
    (`192.0.2.1000` is a mistyped address, not a name), so a name of digits and dots only is none."""
    return is_dns_subdomain(name) and not all(label.isdigit() for label in name.split("."))


def machine_name_length(cluster: str, pool: str) -> int:
    """Length of the Machine names of pool `pool`: `<cluster>-<pool>-xxxxx-xxxxx`."""
    return len(cluster) + 1 + len(pool) + MACHINE_SUFFIX_LEN

"""Kubernetes label and taint syntax, and which label domains a pool may not use or CAPI syncs.

The syntax is apimachinery's (`IsQualifiedName`, `IsValidLabelValue`), matched against the whole
string. The domain rules are the NodeRestriction admission plugin's and Cluster API v1.10's
(`util/labels.GetManagedLabels`): what a kubelet cannot set on itself, and what CAPI copies from a
Machine to its Node instead.
"""

from __future__ import annotations

import re

from tenantctl.spec.names import is_dns_subdomain

__all__ = [
    "NODE_RESTRICTION",
    "NODE_ROLE",
    "RESERVED_DOMAINS",
    "TAINT_EFFECTS",
    "is_capi_synced",
    "label_key_problem",
    "label_prefix",
    "label_value_problem",
    "reserved_domain",
]

_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_NAME_MAX = 63
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

# Domains Kubernetes (and tenantctl, for its own inventory labels) own, subdomains included.
RESERVED_DOMAINS = ("kubernetes.io", "k8s.io", "tenantctl.io")
# Inside them, the two a platform sets on Nodes through CAPI: node-role (the exact domain only, as CAPI
# matches it) and node-restriction (subdomains too), which NodeRestriction keeps kubelets from setting.
NODE_ROLE = "node-role.kubernetes.io"
NODE_RESTRICTION = "node-restriction.kubernetes.io"
_CAPI_NODE_DOMAIN = "node.cluster.x-k8s.io"


def _in_domain(prefix: str, domain: str) -> bool:
    return prefix == domain or prefix.endswith("." + domain)


def label_prefix(key: str) -> str:
    """`example.com/tier` -> `example.com`; an unprefixed key has the empty prefix."""
    return key.split("/", 1)[0] if "/" in key else ""


def is_capi_synced(key: str) -> bool:
    """Cluster API v1.10 copies these from Machine to Node (and removes them when the Machine drops them)."""
    prefix = label_prefix(key)
    return prefix == NODE_ROLE or _in_domain(prefix, NODE_RESTRICTION) or _in_domain(prefix, _CAPI_NODE_DOMAIN)


def reserved_domain(key: str) -> str | None:
    """The reserved domain a key falls in, or None when a pool may use it."""
    prefix = label_prefix(key)
    if prefix == NODE_ROLE or _in_domain(prefix, NODE_RESTRICTION):
        return None
    return next((d for d in RESERVED_DOMAINS if _in_domain(prefix, d)), None)


def label_key_problem(key: str) -> str | None:
    """Why `key` is not a qualified name (`[prefix/]name`), or None."""
    prefix, _, name = key.rpartition("/")
    if "/" in key and not prefix:
        return "has an empty prefix before '/'"
    if prefix and not is_dns_subdomain(prefix):
        return f"prefix {prefix!r} is not a DNS subdomain (lower-case a-z, 0-9, '-', '.'; ≤253)"
    if not name:
        return "has an empty name"
    if len(name) > _NAME_MAX or not _NAME.fullmatch(name):
        return (
            f"name {name!r} must be ≤63 characters of a-z, A-Z, 0-9, '-', '_', '.', "
            "beginning and ending with a letter or digit"
        )
    return None


def label_value_problem(value: str) -> str | None:
    """Why `value` is not a label value (empty, or a name of ≤63 characters), or None."""
    if value == "" or (len(value) <= _NAME_MAX and _NAME.fullmatch(value)):
        return None
    return (
        "must be empty or ≤63 characters of a-z, A-Z, 0-9, '-', '_', '.', beginning and ending with a letter or digit"
    )

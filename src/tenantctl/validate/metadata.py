"""What the apiserver checks in every object's ``metadata``, whatever its kind.

Two halves: `OBJECT_META_SCHEMA` is the shape (known keys, string maps) that a CRD's
``metadata: {type: object}`` stands for, used where CRD schemas say nothing; `metadata_problems` checks
the syntax rules that no OpenAPI schema carries: the name (a DNS subdomain for most kinds, a DNS label
for Namespaces, an RFC 1035 label for Services, a path segment for RBAC kinds), label keys and values,
annotation keys and their total size, and a namespace on a cluster-scoped kind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any

from tenantctl.problems import Problem
from tenantctl.validate.names import (
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
    path_segment_errors,
    qualified_name_errors,
)
from tenantctl.validate.paths import field_path, short_value

__all__ = ["OBJECT_META_SCHEMA", "NameRule", "metadata_problems", "name_rule_for"]

_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}

OBJECT_META_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string"},
        "generateName": {"type": "string"},
        "namespace": {"type": "string"},
        "labels": _STRING_MAP,
        "annotations": _STRING_MAP,
        "finalizers": {"type": "array", "items": {"type": "string"}},
        "ownerReferences": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["apiVersion", "kind", "name", "uid"],
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "name": {"type": "string"},
                    "uid": {"type": "string"},
                    "controller": {"type": "boolean"},
                    "blockOwnerDeletion": {"type": "boolean"},
                },
            },
        },
        # Server-set fields: legal in a manifest (kubectl get -o yaml round-trips them), never required.
        "uid": {"type": "string"},
        "resourceVersion": {"type": "string"},
        "generation": {"type": "integer"},
        "creationTimestamp": {"type": ["string", "null"]},
        "deletionTimestamp": {"type": ["string", "null"]},
        "deletionGracePeriodSeconds": {"type": "integer"},
        "selfLink": {"type": "string"},
        "managedFields": {"type": "array", "items": {"type": "object"}},
    },
}

_ANNOTATIONS_TOTAL_BYTES = 256 * 1024


class NameRule(StrEnum):
    """Which syntax a kind's ``metadata.name`` must follow (apimachinery's validation functions)."""

    DNS_SUBDOMAIN = "a DNS subdomain (RFC 1123: at most 253 lowercase alphanumerics, '-' or '.')"
    DNS_LABEL = "a DNS label (RFC 1123: at most 63 lowercase alphanumerics or '-')"
    DNS1035_LABEL = "an RFC 1035 label (at most 63 lowercase alphanumerics or '-', starting with a letter)"
    PATH_SEGMENT = "a path segment (not '.', '..', nor containing '/' or '%')"


_NAME_CHECKS: dict[NameRule, Callable[[str], list[str]]] = {
    NameRule.DNS_SUBDOMAIN: dns1123_subdomain_errors,
    NameRule.DNS_LABEL: dns1123_label_errors,
    NameRule.DNS1035_LABEL: dns1035_label_errors,
    NameRule.PATH_SEGMENT: path_segment_errors,
}

# Built-in kinds whose names are not DNS subdomains; every other kind (all CRD kinds) uses a subdomain.
_CORE_NAME_RULES: dict[tuple[str, str], NameRule] = {
    ("v1", "Namespace"): NameRule.DNS_LABEL,
    ("v1", "Service"): NameRule.DNS1035_LABEL,
    ("rbac.authorization.k8s.io/v1", "Role"): NameRule.PATH_SEGMENT,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): NameRule.PATH_SEGMENT,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): NameRule.PATH_SEGMENT,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): NameRule.PATH_SEGMENT,
}


def name_rule_for(api_version: str, kind: str) -> NameRule:
    """The `NameRule` text for a kind: a DNS subdomain unless the apiserver says otherwise."""
    return _CORE_NAME_RULES.get((api_version, kind), NameRule.DNS_SUBDOMAIN)


def metadata_problems(
    label: str, obj: Mapping[str, Any], *, name_rule: NameRule, namespaced: bool | None
) -> list[Problem]:
    """Syntax problems in ``obj.metadata``; shape problems (types, unknown keys) are the schema's job.

    `namespaced` is None when the kind's scope is unknown (a built-in kind we keep no table for).
    """
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        return [Problem(field_path(label, ["metadata"]), "required: every object needs metadata with a name")]
    problems: list[Problem] = []
    name, generate_name = metadata.get("name"), metadata.get("generateName")
    if not name and not generate_name:
        problems.append(Problem(field_path(label, ["metadata", "name"]), "required: name or generateName"))
    if isinstance(name, str) and name:
        problems.extend(_name_problems(field_path(label, ["metadata", "name"]), name, name_rule))
    namespace = metadata.get("namespace")
    if isinstance(namespace, str) and namespace:
        where = field_path(label, ["metadata", "namespace"])
        if namespaced is False:
            problems.append(Problem(where, f"not allowed: {obj.get('kind')} is cluster-scoped"))
        problems.extend(_name_problems(where, namespace, NameRule.DNS_LABEL))
    labels = metadata.get("labels")
    if isinstance(labels, Mapping):
        for key, value in labels.items():
            where = field_path(label, ["metadata", "labels", str(key)])
            problems.extend(_qualified_name_problems(where, str(key), "label key"))
            if isinstance(value, str):
                problems.extend(_label_value_problems(where, value))
    annotations = metadata.get("annotations")
    if isinstance(annotations, Mapping):
        total = 0
        for key, value in annotations.items():
            where = field_path(label, ["metadata", "annotations", str(key)])
            problems.extend(_qualified_name_problems(where, str(key), "annotation key"))
            total += len(str(key)) + (len(value) if isinstance(value, str) else 0)
        if total > _ANNOTATIONS_TOTAL_BYTES:
            problems.append(
                Problem(
                    field_path(label, ["metadata", "annotations"]),
                    f"too long: annotations total {total} bytes, the limit is {_ANNOTATIONS_TOTAL_BYTES}",
                )
            )
    return problems


def _name_problems(where: str, name: str, rule: NameRule) -> list[Problem]:
    errors = _NAME_CHECKS[rule](name)
    if not errors:
        return []
    return [Problem(where, f"invalid name {short_value(name)}: must be {rule.value}: {'; '.join(errors)}")]


def _qualified_name_problems(where: str, key: str, what: str) -> list[Problem]:
    errors = qualified_name_errors(key)
    return [Problem(where, f"invalid {what} {short_value(key)}: {'; '.join(errors)}")] if errors else []


def _label_value_problems(where: str, value: str) -> list[Problem]:
    errors = label_value_errors(value)
    if not errors:
        return []
    return [Problem(where, f"invalid label value {short_value(value)} ({len(value)} chars): {'; '.join(errors)}")]

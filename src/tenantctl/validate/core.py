"""Built-in kinds (Secret, Deployment, RBAC...) judged by Kubernetes' own OpenAPI, as shipped by kubernetes-validate.

`kubernetes_validate.validate` re-reads and re-parses the 1.6 MB definitions file on every call and stops
at the first error. This module uses its packaged schemas (the ``-strict`` set: unknown fields are
errors) and its version list, but loads the definitions once per Kubernetes version, keeps one
validator per kind, and reports every error.

Whether an apiVersion is built in is read from the same definitions: the groups that carry
``x-kubernetes-group-version-kind`` there are the apiserver's own; everything else is a CRD kind.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from kubernetes_validate import utils as kv_utils
from referencing import Registry, Resource

from tenantctl.problems import Problem
from tenantctl.validate.crds import split_api_version
from tenantctl.validate.formats import KUBERNETES_FORMATS
from tenantctl.validate.metadata import metadata_problems, name_rule_for
from tenantctl.validate.schema_errors import problems_from_errors

__all__ = [
    "DEFAULT_KUBERNETES_VERSION",
    "has_core_schema",
    "is_builtin_api_version",
    "schema_version",
    "validate_core_object",
]

DEFAULT_KUBERNETES_VERSION = "1.36.0"
"""The newest Kubernetes the installed kubernetes-validate ships schemas for, at most 1.36 (tenant support)."""

# Built-in kinds that are cluster-scoped: a namespace on them is an error.
_CLUSTER_SCOPED = frozenset(
    {
        ("v1", "Namespace"), ("v1", "Node"), ("v1", "PersistentVolume"),
        ("rbac.authorization.k8s.io/v1", "ClusterRole"), ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
        ("storage.k8s.io/v1", "StorageClass"), ("storage.k8s.io/v1", "CSIDriver"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
        ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
        ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
        ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
        ("scheduling.k8s.io/v1", "PriorityClass"), ("networking.k8s.io/v1", "IngressClass"),
        ("apiregistration.k8s.io/v1", "APIService"),
    }
)  # fmt: skip


@dataclass(frozen=True)
class _SchemaSet:
    version: str
    directory: str
    registry: Any
    groups: frozenset[str]


def schema_version(kubernetes_version: str) -> str:
    """The kubernetes-validate schema set used for a Kubernetes version: the newest at or below it."""
    return _schema_set(kubernetes_version).version


def is_builtin_api_version(api_version: str, kubernetes_version: str = DEFAULT_KUBERNETES_VERSION) -> bool:
    """Whether the apiserver itself serves this apiVersion's group (``v1``, ``apps/v1``, ``rbac...``)."""
    return split_api_version(api_version)[0] in _schema_set(kubernetes_version).groups


def has_core_schema(api_version: str, kind: str, kubernetes_version: str = DEFAULT_KUBERNETES_VERSION) -> bool:
    """Whether Kubernetes' own schemas define this built-in kind (else it is reported, not judged)."""
    return _validator(kubernetes_version, api_version, kind) is not None


def validate_core_object(obj: Mapping[str, Any], label: str, kubernetes_version: str) -> list[Problem]:
    """Problems of one built-in-kind object against Kubernetes `kubernetes_version`'s strict schema."""
    api_version, kind = str(obj["apiVersion"]), str(obj["kind"])
    validator = _validator(kubernetes_version, api_version, kind)
    if validator is None:
        return [
            Problem(
                label,
                f"Kubernetes {schema_version(kubernetes_version)} has no kind {kind} in {api_version}",
            )
        ]
    problems = problems_from_errors(label, validator.iter_errors(obj))
    problems.extend(
        metadata_problems(
            label,
            obj,
            name_rule=name_rule_for(api_version, kind),
            namespaced=False if (api_version, kind) in _CLUSTER_SCOPED else None,
        )
    )
    return problems


@functools.cache
def _schema_set(kubernetes_version: str) -> _SchemaSet:
    wanted = _minor(kubernetes_version)
    shipped = sorted(set(kv_utils.all_versions()), key=_minor)
    candidates = [v for v in shipped if _minor(v) <= wanted]
    if not candidates:
        raise ValueError(
            f"kubernetes-validate {kv_utils.__version__} has no schemas for Kubernetes {kubernetes_version} "
            f"(it ships {shipped[0]} to {shipped[-1]})"
        )
    version = candidates[-1]
    directory = f"kubernetes-json-schema/v{version}-local-strict"
    definitions = kv_utils.schema_contents(f"{directory}/_definitions.json", version)
    groups = frozenset(
        gvk["group"]
        for definition in definitions["$defs"].values()
        for gvk in definition.get("x-kubernetes-group-version-kind", ())
    )
    registry = Resource.from_contents(definitions) @ Registry()
    return _SchemaSet(version=version, directory=directory, registry=registry, groups=groups)


@functools.cache
def _validator(kubernetes_version: str, api_version: str, kind: str) -> Any | None:
    schemas = _schema_set(kubernetes_version)
    # kubernetes-validate's file naming: rbac.authorization.k8s.io/v1 Role -> role-rbac-v1.json
    suffix = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema = kv_utils.schema_contents(f"{schemas.directory}/{kind.lower()}-{suffix}.json", schemas.version)
    except FileNotFoundError:
        return None
    gvks = schema.get("x-kubernetes-group-version-kind", ())
    if not any(f"{g['group']}/{g['version']}".lstrip("/") == api_version and g["kind"] == kind for g in gvks):
        return None
    return Draft202012Validator(schema, registry=schemas.registry, format_checker=KUBERNETES_FORMATS)


def _minor(version: str) -> tuple[int, int]:
    match = re.match(r"^v?(\d+)\.(\d+)", version)
    if match is None:
        raise ValueError(f"not a Kubernetes version: {version!r} (expected e.g. 1.36.0)")
    return int(match.group(1)), int(match.group(2))

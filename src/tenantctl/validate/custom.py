"""Judging one custom resource against its CRD version, the way the apiserver would on create.

Order matters and follows the apiserver: find the served version, apply CRD defaults, then validate the
defaulted object (schema and CEL rules in one walk) and its metadata syntax. The converted schema and
validator are built once per CRD version and kept as long as the catalog holding that version lives.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tenantctl.problems import Problem, Severity
from tenantctl.validate.crds import CrdVersion, SchemaCatalog, split_api_version
from tenantctl.validate.defaults import apply_defaults
from tenantctl.validate.metadata import NameRule, metadata_problems
from tenantctl.validate.openapi import RULES_KEYWORD, ConvertedSchema, convert_crd_schema, strict_validator
from tenantctl.validate.schema_errors import problems_from_errors

__all__ = ["CompiledVersion", "compiled_version", "validate_custom_object"]


@dataclass(frozen=True)
class CompiledVersion:
    """What validating objects of one CRD version needs, built once."""

    converted: ConvertedSchema
    validator: Any

    @property
    def unchecked(self) -> list[str]:
        return self.converted.unchecked


_BLOCKING_KEYWORDS = frozenset({"type", "enum", "const", "required", "maxLength", "maxItems", "maxProperties"})
_RULES_NOT_CHECKED = (
    "some x-kubernetes-validations rules were not checked because the object has type, enum, required or "
    "size errors (as the apiserver does); fix those to complete validation"
)

_compiled: weakref.WeakKeyDictionary[CrdVersion, CompiledVersion] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def compiled_version(version: CrdVersion) -> CompiledVersion:
    """The converted schema and validator for a CRD version (converted and CEL-compiled on first use)."""
    with _lock:
        found = _compiled.get(version)
    if found is not None:
        return found
    converted = convert_crd_schema(version.schema)
    built = CompiledVersion(converted=converted, validator=strict_validator(converted.schema))
    with _lock:
        return _compiled.setdefault(version, built)


def validate_custom_object(obj: Mapping[str, Any], label: str, catalog: SchemaCatalog, *,
                           check_metadata: bool = True, report_unchecked: bool = True) -> list[Problem]:
    """Problems of one object whose kind a CRD should define (`check_metadata`: also its name and
    labels' syntax; off for an object a controller derives, whose metadata is its source's;
    `report_unchecked`: the CRD's rules tenantctl cannot evaluate, as errors)."""
    api_version, kind = str(obj["apiVersion"]), str(obj["kind"])
    version = catalog.lookup(api_version, kind)
    if version is None:
        return [Problem(label, _missing_crd(api_version, kind, catalog))]
    if not version.served:
        return [Problem(label, f"{api_version} {kind} is not served by CRD {version.crd_name} ({version.source})")]
    problems: list[Problem] = []
    if version.deprecated:
        warning = version.deprecation_warning or f"{api_version} {kind} is deprecated"
        problems.append(Problem(label, warning, Severity.WARNING))
    compiled = compiled_version(version)
    if report_unchecked:
        problems.extend(
            Problem(label, f"CRD {version.crd_name} {version.version} ({version.source}): {text}")
            for text in compiled.unchecked
        )
    defaulted = apply_defaults(obj, compiled.converted.defaults)
    errors, rules_skipped = _apiserver_errors(compiled.validator.iter_errors(defaulted))
    problems.extend(problems_from_errors(label, errors))
    if rules_skipped:
        problems.append(Problem(label, _RULES_NOT_CHECKED, Severity.WARNING))
    if check_metadata:
        problems.extend(metadata_problems(label, obj, name_rule=NameRule.DNS_SUBDOMAIN,
                                          namespaced=version.namespaced))
    return problems


def _apiserver_errors(errors: Iterable[Any]) -> tuple[list[Any], bool]:
    """Schema and rule errors as the apiserver reports them, and whether rule verdicts were dropped.

    The apiserver skips every CEL rule of an object that has a type, enum, required or size error
    (``hasBlockingErr`` in apiextensions-apiserver): rules would only fail again, noisily, on bad input.
    """
    collected = list(errors)
    if not any(error.validator in _BLOCKING_KEYWORDS for error in collected):
        return collected, False
    schema_errors = [error for error in collected if error.validator != RULES_KEYWORD]
    return schema_errors, len(schema_errors) != len(collected)


def _missing_crd(api_version: str, kind: str, catalog: SchemaCatalog) -> str:
    message = f"no CRD for {api_version} {kind} in {catalog.describe()}"
    others = catalog.versions_of(split_api_version(api_version)[0], kind)
    return f"{message} (the CRDs there define {kind} in versions {', '.join(others)})" if others else message

"""Transition rules (those reading ``oldSelf``): how the API server judges an update against the old object.

`validate_objects` judges an object as a create, where no transition rule runs. Here both objects are
defaulted, walked side by side through the CRD's properties, and each transition rule runs where the
field is present in both (as the API server does). Rules under list items are not walked: the API
server correlates those only for map lists, and tenantctl's CRDs put none there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tenantctl.problems import Problem
from tenantctl.validate.cel_rules import RuleCompileError, compile_rule
from tenantctl.validate.crds import SchemaCatalog
from tenantctl.validate.custom import compiled_version
from tenantctl.validate.defaults import apply_defaults
from tenantctl.validate.paths import field_path, object_label

__all__ = ["validate_transition"]


def validate_transition(new: Mapping[str, Any], old: Mapping[str, Any], catalog: SchemaCatalog) -> list[Problem]:
    """Problems of the transition rules of an update from `old` to `new` (one kind, one CRD version)."""
    label = object_label(new, 0)
    version = catalog.lookup(str(new.get("apiVersion")), str(new.get("kind")))
    if version is None:
        return [Problem(label, f"no CRD for {new.get('apiVersion')} {new.get('kind')} in {catalog.describe()}")]
    defaults = compiled_version(version).converted.defaults
    problems: list[Problem] = []
    _walk(version.schema, apply_defaults(dict(new), defaults), apply_defaults(dict(old), defaults), [], label, problems)
    return problems


def _walk(
    node: Mapping[str, Any], new: Any, old: Any, path: list[str | int], label: str, problems: list[Problem]
) -> None:
    for spec in node.get("x-kubernetes-validations") or ():
        try:
            rule = compile_rule(spec)
        except RuleCompileError as exc:
            problems.append(Problem(field_path(label, path), str(exc)))
            continue
        if not rule.transition:
            continue
        failure = rule.check(new, old)
        if failure is not None:
            problems.append(Problem(field_path(label, [*path, *failure.field_path]), failure.message))
    if isinstance(new, Mapping) and isinstance(old, Mapping):
        for key, child in (node.get("properties") or {}).items():
            if key in new and key in old:
                _walk(child, new[key], old[key], [*path, key], label, problems)

"""`validate_objects`: route each rendered object to the judge for its kind and gather every problem.

Built-in groups go to Kubernetes' own schemas (`core`), everything else to the CRDs of a catalog
(`custom`). Without a catalog, custom kinds are skipped: that is planning mode, when the CRDs are not at
hand; with one, a custom kind missing from it is an error, since nothing would have judged it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tenantctl.problems import Problem, Severity
from tenantctl.validate.core import DEFAULT_KUBERNETES_VERSION, is_builtin_api_version, validate_core_object
from tenantctl.validate.crds import SchemaCatalog
from tenantctl.validate.custom import validate_custom_object
from tenantctl.validate.derived import derived_objects
from tenantctl.validate.paths import field_path, object_label, short_value

__all__ = ["derived_problems", "validate_objects"]


def validate_objects(
    objects: Iterable[Mapping[str, Any]],
    catalog: SchemaCatalog | None = None,
    *,
    core: bool = True,
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION,
) -> list[Problem]:
    """Problems for every object: path `Kind/name.<field path>`, message says what rule failed and with what value.

    `catalog`: CRDs for custom kinds (None: skip custom kinds). `core`: also check built-in kinds.
    `kubernetes_version`: whose built-in schemas to use (the newest shipped at or below it); a version
    older than every shipped schema set raises ValueError, as a programming error rather than a Problem.
    """
    problems: list[Problem] = []
    for index, obj in enumerate(objects):
        label = object_label(obj, index) if isinstance(obj, Mapping) else f"object[{index}]"
        if not isinstance(obj, Mapping):
            problems.append(Problem(label, f"not an object: {short_value(obj)}"))
            continue
        found = _identity_problems(obj, label)
        if found:
            pass
        elif is_builtin_api_version(obj["apiVersion"], kubernetes_version):
            if core:
                found = validate_core_object(obj, label, kubernetes_version)
        elif catalog is not None:
            found = validate_custom_object(obj, label, catalog)
            found += _derived_problems(obj, label, catalog, found)
        # Within an object: errors by field path, then warnings, so a report reads top to bottom.
        problems.extend(sorted(found, key=lambda p: (p.severity is Severity.WARNING, p.path)))
    return problems


def derived_problems(objects: Iterable[Mapping[str, Any]], catalog: SchemaCatalog) -> list[Problem]:
    """Only what controllers build from `objects`, judged: where the objects themselves are judged by the
    API server they are applied to (the operator), and the objects built from them are not, until then."""
    return [problem for index, obj in enumerate(objects)
            for problem in _derived_problems(obj, object_label(obj, index), catalog, [])]


def _derived_problems(obj: Mapping[str, Any], label: str, catalog: SchemaCatalog,
                      own: list[Problem]) -> list[Problem]:
    """Problems of what a controller builds from `obj`, named at `obj`'s field; those the source's own CRD
    already reported there (the same rule on the same field) are not said twice."""
    said = {(p.path, p.message) for p in own}
    out: list[Problem] = []
    for derived in derived_objects(obj, label):
        if catalog.lookup(derived.obj["apiVersion"], derived.obj["kind"]) is None:
            # Judging what is built needs its CRD; the catalog's coverage says which kinds it lacks.
            continue
        # A rule of the derived kind's CRD tenantctl cannot evaluate is not a refusal of the template: only a
        # rule that ran and failed is (the source's own CRD still reports what it cannot check).
        for problem in validate_custom_object(derived.obj, derived.label, catalog, check_metadata=False,
                                              report_unchecked=False):
            if (problem.path, problem.message) in said or problem.severity is not Severity.ERROR:
                continue
            said_of_it = problem.message
            if derived.derivation.carries_secrets:
                said_of_it = (f"{said_of_it.split(':', 1)[0]} (the value is not shown: this object carries the "
                              "machines' join credentials)")
            out.append(Problem(problem.path, f"{derived.why} is refused: {said_of_it}", problem.severity))
    return out


def _identity_problems(obj: Mapping[str, Any], label: str) -> list[Problem]:
    return [
        Problem(
            field_path(label, [key]), f"Required value: a non-empty string is needed, got {short_value(obj.get(key))}"
        )
        for key in ("apiVersion", "kind")
        if not isinstance(obj.get(key), str) or not obj[key]
    ]

"""Which schema judged each rendered object, so `validate` never reports `ok` for what it did not check.

Without a CRD catalog custom kinds are skipped by `validate_objects`; this says how many and which,
so a user reads the size of the gap rather than a bare `ok`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tenantctl.validate.core import DEFAULT_KUBERNETES_VERSION, has_core_schema, is_builtin_api_version, schema_version
from tenantctl.validate.crds import SchemaCatalog
from tenantctl.validate.derived import derived_objects

__all__ = ["Coverage", "schema_coverage"]


@dataclass(frozen=True)
class Coverage:
    """Objects judged by Kubernetes' own schemas, by CRDs, and the kinds nothing judged (with counts)."""

    core: int
    crds: int
    unchecked: Counter[str] = field(default_factory=Counter)
    kubernetes: str = ""
    derived: int = 0
    """Objects a controller builds from the rendered ones (`validate.derived`), judged by their CRDs too."""

    @property
    def checked(self) -> int:
        return self.core + self.crds

    def summary(self, catalog: SchemaCatalog | None) -> str:
        against = f"{self.core} against Kubernetes {self.kubernetes} core schemas"
        crds = f"{self.crds} against the CRDs in {catalog.describe()}" if catalog else "no upstream CRDs"
        built = f"; {self.derived} objects their controllers build from them, judged too" if self.derived else ""
        return f"{self.checked} objects checked ({against}, {crds}{built})"

    def gap(self, catalog: SchemaCatalog | None) -> str:
        """`17 objects not checked: no CRD in … for …`, or without a catalog how to get one; empty when
        everything was checked."""
        if not self.unchecked:
            return ""
        total = sum(self.unchecked.values())
        if catalog is None:
            return f"{total} objects not judged: the upstream CRDs are not pulled; run `tenantctl crds pull` (once)"
        kinds = ", ".join(f"{kind} ({n})" if n > 1 else kind for kind, n in sorted(self.unchecked.items()))
        return f"{total} objects not checked: no CRD in {catalog.describe()} for {kinds}"


def schema_coverage(
    objects: Iterable[Mapping[str, Any]],
    catalog: SchemaCatalog | None,
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION,
) -> Coverage:
    """Count the objects each judge of `validate_objects` has a schema for; the rest by `apiVersion Kind`
    (with a catalog, also what controllers build from them: a derived kind without its CRD is a gap)."""
    core = crds = derived = 0
    unchecked: Counter[str] = Counter()
    for obj in objects:
        api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        if is_builtin_api_version(api_version, kubernetes_version):
            judged = has_core_schema(api_version, kind, kubernetes_version)
            core += judged
        else:
            judged = catalog is not None and catalog.lookup(api_version, kind) is not None
            crds += judged
            if judged and catalog is not None:
                for built in derived_objects(obj, kind):
                    key = (built.obj["apiVersion"], built.obj["kind"])
                    if catalog.lookup(*key) is None:
                        unchecked[" ".join(key)] += 1
                    else:
                        derived += 1
        if not judged:
            unchecked[f"{api_version} {kind}"] += 1
    return Coverage(core, crds, unchecked, schema_version(kubernetes_version), derived)

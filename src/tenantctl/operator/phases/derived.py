"""Before a render is applied: judge what Cluster API will build from its templates, with the CRDs the
management cluster serves.

The API server judges every object the operator applies, but not the ProxmoxMachine, KubevirtMachine,
TalosConfig or Machine that Cluster API clones from them later: a rule only the derived kind carries
(capmox's `sourceNode` beside `templateSelector`) would be met at the first clone, as a MachineSet that
never gets a Machine. Refused here, nothing is applied and the refusal names the template's field.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tenantctl.operator.kube.client import APIError, KubeClient, Resource
from tenantctl.problems import InvalidInput, Problem
from tenantctl.validate.crds import SchemaCatalog
from tenantctl.validate.derived import DERIVATIONS
from tenantctl.validate.objects import derived_problems

__all__ = ["DERIVED_CRDS", "DerivedJudge"]

_CRDS = Resource("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False)
DERIVED_CRDS = tuple(sorted(f"{d.plural}.{group}" for (group, _), d in DERIVATIONS.items()))
"""The CRDs of every kind a controller builds from tenantctl's objects (read with the `get` on CRDs the
operator holds for Kamaji's)."""


_log = logging.getLogger(__name__)


_ORIGIN = "the management cluster's CRDs"


def _catalog(crds: Sequence[Mapping[str, Any]]) -> SchemaCatalog | None:
    """The catalog of every CRD that reads as one: a malformed one is left out (and said), not all four."""
    versions = []
    for crd in crds:
        try:
            versions += list(SchemaCatalog.from_documents([crd], _ORIGIN))
        except InvalidInput as exc:
            _log.warning("CRD %s is left out of the clones' judge: %s", (crd.get("metadata") or {}).get("name"), exc)
    return SchemaCatalog([Path(_ORIGIN)], versions) if versions else None


@dataclass
class DerivedJudge:
    """The derived kinds' CRDs as a catalog, read at most once per `ttl` seconds and shared by every tenant.

    Converting a CRD's schema and compiling its CEL rules costs far more than a pass; the catalog is
    built again only when a CRD's resourceVersion moved (a provider upgraded). A CRD the cluster does
    not serve is left out: that substrate's objects are not rendered there, or the apply says so.
    """

    ttl: float = 0.0
    _read: tuple[float, SchemaCatalog | None] | None = None
    _versions: tuple[tuple[str, str], ...] = ()
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def catalog(self, api: KubeClient) -> SchemaCatalog | None:
        async with self._lock:
            now = asyncio.get_running_loop().time()
            if self._read is not None and now - self._read[0] < self.ttl:
                return self._read[1]
            crds = [crd for name in DERIVED_CRDS if (crd := await api.get(_CRDS, name, cached=False)) is not None]
            versions = tuple((c["metadata"]["name"], str(c["metadata"].get("resourceVersion"))) for c in crds)
            if self._read is None or versions != self._versions:
                built = _catalog(crds)
                self._versions = versions
            else:
                built = self._read[1]
            self._read = (now, built)
            return built

    async def problems(self, api: KubeClient, objects: Sequence[Mapping[str, Any]]) -> list[Problem]:
        """Each template field whose derived object its CRD refuses, named at the template.

        A CRD that cannot be read leaves the judging to the clone (the apply's own errors say why)."""
        try:
            catalog = await self.catalog(api)
        except APIError as exc:
            _log.warning("the CRDs of what Cluster API builds cannot be read (%s): clones are judged at clone time "
                         "only", exc)
            return []
        return derived_problems(objects, catalog) if catalog is not None else []

    async def refuse(self, api: KubeClient, objects: Sequence[Mapping[str, Any]]) -> None:
        """Raise InvalidInput with `problems`, if any: the pass applies nothing."""
        problems = await self.problems(api, objects)
        if problems:
            raise InvalidInput(problems)

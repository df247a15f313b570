"""`Platform.spec.images`: per-image overrides and a registry mirror, and the one lookup every renderer calls.

A mirror `registry.example.org/mirror` turns `quay.io/cilium/cilium:v1.17.6@sha256:…` into
`registry.example.org/mirror/quay.io/cilium/cilium:v1.17.6@sha256:…`: the source registry stays in the
path, so images of different registries cannot collide and the mapping is reversible for the sync job.
"""

from __future__ import annotations

import difflib
from typing import NamedTuple

from pydantic import Field

from tenantctl.render.images import CATALOGUE, SHARED_REGISTRY, CatalogueImage
from tenantctl.spec.base import SpecModel
from tenantctl.spec.image_refs import digest_problem, mirror_problem, repository_problem, tag_problem

__all__ = ["ImageOverride", "ImageRef", "ImagesSpec"]


class ImageRef(NamedTuple):
    """A resolved image; charts that compose `repository:tag` get the digest glued to the tag.

    A tuple, not a frozen dataclass: a render resolves a score of images, and a frozen dataclass's
    `__init__` (a guarded `object.__setattr__` per field) cost three times a tuple's."""

    repository: str
    tag: str
    digest: str | None = None

    @property
    def tag_and_digest(self) -> str:
        return f"{self.tag}@{self.digest}" if self.digest else self.tag

    def __str__(self) -> str:
        return f"{self.repository}:{self.tag_and_digest}"


class ImageOverride(SpecModel):
    """Replaces parts of a catalogue entry; a new repository or tag drops the catalogue's digest."""

    repository: str | None = Field(default=None, description="Fully qualified repository.")
    tag: str | None = Field(default=None, description="Tag (not for images whose tag follows a version).")
    digest: str | None = Field(default=None, description="sha256:… of the image (with a fixed tag only).")


class ImagesSpec(SpecModel):
    """`spec.images` of a Platform. Structure only: `problems()` judges the values (paths named)."""

    registry_mirror: str | None = Field(
        default=None, description="Registry prefix every image reference is rewritten under (air-gapped sites)."
    )
    overrides: dict[str, ImageOverride] = Field(
        default_factory=dict, description="Per catalogue image: repository, tag and/or digest."
    )

    def problems(self) -> list[tuple[str, str]]:
        """(path below `spec.images`, message) for every invalid value, all of them."""
        found: list[tuple[str, str]] = []
        if self.registry_mirror is not None and (msg := mirror_problem(self.registry_mirror)):
            found.append(("registryMirror", msg))
        for name, override in self.overrides.items():
            at = f"overrides.{name}"
            entry = CATALOGUE.get(name)
            if entry is None:
                close = difflib.get_close_matches(name, list(CATALOGUE), n=1, cutoff=0.5)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                found.append((at, f"unknown image {name!r}{hint} (known: {', '.join(sorted(CATALOGUE))})"))
                continue
            found += _override_problems(at, entry, override)
        if not found:
            registries = {self.repository(name).rpartition("/")[0] for name in SHARED_REGISTRY}
            if len(registries) > 1:
                found.append(("overrides", f"{', '.join(SHARED_REGISTRY)} must share one registry: Kamaji takes "
                              f"a single spec.registry for them (got {', '.join(sorted(registries))})"))
        return found

    def repository(self, name: str, tenant_repository: str | None = None) -> str:
        """Where `name` is pulled from: the override's, the tenant's or the catalogue's, under the mirror."""
        entry = CATALOGUE[name]
        if bool(entry.per_cluster) != (tenant_repository is not None):
            raise ValueError(f"image {name!r}: a repository is passed exactly when a tenant sets it")
        override = self.overrides.get(name)
        repository = (override.repository if override else None) or tenant_repository or entry.repository
        return f"{self.registry_mirror}/{repository}" if self.registry_mirror else repository

    def ref(self, name: str, tag: str | None = None, *, repository: str | None = None) -> ImageRef:
        """The image `name` as this platform pulls it. `tag` is given exactly for version-derived entries;
        `repository` exactly for entries a tenant places itself (`per_cluster`)."""
        entry = CATALOGUE[name]
        if (entry.tag is None) != (tag is not None):
            raise ValueError(f"image {name!r}: a tag is passed exactly when the catalogue derives it")
        fixed_tag, digest = entry.tag, entry.digest
        override = self.overrides.get(name)
        if override is not None:
            if override.repository is not None or override.tag is not None:
                digest = None
            fixed_tag = override.tag or fixed_tag
            digest = override.digest or digest
        resolved_tag = tag if tag is not None else fixed_tag
        assert resolved_tag is not None
        return ImageRef(self.repository(name, repository), resolved_tag, digest)


def _override_problems(at: str, entry: CatalogueImage, override: ImageOverride) -> list[tuple[str, str]]:
    if entry.per_cluster:
        return [(at, f"set per cluster, not per platform: {entry.per_cluster} (the mirror still applies)")]
    found: list[tuple[str, str]] = []
    checks = (("repository", repository_problem), ("tag", tag_problem), ("digest", digest_problem))
    for field, check in checks:
        value = getattr(override, field)
        if value is not None and (msg := check(value)):
            found.append((f"{at}.{field}", msg))
    if entry.tag is None:
        for field in ("tag", "digest"):
            if getattr(override, field) is not None:
                found.append((f"{at}.{field}", f"the tag follows a version here ({entry.source}); "
                              "override the repository only"))
    return found

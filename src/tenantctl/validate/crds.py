"""CRD files on disk, indexed by (group/version, kind): the catalog every custom object is judged against.

Tests validate every render, so a directory is parsed once per process: catalogs are cached per
(resolved directory, file mtimes and sizes), and a changed file is noticed on the next `from_dirs`.
Two CRDs claiming the same group/version/kind with different schemas are refused: picking one silently
would judge renders against whichever file sorted first. Documents that are not CRDs are ignored, so a
directory may hold a kustomization or a README.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tenantctl.problems import InvalidInput, Problem

__all__ = ["CrdVersion", "SchemaCatalog", "split_api_version"]

_SUFFIXES = (".yaml", ".yml")
_Signature = tuple[tuple[str, int, int], ...]
# libyaml's loader parses the ~4 MB of upstream CRDs in a fraction of the pure-Python loader's time.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True, eq=False)
class CrdVersion:
    """One version of one CRD; identity-hashed so validators can be cached per version object."""

    crd_name: str
    group: str
    kind: str
    version: str
    served: bool
    deprecated: bool
    deprecation_warning: str | None
    namespaced: bool
    schema: Mapping[str, Any]
    source: Path

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` → (``apps``, ``v1``); ``v1`` → (``""``, ``v1``)."""
    group, _, version = api_version.rpartition("/")
    return group, version


class SchemaCatalog:
    """CRDs loaded from one or more directories (recursively, *.yaml/*.yml), indexed by (group/version, kind)."""

    def __init__(self, dirs: Sequence[Path], versions: Sequence[CrdVersion]) -> None:
        self.dirs: tuple[Path, ...] = tuple(dirs)
        self._index: dict[tuple[str, str], CrdVersion] = {}
        conflicts: list[Problem] = []
        for version in versions:
            key = (version.api_version, version.kind)
            other = self._index.get(key)
            if other is not None and other.schema != version.schema:
                conflicts.append(
                    Problem(
                        str(version.source),
                        f"{version.api_version} {version.kind} is also defined, differently, by "
                        f"{other.source}; pass the directory of one provider version only",
                    )
                )
            self._index.setdefault(key, version)
        if conflicts:
            raise InvalidInput(conflicts)

    @classmethod
    def from_dirs(cls, dirs: Sequence[Path]) -> SchemaCatalog:
        """Load (or reuse, when no file changed) the CRDs under `dirs`; refuses missing dirs and bad YAML."""
        keys = tuple(_dir_key(Path(d)) for d in dirs)
        return _catalog(keys)

    @classmethod
    def from_documents(cls, crds: Sequence[Mapping[str, Any]], origin: str) -> SchemaCatalog:
        """A catalog of CRD objects as an API server serves them (`origin` says where, in messages)."""
        source = Path(origin)
        versions: list[CrdVersion] = []
        problems: list[Problem] = []
        for crd in crds:
            try:
                versions.extend(_versions(crd, source))
            except (KeyError, TypeError, ValueError) as exc:
                problems.append(Problem(f"{origin}: {(crd.get('metadata') or {}).get('name')}",
                                        f"malformed CustomResourceDefinition: {exc!r}"))
        if problems:
            raise InvalidInput(problems)
        return cls([source], versions)

    def has(self, api_version: str, kind: str) -> bool:
        return (api_version, kind) in self._index

    def lookup(self, api_version: str, kind: str) -> CrdVersion | None:
        return self._index.get((api_version, kind))

    def versions_of(self, group: str, kind: str) -> list[str]:
        """Versions the catalog defines for a group and kind, to explain a version mismatch."""
        return sorted(v.version for v in self._index.values() if v.group == group and v.kind == kind)

    def describe(self) -> str:
        return ", ".join(str(d) for d in self.dirs) or "(no directories)"

    def __iter__(self) -> Iterator[CrdVersion]:
        return iter(self._index.values())

    def __len__(self) -> int:
        return len(self._index)

    def __repr__(self) -> str:
        return f"SchemaCatalog({self.describe()}: {len(self)} kind versions)"


def _dir_key(directory: Path) -> tuple[Path, _Signature]:
    resolved = directory.resolve()
    if not resolved.is_dir():
        raise InvalidInput([Problem(str(directory), "CRD directory does not exist (or is not a directory)")])
    files = sorted(p for p in resolved.rglob("*") if p.suffix in _SUFFIXES and p.is_file())
    signature = tuple((str(p.relative_to(resolved)), (s := p.stat()).st_mtime_ns, s.st_size) for p in files)
    return resolved, signature


@functools.lru_cache(maxsize=32)
def _catalog(keys: tuple[tuple[Path, _Signature], ...]) -> SchemaCatalog:
    versions = [version for directory, signature in keys for version in _load_dir(directory, signature)]
    return SchemaCatalog([directory for directory, _ in keys], versions)


@functools.lru_cache(maxsize=64)
def _load_dir(directory: Path, signature: _Signature) -> tuple[CrdVersion, ...]:
    versions: list[CrdVersion] = []
    problems: list[Problem] = []
    for relative, _, _ in signature:
        path = directory / relative
        try:
            documents = list(yaml.load_all(path.read_text(encoding="utf-8"), Loader=_LOADER))
        except (OSError, yaml.YAMLError) as exc:
            problems.append(Problem(str(path), f"cannot read CRD file: {exc}"))
            continue
        for document in documents:
            if isinstance(document, Mapping) and document.get("kind") == "CustomResourceDefinition":
                try:
                    versions.extend(_versions(document, path))
                except (KeyError, TypeError, ValueError) as exc:
                    problems.append(Problem(str(path), f"malformed CustomResourceDefinition: {exc!r}"))
    if problems:
        raise InvalidInput(problems)
    return tuple(versions)


def _versions(crd: Mapping[str, Any], source: Path) -> Iterator[CrdVersion]:
    spec = crd["spec"]
    # apiextensions.k8s.io/v1beta1 CRDs may keep one schema for all versions in spec.validation.
    shared_schema = (spec.get("validation") or {}).get("openAPIV3Schema")
    versions = spec.get("versions") or [{"name": spec["version"], "served": True}]
    for entry in versions:
        schema = (entry.get("schema") or {}).get("openAPIV3Schema") or shared_schema
        if not isinstance(schema, Mapping):
            raise ValueError(f"version {entry['name']} has no openAPIV3Schema")
        yield CrdVersion(
            crd_name=crd["metadata"]["name"],
            group=spec["group"],
            kind=spec["names"]["kind"],
            version=entry["name"],
            served=bool(entry.get("served", True)),
            deprecated=bool(entry.get("deprecated", False)),
            deprecation_warning=entry.get("deprecationWarning"),
            namespaced=spec.get("scope", "Namespaced") == "Namespaced",
            schema=schema,
            source=source,
        )

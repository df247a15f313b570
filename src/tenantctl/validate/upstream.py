"""The upstream CRDs of the providers tenantctl pins, pulled once into the user's cache (`tenantctl crds pull`).

`upstream_crds.yaml` names each file where its repository holds it at the pinned tag, with its SHA-256:
a file whose bytes differ is never written, and a mirror (`--mirror`, serving the same paths) is as
trustworthy as the upstream it copies. Every file is downloaded and verified before any is written, so a
failed pull leaves the cache as it was. `validate` reads the cache when no `--crds` is given.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from tenantctl.problems import InvalidInput, Problem
from tenantctl.providers.download import Downloader, DownloadError, sha256

__all__ = ["CACHE_ENV", "PullResult", "Source", "cache_dir", "pull", "pulled_dirs", "sources"]

CACHE_ENV = "TENANTCTL_CRDS_CACHE"


@dataclass(frozen=True)
class Source:
    """One provider's CRDs: where its repository holds them at `ref`, and each file's SHA-256."""

    folder: str
    """`<provider>-<version>`: the cache's directory for them."""
    repository: str
    ref: str
    directory: str
    files: tuple[tuple[str, str], ...]

    def url(self, name: str) -> str:
        return f"https://raw.githubusercontent.com/{self.repository}/{self.ref}/{self.directory}/{name}"


@functools.cache
def sources() -> tuple[Source, ...]:
    raw: Mapping[str, Any] = yaml.safe_load(files("tenantctl.validate").joinpath("upstream_crds.yaml").read_text())
    return tuple(
        Source(s["folder"], s["repository"], str(s["ref"]), s["directory"], tuple(s["files"].items()))
        for s in raw["sources"]
    )


def cache_dir() -> Path:
    """`$TENANTCTL_CRDS_CACHE`, else `$XDG_CACHE_HOME/tenantctl/crds`, else `~/.cache/tenantctl/crds`."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = Path(os.environ["XDG_CACHE_HOME"]) if os.environ.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "tenantctl" / "crds"


def _verified(path: Path, pin: str) -> bool:
    try:
        return sha256(path.read_bytes()) == pin
    except OSError:
        return False


def pulled_dirs(into: Path | None = None) -> list[Path] | None:
    """The cache's directories when every pinned file is in it as pinned; None when any is missing or
    differs (a partial catalogue would judge some kinds and silently skip others)."""
    root = into or cache_dir()
    for source in sources():
        for name, pin in source.files:
            if not _verified(root / source.folder / name, pin):
                return None
    return [root / source.folder for source in sources()]


@dataclass
class PullResult:
    into: Path
    downloaded: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    """Already in the cache with the pinned SHA-256: not downloaded again."""

    def summary(self) -> str:
        total = len(self.downloaded) + len(self.kept)
        return (f"{total} upstream CRD files of {len(sources())} providers in {self.into} "
                f"({len(self.downloaded)} downloaded, {len(self.kept)} already there)")


def pull(downloader: Downloader, into: Path | None = None, *, force: bool = False) -> PullResult:
    """Download every pinned file not already cached as pinned; all verified before any is written.
    Refuses (InvalidInput, naming each file and URL) on a download failure or a SHA-256 mismatch."""
    result = PullResult(into or cache_dir())
    fetched: list[tuple[Path, bytes]] = []
    problems: list[Problem] = []
    for source in sources():
        for name, pin in source.files:
            target = result.into / source.folder / name
            label = f"{source.folder}/{name}"
            if not force and _verified(target, pin):
                result.kept.append(label)
                continue
            try:
                data = downloader.get(source.url(name))
            except DownloadError as exc:
                problems.append(Problem(label, str(exc)))
                continue
            if sha256(data) != pin:
                problems.append(Problem(label, f"{source.url(name)} has SHA-256 {sha256(data)}, but tenantctl pins "
                                               f"{pin}: not written"))
                continue
            fetched.append((target, data))
            result.downloaded.append(label)
    if problems:
        raise InvalidInput([*problems, Problem("crds pull", "nothing written: the cache is as it was")])
    for target, data in fetched:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        partial.write_bytes(data)
        partial.replace(target)
    return result

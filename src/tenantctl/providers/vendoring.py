"""`vendor lock` and `vendor fetch`: pin upstream files by digest, then vendor exactly those files.

`lock` is the only way a pin changes: it downloads a new version, records the SHA-256 of every file
and shows them. From then on `fetch` (and `lock` itself, for an already pinned version) refuses any
byte that differs. Both collect every problem first and write nothing unless there is none.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tenantctl.problems import InvalidInput, Problem, Problems
from tenantctl.providers.build import BuildError, Built, build
from tenantctl.providers.catalogue import Package
from tenantctl.providers.contract import ContractSource, check_contracts
from tenantctl.providers.download import Downloader, DownloadError, sha256
from tenantctl.providers.layout import BLOB, COMPONENTS, METADATA
from tenantctl.providers.lockfile import Lock, LockedFile, LockedPackage, LockedPatch, write_lock
from tenantctl.providers.workspace import Workspace

__all__ = ["fetch", "lock"]


@dataclass(frozen=True)
class _Downloaded:
    package: Package
    version: str
    components: bytes
    metadata: bytes
    built: Built


def _patch_record(package: Package) -> tuple[LockedPatch, ...]:
    return tuple(LockedPatch(id=p.id, sha256=p.digest()) for p in package.patches)


def _download_pinned(
    ws: Workspace, package: Package, version: str, files: Sequence[LockedFile | str], get: Downloader,
    problems: Problems,
) -> list[bytes] | None:
    """Download each file; a `LockedFile` must match its pin, a bare URL is a new pin."""
    out: list[bytes] = []
    for f in files:
        url = f.url if isinstance(f, LockedFile) else f
        try:
            data = get.get(url)
        except DownloadError as exc:
            problems.error(f"{package.name} {version}", str(exc))
            return None
        if isinstance(f, LockedFile) and sha256(data) != f.sha256:
            problems.error(
                f"{ws.layout.lock}: packages.{package.name}",
                f"{url}: SHA-256 {sha256(data)} does not match the pinned {f.sha256}; the file changed "
                "since it was locked. Nothing was written",
            )
            return None
        out.append(data)
    return out


def _build(package: Package, version: str, files: list[bytes], problems: Problems) -> _Downloaded | None:
    try:
        built = build(files[0], package.patches)
    except BuildError as exc:
        problems.error(f"{package.name} {version}", f"{package.components_url(version)}: {exc}")
        return None
    return _Downloaded(package, version, files[0], files[1], built)


def _check_contracts(ws: Workspace, downloaded: Sequence[_Downloaded], problems: Problems) -> None:
    fresh = {d.package.name: d for d in downloaded}

    def source(package: Package) -> ContractSource:
        if package.name in fresh:
            d = fresh[package.name]
            return ws.contract_source(package, d.metadata.decode("utf-8", "replace"), package.metadata_url(d.version))
        path = ws.layout.file(package.name, METADATA)
        return ws.contract_source(package, ws.vendored_metadata(package), str(path))

    core = ws.catalogue.core
    others = [source(d.package) for d in downloaded if d.package.name != core.name]
    problems.extend(check_contracts(source(core), others))


def lock(ws: Workspace, names: Sequence[str], get: Downloader) -> tuple[list[str], Problems]:
    """Pin the targets' current versions; returns the report and warnings, writes the lock only when clean."""
    problems = Problems(ws.warnings)
    report: list[str] = []
    new_lock: Lock = ws.lock
    downloaded: list[_Downloaded] = []
    for package in ws.targets(names):
        version, _ = ws.platform.version(package)
        urls = (package.components_url(version), package.metadata_url(version))
        entry = ws.lock.packages.get(package.name)
        same_files = entry is not None and entry.version == version and (
            entry.components.url, entry.metadata.url) == urls
        if same_files and entry is not None and entry.patches == _patch_record(package):
            report.append(f"{package.name} {version}: already pinned, unchanged")
            continue
        pins: Sequence[LockedFile | str] = [entry.components, entry.metadata] if same_files and entry else urls
        files = _download_pinned(ws, package, version, pins, get, problems)
        result = _build(package, version, files, problems) if files else None
        if result is None:
            continue
        downloaded.append(result)
        new_lock = new_lock.with_package(package.name, _entry(result, urls))
        report.extend(_describe(result, urls, "patches re-pinned" if same_files else "pinned"))
    _check_contracts(ws, downloaded, problems)
    if problems.errors:
        raise InvalidInput(problems)
    if new_lock != ws.lock:
        write_lock(ws.layout.lock, new_lock)
    return report, problems


def _entry(d: _Downloaded, urls: tuple[str, str]) -> LockedPackage:
    return LockedPackage(
        version=d.version,
        components=LockedFile(url=urls[0], sha256=sha256(d.components)),
        metadata=LockedFile(url=urls[1], sha256=sha256(d.metadata)),
        vendored_sha256=sha256(d.built.components),
        patches=_patch_record(d.package),
    )


def _describe(d: _Downloaded, urls: tuple[str, str], what: str) -> list[str]:
    lines = [
        f"{d.package.name} {d.version}: {what}",
        f"  components  sha256:{sha256(d.components)}  {urls[0]}",
        f"  metadata    sha256:{sha256(d.metadata)}  {urls[1]}",
        f"  vendored    sha256:{sha256(d.built.components)}  {COMPONENTS} after patches",
    ]
    lines.extend(f"  patch       sha256:{p.digest()}  {p.id}" for p in d.package.patches)
    return lines


def _pinned_entry(ws: Workspace, package: Package, problems: Problems) -> LockedPackage | None:
    """The lock entry `fetch` may use: same version as asked for, same patches as declared."""
    before = len(problems.errors)
    version, at = ws.platform.version(package)
    entry = ws.lock.packages.get(package.name)
    if entry is None:
        problems.error(f"{ws.layout.lock}: packages.{package.name}",
                       f"no pin for {package.name}; run `tenantctl vendor lock {package.name}` first")
        return None
    if entry.version != version:
        problems.error(at, f"{package.name} is {version} here but {ws.layout.lock} pins {entry.version}; "
                       f"run `tenantctl vendor lock {package.name}` to pin {version}")
        return None
    declared = {p.id: p for p in _patch_record(package)}
    pinned = {p.id: p for p in entry.patches}
    for pid in sorted(declared.keys() | pinned.keys()):
        if declared.get(pid) != pinned.get(pid):
            problems.error(
                f"{ws.layout.lock}: packages.{package.name}.patches",
                f"patch {pid}: declared sha256 {_sha(declared.get(pid))}, pinned {_sha(pinned.get(pid))}; "
                f"run `tenantctl vendor lock {package.name}` to accept the change",
            )
    return entry if len(problems.errors) == before else None


def _sha(p: LockedPatch | None) -> str:
    return p.sha256 if p else "(none)"


def fetch(ws: Workspace, names: Sequence[str], get: Downloader) -> tuple[list[str], Problems]:
    """Download, verify against the lock, patch and write the vendored files of every target."""
    problems = Problems(ws.warnings)
    ready: list[_Downloaded] = []
    for package in ws.targets(names):
        entry = _pinned_entry(ws, package, problems)
        if entry is None:
            continue
        files = _download_pinned(ws, package, entry.version, [entry.components, entry.metadata], get, problems)
        result = _build(package, entry.version, files, problems) if files else None
        if result is None:
            continue
        if sha256(result.built.components) != entry.vendored_sha256:
            problems.error(
                f"{ws.layout.lock}: packages.{package.name}.vendored-sha256",
                f"patched {COMPONENTS} has sha256 {sha256(result.built.components)}, the lock pins "
                f"{entry.vendored_sha256}; this tenantctl patches differently — review and re-run "
                f"`tenantctl vendor lock {package.name}`",
            )
            continue
        ready.append(result)
    _check_contracts(ws, ready, problems)
    if problems.errors:
        raise InvalidInput(problems)
    for d in ready:
        _write_package(ws.layout.package(d.package.name), {
            COMPONENTS: d.built.components, BLOB: d.built.blob, METADATA: d.metadata,
        })
    return [f"{d.package.name} {d.version}: vendored into {ws.layout.package(d.package.name)}" for d in ready], problems


def _write_package(directory: Path, files: dict[str, bytes]) -> None:
    """Swap the package directory in whole, so a failed write never leaves a mix of versions."""
    staging: Path | None = None
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=directory.parent, prefix=f".{directory.name}."))
        for name, data in files.items():
            (staging / name).write_bytes(data)
        if directory.exists():
            retired = Path(tempfile.mkdtemp(dir=directory.parent, prefix=f".{directory.name}.old."))
            directory.rename(retired / directory.name)
            try:
                staging.rename(directory)
            except OSError:
                (retired / directory.name).rename(directory)
                raise
            finally:
                shutil.rmtree(retired, ignore_errors=True)
        else:
            staging.rename(directory)
    except OSError as exc:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        raise InvalidInput([Problem(str(directory), f"cannot write: {exc.strerror or exc}")]) from None

"""`providers.lock`: per package the version, URLs, SHA-256 of each download, and the patches applied.

Read with tomllib; written by a small writer whose output depends only on the lock's content, so a
re-lock that changes nothing leaves the file byte-identical and a real change is a one-line diff.
"""

from __future__ import annotations

import os
import re
import tempfile
import tomllib
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tenantctl.problems import InvalidInput, Problem
from tenantctl.spec.errors import problems_from_validation_error

__all__ = ["Lock", "LockedFile", "LockedPackage", "LockedPatch", "dumps", "read_lock", "write_lock"]

FORMAT = 1
_HEADER = (
    "# Written by `tenantctl vendor lock`: the pins `vendor fetch` and `vendor check` enforce.\n"
    "# A pin changes only by running `tenantctl vendor lock`; a hand edit shows up as drift.\n"
)
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


class _LockModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=lambda name: name.replace("_", "-"), populate_by_name=True, extra="forbid", frozen=True
    )


class LockedFile(_LockModel):
    url: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class LockedPatch(_LockModel):
    id: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class LockedPackage(_LockModel):
    version: str
    components: LockedFile
    metadata: LockedFile
    vendored_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    patches: tuple[LockedPatch, ...] = ()


class Lock(_LockModel):
    format: int = FORMAT
    packages: dict[str, LockedPackage] = Field(default_factory=dict)

    def with_package(self, name: str, package: LockedPackage) -> Lock:
        return Lock(format=self.format, packages={**self.packages, name: package})


def read_lock(path: Path) -> Lock:
    """The lock at `path`, or an empty one if there is none yet; malformed content is refused."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Lock()
    except OSError as exc:
        raise InvalidInput([Problem(str(path), f"cannot read the lock: {exc.strerror or exc}")]) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput([Problem(str(path), f"malformed TOML: {exc}")]) from None
    try:
        lock = Lock.model_validate(raw)
    except ValidationError as exc:
        problems = problems_from_validation_error(exc, Lock, "LOCK")
        raise InvalidInput(
            [Problem(p.path.replace("LOCK.", f"{path}: ", 1), p.message) for p in problems]
        ) from None
    if lock.format != FORMAT:
        raise InvalidInput([Problem(f"{path}: format", f"lock format {lock.format} is not {FORMAT}; "
                                    "this tenantctl cannot read it")])
    return lock


def _string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(c if c >= " " and c != "\x7f" else f"\\u{ord(c):04x}" for c in escaped)
    return f'"{escaped}"'


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _string(key)


def _inline(table: Mapping[str, str]) -> str:
    return "{ " + ", ".join(f"{_key(k)} = {_string(v)}" for k, v in table.items()) + " }"


def dumps(lock: Lock) -> str:
    """TOML text of `lock`: packages sorted by name, fields in a fixed order."""
    lines = [_HEADER, f"format = {lock.format}\n"]
    for name in sorted(lock.packages):
        pkg = lock.packages[name]
        lines.append(f"\n[packages.{_key(name)}]\n")
        lines.append(f"version = {_string(pkg.version)}\n")
        lines.append(f"components = {_inline({'url': pkg.components.url, 'sha256': pkg.components.sha256})}\n")
        lines.append(f"metadata = {_inline({'url': pkg.metadata.url, 'sha256': pkg.metadata.sha256})}\n")
        lines.append(f"vendored-sha256 = {_string(pkg.vendored_sha256)}\n")
        if pkg.patches:
            lines.append("patches = [\n")
            lines.extend(f"  {_inline({'id': p.id, 'sha256': p.sha256})},\n" for p in pkg.patches)
            lines.append("]\n")
        else:
            lines.append("patches = []\n")
    return "".join(lines)


def write_lock(path: Path, lock: Lock) -> None:
    """Replace the lock atomically: a reader sees the old file or the new one, never half of one."""
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            out.write(dumps(lock))
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise InvalidInput([Problem(str(path), f"cannot write the lock: {exc.strerror or exc}")]) from None

"""providers.lock: deterministic TOML out, strict TOML in."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tenantctl.problems import InvalidInput
from tenantctl.providers.lockfile import Lock, LockedFile, LockedPackage, LockedPatch, dumps, read_lock, write_lock

A, B, C = "a" * 64, "b" * 64, "c" * 64


def package(version: str = "v0.7.7", patches: tuple[LockedPatch, ...] = ()) -> LockedPackage:
    return LockedPackage(
        version=version,
        components=LockedFile(url=f"https://github.com/o/r/releases/download/{version}/infrastructure-components.yaml",
                              sha256=A),
        metadata=LockedFile(url=f"https://github.com/o/r/releases/download/{version}/metadata.yaml", sha256=B),
        vendored_sha256=C,
        patches=patches,
    )


LOCK = Lock(packages={
    "infrastructure-proxmox": package(),
    "core": package("v1.10.1", (LockedPatch(id="p", sha256=A),)),
})


def test_round_trip(tmp_path: Path) -> None:
    write_lock(tmp_path / "providers.lock", LOCK)
    assert read_lock(tmp_path / "providers.lock") == LOCK


def test_output_depends_only_on_content() -> None:
    reordered = Lock(packages=dict(reversed(list(LOCK.packages.items()))))
    assert dumps(reordered) == dumps(LOCK)


def test_the_written_text_is_the_documented_shape() -> None:
    text = dumps(Lock(packages={"core": package("v1.10.1", (LockedPatch(id="p", sha256=A),))}))
    assert text.splitlines()[2:] == [
        "format = 1",
        "",
        "[packages.core]",
        'version = "v1.10.1"',
        f'components = {{ url = "https://github.com/o/r/releases/download/v1.10.1/infrastructure-components.yaml", '
        f'sha256 = "{A}" }}',
        f'metadata = {{ url = "https://github.com/o/r/releases/download/v1.10.1/metadata.yaml", sha256 = "{B}" }}',
        f'vendored-sha256 = "{C}"',
        "patches = [",
        f'  {{ id = "p", sha256 = "{A}" }},',
        "]",
    ]


def test_strings_are_escaped() -> None:
    odd = package().model_copy(update={"version": 'v"1\\\n'})
    assert tomllib.loads(dumps(Lock(packages={"a b": odd})))["packages"]["a b"]["version"] == 'v"1\\\n'


def test_a_missing_lock_is_empty(tmp_path: Path) -> None:
    assert read_lock(tmp_path / "providers.lock") == Lock()


def test_malformed_toml_is_refused_with_its_position(tmp_path: Path) -> None:
    (tmp_path / "providers.lock").write_text("format = 1\n[packages.core\n")
    with pytest.raises(InvalidInput) as exc:
        read_lock(tmp_path / "providers.lock")
    assert "malformed TOML" in str(exc.value) and "line 2" in str(exc.value)


def test_a_bad_digest_is_refused_naming_the_field(tmp_path: Path) -> None:
    text = dumps(LOCK).replace(f'vendored-sha256 = "{C}"', 'vendored-sha256 = "xyz"', 1)
    (tmp_path / "providers.lock").write_text(text)
    with pytest.raises(InvalidInput) as exc:
        read_lock(tmp_path / "providers.lock")
    [problem] = exc.value.errors
    assert problem.path == f"{tmp_path / 'providers.lock'}: packages.core.vendored-sha256"
    assert "'xyz'" in problem.message


def test_an_unknown_key_is_refused(tmp_path: Path) -> None:
    (tmp_path / "providers.lock").write_text(dumps(LOCK).replace("format = 1", "format = 1\nformt = 2"))
    with pytest.raises(InvalidInput, match="unknown field 'formt'"):
        read_lock(tmp_path / "providers.lock")


def test_a_newer_format_is_refused(tmp_path: Path) -> None:
    (tmp_path / "providers.lock").write_text(dumps(LOCK).replace("format = 1", "format = 2"))
    with pytest.raises(InvalidInput, match="lock format 2 is not 1"):
        read_lock(tmp_path / "providers.lock")


def test_an_unreadable_lock_is_refused(tmp_path: Path) -> None:
    (tmp_path / "providers.lock").mkdir()
    with pytest.raises(InvalidInput, match="cannot read the lock"):
        read_lock(tmp_path / "providers.lock")


def test_writing_leaves_no_temporary_file(tmp_path: Path) -> None:
    write_lock(tmp_path / "providers.lock", LOCK)
    write_lock(tmp_path / "providers.lock", LOCK)
    assert [p.name for p in tmp_path.iterdir()] == ["providers.lock"]


def test_a_lock_that_cannot_be_written_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "providers.lock").mkdir()
    with pytest.raises(InvalidInput) as exc:
        write_lock(tmp_path / "providers.lock", LOCK)
    assert str(exc.value).startswith(f"{tmp_path / 'providers.lock'}: cannot write the lock:")
    assert [p.name for p in tmp_path.iterdir()] == ["providers.lock"]


def test_only_the_root_of_a_refused_path_becomes_the_file(tmp_path: Path) -> None:
    """A package may be named anything TOML allows, the lock's own root name included."""
    bad = package().model_copy(update={"vendored_sha256": "xyz"})
    (tmp_path / "providers.lock").write_text(dumps(Lock(packages={"LOCK.core": bad})))
    with pytest.raises(InvalidInput) as exc:
        read_lock(tmp_path / "providers.lock")
    [problem] = exc.value.errors
    assert problem.path.startswith(f"{tmp_path / 'providers.lock'}: packages.")
    assert problem.path.count("LOCK.core") == 1 and problem.path.endswith("vendored-sha256"), problem.path

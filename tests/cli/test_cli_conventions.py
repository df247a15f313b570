"""One tool: every command, present and future, follows the same flag conventions.

The walk goes through the whole typer app (groups and their sub-commands), so a command added later
that names its input `--file`, takes a path as `-o` or reads a positional file fails here.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

import typer
from typer.testing import CliRunner

from tenantctl.cli import app

# Commands that render a tenant's add-ons or list its images: chart sources and images matter there.
RENDERS_ADD_ONS = {"render", "validate", "audit", "images", "plan"}


def commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """Every leaf command with its full name (`providers secret proxmox`)."""
    subs = getattr(group, "commands", None)
    if subs is None:
        yield " ".join(path), group
        return
    for name, sub in subs.items():
        yield from commands(sub, (*path, name))


def _annotation(param: Any) -> Any:
    """The Python type the parameter was declared with, `X | None` and `list[X]` unwrapped."""
    annotation = param.type_descriptor.annotation
    while get_origin(annotation) is not Literal and (args := [a for a in get_args(annotation) if a is not type(None)]):
        annotation = args[0]
    return annotation


def _is_choice(param: Any) -> bool:
    annotation = _annotation(param)
    return get_origin(annotation) is Literal or (isinstance(annotation, type) and issubclass(annotation, Enum))


def violations(root: typer.Typer) -> list[str]:
    """What breaks the conventions, one line per command and flag."""
    found: list[str] = []
    for name, command in commands(typer.main.get_command(root)):
        flags = {flag for p in command.params if p.param_type_name == "option" for flag in p.opts}
        for param in command.params:
            opts = set(param.opts)
            if param.param_type_name == "argument" and _annotation(param) is Path:
                found.append(f"{name}: reads file argument {param.name!r}; take it as -f/--filename")
            if "--file" in opts:
                found.append(f"{name}: --file; the input file flag is -f/--filename")
            if "-f" in opts and "--filename" not in opts:
                found.append(f"{name}: -f without --filename ({sorted(opts)})")
            if "-o" in opts and ("--output" not in opts or not _is_choice(param)):
                found.append(f"{name}: -o is not an output format ({sorted(opts)}); a path takes --out")
        if ("--observed" in flags or name in RENDERS_ADD_ONS) and "--platform" not in flags:
            found.append(f"{name}: renders add-ons or images but has no --platform")
    return found


def test_every_command_follows_the_flag_conventions() -> None:
    assert violations(app) == []


def test_the_walk_reaches_nested_commands() -> None:
    names = {name for name, _ in commands(typer.main.get_command(app))}
    assert {"render", "validate", "doctor proxmox", "providers secret proxmox", "e2e render-fixture"} <= names


def test_a_command_breaking_the_conventions_is_caught() -> None:
    """The checker itself: each broken convention on a throwaway app is named."""
    bad = typer.Typer()
    sub = typer.Typer()
    bad.add_typer(sub, name="group")

    @sub.command("write")
    def write(
        template: Annotated[Path, typer.Argument()],
        out: Annotated[Path, typer.Option("-o", "--out")],
        spec: Annotated[Path, typer.Option("-f", "--file")],
    ) -> None: ...

    @bad.command("render")
    def render(observed: Annotated[Path, typer.Option("--observed")]) -> None: ...

    found = "\n".join(violations(bad))
    assert "group write: reads file argument 'template'" in found
    assert "group write: -o is not an output format" in found
    assert "group write: --file" in found and "group write: -f without --filename" in found
    assert "render: renders add-ons or images but has no --platform" in found


def test_version_comes_from_the_package_metadata() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"tenantctl {version('tenantctl')}\n"


def test_render_takes_the_kamaji_release_from_the_platform(tmp_path: Path) -> None:
    """v1.36 is refused with the tested default Kamaji, and renders with a Platform that declares one serving it."""
    import yaml

    from tenant_support import EXAMPLES

    docs = list(yaml.safe_load_all((EXAMPLES / "kubevirt.yaml").read_text()))
    docs[0]["spec"]["version"] = "v1.36"
    tenant = tmp_path / "tenant.yaml"
    tenant.write_text(yaml.safe_dump_all(docs))
    refused = CliRunner().invoke(app, ["render", "-f", str(tenant)])
    assert refused.exit_code == 2
    assert "Kubernetes v1.36 needs Kamaji 26.5.3-edge or newer" in refused.output
    platform = yaml.safe_load((EXAMPLES / "platform.yaml").read_text())
    platform["spec"]["kamaji"] = {"version": "26.8.2-edge"}
    (tmp_path / "platform.yaml").write_text(yaml.safe_dump(platform))
    accepted = CliRunner().invoke(app, ["render", "-f", str(tenant), "--platform", str(tmp_path / "platform.yaml")])
    assert accepted.exit_code == 0, accepted.output
    assert "version: v1.36.1" in accepted.output


def test_validate_refuses_a_skipped_minor_against_the_live_object(tmp_path: Path) -> None:
    import yaml

    from tenant_support import EXAMPLES

    docs = list(yaml.safe_load_all((EXAMPLES / "kubevirt.yaml").read_text()))
    live = {"apiVersion": "v1", "kind": "List", "items": [docs[0]]}
    (tmp_path / "live.yaml").write_text(yaml.safe_dump(live))
    docs[0]["spec"]["version"] = "v1.35"
    (tmp_path / "tenant.yaml").write_text(yaml.safe_dump_all(docs))
    args = ["validate", "-f", str(tmp_path / "tenant.yaml")]
    refused = CliRunner().invoke(app, [*args, "--live", str(tmp_path / "live.yaml")])
    assert refused.exit_code == 2
    assert ("TenantCluster/demo.spec.version: v1.33 → v1.35 skips a minor: Kamaji and the Kubernetes skew policy "
            "upgrade one minor at a time") in refused.output
    assert CliRunner().invoke(app, args).exit_code == 0, "without the live object there is no change to judge"

"""`tenantctl providers …` and `tenantctl vendor …`; modules load inside commands to keep start-up fast."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from tenantctl.cli.commands import summary
from tenantctl.cli.support import command_group, refusals_exit_2
from tenantctl.problems import Problems

__all__ = ["register"]

PlatformFile = Annotated[Path, typer.Option("-f", "--filename", help="The platform file (its directory holds "
                                            "providers.lock and vendor/).")]
Components = Annotated[Path | None, typer.Option("--components", help="Vendored packages directory "
                                                 "(usually <platform dir>/vendor); without it no ConfigMaps.")]
Mirror = Annotated[str | None, typer.Option("--mirror", help="Download through a mirror serving the upstream "
                                            "paths (e.g. http://mirror.internal/github); pins still apply.")]

providers_app = command_group(name="providers", help=summary("providers"),
                            no_args_is_help=True)
secret_app = command_group(name="secret", help="Print a provider's credentials Secret.", no_args_is_help=True)
vendor_app = command_group(name="vendor", help=summary("vendor"),
                         no_args_is_help=True)
providers_app.add_typer(secret_app)


def _show_warnings(problems: Problems) -> None:
    from tenantctl.cli.support import print_problems

    if problems.warnings:
        sys.stdout.flush()
        print_problems(problems.warnings)


@providers_app.command("render", short_help="Print the capi-operator objects.")
@refusals_exit_2
def render_command(
    file: PlatformFile,
    components: Components = None,
    output: Annotated[Literal["yaml", "json"], typer.Option("--output", "-o")] = "yaml",
) -> None:
    """Print the capi-operator objects (and, with --components, the ConfigMaps) of the enabled packages."""
    from tenantctl.documents import dump_objects
    from tenantctl.providers.assemble import render_workspace
    from tenantctl.providers.workspace import open_workspace

    objects, problems = render_workspace(open_workspace(file, components), components is not None)
    sys.stdout.write(dump_objects(objects, output))
    _show_warnings(problems)


@providers_app.command("plan", short_help="What capi-operator will apply, per provider.")
@refusals_exit_2
def plan_command(
    file: PlatformFile,
    previous: Annotated[Path, typer.Option("--previous", help="The render applied last (a file).")],
    components: Components = None,
) -> None:
    """Say per provider whether capi-operator will apply this render's change or silently ignore it."""
    from tenantctl.documents import RENDERED_LIMITS, load_file
    from tenantctl.problems import InvalidInput
    from tenantctl.providers.assemble import render_workspace
    from tenantctl.providers.plan import plan
    from tenantctl.providers.workspace import open_workspace

    before = load_file(previous, RENDERED_LIMITS)
    current, render_problems = render_workspace(open_workspace(file, components), components is not None)
    verdicts, problems = plan(before, current, str(previous))
    for verdict in verdicts:
        print(verdict)
    print("(a change to a provider's config Secret data also re-applies it; tenantctl does not see that data)")
    problems.extend(render_problems.warnings)
    if problems.errors:
        raise InvalidInput(problems)
    _show_warnings(problems)


@secret_app.command("proxmox", short_help="Print capmox's Proxmox credentials Secret.")
@refusals_exit_2
def proxmox_secret_command(
    url: Annotated[str, typer.Option("--url", help="Proxmox VE base URL, e.g. https://pve.example:8006")],
    token_id: Annotated[str, typer.Option("--token-id", help="API token id, USER@REALM!TOKENNAME")],
    token_secret_env: Annotated[str, typer.Option("--token-secret-env", help="NAME of the environment "
                                                  "variable holding the token secret (never the secret)")],
    file: Annotated[Path | None, typer.Option("-f", "--filename", help="Take name and namespace from this "
                                              "platform's credentialsSecret.")] = None,
    name: Annotated[str | None, typer.Option("--name", help="Secret name [default: capmox-credentials]")] = None,
    namespace: Annotated[str | None, typer.Option("--namespace", help="[default: capmox-system]")] = None,
) -> None:
    """Print the Secret capmox reads its Proxmox credentials from (apply it before the provider)."""
    from tenantctl.documents import dump_objects
    from tenantctl.providers.secret import check_proxmox_url, check_token_id, proxmox_secret, read_token_secret

    problems = Problems()
    check_proxmox_url(url, problems)
    check_token_id(token_id, problems)
    token_secret = read_token_secret(token_secret_env, os.environ, problems)
    target = _secret_target(file, name, namespace, problems)
    problems.raise_if_errors()
    sys.stdout.write(dump_objects([proxmox_secret(*target, url, token_id, token_secret)]))


def _secret_target(
    file: Path | None, name: str | None, namespace: str | None, problems: Problems
) -> tuple[str, str]:
    from tenantctl.providers.catalogue import load_catalogue
    from tenantctl.providers.platform import load_platform

    package = load_catalogue().get("infrastructure-proxmox")
    if file is None:
        return name or "capmox-credentials", namespace or package.namespace
    for flag, value in (("--name", name), ("--namespace", namespace)):
        if value is not None:
            problems.error(flag, f"{value!r} given together with --filename {file}; the platform names the Secret")
    platform = load_platform(file, load_catalogue())
    secret = platform.setting(package.name).credentials_secret
    if secret is None or not secret.name:
        problems.error(f"{platform.at}.spec.packages.{package.name}.credentialsSecret.name",
                       "not set, so there is no Secret name to print for")
        return "", ""
    return secret.name, secret.namespace or package.namespace


@vendor_app.command("lock", short_help="Pin each package: download once, record hashes.")
@refusals_exit_2
def lock_command(
    file: PlatformFile,
    packages: Annotated[list[str] | None, typer.Argument(help="Packages to pin (default: all enabled).")] = None,
    mirror: Mirror = None,
) -> None:
    """Pin each package's version: download it once, record and show every file's SHA-256."""
    from tenantctl.providers.download import Downloader
    from tenantctl.providers.vendoring import lock
    from tenantctl.providers.workspace import open_workspace

    ws = open_workspace(file)
    get = Downloader(mirror)
    try:
        report, problems = lock(ws, packages or [], get)
    finally:
        get.close()
    print("\n".join(report))
    _show_warnings(problems)


@vendor_app.command("fetch", short_help="Download the pinned files and verify them.")
@refusals_exit_2
def fetch_command(
    file: PlatformFile,
    packages: Annotated[list[str] | None, typer.Argument(help="Packages to vendor (default: all enabled).")] = None,
    mirror: Mirror = None,
) -> None:
    """Download the pinned files, verify them, apply the declared patches, write YAML + gzip blob."""
    from tenantctl.providers.download import Downloader
    from tenantctl.providers.vendoring import fetch
    from tenantctl.providers.workspace import open_workspace

    ws = open_workspace(file)
    get = Downloader(mirror)
    try:
        report, problems = fetch(ws, packages or [], get)
    finally:
        get.close()
    print("\n".join(report))
    _show_warnings(problems)


@vendor_app.command("check", short_help="Offline drift check for CI.")
@refusals_exit_2
def check_command(
    file: PlatformFile,
    rendered: Annotated[list[Path] | None, typer.Option("--rendered", help="A committed `providers render` "
                                                        "output to hold to the lock (repeatable).")] = None,
) -> None:
    """Offline drift check for CI: blob == YAML, files == lock, versions agree, patches in the blob."""
    from tenantctl.documents import RENDERED_LIMITS, load_file
    from tenantctl.problems import InvalidInput
    from tenantctl.providers.check import check_workspace
    from tenantctl.providers.workspace import open_workspace

    ws = open_workspace(file)
    problems = check_workspace(ws, [(str(p), load_file(p, RENDERED_LIMITS)) for p in rendered or []])
    if problems.errors:
        raise InvalidInput(problems)
    _show_warnings(problems)
    print(f"vendor check: {len(ws.selection.packages)} package(s) match {ws.layout.lock}")


def register(app: typer.Typer) -> None:
    """Attach `providers` and `vendor` to the root app."""
    app.add_typer(providers_app)
    app.add_typer(vendor_app)

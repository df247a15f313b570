"""`tenantctl doctor proxmox|management`: the preflights a platform engineer runs before any tenant exists."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from tenantctl.cli.commands import summary
from tenantctl.cli.support import command_group, refusals_exit_2
from tenantctl.problems import Problem

__all__ = ["TOKEN_SECRET_ENV", "register"]

TOKEN_SECRET_ENV = "PROXMOX_TOKEN_SECRET"


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"


class ControllerChoice(StrEnum):
    CAPMOX = "capmox"
    CSI = "csi"
    CCM = "ccm"


doctor_app = command_group(help=summary("doctor"), no_args_is_help=True)


@doctor_app.command("proxmox", short_help="Check a Proxmox stand against a tenant spec.")
@refusals_exit_2
def proxmox(
    file: Annotated[Path, typer.Option("-f", "--filename", help="TenantCluster + NodePool YAML (- for stdin).")],
    url: Annotated[str, typer.Option("--url", help="Proxmox URL as capmox gets it, e.g. https://pve:8006.")],
    token_id: Annotated[str, typer.Option("--token-id", help="API token id, user@realm!name.")],
    cluster: Annotated[str | None, typer.Option("--cluster", help="TenantCluster name when several.")] = None,
    ca_file: Annotated[Path | None, typer.Option("--ca-file", help="CA bundle for the Proxmox certificate.")] = None,
    controller: Annotated[
        list[ControllerChoice] | None,
        typer.Option("--controller", help="Check the token for these controllers only (repeatable)."),
    ] = None,
    output: Annotated[OutputFormat, typer.Option("-o", "--output")] = OutputFormat.TABLE,
    credentials_secret: Annotated[Path | None, typer.Option(
        "--credentials-secret", help="The capmox Secret manifest the tenant names: its keys and TLS choice.")] = None,
) -> None:
    """Check a Proxmox stand against a tenant spec; the token secret is read from PROXMOX_TOKEN_SECRET.

    Exit 1 on any FAIL, 0 otherwise, 2 on unusable input.
    """
    from tenantctl.cli.report import render_json, render_table
    from tenantctl.documents import load_file
    from tenantctl.problems import InvalidInput
    from tenantctl.proxmox.client import Target
    from tenantctl.proxmox.doctor import doctor, pick_cluster
    from tenantctl.proxmox.privileges import Controller
    from tenantctl.spec import parse_tenant_documents

    secret = os.environ.get(TOKEN_SECRET_ENV, "")
    problems = []
    if not secret:
        problems.append(
            Problem(TOKEN_SECRET_ENV, "unset or empty: export the token secret (never pass it as an argument)")
        )
    if "!" not in token_id:
        problems.append(Problem("--token-id", f"{token_id!r} is not of the form user@realm!tokenname"))
    credentials = _credentials(credentials_secret, problems) if credentials_secret is not None else None
    if problems:
        raise InvalidInput(problems)
    tenant = parse_tenant_documents(load_file(file))
    tc = pick_cluster(tenant, cluster)
    insecure = bool(tc.spec.proxmox and tc.spec.proxmox.insecure)
    target = Target(url, token_id, secret, insecure=insecure, ca_file=str(ca_file) if ca_file else None)
    chosen = [Controller(c.value) for c in controller] if controller else list(Controller)
    report = doctor(tenant, target, cluster=cluster, controllers=chosen, credentials=credentials)
    if output is OutputFormat.JSON:
        typer.echo(render_json(report), nl=False)
    else:
        render_table(report)
    raise typer.Exit(report.exit_code)


def _credentials(path: Path, problems: list[Problem]) -> tuple[str, dict[str, str]] | None:
    """The one Secret in the manifest at `path`, as (subject, decoded data); refusals go to `problems`."""
    from tenantctl.credentials.capmox import secret_data
    from tenantctl.documents import load_file
    from tenantctl.problems import InvalidInput

    try:
        docs = load_file(path)
    except InvalidInput as exc:
        problems.extend(exc.problems)
        return None
    secrets = [d for d in docs if d.get("kind") == "Secret"]
    if len(secrets) != 1:
        problems.append(Problem("--credentials-secret", f"{str(path)!r} holds {len(secrets)} Secret documents; "
                                "give a file with exactly the one capmox reads"))
        return None
    meta = secrets[0].get("metadata") or {}
    return f"Secret {meta.get('namespace', '?')}/{meta.get('name', '?')}", secret_data(secrets[0])


@doctor_app.command("management", short_help="Check the management cluster's providers.")
@refusals_exit_2
def management(
    kubeconfig: Annotated[Path | None, typer.Option(help="Kubeconfig of the management cluster.")] = None,
    context: Annotated[str | None, typer.Option(help="Kubeconfig context (default: current).")] = None,
    platform: Annotated[
        Path | None, typer.Option("--platform", help="Platform YAML: its spec.kamaji.version is the Kamaji release.")
    ] = None,
    output: Annotated[OutputFormat, typer.Option("-o", "--output")] = OutputFormat.TABLE,
) -> None:
    """Check the management cluster: the CRDs tenantctl needs, the controllers behind them, capi-operator's
    providers, the Kamaji release and its DataStores. Read-only.

    Exit 1 on any FAIL, 0 otherwise, 2 on unusable input.
    """
    import asyncio

    from tenantctl.cli.report import render_json, render_table
    from tenantctl.cli.tenant import platform_settings
    from tenantctl.operator.daytwo.management import doctor_management
    from tenantctl.operator.kube.client import APIError, KubeClient
    from tenantctl.operator.kube.connect import management_connection
    from tenantctl.spec.compat import DEFAULT_KAMAJI

    kamaji = platform_settings(platform)[2]
    declared = None if kamaji is DEFAULT_KAMAJI else kamaji  # a Platform that names no release declares none

    async def run() -> Any:
        async with KubeClient(management_connection(kubeconfig, context)) as api:
            return await doctor_management(api, declared)

    try:
        report = asyncio.run(run())
    except APIError as exc:
        typer.echo(f"management cluster: {exc}", err=True)
        raise typer.Exit(1) from None
    if output is OutputFormat.JSON:
        typer.echo(render_json(report), nl=False)
    else:
        render_table(report)
    raise typer.Exit(report.exit_code)


def register(app: typer.Typer) -> None:
    """Attach `doctor` to the root app."""
    app.add_typer(doctor_app, name="doctor")

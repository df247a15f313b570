"""`tenantctl e2e`: render a stand fixture and run the live-stand sequence."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from tenantctl.cli.commands import summary
from tenantctl.cli.support import command_group, refusals_exit_2

__all__ = ["register"]



class ReportFormat(StrEnum):
    TABLE = "table"
    JSON = "json"


e2e_app = command_group(help="End-to-end harness for a live management cluster + Proxmox stand.",
                        short_help=summary("e2e"), no_args_is_help=True)


@e2e_app.command("render-fixture", short_help="Fill the stand variables from the environment.")
@refusals_exit_2
def render_fixture_command(
    template: Annotated[Path, typer.Option("-f", "--filename", help="Fixture with ${TENANTCTL_*} placeholders.")],
    out: Annotated[Path | None, typer.Option("--out", help="Write here instead of stdout.")] = None,
) -> None:
    """Fill the stand variables from the environment (defaults in code); exit 2 naming every gap."""
    from tenantctl.e2e.fixture import render_fixture
    from tenantctl.problems import InvalidInput, Problem

    try:
        text = template.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput([Problem(str(template), f"cannot read file: {exc.strerror or exc}")]) from None
    rendered = render_fixture(text, os.environ, str(template))
    if out is None:
        typer.echo(rendered, nl=False)
    else:
        out.write_text(rendered, encoding="utf-8")


@e2e_app.command("run", short_help="Create a tenant on a live stand and prove it.")
@refusals_exit_2
def run_command(
    file: Annotated[Path, typer.Option("-f", "--filename", help="The rendered fixture.")],
    kubeconfig: Annotated[
        str, typer.Option("--kubeconfig", envvar="TENANTCTL_KUBECONFIG", help="Management cluster kubeconfig.")
    ],
    pve_url: Annotated[str, typer.Option("--pve-url", envvar="TENANTCTL_PVE_URL", help="Proxmox URL.")],
    token_id: Annotated[
        str, typer.Option("--token-id", envvar="TENANTCTL_PVE_TOKEN_ID", help="Token that reads the storages.")
    ],
    ca_file: Annotated[Path | None, typer.Option("--ca-file", help="CA bundle for the Proxmox certificate.")] = None,
    keep_tenant: Annotated[bool, typer.Option("--keep-tenant", help="Leave the tenant running afterwards.")] = False,
    timeout_nodes: Annotated[float, typer.Option(help="Seconds to wait for Ready workers.")] = 1200,
    timeout_volume: Annotated[float, typer.Option(help="Seconds to wait for the claim and the probe.")] = 300,
    timeout_teardown: Annotated[float, typer.Option(help="Seconds to wait for the tenant to go.")] = 900,
    poll: Annotated[float, typer.Option(help="Seconds between two looks while waiting.")] = 5,
    output: Annotated[ReportFormat, typer.Option("-o", "--output", help="Output format.")] = ReportFormat.TABLE,
) -> None:
    """Create the fixture's tenant, wait for its nodes, prove a volume on the hypervisor, tear down.

    The Proxmox token secret is read from PROXMOX_TOKEN_SECRET. Exit 1 when a step fails.
    """
    from tenantctl.cli.report import render_json, render_table
    from tenantctl.documents import load_file
    from tenantctl.e2e.kube import Kube
    from tenantctl.e2e.run import Harness, Timeouts, run_sequence
    from tenantctl.problems import InvalidInput, Problem
    from tenantctl.proxmox.client import Target, connect
    from tenantctl.spec import parse_tenant_documents

    secret = os.environ.get("PROXMOX_TOKEN_SECRET", "")
    if not secret:
        raise InvalidInput([Problem("PROXMOX_TOKEN_SECRET", "unset or empty: export the token secret")])
    docs = load_file(file)
    tenant = parse_tenant_documents(docs)
    if len(tenant.clusters) != 1 or tenant.clusters[0].spec.proxmox is None:
        raise InvalidInput([Problem(str(file), "the fixture must hold exactly one proxmox TenantCluster")])
    insecure = tenant.clusters[0].spec.proxmox.insecure
    target = Target(pve_url, token_id, secret, insecure=insecure, ca_file=str(ca_file) if ca_file else None)
    timeouts = Timeouts(nodes=timeout_nodes, volume=timeout_volume, disk_gone=timeout_volume,
                        tenant_gone=timeout_teardown, poll=poll)
    harness = Harness(Kube.from_file(kubeconfig), connect(target), docs, keep_tenant=keep_tenant, timeouts=timeouts)
    try:
        report = run_sequence(harness)
    finally:
        harness.close()
    if output is ReportFormat.JSON:
        typer.echo(render_json(report), nl=False)
    else:
        render_table(report)
    raise typer.Exit(report.exit_code)


def register(app: typer.Typer) -> None:
    """Attach `e2e` to the root app."""
    app.add_typer(e2e_app, name="e2e")

"""`tenantctl secret …`: per-tenant credentials Secrets; modules load inside commands to keep start-up fast."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from tenantctl.cli.commands import summary
from tenantctl.cli.support import command_group, refusals_exit_2

__all__ = ["register"]

secret_app = command_group(name="secret", help=summary("secret"), no_args_is_help=True)


@secret_app.command("proxmox-cluster", short_help="Print the Secret capmox reads for one tenant.")
@refusals_exit_2
def proxmox_cluster_command(
    name: Annotated[str, typer.Argument(help="Secret name: the TenantCluster's spec.proxmox.credentialsSecretName")],
    namespace: Annotated[str, typer.Option("--namespace", "-n", help="The tenant's namespace.")],
    url: Annotated[str, typer.Option("--url", help="Proxmox VE base URL, e.g. https://pve.example:8006")],
    token_id: Annotated[str, typer.Option("--token-id", help="API token id, USER@REALM!TOKENNAME")],
    token_secret_env: Annotated[str, typer.Option("--token-secret-env", help="NAME of the environment "
                                                  "variable holding the token secret (never the secret)")],
    root_ca: Annotated[Path | None, typer.Option("--root-ca", help="PEM CA capmox adds to the system roots.")] = None,
    insecure: Annotated[bool, typer.Option("--insecure", help="Let capmox skip TLS verification (match the "
                                           "TenantCluster's spec.proxmox.insecure).")] = False,
) -> None:
    """Print the Secret capmox reads for one tenant (ProxmoxCluster credentialsRef), `insecure` always set."""
    from tenantctl.credentials.capmox import capmox_secret
    from tenantctl.credentials.inputs import check_proxmox_url, check_root_ca, check_token_id, read_token_secret
    from tenantctl.documents import dump_objects
    from tenantctl.problems import Problems
    from tenantctl.spec.names import is_dns_label, is_dns_subdomain

    problems = Problems()
    if not is_dns_subdomain(name):
        problems.error("NAME", f"{name!r} is not a valid Secret name (a DNS subdomain: lower-case "
                       "alphanumerics, '-' and '.', at most 253 characters)")
    if not is_dns_label(namespace):
        problems.error("--namespace", f"{namespace!r} is not a valid namespace (a DNS label: lower-case "
                       "alphanumerics and '-', at most 63 characters)")
    check_proxmox_url(url, problems)
    check_token_id(token_id, problems)
    token_secret = read_token_secret(token_secret_env, os.environ, problems)
    ca = check_root_ca(root_ca, problems) if root_ca is not None else None
    problems.raise_if_errors()
    secret = capmox_secret(name, namespace, url=url.rstrip("/"), token_id=token_id, token_secret=token_secret,
                           insecure=insecure, root_ca=ca)
    sys.stdout.write(dump_objects([secret]))


def register(app: typer.Typer) -> None:
    """Attach `secret` to the root app."""
    app.add_typer(secret_app)

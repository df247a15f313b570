"""`tenantctl backup run|list|verify|restore`: a tenant's control-plane data to its bucket and back.

`run` is what the backup CronJob runs; `restore` what the restore Job runs (spec.restore). Both read
only what their Role grants (render/backup.py, render/restore.py). Failures of the datastore, the
bucket or the seal exit 1 with one line; refused input exits 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tenantctl.cli.commands import summary
from tenantctl.cli.support import command_group, refusals_exit_2

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from tenantctl.operator.kube.client import KubeClient

__all__ = ["register"]

EXIT_FAILED = 1
backup_app = command_group(name="backup", help=summary("backup"), no_args_is_help=True)

NameArgument = Annotated[str, typer.Argument(help="The TenantCluster's name.")]
NamespaceOption = Annotated[str, typer.Option("--namespace", "-n", help="The TenantCluster's namespace.")]
KubeconfigOption = Annotated[Path | None, typer.Option("--kubeconfig", help="Kubeconfig of the management cluster.")]
ContextOption = Annotated[str | None, typer.Option("--context", help="Kubeconfig context (default: current).")]
SourceOption = Annotated[
    str | None, typer.Option("--from", metavar="NAMESPACE/NAME", help="Whose backups (default: the tenant's own).")
]
WorkdirOption = Annotated[
    Path | None, typer.Option("--workdir", help="Where the datastore certificate is written while the command runs.")
]
EtcdctlOption = Annotated[str, typer.Option("--etcdctl", help="The etcdctl to run (default: from PATH).")]
PgBinOption = Annotated[
    Path | None, typer.Option("--pg-bin", help="Directory of pg_dump, pg_restore and psql (default: PATH).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _run(kubeconfig: Path | None, context: str | None, work: Callable[[KubeClient], Awaitable[Any]]) -> Any:
    import asyncio

    from tenantctl.backup.bundle import BundleError
    from tenantctl.backup.etcd import EtcdError
    from tenantctl.backup.postgres import PostgresError
    from tenantctl.backup.seal import SealError
    from tenantctl.backup.store import StoreError
    from tenantctl.operator.kube.client import APIError, KubeClient
    from tenantctl.operator.kube.connect import management_connection

    async def go() -> Any:
        async with KubeClient(management_connection(kubeconfig, context)) as api:
            return await work(api)

    try:
        return asyncio.run(go())
    except APIError as exc:
        typer.echo(f"management cluster: {exc}", err=True)
        raise typer.Exit(EXIT_FAILED) from None
    except (EtcdError, PostgresError, StoreError, SealError, BundleError) as exc:
        typer.echo(f"backup: {exc}", err=True)
        raise typer.Exit(EXIT_FAILED) from None


def _check_source(source: str | None) -> None:
    from tenantctl.problems import InvalidInput, Problem
    from tenantctl.spec.names import is_dns_label

    if source is None:
        return
    ns, slash, name = source.partition("/")
    if not slash or not is_dns_label(ns) or not is_dns_label(name):
        raise InvalidInput([Problem("--from", f"{source!r} is not NAMESPACE/NAME of a TenantCluster")])


@backup_app.command("run", short_help="Export, seal, upload and prune one backup now.")
@refusals_exit_2
def run_command(name: NameArgument, namespace: NamespaceOption, kubeconfig: KubeconfigOption = None,
                context: ContextOption = None, workdir: WorkdirOption = None, etcdctl: EtcdctlOption = "etcdctl",
                pg_bin: PgBinOption = None, as_json: JsonOption = False) -> None:
    """Take one backup of the tenant as its spec.backup says, then prune the bucket to spec.backup.keep.
    An etcd DataStore is read with etcdctl, a PostgreSQL one with pg_dump, as the tenant's own user."""
    from tenantctl.operator.daytwo.backup import Tools, run_backup

    tools = Tools(etcdctl, pg_bin)
    stored, pruned = _run(kubeconfig, context,
                          lambda api: run_backup(api, namespace, name, tools=tools, workdir=workdir))
    if as_json:
        import json

        typer.echo(json.dumps({**stored.data(), "pruned": pruned}, indent=2))
        return
    typer.echo(f"backed up {namespace}/{name}: {stored.keys} keys at revision {stored.revision}, "
               f"{stored.size} bytes sealed -> {stored.key}" + (f"; pruned {len(pruned)}" if pruned else ""))


@backup_app.command("list", short_help="The backups kept in the bucket, oldest first.")
@refusals_exit_2
def list_command(name: NameArgument, namespace: NamespaceOption, source: SourceOption = None,
                 kubeconfig: KubeconfigOption = None, context: ContextOption = None,
                 as_json: JsonOption = False) -> None:
    """List the tenant's backups (or, with --from, another tenant's in the same bucket); needs no key."""
    from tenantctl.operator.daytwo.backup import backups_of

    _check_source(source)
    stored = _run(kubeconfig, context, lambda api: backups_of(api, namespace, name, source))
    if as_json:
        import json

        typer.echo(json.dumps([s.data() for s in stored], indent=2))
        return
    if not stored:
        typer.echo(f"No backups of {source or f'{namespace}/{name}'}.", err=True)
        return
    for s in stored:
        typer.echo(f"{s.created}  revision {s.revision:>9}  {s.keys:>7} keys  {s.size:>11} bytes  "
                   f"{s.key.rsplit('/', 1)[-1]}")


@backup_app.command("verify", short_help="Download, unseal and check one backup whole.")
@refusals_exit_2
def verify_command(name: NameArgument, namespace: NamespaceOption, source: SourceOption = None,
                   backup: Annotated[str, typer.Option("--backup", help="`latest` or an object name.")] = "latest",
                   kubeconfig: KubeconfigOption = None, context: ContextOption = None) -> None:
    """Prove a backup restorable without restoring it: the key opens it, its SHA-256 and key count hold."""
    from tenantctl.operator.daytwo.backup import verify

    _check_source(source)
    stored, bundle = _run(kubeconfig, context, lambda api: verify(api, namespace, name, source, backup))
    m = bundle.manifest
    typer.echo(f"ok: {stored.key.rsplit('/', 1)[-1]}: {m.keys} keys of {m.namespace}/{m.name} ({m.source}) at "
               f"revision {m.revision}, taken {m.created}; sha256 {m.sha256[:16]}; PKI {', '.join(m.pki) or 'none'}")


@backup_app.command("restore", short_help="Import a backup into a new tenant (what the restore Job runs).")
@refusals_exit_2
def restore_command(name: NameArgument, namespace: NamespaceOption, kubeconfig: KubeconfigOption = None,
                    context: ContextOption = None, workdir: WorkdirOption = None,
                    etcdctl: EtcdctlOption = "etcdctl", pg_bin: PgBinOption = None,
                    datastore_timeout: Annotated[
                        int, typer.Option("--datastore-timeout", min=0, metavar="SECONDS",
                                          help="How long to wait for Kamaji to set up the tenant's datastore.")
                    ] = 600) -> None:
    """Restore as the TenantCluster's spec.restore says: with `mode: replace`, the source's PKI first; then
    the keys, into the tenant's own empty prefix (refused if it holds any)."""
    from tenantctl.operator.daytwo.backup import Tools, restore

    tools = Tools(etcdctl, pg_bin)
    restored = _run(kubeconfig, context, lambda api: restore(api, namespace, name, tools=tools, workdir=workdir,
                                                             wait_seconds=datastore_timeout))
    pki = f"; PKI of the source: {', '.join(restored.pki_written)}" if restored.pki_written else ""
    typer.echo(f"restored {restored.keys} keys of {restored.stored.key.rsplit('/', 1)[-1]} into {restored.prefix}"
               f"{pki}")
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    """Attach `backup` to the root app."""
    app.add_typer(backup_app)

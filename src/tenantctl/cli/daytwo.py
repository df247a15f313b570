"""`tenantctl get`, `plan` and `describe`: read a management cluster (and a tenant), never write."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from tenantctl.cli.commands import summary
from tenantctl.cli.support import refusals_exit_2

__all__ = ["register"]

EXIT_API = 1
EXIT_CHANGES = 3


class Listed(StrEnum):
    tenants = "tenants"
    pools = "pools"


class GetFormat(StrEnum):
    table = "table"
    wide = "wide"
    yaml = "yaml"
    json = "json"


class Described(StrEnum):
    tenant = "tenant"


class TreeFormat(StrEnum):
    tree = "tree"
    json = "json"


KubeconfigOption = Annotated[Path | None, typer.Option("--kubeconfig", help="Kubeconfig of the management cluster.")]
ContextOption = Annotated[str | None, typer.Option("--context", help="Kubeconfig context (default: current).")]


def _api_failed(exc: Exception) -> typer.Exit:
    typer.echo(f"management cluster: {exc}", err=True)
    return typer.Exit(EXIT_API)


def _dump(data: Any, fmt: str) -> str:
    import json

    import yaml

    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False)


@refusals_exit_2
def get(
    what: Annotated[Listed, typer.Argument(help="tenants (TenantClusters) or pools (NodePools).")] = Listed.tenants,
    namespace: Annotated[str | None, typer.Option("--namespace", "-n", help="Namespace (default: default).")] = None,
    all_namespaces: Annotated[bool, typer.Option("--all-namespaces", "-A", help="Every namespace.")] = False,
    output: Annotated[GetFormat, typer.Option("-o", "--output", help="Output format.")] = GetFormat.table,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """List TenantClusters (or NodePools) with phase, endpoint and ready/desired workers.

    Needs only `get`/`list` on tenantclusters, nodepools (tenantctl.io) and machinedeployments
    (cluster.x-k8s.io).
    """
    import asyncio
    import datetime

    from tenantctl.operator.daytwo.overview import PoolRow, TenantRow, list_pools, list_tenants, table
    from tenantctl.operator.kube.client import APIError, KubeClient
    from tenantctl.operator.kube.connect import management_connection
    from tenantctl.problems import InvalidInput, Problem

    if namespace is not None and all_namespaces:
        raise InvalidInput([Problem("--namespace", f"{namespace!r} and --all-namespaces exclude each other")])
    scope = None if all_namespaces else (namespace or "default")
    now = datetime.datetime.now(tz=datetime.UTC)

    async def fetch() -> list[TenantRow] | list[PoolRow]:
        async with KubeClient(management_connection(kubeconfig, context)) as api:
            if what is Listed.pools:
                return await list_pools(api, scope, now)
            return await list_tenants(api, scope, now)

    try:
        rows = asyncio.run(fetch())
    except APIError as exc:
        raise _api_failed(exc) from None
    if output in (GetFormat.yaml, GetFormat.json):
        typer.echo(_dump([r.data() for r in rows], output.value), nl=False)
        return
    if not rows:
        typer.echo(f"No {what.value} found" + ("." if scope is None else f" in namespace {scope}."), err=True)
        return
    wide = output is GetFormat.wide
    kind = PoolRow if what is Listed.pools else TenantRow
    typer.echo(table(rows, (*kind.HEADERS, *(kind.WIDE if wide else ())), wide))


@refusals_exit_2
def plan(
    filename: Annotated[
        Path | None, typer.Option("-f", "--filename", help="TenantCluster/NodePool YAML ('-' for stdin).")
    ] = None,
    against_release: Annotated[
        bool,
        typer.Option("--against-release", help="No input: what upgrading the operator to this release does to "
                                               "each live tenant (none, re-apply, roll, refused)."),
    ] = False,
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="With --against-release: only this namespace's tenants.")
    ] = None,
    platform: Annotated[
        Path | None, typer.Option("--platform", help="Platform YAML: chart sources and image overrides, if any.")
    ] = None,
    output: Annotated[TreeFormat, typer.Option("-o", "--output", help="Output format.")] = TreeFormat.tree,
    management_cluster_domain: Annotated[
        str | None,
        typer.Option(help="The management cluster's DNS domain (default: as the operator last applied it)."),
    ] = None,
    crds: Annotated[
        list[Path] | None,
        typer.Option("--crds", help="Directory of upstream CRDs to judge the render against (repeatable; "
                                    "default: the pulled ones)."),
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Refuse (exit 2) when any object to apply could not be judged."),
    ] = False,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Show what the operator would do with the input: create, no-op, update in place, replace, rotate, prune.

    Exit code 0 when nothing would change, 3 when something would, 2 for refused input. Read-only.
    The objects the operator would apply are judged first, as `validate` judges them: a render the
    upstream CRDs refuse is refused here (exit 2), before the API server refuses it to the operator.
    With --against-release: per live tenant, what this release's operator would do to it unchanged;
    exit 3 when a tenant would roll or be refused (a re-apply alone exits 0).
    """
    import asyncio

    from tenantctl.cli.support import print_problems
    from tenantctl.cli.tenant import judge_render, platform_settings
    from tenantctl.documents import load_file
    from tenantctl.operator.daytwo.plan import TenantPlan, plan_cluster, render_text
    from tenantctl.operator.kube.client import APIError, KubeClient
    from tenantctl.operator.kube.connect import management_connection
    from tenantctl.problems import InvalidInput, Problem
    from tenantctl.spec import parse_tenant_documents
    from tenantctl.spec.names import is_dns_subdomain

    if management_cluster_domain is not None and not is_dns_subdomain(management_cluster_domain):
        raise InvalidInput(
            [Problem("--management-cluster-domain", f"{management_cluster_domain!r} is not a DNS domain")]
        )
    if against_release:
        if filename is not None or platform is not None or crds or strict:
            raise InvalidInput([Problem("--against-release", "plans the live tenants as the cluster holds them, "
                                        "with the live Platform: give no -f, --platform, --crds or --strict")])
        _plan_release(namespace, output, kubeconfig, context)
        return
    if filename is None:
        raise InvalidInput([Problem("-f", "required: the TenantCluster/NodePool YAML to plan (or --against-release)")])
    if namespace is not None:
        raise InvalidInput([Problem("--namespace", "only with --against-release: the input names its namespaces")])
    docs = load_file(filename)
    tenant = parse_tenant_documents(docs)
    if tenant.warnings:
        print_problems(tenant.warnings)
    charts, images, kamaji = platform_settings(platform)

    async def compute() -> list[TenantPlan]:
        out: list[TenantPlan] = []
        async with KubeClient(management_connection(kubeconfig, context)) as api:
            for cluster in sorted(tenant.clusters, key=lambda c: (c.metadata.namespace, c.metadata.name)):
                ns, name = cluster.metadata.namespace, cluster.metadata.name
                own = [d for d in docs if _belongs(d, ns, name)]
                pools = tenant.pools_of(cluster)
                out.append(await plan_cluster(
                    api, cluster, pools, own, charts, images, management_cluster_domain, kamaji
                ))
        return out

    try:
        plans = asyncio.run(compute())
    except APIError as exc:
        raise _api_failed(exc) from None
    _, judged = judge_render([o for p in plans for o in p.desired], crds, strict, "plan")
    if judged:
        print_problems(judged)
    if output is TreeFormat.json:
        typer.echo(_dump([p.data() for p in plans], "json"), nl=False)
    else:
        typer.echo(render_text(plans), nl=False)
    if any(p.changed for p in plans):
        raise typer.Exit(EXIT_CHANGES)


def _plan_release(namespace: str | None, output: TreeFormat, kubeconfig: Path | None, context: str | None) -> None:
    import asyncio

    from tenantctl.operator.daytwo.release_plan import ReleasePlan, Verdict, plan_release, render_release_text
    from tenantctl.operator.kube.client import APIError, KubeClient
    from tenantctl.operator.kube.connect import management_connection

    async def compute() -> list[ReleasePlan]:
        async with KubeClient(management_connection(kubeconfig, context)) as api:
            return await plan_release(api, namespace)

    try:
        plans = asyncio.run(compute())
    except APIError as exc:
        raise _api_failed(exc) from None
    if output is TreeFormat.json:
        typer.echo(_dump({"tenants": [p.data() for p in plans]}, "json"), nl=False)
    else:
        typer.echo(render_release_text(plans), nl=False)
    if any(p.verdict in (Verdict.ROLL, Verdict.REFUSED) for p in plans):
        raise typer.Exit(EXIT_CHANGES)


def _belongs(doc: dict[str, Any], namespace: str, cluster: str) -> bool:
    """The input documents of one tenant: its TenantCluster and the NodePools naming it."""
    meta, spec = doc.get("metadata") or {}, doc.get("spec") or {}
    if meta.get("namespace", "default") != namespace:
        return False
    if doc.get("kind") == "TenantCluster":
        return bool(meta.get("name") == cluster)
    return doc.get("kind") == "NodePool" and spec.get("cluster") == cluster


@refusals_exit_2
def describe(
    what: Annotated[Described, typer.Argument(help="What to describe: tenant.")],
    name: Annotated[str, typer.Argument(help="The TenantCluster's name.")],
    namespace: Annotated[str, typer.Option("--namespace", "-n", help="The TenantCluster's namespace.")],
    output: Annotated[TreeFormat, typer.Option("-o", "--output", help="Output format.")] = TreeFormat.tree,
    tenant_timeout: Annotated[
        float, typer.Option("--tenant-timeout", help="Seconds the tenant's API may take to answer.")
    ] = 5.0,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """A tree from the TenantCluster down to the tenant's Nodes; what is wrong is marked with what to look at next.

    Reads the tenant through the admin kubeconfig Secret Kamaji writes (so `get` on that Secret too).
    """
    import asyncio
    import datetime

    from tenantctl.cli.tree import render_tree
    from tenantctl.operator.daytwo.describe import TreeNode, describe_tenant
    from tenantctl.operator.kube.client import APIError, KubeClient
    from tenantctl.operator.kube.connect import management_connection

    now = datetime.datetime.now(tz=datetime.UTC)

    async def fetch() -> TreeNode:
        async with KubeClient(management_connection(kubeconfig, context)) as api:
            return await describe_tenant(api, namespace, name, now, tenant_timeout)

    try:
        tree = asyncio.run(fetch())
    except APIError as exc:
        raise _api_failed(exc) from None
    if output is TreeFormat.json:
        typer.echo(_dump(tree.data(), "json"), nl=False)
    else:
        typer.echo(render_tree(tree), nl=False)


def register(app: typer.Typer) -> None:
    """Attach `get`, `plan` and `describe` to the root app."""
    app.command(short_help=summary("get"))(get)
    app.command(short_help=summary("plan"))(plan)
    app.command(short_help=summary("describe"))(describe)

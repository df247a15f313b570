"""`tenantctl operator` runs the kopf operator; `tenantctl install` prints what deploys it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tenantctl.cli.commands import summary
from tenantctl.cli.support import refusals_exit_2
from tenantctl.operator.install.image import DEFAULT_IMAGE

__all__ = ["register"]


_DURATION = "Go-style duration, e.g. 90s, 5m, 1h30m."
EXIT_API = 1
_Text = str | None


@refusals_exit_2
def operator(
    kubeconfig: Annotated[Path | None, typer.Option(help="Kubeconfig of the management cluster.")] = None,
    context: Annotated[str | None, typer.Option(help="Kubeconfig context (default: current).")] = None,
    resync: Annotated[
        _Text, typer.Option(metavar="SECONDS", help="Seconds between idle resyncs of a cluster.  [default: 60]")
    ] = None,
    liveness: Annotated[
        _Text, typer.Option(metavar="URL", help="Serve kopf's liveness probe, e.g. http://0.0.0.0:8080/healthz.")
    ] = None,
    webhook_port: Annotated[
        _Text,
        typer.Option(metavar="PORT", help="Serve the validating webhook on this port (`tenantctl install` sets it)."),
    ] = None,
    webhook_cert_dir: Annotated[
        _Text, typer.Option(metavar="DIR", help="Directory with the webhook's tls.crt and tls.key (else plain HTTP).")
    ] = None,
    shard: Annotated[
        _Text,
        typer.Option(envvar="TENANTCTL_SHARD", metavar="I/N",
                     help="Reconcile only shard I of N (0-based; a hash of namespace/name)."),
    ] = None,
    peering: Annotated[
        _Text,
        typer.Option(
            envvar="TENANTCTL_PEERING", metavar="NAME",
            help="kopf peering name: replicas sharing it keep one active (lowest pod ordinal). Default: standalone.",
        ),
    ] = None,
    tenant_unreachable_grace: Annotated[
        _Text,
        typer.Option(
            envvar="TENANTCTL_TENANT_UNREACHABLE_GRACE", metavar="DURATION",
            help=f"Teardown's wait on a mute tenant. {_DURATION}",
        ),
    ] = None,
    volume_release_timeout: Annotated[
        _Text,
        typer.Option(envvar="TENANTCTL_VOLUME_RELEASE_TIMEOUT", metavar="DURATION",
                     help=f"Teardown's wait for the volumes. {_DURATION}"),
    ] = None,
    control_plane_timeout: Annotated[
        _Text,
        typer.Option(envvar="TENANTCTL_CONTROL_PLANE_TIMEOUT", metavar="DURATION",
                     help=f"Teardown's control plane wait. {_DURATION}"),
    ] = None,
    cluster_deletion_timeout: Annotated[
        _Text,
        typer.Option(envvar="TENANTCTL_CLUSTER_DELETION_TIMEOUT", metavar="DURATION",
                     help=f"Teardown's wait for Cluster API to delete the Machines and the Cluster. {_DURATION}"),
    ] = None,
    helm_release_timeout: Annotated[
        _Text,
        typer.Option(envvar="TENANTCTL_HELM_RELEASE_TIMEOUT", metavar="DURATION",
                     help=f"Teardown's wait for HelmReleases. {_DURATION}"),
    ] = None,
    pool_rollout_timeout: Annotated[
        _Text,
        typer.Option(envvar="TENANTCTL_POOL_ROLLOUT_TIMEOUT", metavar="DURATION",
                     help=f"How long one pool's upgrade rollout may take before the upgrade stops there. {_DURATION}"),
    ] = None,
    platform_name: Annotated[
        _Text,
        typer.Option(envvar="TENANTCTL_PLATFORM_NAME", metavar="NAME",
                     help="The cluster-scoped Platform every tenant is rendered with (images, charts, Kamaji).  "
                     "[default: default]"),
    ] = None,
    kamaji_version: Annotated[
        _Text,
        typer.Option(envvar="TENANTCTL_KAMAJI_VERSION", metavar="RELEASE",
                     help="The management cluster's Kamaji release, e.g. 26.3.6-edge (default: observed from its "
                     "controller's image, else 26.3.6-edge): which Kubernetes minors tenants may run."),
    ] = None,
    requeue: Annotated[
        _Text,
        typer.Option(envvar="TENANTCTL_REQUEUE", metavar="DURATION",
                     help=f"First retry pause of a waiting pass. {_DURATION}"),
    ] = None,
    metrics_port: Annotated[
        _Text, typer.Option(metavar="PORT", help="Serve Prometheus metrics on this port at /metrics.")
    ] = None,
    log_format: Annotated[
        _Text,
        typer.Option(metavar="text|json",
                     help="text, or json: one object per line with the tenant's namespace and name.  [default: text]"),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logging.")] = False,
    management_cluster_domain: Annotated[
        _Text,
        typer.Option(
            metavar="DOMAIN",
            help="DNS domain of the management cluster (default: observed from this pod's resolv.conf).",
        ),
    ] = None,
) -> None:
    """Run the operator against the management cluster: reconcile TenantClusters and NodePools.

    Every flag and environment variable is checked before anything connects; all bad ones are named at once.
    """
    from tenantctl.operator.kube.connect import management_connection
    from tenantctl.operator.runtime.flags import operator_start
    from tenantctl.operator.runtime.run import run_operator

    start = operator_start(
        {
            "--resync": resync,
            "--liveness": liveness,
            "--webhook-port": webhook_port,
            "--webhook-cert-dir": webhook_cert_dir,
            "--shard": shard,
            "--peering": peering,
            "--tenant-unreachable-grace": tenant_unreachable_grace,
            "--volume-release-timeout": volume_release_timeout,
            "--control-plane-timeout": control_plane_timeout,
            "--cluster-deletion-timeout": cluster_deletion_timeout,
            "--helm-release-timeout": helm_release_timeout,
            "--requeue": requeue,
            "--pool-rollout-timeout": pool_rollout_timeout,
            "--kamaji-version": kamaji_version,
            "--platform-name": platform_name,
            "--metrics-port": metrics_port,
            "--log-format": log_format,
            "--management-cluster-domain": management_cluster_domain,
        },
        lambda: management_connection(kubeconfig, context),
    )
    run_operator(start, verbose=verbose, domain_given=bool(management_cluster_domain))


@refusals_exit_2
def install(
    namespace: Annotated[str, typer.Option(help="Namespace the operator runs in.")] = "tenantctl-system",
    image: Annotated[
        str | None, typer.Option(metavar="IMAGE", help=f"Operator image.  [default: {DEFAULT_IMAGE}]")
    ] = None,
    file: Annotated[
        list[Path] | None,
        typer.Option(
            "-f",
            "--filename",
            help="Tenant documents: adds the Roles scoping TalosConfigTemplate delete to their names.",
        ),
    ] = None,
    tenant_namespace: Annotated[
        list[str] | None,
        typer.Option(
            "--tenant-namespace", metavar="NS",
            help="Open a namespace to tenants: the operator may write there (its tenant role bound). The namespaces "
            "of -f's tenants are opened too, and with --apply every namespace that holds a TenantCluster.",
        ),
    ] = None,
    metrics_namespace: Annotated[
        str, typer.Option(metavar="NS", help="The only namespace whose Pods may scrape the operator's /metrics "
                          "(its NetworkPolicy).")
    ] = "monitoring",
    replicas: Annotated[
        str, typer.Option(metavar="N", help="Pods per shard: kopf peering keeps one active, the others stand by.")
    ] = "1",
    shards: Annotated[
        str, typer.Option(metavar="N", help="Split the tenants into this many shards (hash of namespace/name).")
    ] = "1",
    service_monitor: Annotated[
        bool, typer.Option("--service-monitor", help="Also print a Prometheus Operator ServiceMonitor for /metrics.")
    ] = False,
    apply: Annotated[
        bool,
        typer.Option(
            "--apply",
            help="Server-side apply it to the management cluster instead of printing it. Refuses while an operator "
            "workload of another layout (an earlier Deployment, surplus shards) runs, unless --prune.",
        ),
    ] = False,
    prune: Annotated[
        bool,
        typer.Option("--prune", help="With --apply: then delete the operator workloads and peerings of other layouts."),
    ] = False,
    kubeconfig: Annotated[
        Path | None, typer.Option(help="With --apply: kubeconfig of the management cluster.")
    ] = None,
    context: Annotated[str | None, typer.Option(help="With --apply: kubeconfig context (default: current).")] = None,
) -> None:
    """Print (or --apply) the CRDs, ServiceAccount, least-privilege RBAC, operator StatefulSets, metrics Service
    and webhook.

    The webhook's serving certificate is issued by cert-manager, which must run in the cluster.
    """
    import asyncio

    import yaml

    from tenantctl.documents import load_file
    from tenantctl.operator.install.apply import apply_install, prune_command
    from tenantctl.operator.install.objects import DEFAULT_IMAGE, Topology, install_objects
    from tenantctl.operator.kube.client import APIError
    from tenantctl.operator.kube.connect import management_connection
    from tenantctl.operator.runtime.flags import install_plan
    from tenantctl.problems import InvalidInput, Problems
    from tenantctl.spec import parse_tenant_documents
    from tenantctl.spec.names import is_dns_label

    problems = Problems()
    try:
        plan = install_plan(
            {"--namespace": namespace, "--image": image, "--replicas": replicas, "--shards": shards,
             "--apply": "yes" if apply else None, "--prune": "yes" if prune else None,
             "--kubeconfig": str(kubeconfig) if kubeconfig else None, "--context": context},
            DEFAULT_IMAGE,
        )
    except InvalidInput as exc:
        problems.extend(exc.problems)
    connection = None
    if apply:
        try:
            connection = management_connection(kubeconfig, context)
        except InvalidInput as exc:
            problems.extend(exc.problems)
    tenants: list[Any] = []
    try:
        if file:
            parsed = parse_tenant_documents([d for path in file for d in load_file(path)])
            tenants = [(c, parsed.pools_of(c)) for c in parsed.clusters]
    except InvalidInput as exc:
        problems.extend(exc.problems)
    namespaces = [("--metrics-namespace", metrics_namespace),
                  *(("--tenant-namespace", n) for n in tenant_namespace or [])]
    for flag, given in namespaces:
        if not is_dns_label(given):
            problems.error(f"{flag} {given!r}",
                           "not a namespace name (a DNS label: a-z, 0-9 and '-', at most 63 characters)")
    problems.raise_if_errors()
    topology = Topology(shards=plan.shards, replicas=plan.replicas)
    objects = install_objects(plan.namespace, plan.image, tenants, topology, service_monitor, tenant_namespace or (),
                              metrics_namespace)
    if connection is None:
        typer.echo(yaml.safe_dump_all(objects, sort_keys=False), nl=False)
        typer.echo(
            "After applying, delete the operator workloads of any other layout (an earlier Deployment, surplus "
            "shards), or two operators reconcile the same tenants (or use --apply --prune):\n"
            + prune_command(plan.shards),
            err=True,
        )
        return
    try:
        asyncio.run(apply_install(connection, objects, prune, typer.echo))
    except APIError as exc:
        typer.echo(f"management cluster: {exc}", err=True)
        raise typer.Exit(EXIT_API) from None



@refusals_exit_2
def kubeconfig(
    name: Annotated[str, typer.Argument(help="The TenantCluster's name.")],
    namespace: Annotated[str, typer.Option("--namespace", "-n", help="The TenantCluster's namespace.")],
    management: Annotated[
        Path | None, typer.Option("--kubeconfig", help="Kubeconfig of the management cluster.")
    ] = None,
    context: Annotated[str | None, typer.Option(help="Kubeconfig context (default: current).")] = None,
    external: Annotated[
        bool, typer.Option("--external", help="Point it at the address spec.expose publishes.")
    ] = False,
    oidc: Annotated[
        bool, typer.Option("--oidc", help="A kubeconfig that signs in through the tenant's JWT issuer (SSO).")
    ] = False,
    issuer: Annotated[
        str | None, typer.Option("--issuer", metavar="URL", help="With --oidc: which issuer, when several.")
    ] = None,
    client_id: Annotated[
        str | None, typer.Option("--client-id", metavar="ID", help="With --oidc: the client id (default: the "
                                 "issuer's first audience).")
    ] = None,
    super_admin: Annotated[
        bool, typer.Option("--super-admin", help="The system:masters kubeconfig (break-glass): no RBAC rule can "
                           "revoke it. Default: kubeadm:cluster-admins, which RBAC can.")
    ] = False,
) -> None:
    """Print the tenant's admin kubeconfig (from the Secret Kamaji writes); --external for use from outside.

    With --oidc: the same clusters, and a user that gets its token from the tenant's issuer through
    kubectl's exec plugin convention (`kubectl oidc-login`); the admin one stays for break-glass."""
    import asyncio

    import yaml

    from tenantctl.operator.daytwo.kubeconfig import oidc_kubeconfig, user_kubeconfig
    from tenantctl.operator.kube.client import APIError, KubeClient
    from tenantctl.operator.kube.connect import management_connection
    from tenantctl.problems import InvalidInput, Problem

    if not oidc and (issuer is not None or client_id is not None):
        raise InvalidInput([Problem("--issuer" if issuer is not None else "--client-id", "only with --oidc")])
    if oidc and super_admin:
        raise InvalidInput([Problem("--super-admin", "not with --oidc: an SSO kubeconfig carries no admin credential")])

    async def fetch() -> dict[str, Any]:
        async with KubeClient(management_connection(management, context)) as api:
            if oidc:
                return await oidc_kubeconfig(api, namespace, name, external=external, issuer=issuer,
                                             client_id=client_id)
            return await user_kubeconfig(api, namespace, name, external=external, super_admin=super_admin)

    try:
        config = asyncio.run(fetch())
    except APIError as exc:
        typer.echo(f"management cluster: {exc}", err=True)
        raise typer.Exit(EXIT_API) from None
    if super_admin:
        typer.echo("warning: this kubeconfig is system:masters in the tenant: no RBAC rule can take its rights "
                   "away until the tenant's CA is rotated; keep it for break-glass, hand people the default",
                   err=True)
    typer.echo(yaml.safe_dump(config, sort_keys=False), nl=False)


def register(app: typer.Typer) -> None:
    """Attach `operator`, `install` and `kubeconfig` to the root app."""
    app.command(short_help=summary("operator"))(operator)
    app.command(short_help=summary("install"))(install)
    app.command(short_help=summary("kubeconfig"))(kubeconfig)

"""`tenantctl operator` runs the kopf operator; `tenantctl install` prints what deploys it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from tenantctl.cli_support import refusals_exit_2
from tenantctl.operator.logs import LogFormat

__all__ = ["management_connection", "register"]


def management_connection(kubeconfig: Path | None, context: str | None) -> Any:
    """A kubeconfig when one is named (flag or $KUBECONFIG), else the pod's service account."""
    import yaml

    from tenantctl.operator.kube import Connection

    path = kubeconfig or (Path(os.environ["KUBECONFIG"]) if os.environ.get("KUBECONFIG") else None)
    if path is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        return Connection.in_cluster()
    path = path or Path.home() / ".kube" / "config"
    return Connection.from_kubeconfig(yaml.safe_load(path.read_text()), context, path=path)


_DURATION = "Go-style duration, e.g. 90s, 5m, 1h30m."


def _observed_management_domain(resolv_conf: Path = Path("/etc/resolv.conf")) -> str | None:
    """In a pod, the kubelet's search list names the cluster domain; elsewhere there is none to observe."""
    from tenantctl.operator.observe import management_domain_from_resolv_conf

    try:
        return management_domain_from_resolv_conf(resolv_conf.read_text())
    except OSError:
        return None


@refusals_exit_2
def operator(
    kubeconfig: Annotated[Path | None, typer.Option(help="Kubeconfig of the management cluster.")] = None,
    context: Annotated[str | None, typer.Option(help="Kubeconfig context (default: current).")] = None,
    resync: Annotated[float, typer.Option(help="Seconds between idle resyncs of a cluster.")] = 60.0,
    liveness: Annotated[
        str | None, typer.Option(help="Serve kopf's liveness probe, e.g. http://0.0.0.0:8080/healthz.")
    ] = None,
    webhook_port: Annotated[
        int | None, typer.Option(help="Serve the validating webhook on this port (`tenantctl install` sets it).")
    ] = None,
    webhook_cert_dir: Annotated[
        Path | None, typer.Option(help="Directory with the webhook's tls.crt and tls.key (else plain HTTP).")
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option(envvar="TENANTCTL_SHARD", help="Reconcile only shard I of N (0-based; a hash of namespace/name)."),
    ] = None,
    peering: Annotated[
        str | None,
        typer.Option(
            envvar="TENANTCTL_PEERING",
            help="kopf peering name: replicas sharing it keep one active (lowest pod ordinal). Default: standalone.",
        ),
    ] = None,
    tenant_unreachable_grace: Annotated[
        str | None,
        typer.Option(
            envvar="TENANTCTL_TENANT_UNREACHABLE_GRACE", help=f"Teardown's wait on a mute tenant. {_DURATION}"
        ),
    ] = None,
    volume_release_timeout: Annotated[
        str | None,
        typer.Option(envvar="TENANTCTL_VOLUME_RELEASE_TIMEOUT", help=f"Teardown's wait for the volumes. {_DURATION}"),
    ] = None,
    control_plane_timeout: Annotated[
        str | None,
        typer.Option(envvar="TENANTCTL_CONTROL_PLANE_TIMEOUT", help=f"Teardown's control plane wait. {_DURATION}"),
    ] = None,
    helm_release_timeout: Annotated[
        str | None,
        typer.Option(envvar="TENANTCTL_HELM_RELEASE_TIMEOUT", help=f"Teardown's wait for HelmReleases. {_DURATION}"),
    ] = None,
    requeue: Annotated[
        str | None,
        typer.Option(envvar="TENANTCTL_REQUEUE", help=f"First retry pause of a waiting pass. {_DURATION}"),
    ] = None,
    metrics_port: Annotated[
        int | None, typer.Option(min=0, max=65535, help="Serve Prometheus metrics on this port at /metrics.")
    ] = None,
    log_format: Annotated[
        LogFormat, typer.Option(help="text, or json: one object per line with the tenant's namespace and name.")
    ] = LogFormat.TEXT,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Debug logging.")] = False,
    management_cluster_domain: Annotated[
        str | None,
        typer.Option(help="DNS domain of the management cluster (default: observed from this pod's resolv.conf)."),
    ] = None,
) -> None:
    """Run the operator against the management cluster: reconcile TenantClusters and NodePools."""
    from tenantctl.problems import InvalidInput, Problem
    from tenantctl.spec.names import is_dns_subdomain

    if management_cluster_domain is not None and not is_dns_subdomain(management_cluster_domain):
        raise InvalidInput(
            [Problem("--management-cluster-domain", f"{management_cluster_domain!r} is not a DNS domain")]
        )
    import asyncio
    import dataclasses
    import logging

    import kopf

    from tenantctl.operator.certificates import stop_on_new_certificate
    from tenantctl.operator.handlers import OperatorContext, build_registry
    from tenantctl.operator.logs import configure_logging
    from tenantctl.operator.settings import MetricsSettings, OperatorSettings, WebhookSettings
    from tenantctl.operator.sharding import peering_priority
    from tenantctl.operator.tuning import tuned_settings

    webhook = None
    if webhook_port is not None:
        webhook = WebhookSettings(port=webhook_port, cert_dir=str(webhook_cert_dir) if webhook_cert_dir else None)
    bounds = {
        "--tenant-unreachable-grace": tenant_unreachable_grace,
        "--volume-release-timeout": volume_release_timeout,
        "--control-plane-timeout": control_plane_timeout,
        "--helm-release-timeout": helm_release_timeout,
        "--requeue": requeue,
    }
    metrics = MetricsSettings(port=metrics_port) if metrics_port is not None else None
    base = OperatorSettings(resync_interval=resync, webhook=webhook, metrics=metrics)
    settings = tuned_settings(bounds, shard, base)
    configure_logging(log_format, logging.DEBUG if verbose else logging.INFO)
    log = logging.getLogger(__name__)
    if domain := management_cluster_domain or _observed_management_domain():
        settings = dataclasses.replace(settings, management_cluster_domain=domain)
        log.info("management cluster domain: %s", domain)
    else:
        log.warning(
            "management cluster domain not observable (no pod resolv.conf search list) and not given with "
            "--management-cluster-domain: using %s",
            settings.management_cluster_domain,
        )
    ctx = OperatorContext(management_connection(kubeconfig, context), settings)

    async def run() -> None:
        stop = asyncio.Event()
        watcher = asyncio.create_task(stop_on_new_certificate(webhook_cert_dir, stop)) if webhook_cert_dir else None
        try:
            await kopf.operator(
                registry=build_registry(ctx),
                clusterwide=True,
                standalone=peering is None,
                peering_name=peering,
                priority=peering_priority(os.environ.get("POD_NAME")) if peering else None,
                liveness_endpoint=liveness,
                stop_flag=stop,
            )
        finally:
            if watcher is not None:
                watcher.cancel()

    asyncio.run(run())


@refusals_exit_2
def install(
    namespace: Annotated[str, typer.Option(help="Namespace the operator runs in.")] = "tenantctl-system",
    image: Annotated[str | None, typer.Option(help="Operator image.")] = None,
    file: Annotated[
        list[Path] | None,
        typer.Option(
            "-f",
            "--filename",
            help="Tenant documents: adds the Roles scoping TalosConfigTemplate delete to their names.",
        ),
    ] = None,
    replicas: Annotated[
        int, typer.Option(min=1, help="Pods per shard: kopf peering keeps one active, the others stand by.")
    ] = 1,
    shards: Annotated[
        int, typer.Option(min=1, help="Split the tenants into this many shards (hash of namespace/name).")
    ] = 1,
    service_monitor: Annotated[
        bool, typer.Option("--service-monitor", help="Also print a Prometheus Operator ServiceMonitor for /metrics.")
    ] = False,
) -> None:
    """Print the CRDs, ServiceAccount, least-privilege RBAC, operator StatefulSets, metrics Service and webhook.

    The webhook's serving certificate is issued by cert-manager, which must run in the cluster.
    """
    import yaml

    from tenantctl.documents import load_file
    from tenantctl.operator.install import DEFAULT_IMAGE, Topology, install_objects
    from tenantctl.spec import parse_tenant_documents

    tenants: list[Any] = []
    if file:
        docs = [d for path in file for d in load_file(path)]
        parsed = parse_tenant_documents(docs)
        tenants = [(c, parsed.pools_of(c)) for c in parsed.clusters]
    topology = Topology(shards=shards, replicas=replicas)
    objects = install_objects(namespace, image or DEFAULT_IMAGE, tenants, topology, service_monitor)
    typer.echo(yaml.safe_dump_all(objects, sort_keys=False), nl=False)


EXIT_API = 1


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
) -> None:
    """Print the tenant's admin kubeconfig (from the Secret Kamaji writes); --external for use from outside."""
    import asyncio

    import yaml

    from tenantctl.operator.kube import APIError, KubeClient
    from tenantctl.operator.kubeconfig import user_kubeconfig

    async def fetch() -> dict[str, Any]:
        async with KubeClient(management_connection(management, context)) as api:
            return await user_kubeconfig(api, namespace, name, external=external)

    try:
        config = asyncio.run(fetch())
    except APIError as exc:
        typer.echo(f"management cluster: {exc}", err=True)
        raise typer.Exit(EXIT_API) from None
    typer.echo(yaml.safe_dump(config, sort_keys=False), nl=False)


def register(app: typer.Typer) -> None:
    """Attach `operator`, `install` and `kubeconfig` to the root app."""
    app.command()(operator)
    app.command()(install)
    app.command()(kubeconfig)

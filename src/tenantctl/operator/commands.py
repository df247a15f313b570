"""`tenantctl operator` runs the kopf operator; `tenantctl install` prints what deploys it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from tenantctl.cli_support import refusals_exit_2

__all__ = ["register"]


def _connection(kubeconfig: Path | None, context: str | None) -> Any:
    """A kubeconfig when one is named (flag or $KUBECONFIG), else the pod's service account."""
    import yaml

    from tenantctl.operator.kube import Connection

    path = kubeconfig or (Path(os.environ["KUBECONFIG"]) if os.environ.get("KUBECONFIG") else None)
    if path is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        return Connection.in_cluster()
    path = path or Path.home() / ".kube" / "config"
    return Connection.from_kubeconfig(yaml.safe_load(path.read_text()), context)


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
    from tenantctl.operator.settings import OperatorSettings, WebhookSettings

    level = logging.DEBUG if verbose else logging.INFO
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    webhook = None
    if webhook_port is not None:
        webhook = WebhookSettings(port=webhook_port, cert_dir=str(webhook_cert_dir) if webhook_cert_dir else None)
    settings = OperatorSettings(resync_interval=resync, webhook=webhook)
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
    ctx = OperatorContext(_connection(kubeconfig, context), settings)

    async def run() -> None:
        stop = asyncio.Event()
        watcher = asyncio.create_task(stop_on_new_certificate(webhook_cert_dir, stop)) if webhook_cert_dir else None
        try:
            await kopf.operator(
                registry=build_registry(ctx),
                clusterwide=True,
                standalone=True,
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
) -> None:
    """Print the CRDs, ServiceAccount, least-privilege RBAC, Deployment and validating webhook of the operator.

    The webhook's serving certificate is issued by cert-manager, which must run in the cluster.
    """
    import yaml

    from tenantctl.documents import load_file
    from tenantctl.operator.install import DEFAULT_IMAGE, install_objects
    from tenantctl.spec import parse_tenant_documents

    tenants: list[Any] = []
    if file:
        docs = [d for path in file for d in load_file(path)]
        parsed = parse_tenant_documents(docs)
        tenants = [(c, parsed.pools_of(c)) for c in parsed.clusters]
    objects = install_objects(namespace, image or DEFAULT_IMAGE, tenants)
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
        async with KubeClient(_connection(management, context)) as api:
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

"""`tenantctl operator` runs the kopf operator; `tenantctl install` prints what deploys it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from tenantctl.cli_support import refusals_exit_2

__all__ = ["management_connection", "register"]


def management_connection(kubeconfig: Path | None, context: str | None) -> Any:
    """A kubeconfig when one is named (flag or $KUBECONFIG), else the pod's service account.

    A kubeconfig that cannot be read or used, or a context it lacks, is a refusal naming the flag.
    """
    import yaml
    from lightkube.core.exceptions import ConfigError

    from tenantctl.operator.kube import Connection
    from tenantctl.problems import InvalidInput, Problem

    path = kubeconfig or (Path(os.environ["KUBECONFIG"]) if os.environ.get("KUBECONFIG") else None)
    flag = "--kubeconfig" if kubeconfig else "$KUBECONFIG" if path else "--kubeconfig"
    if path is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            return Connection.in_cluster()
        except ConfigError as exc:
            raise InvalidInput([Problem("ServiceAccount", f"cannot be read: {exc}")]) from None
    path = path or Path.home() / ".kube" / "config"
    try:
        config = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise InvalidInput([Problem(flag, f"cannot read {str(path)!r}: {reason}")]) from None
    except yaml.YAMLError as exc:
        raise InvalidInput([Problem(flag, f"{str(path)!r} is not YAML: {exc}")]) from None
    try:
        return Connection.from_kubeconfig(config, context, path=path)
    except ConfigError as exc:
        at = "--context" if context and "context" in str(exc).lower() else flag
        raise InvalidInput([Problem(at, f"{context or str(path)!r}: {exc}")]) from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        detail = f"it has no {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
        raise InvalidInput([Problem(flag, f"{str(path)!r} is not a usable kubeconfig: {detail}")]) from None


def _observed_management_domain(resolv_conf: Path = Path("/etc/resolv.conf")) -> str | None:
    """In a pod, the kubelet's search list names the cluster domain; elsewhere there is none to observe."""
    from tenantctl.operator.observe import management_domain_from_resolv_conf

    try:
        return management_domain_from_resolv_conf(resolv_conf.read_text())
    except OSError:
        return None


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
    helm_release_timeout: Annotated[
        _Text,
        typer.Option(envvar="TENANTCTL_HELM_RELEASE_TIMEOUT", metavar="DURATION",
                     help=f"Teardown's wait for HelmReleases. {_DURATION}"),
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
    import asyncio
    import dataclasses
    import logging

    import kopf

    from tenantctl.operator.certificates import stop_on_new_certificate
    from tenantctl.operator.flags import operator_start
    from tenantctl.operator.handlers import OperatorContext, build_registry
    from tenantctl.operator.logs import configure_logging
    from tenantctl.operator.sharding import peering_priority

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
            "--helm-release-timeout": helm_release_timeout,
            "--requeue": requeue,
            "--metrics-port": metrics_port,
            "--log-format": log_format,
            "--management-cluster-domain": management_cluster_domain,
        },
        lambda: management_connection(kubeconfig, context),
    )
    configure_logging(start.log_format, logging.DEBUG if verbose else logging.INFO)
    log = logging.getLogger(__name__)
    settings = start.settings
    if management_cluster_domain:
        log.info("management cluster domain: %s", settings.management_cluster_domain)
    elif observed := _observed_management_domain():
        settings = dataclasses.replace(settings, management_cluster_domain=observed)
        log.info("management cluster domain: %s", observed)
    else:
        log.warning(
            "management cluster domain not observable (no pod resolv.conf search list) and not given with "
            "--management-cluster-domain: using %s",
            settings.management_cluster_domain,
        )
    ctx = OperatorContext(start.connection, settings)
    pod = os.environ.get("POD_NAME") or None

    async def run() -> None:
        stop = asyncio.Event()
        cert_dir = start.cert_dir
        watcher = asyncio.create_task(stop_on_new_certificate(cert_dir, stop)) if cert_dir else None
        try:
            await kopf.operator(
                registry=build_registry(ctx),
                clusterwide=True,
                standalone=start.peering is None,
                peering_name=start.peering,
                priority=peering_priority(pod) if start.peering else None,
                identity=pod,  # type: ignore[arg-type]  # kopf's Identity: a NewType of str it does not export
                liveness_endpoint=start.liveness,
                stop_flag=stop,
            )
        finally:
            if watcher is not None:
                watcher.cancel()

    asyncio.run(run())


@refusals_exit_2
def install(
    namespace: Annotated[str, typer.Option(help="Namespace the operator runs in.")] = "tenantctl-system",
    image: Annotated[
        str | None, typer.Option(help="Operator image (default: the one of this version, see --help).")
    ] = None,
    file: Annotated[
        list[Path] | None,
        typer.Option(
            "-f",
            "--filename",
            help="Tenant documents: adds the Roles scoping TalosConfigTemplate delete to their names.",
        ),
    ] = None,
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
    from tenantctl.operator.flags import install_plan
    from tenantctl.operator.install import DEFAULT_IMAGE, Topology, install_objects
    from tenantctl.operator.install_apply import apply_install, prune_command
    from tenantctl.operator.kube import APIError
    from tenantctl.problems import InvalidInput, Problems
    from tenantctl.spec import parse_tenant_documents

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
    problems.raise_if_errors()
    topology = Topology(shards=plan.shards, replicas=plan.replicas)
    objects = install_objects(plan.namespace, plan.image, tenants, topology, service_monitor)
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

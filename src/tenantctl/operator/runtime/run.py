"""Run kopf with our registry until stopped: logging, the management domain, peering, certificate rotation."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from pathlib import Path

import kopf

from tenantctl.operator.config.sharding import peering_priority
from tenantctl.operator.phases.observe import management_domain_from_resolv_conf
from tenantctl.operator.runtime.certificates import stop_on_new_certificate
from tenantctl.operator.runtime.event_loop import loop_name, run_in_loop
from tenantctl.operator.runtime.flags import OperatorStart
from tenantctl.operator.runtime.handlers import OperatorContext, build_registry
from tenantctl.operator.runtime.logs import configure_logging

__all__ = ["observed_management_domain", "run_operator"]


def observed_management_domain(resolv_conf: Path = Path("/etc/resolv.conf")) -> str | None:
    """In a pod, the kubelet's search list names the cluster domain; elsewhere there is none to observe."""
    try:
        return management_domain_from_resolv_conf(resolv_conf.read_text())
    except OSError:
        return None


def run_operator(start: OperatorStart, *, verbose: bool, domain_given: bool) -> None:
    """Block running the operator; `domain_given`: --management-cluster-domain was set, so nothing is observed."""
    configure_logging(start.log_format, logging.DEBUG if verbose else logging.INFO)
    log = logging.getLogger(__name__)
    settings = start.settings
    if domain_given:
        log.info("management cluster domain: %s", settings.management_cluster_domain)
    elif observed := observed_management_domain():
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
        log.info("event loop: %s", loop_name(asyncio.get_running_loop()))
        stop = ctx.stop_flag
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

    run_in_loop(run())

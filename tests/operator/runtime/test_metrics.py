"""`/metrics` scraped over HTTP from a running operator: passes, durations, phases, API requests, leftovers."""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import re

import aiohttp
import pytest
from kube_emulator import KubeEmulator
from operator_support import (
    FAST,
    condition,
    eventually,
    kubeconfig_for,
    management,
    running_operator,
    seed_control_plane,
    seed_documents,
    silent_server,
)
from prometheus_client.parser import text_string_to_metric_families

from tenant_support import load_example
from tenantctl.operator.config.settings import MetricsSettings
from tenantctl.operator.kube.client import Connection, KubeClient, Resource, UnreachableError
from tenantctl.operator.phases.events import object_logger
from tenantctl.operator.runtime.logs import JsonFormatter

pytestmark = [pytest.mark.timeout(60)]

TC = "tenantctl.io/v1alpha1/tenantclusters"
TENANT_CLUSTERS = Resource("tenantctl.io/v1alpha1", "TenantCluster", "tenantclusters", True)
PROXMOX = ("tenant-acme", "acme")
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def url(emulator: KubeEmulator) -> str:
    return str(emulator.url).rstrip("/")


async def scrape(port: int) -> Samples:
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/metrics") as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/plain")
        text = await resp.text()
    return parsed(text)


def parsed(text: str) -> Samples:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def test_metrics_carry_passes_phases_requests_and_teardown_leftovers(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    settings = dataclasses.replace(FAST, metrics=MetricsSettings(port=0, addr="127.0.0.1"))
    async with silent_server() as silent:
        docs = load_example("proxmox.yaml")
        management(mgmt)
        seed_documents(mgmt, docs)
        seed_control_plane(mgmt, docs, url(tenant))
        async with running_operator(mgmt, settings) as ctx:
            await eventually(lambda: condition(mgmt.get(TC, *PROXMOX), "Ready").get("status") == "True")
            ready = await scrape(ctx.metrics_port)
            assert value(ready, "tenantctl_tenants", phase="Ready") == 1
            assert value(ready, "tenantctl_reconcile_passes_total", outcome="converged") >= 1
            assert value(ready, "tenantctl_reconcile_pass_duration_seconds_count") >= 1
            assert value(ready, "tenantctl_api_requests_total", verb="GET", status="2xx") > 0
            assert value(ready, "tenantctl_api_requests_total", verb="PATCH", status="2xx") > 0
            # Absent objects are answered by the watch cache now, so no 404 here; the observer test below has one.
            assert value(ready, "tenantctl_api_requests_total", verb="POST", status="2xx") > 0, "Talos secrets"
            secret = mgmt.get("v1/secrets", "tenant-acme", "acme-admin-kubeconfig")
            assert secret is not None
            secret["data"]["super-admin.svc"] = base64.b64encode(kubeconfig_for(silent).encode()).decode()
            mgmt.put("v1/secrets", secret)
            async with KubeClient(Connection.from_server(url(mgmt))) as api:
                await api.delete(TENANT_CLUSTERS, PROXMOX[1], PROXMOX[0])
            await eventually(lambda: mgmt.get(TC, *PROXMOX) is None, timeout=30)
            gone = await scrape(ctx.metrics_port)
    assert value(gone, "tenantctl_teardown_leftovers_total", step="TenantVolumes") == 1
    assert value(gone, "tenantctl_tenants", phase="Ready") == 0, "a deleted tenant leaves the gauge"


async def test_api_requests_count_every_attempt_and_unanswered_ones(mgmt: KubeEmulator) -> None:
    seen: list[tuple[str, int | None]] = []
    management(mgmt)
    observe = lambda verb, status: seen.append((verb, status))  # noqa: E731
    async with KubeClient(Connection.from_server(url(mgmt)), observer=observe) as api:
        assert await api.get(TENANT_CLUSTERS, "absent", "ns") is None
        await api.list(TENANT_CLUSTERS, "ns")
    assert seen == [("GET", 404), ("GET", 200)]
    async with silent_server() as silent:
        fast = dataclasses.replace(FAST.retry, timeout=0.2, backoffs=(0.01,))
        async with KubeClient(Connection.from_server(silent), retry=fast, observer=observe) as api:
            with pytest.raises(UnreachableError, match=f"^{re.escape(silent)} did not answer: GET "):
                await api.list(TENANT_CLUSTERS, "ns")
    assert seen[2:] == [("GET", None), ("GET", None)], "each retry attempt is one request"


def test_json_log_lines_carry_the_tenants_namespace_and_name(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="tenantctl.operator"):
        object_logger("tenant-acme", "acme").info("applied %d objects", 3)
    line = json.loads(JsonFormatter().format(caplog.records[-1]))
    assert line["namespace"] == "tenant-acme" and line["name"] == "acme"
    assert line["message"].endswith("applied 3 objects") and line["level"] == "info"
    kopf_line = logging.LogRecord("kopf.objects", logging.WARNING, __file__, 1, "retrying", None, None)
    kopf_line.k8s_ref = {"namespace": "tenant-demo", "name": "demo", "kind": "TenantCluster"}
    assert {"namespace": "tenant-demo", "name": "demo"}.items() <= json.loads(JsonFormatter().format(kopf_line)).items()


def test_tenants_are_counted_per_upgrade_stage_and_a_stage_left_drops_to_zero() -> None:
    from tenantctl.operator.runtime.metrics import Metrics

    metrics = Metrics()
    metrics.upgrade_stage(("ns", "a"), "ControlPlane")
    metrics.upgrade_stage(("ns", "b"), "ControlPlane")
    metrics.upgrade_stage(("ns", "a"), "Pool")
    text = parsed(metrics.exposition().decode())
    assert value(text, "tenantctl_upgrade_stage", stage="ControlPlane") == 1
    assert value(text, "tenantctl_upgrade_stage", stage="Pool") == 1
    metrics.upgrade_stage(("ns", "a"), None)
    metrics.upgrade_stage(("ns", "b"), None)
    text = parsed(metrics.exposition().decode())
    assert value(text, "tenantctl_upgrade_stage", stage="ControlPlane") == 0
    assert value(text, "tenantctl_upgrade_stage", stage="Pool") == 0


def test_each_verb_and_answer_is_a_series_of_its_own() -> None:
    from tenantctl.operator.runtime.metrics import Metrics

    metrics = Metrics()
    for verb, status in (("GET", 200), ("GET", 404), ("GET", None), ("GET", 201), ("PATCH", 200), ("GET", 404)):
        metrics.request(verb, status)
    count = lambda verb, status: metrics.registry.get_sample_value(  # noqa: E731
        "tenantctl_api_requests_total", {"verb": verb, "status": status})
    assert (count("GET", "2xx"), count("GET", "404"), count("GET", "unreachable"), count("PATCH", "2xx")) == (
        2, 2, 1, 1)

"""Prometheus metrics of one operator process, served on `/metrics`.

Each operator context owns its own registry (two shards in one test process do not mix their
series). `prometheus_client` is imported when an operator starts, never by the CLI's start.

Series:
- `tenantctl_reconcile_passes_total{outcome}`: passes that `converged`, are `waiting` (requeued), or `failed`.
- `tenantctl_reconcile_pass_duration_seconds`: histogram of pass durations.
- `tenantctl_tenants{phase}`: TenantClusters of this shard by the phase their last pass wrote.
- `tenantctl_api_requests_total{verb,status}`: management API requests by HTTP verb and answer
  (`2xx`, the error status code, or `unreachable`), every retry attempt counted.
- `tenantctl_teardown_leftovers_total{step}`: what teardown had to leave behind, by step.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any

from tenantctl.operator.config.settings import MetricsSettings
from tenantctl.operator.phases.conditions import StepOutcome

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["CONTENT_TYPE", "Metrics", "Outcome"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
Key = tuple[str, str]


class Outcome:
    CONVERGED = "converged"
    WAITING = "waiting"
    FAILED = "failed"


class _Census:
    """How many tenants have each value of one label; a value once seen stays a series (at 0), so a
    tenant leaving it shows as a drop, not as a vanished line."""

    def __init__(self, gauge: Any, label: str) -> None:
        self._gauge, self._label = gauge, label
        self._of: dict[Key, str] = {}
        self._counts: collections.Counter[str] = collections.Counter()

    def record(self, key: Key, value: str | None) -> None:
        previous = self._of.pop(key, None) if value is None else self._of.get(key)
        if value is not None:
            self._of[key] = value
        if previous == value:
            return
        if previous is not None:
            self._counts[previous] -= 1
            self._gauge.labels(**{self._label: previous}).set(self._counts[previous])
        if value is not None:
            self._counts[value] += 1
            self._gauge.labels(**{self._label: value}).set(self._counts[value])


class Metrics:
    """The operator's series, and the tenants' last phases they are counted from."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry(auto_describe=True)
        self.passes = Counter(
            "tenantctl_reconcile_passes", "Reconcile passes by outcome.", ["outcome"], registry=self.registry
        )
        self.pass_seconds = Histogram(
            "tenantctl_reconcile_pass_duration_seconds",
            "Duration of one reconcile pass.",
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
            registry=self.registry,
        )
        self.tenants = Gauge("tenantctl_tenants", "TenantClusters by phase.", ["phase"], registry=self.registry)
        self.requests = Counter(
            "tenantctl_api_requests", "Management API requests by verb and answer.", ["verb", "status"],
            registry=self.registry,
        )
        self.leftovers = Counter(
            "tenantctl_teardown_leftovers", "Objects or disks teardown left behind, by step.", ["step"],
            registry=self.registry,
        )
        self.upgrades = Gauge(
            "tenantctl_upgrade_stage", "TenantClusters in an upgrade, by stage (ControlPlane, Pool).", ["stage"],
            registry=self.registry,
        )
        self.backups = Gauge(
            "tenantctl_backups", "TenantClusters with spec.backup, by state (fresh, stale, pending, suspended): "
            "stale is a last backup older than twice its schedule.", ["state"], registry=self.registry,
        )
        self._phases = _Census(self.tenants, "phase")
        self._backups = _Census(self.backups, "state")
        self._stages = _Census(self.upgrades, "stage")
        self._request_series: dict[tuple[str, str], Any] = {}

    def request(self, verb: str, status: int | None) -> None:
        """One API request attempt; `status` None when no answer came (connection failure, timeout)."""
        answer = "unreachable" if status is None else "2xx" if status < 300 else str(status)
        series = self._request_series.get((verb, answer))
        if series is None:  # `labels()` validates and locks on every call: ~1 % of the CPU at create
            series = self._request_series[verb, answer] = self.requests.labels(verb=verb, status=answer)
        series.inc()

    def pass_done(self, outcome: str, seconds: float) -> None:
        self.passes.labels(outcome=outcome).inc()
        self.pass_seconds.observe(seconds)

    def phase(self, key: Key, phase: str | None) -> None:
        """Record the tenant's phase (None: it is gone) and move it between the gauge's series."""
        self._phases.record(key, phase)

    def upgrade_stage(self, key: Key, stage: str | None) -> None:
        """Record the tenant's upgrade stage (None: none runs, or the tenant is gone)."""
        self._stages.record(key, stage)

    def backup_state(self, key: Key, state: str | None) -> None:
        """Record the tenant's backup state (None: no spec.backup, or the tenant is gone)."""
        self._backups.record(key, state)

    def teardown_leftovers(self, steps: list[dict[str, Any]]) -> None:
        for step in steps:
            if step.get("outcome") == StepOutcome.LEFTOVER:
                self.leftovers.labels(step=str(step["step"])).inc()

    def exposition(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)

    async def serve(self, settings: MetricsSettings) -> web.AppRunner:
        """Serve `/metrics` on the operator's event loop until the returned runner is cleaned up."""
        from aiohttp import web

        async def metrics(_: web.Request) -> web.Response:
            return web.Response(body=self.exposition(), headers={"Content-Type": CONTENT_TYPE})

        app = web.Application()
        app.router.add_get("/metrics", metrics)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, settings.addr, settings.port).start()
        return runner

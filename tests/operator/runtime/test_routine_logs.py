"""kopf's line for every watch-event handler that returned is a DEBUG line of ours, not an INFO one: at a
thousand tenants it was three quarters of the operator's log and said nothing an operator acts on."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from kube_emulator import KubeEmulator
from operator_support import condition, eventually, management, running_operator, seed_control_plane, seed_documents

from tenant_support import load_example
from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.config.sharding import Shard
from tenantctl.operator.kube.client import Connection
from tenantctl.operator.runtime.handlers import (
    KOPF_OBJECT_LOGGER,
    WATCH_EVENT_HANDLERS,
    OperatorContext,
    build_registry,
)
from tenantctl.operator.runtime.logs import RoutineAtDebug, routine_at_debug

TC = "tenantctl.io/v1alpha1/tenantclusters"
KEY = ("tenant-acme", "acme")


def _record(message: str, level: int = logging.INFO) -> logging.LogRecord:
    return logging.LogRecord(KOPF_OBJECT_LOGGER, level, __file__, 1, message, None, None)


@pytest.fixture
def kopf_objects() -> Iterator[logging.Logger]:
    logger = logging.getLogger(KOPF_OBJECT_LOGGER)
    kept, level = list(logger.filters), logger.level
    yield logger
    logger.filters[:], logger.level = kept, level


def test_every_watch_event_handler_is_named() -> None:
    """A new event handler left out of the list would log each of its watch events at INFO again."""
    for count in (1, 2):
        settings = OperatorSettings(shard=Shard(0, count))
        registry = build_registry(OperatorContext(Connection.from_server("http://127.0.0.1:1"), settings))
        ids = {str(h.id) for h in registry._watching.get_all_handlers()}
        assert ids <= set(WATCH_EVENT_HANDLERS)
        if count > 1:  # the misplaced-tenant handlers exist only with shards
            assert ids == set(WATCH_EVENT_HANDLERS)


def test_a_watch_handler_success_is_demoted_and_dropped_at_info(kopf_objects: logging.Logger) -> None:
    quiet = RoutineAtDebug(["cluster_changed"])
    kopf_objects.setLevel(logging.INFO)
    routine = _record("Handler 'cluster_changed' succeeded.")
    assert not quiet.filter(routine)
    assert (routine.levelno, routine.levelname) == (logging.DEBUG, "DEBUG")
    kopf_objects.setLevel(logging.DEBUG)
    assert quiet.filter(_record("Handler 'cluster_changed' succeeded."))


@pytest.mark.parametrize("message, level", [
    ("Handler 'cluster_deleted' succeeded.", logging.INFO),  # a teardown finishing is news
    ("Daemon 'build_registry.<locals>.reconciler' succeeded.", logging.INFO),
    ("Handler 'cluster_changed' failed with an exception. Will ignore.", logging.ERROR),
    ("Handler 'cluster_changed' succeeded.", logging.WARNING),
])
def test_other_lines_are_left_as_they_are(kopf_objects: logging.Logger, message: str, level: int) -> None:
    kopf_objects.setLevel(logging.INFO)
    record = _record(message, level)
    assert RoutineAtDebug(["cluster_changed"]).filter(record)
    assert record.levelno == level


def test_a_message_that_is_not_text_passes(kopf_objects: logging.Logger) -> None:
    record = logging.LogRecord(KOPF_OBJECT_LOGGER, logging.INFO, __file__, 1, {"a": 1}, None, None)
    assert RoutineAtDebug(["cluster_changed"]).filter(record) and record.levelno == logging.INFO


def test_installing_twice_leaves_one_filter(kopf_objects: logging.Logger) -> None:
    first = routine_at_debug(KOPF_OBJECT_LOGGER, ["a"])
    second = routine_at_debug(KOPF_OBJECT_LOGGER, ["b"])
    assert second in kopf_objects.filters and first not in kopf_objects.filters


@pytest.mark.timeout(15)
@pytest.mark.looptime
async def test_the_running_operator_logs_no_watch_handler_success_at_info(
    mgmt: KubeEmulator, tenant: KubeEmulator, caplog: pytest.LogCaptureFixture, kopf_objects: logging.Logger
) -> None:
    docs = load_example("proxmox.yaml")
    management(mgmt)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, str(tenant.url).rstrip("/"))
    caplog.set_level(logging.INFO)
    async with running_operator(mgmt):
        await eventually(lambda: condition(mgmt.get(TC, *KEY), "Ready").get("status") == "True")
    kopf_lines = [r.getMessage() for r in caplog.records if r.name == KOPF_OBJECT_LOGGER]
    assert kopf_lines, "kopf's object lines reach the log"
    assert not [line for line in kopf_lines if line.endswith("_changed' succeeded.")], kopf_lines
    assert any(line.endswith("reconciler' succeeded.") for line in kopf_lines), "the daemon's end is still said"

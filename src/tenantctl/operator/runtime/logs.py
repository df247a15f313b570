"""How the operator's log lines look: text for a terminal, one JSON object per line for a collector.

A line about a tenant carries its namespace and name as fields: ours through `object_logger`, and
kopf's own per-object lines through the `k8s_ref` it attaches; either way under the same keys.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

__all__ = ["JsonFormatter", "LogFormat", "RoutineAtDebug", "configure_logging", "routine_at_debug"]

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


class LogFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


class JsonFormatter(logging.Formatter):
    """`time`, `level`, `logger`, `message`, and `namespace`/`name` of the tenant the line is about."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        ref = getattr(record, "k8s_ref", None)
        if isinstance(ref, dict):
            if ref.get("namespace"):
                line["namespace"] = ref["namespace"]
            if ref.get("name"):
                line["name"] = ref["name"]
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


class RoutineAtDebug(logging.Filter):
    """kopf says at INFO that a watch-event handler returned, once per watch event of every tenant: three
    quarters of the operator's INFO lines, and nothing an operator acts on. They become DEBUG lines, as
    kopf itself treats its indexers' INFO lines (`TerseObjectLogger`); failures stay as they are."""

    def __init__(self, handler_ids: Iterable[str]) -> None:
        super().__init__()
        self._routine = frozenset(f"Handler {handler_id!r} succeeded." for handler_id in handler_ids)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or not isinstance(record.msg, str) or record.msg not in self._routine:
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def routine_at_debug(logger_name: str, handler_ids: Iterable[str]) -> RoutineAtDebug:
    """Put the filter on the logger kopf writes handler outcomes to (once: a replaced earlier one is removed)."""
    logger = logging.getLogger(logger_name)
    for earlier in [f for f in logger.filters if isinstance(f, RoutineAtDebug)]:
        logger.removeFilter(earlier)
    quiet = RoutineAtDebug(handler_ids)
    logger.addFilter(quiet)
    return quiet


def configure_logging(fmt: LogFormat, level: int) -> None:
    """One stderr handler on the root logger in the chosen format (replacing any earlier one)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt is LogFormat.JSON else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)

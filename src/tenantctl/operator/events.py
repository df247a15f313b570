"""How phases report what they did: a log line with `[ns/name]` and, when it matters, an Event.

Phases never import kopf: the handlers pass a recorder that logs and posts Events through kopf.
"""

from __future__ import annotations

import logging
from typing import Protocol

__all__ = ["Recorder", "object_logger"]


class Recorder(Protocol):
    def info(self, reason: str, message: str) -> None: ...

    def warn(self, reason: str, message: str) -> None: ...


class _Prefixed(logging.LoggerAdapter[logging.Logger]):
    def process(self, msg: object, kwargs: object) -> tuple[str, object]:  # type: ignore[override]
        return f"[{self.extra['ref'] if self.extra else '?'}] {msg}", kwargs


def object_logger(namespace: str, name: str) -> logging.LoggerAdapter[logging.Logger]:
    """A logger whose lines start with `[namespace/name]`."""
    return _Prefixed(logging.getLogger("tenantctl.operator"), {"ref": f"{namespace}/{name}"})

"""How phases report what they did: a log line with `[ns/name]` and, when it matters, an Event.

Phases never import kopf: the handlers pass a recorder that logs and posts Events through kopf.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any, Protocol

__all__ = ["Recorder", "object_logger"]


class Recorder(Protocol):
    def info(self, reason: str, message: str) -> None: ...

    def warn(self, reason: str, message: str) -> None: ...


class _Prefixed(logging.LoggerAdapter[logging.Logger]):
    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        extra: dict[str, Any] = dict(self.extra or {})
        ref: dict[str, str] = extra.get("k8s_ref") or {}
        kwargs["extra"] = {**(kwargs.get("extra") or {}), **extra}
        return f"[{ref.get('namespace', '')}/{ref.get('name', '?')}] {msg}", kwargs


def object_logger(namespace: str, name: str) -> logging.LoggerAdapter[logging.Logger]:
    """A logger whose lines start with `[namespace/name]` and carry both as `k8s_ref`, as kopf's do."""
    return _Prefixed(logging.getLogger("tenantctl.operator"), {"k8s_ref": {"namespace": namespace, "name": name}})

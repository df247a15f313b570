"""The webhook's serving certificate changes under a running operator: stop, so the pod restarts with it.

kopf reads the certificate once, when its webhook server starts; cert-manager renews it (by default a
third of its lifetime before expiry) into the mounted Secret. Served on, the old certificate would
expire and the API server, with `failurePolicy: Fail`, would refuse every TenantCluster and NodePool
change. Stopping the operator when the files change lets the Deployment restart it on the new one.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

__all__ = ["CERTIFICATE_FILES", "stop_on_new_certificate"]

CERTIFICATE_FILES = ("tls.crt", "tls.key")
_log = logging.getLogger(__name__)


def _fingerprint(directory: Path) -> tuple[tuple[str, bytes | None], ...]:
    out: list[tuple[str, bytes | None]] = []
    for name in CERTIFICATE_FILES:
        try:
            out.append((name, (directory / name).read_bytes()))
        except OSError:
            out.append((name, None))
    return tuple(out)


async def stop_on_new_certificate(directory: Path, stop: asyncio.Event, interval: float = 60.0) -> None:
    """Set `stop` once the certificate or key in `directory` differs from what it was at start."""
    first = _fingerprint(directory)
    while not stop.is_set():
        await asyncio.sleep(interval)
        if _fingerprint(directory) != first:
            _log.warning("the webhook certificate in %s changed: stopping to restart on it", directory)
            stop.set()

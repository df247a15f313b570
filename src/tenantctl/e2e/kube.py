"""Dict-in, dict-out calls to one Kubernetes API server for the (synchronous) harness.

The harness touches a handful of paths (custom objects, Secrets, Nodes, PVCs, Pods, PVs) and keeps
objects as plain dicts. The calls go through the operator's client (`tenantctl.operator.kube.client`, the
one module that talks to an API), so kubeconfig handling — certificates, tokens, `tokenFile`, exec
plugins — is the same everywhere. That client is async: it runs on a loop in a thread of its own, so
the harness may call from any thread and close from any other.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["Kube", "KubeError"]

T = TypeVar("T")


class KubeError(Exception):
    """A failed call: `status` is the HTTP status, or None when the server did not answer."""

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Kube:
    """One API server; `timeout` bounds every single request in seconds (no retries: the harness polls)."""

    def __init__(self, connection: Any, timeout: float = 15.0) -> None:
        from tenantctl.operator.kube.client import KubeClient, RetryPolicy

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="e2e-kube", daemon=True)
        self._thread.start()
        self._client = KubeClient(connection, retry=RetryPolicy(timeout=timeout, backoffs=()))
        self._run(self._client.__aenter__())

    @classmethod
    def from_file(cls, path: str, timeout: float = 15.0) -> Kube:
        import yaml

        from tenantctl.operator.kube.client import Connection

        file = Path(path).expanduser()
        return cls(Connection.from_kubeconfig(yaml.safe_load(file.read_text()), path=file), timeout)

    @classmethod
    def from_dict(cls, kubeconfig: Mapping[str, Any], timeout: float = 15.0) -> Kube:
        from tenantctl.operator.kube.client import Connection

        return cls(Connection.from_kubeconfig(kubeconfig), timeout)

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def _call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> dict[str, Any]:
        from tenantctl.operator.kube.client import APIError

        try:
            return self._run(self._client.call(method, path, body))
        except APIError as exc:
            raise KubeError(exc.status or None, f"{method} {path}: {exc}") from None

    def close(self) -> None:
        """Drop pooled connections now and stop the client's loop: a kept-alive socket otherwise outlives the run."""
        if not self._loop.is_closed():
            self._run(self._client.close())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    def get(self, path: str) -> dict[str, Any] | None:
        """The object at `path`, or None when it does not exist."""
        try:
            return self._call("GET", path)
        except KubeError as exc:
            if exc.status == 404:
                return None
            raise

    def items(self, path: str) -> list[dict[str, Any]]:
        return list((self.get(path) or {}).get("items") or [])

    def create(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("POST", path, body)

    def delete(self, path: str) -> bool:
        """Delete the object at `path`; False when it was already gone."""
        try:
            self._call("DELETE", path)
        except KubeError as exc:
            if exc.status == 404:
                return False
            raise
        return True

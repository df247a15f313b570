"""Dict-in, dict-out calls to one Kubernetes API server through the official client's ApiClient.

The harness touches a handful of paths (custom objects, Secrets, Nodes, PVCs, Pods, PVs) and keeps
objects as plain dicts; the official client contributes kubeconfig handling (certificates, tokens,
exec plugins) and nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["Kube", "KubeError"]

_HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}


class KubeError(Exception):
    """A failed call: `status` is the HTTP status, or None when the server did not answer."""

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Kube:
    """One API server; `timeout` bounds every single request (connect, read) in seconds."""

    def __init__(self, api_client: Any, timeout: float = 15.0) -> None:
        self._client = api_client
        self._timeout = timeout

    @classmethod
    def from_file(cls, path: str, timeout: float = 15.0) -> Kube:
        from kubernetes import config

        return cls(config.new_client_from_config(config_file=path), timeout)  # type: ignore[no-untyped-call]

    @classmethod
    def from_dict(cls, kubeconfig: Mapping[str, Any], timeout: float = 15.0) -> Kube:
        from kubernetes import config

        return cls(config.new_client_from_config_dict(dict(kubeconfig)), timeout)  # type: ignore[no-untyped-call]

    def _call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> dict[str, Any]:
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            verb, url, headers, payload, form = self._client.param_serialize(
                method=method, resource_path=path, header_params=dict(_HEADERS), body=body,
                auth_settings=["BearerToken"],
            )
            response = self._client.call_api(
                verb, url, header_params=headers, body=payload, post_params=form, _request_timeout=self._timeout
            )
            data = response.read()
        except ApiException as exc:
            raise KubeError(exc.status or None, f"{method} {path}: {exc.status} {exc.reason}") from None
        except (HTTPError, OSError) as exc:
            raise KubeError(None, f"{method} {path}: no answer: {exc}") from None
        if response.status >= 400:
            raise KubeError(response.status, f"{method} {path}: {response.status} {response.reason}")
        return dict(json.loads(data)) if data else {}

    def close(self) -> None:
        """Drop pooled connections now: a kept-alive socket otherwise outlives the run."""
        self._client.rest_client.pool_manager.clear()
        self._client.close()

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

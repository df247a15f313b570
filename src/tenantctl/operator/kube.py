"""The one place the operator talks to a Kubernetes API: a thin async client over aiohttp.

Objects stay plain dicts. Every call is bounded by a timeout; reads, server-side applies, merge
patches and deletes are idempotent, so 409/429/5xx answers and timeouts are retried with backoff
before the caller sees a `TransientAPIError` (which the handlers turn into a kopf retry).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import ssl
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import aiohttp

from tenantctl.operator.settings import RetryPolicy

__all__ = [
    "SERVICE_ACCOUNT_DIR",
    "APIError",
    "Connection",
    "ImmutableFieldError",
    "KubeClient",
    "NotFoundError",
    "RequestObserver",
    "Resource",
    "RetryPolicy",
    "TransientAPIError",
    "UnreachableError",
    "selector",
]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
_RETRIED_STATUSES = frozenset({409, 429, 500, 502, 503, 504})
_APPLY_CONTENT_TYPE = "application/apply-patch+yaml"
_MERGE_CONTENT_TYPE = "application/merge-patch+json"

Obj = dict[str, Any]
RequestObserver = Callable[[str, int | None], None]
"""Told of every request attempt: the HTTP verb and the status (None: no answer). Metrics count them."""


class APIError(Exception):
    """An answer the API gave that is not a success; `status` and `reason` as the server sent them."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


class NotFoundError(APIError):
    """The object (or its resource) does not exist: for a delete, the goal is already met."""


class ImmutableFieldError(APIError):
    """An admission webhook refused a change to an immutable spec: delete and create again."""


class TransientAPIError(APIError):
    """Conflicts, server errors or timeouts that outlived the retries: try again later."""


class UnreachableError(TransientAPIError):
    """No answer at all within the timeout (connection refused, reset, or silence)."""

    def __init__(self, server: str, detail: str) -> None:
        super().__init__(0, "Unreachable", f"{server}: {detail}")


@dataclass(frozen=True)
class Connection:
    """Where an API server is and how to authenticate; built from a kubeconfig or the pod's account."""

    server: str
    token: str | None = None
    ca_data: bytes | None = None
    client_cert_data: bytes | None = None
    client_key_data: bytes | None = None
    insecure: bool = False

    @classmethod
    def in_cluster(cls, sa_dir: Path = SERVICE_ACCOUNT_DIR) -> Connection:
        host = os.environ["KUBERNETES_SERVICE_HOST"]
        port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
        host = f"[{host}]" if ":" in host else host
        return cls(
            server=f"https://{host}:{port}",
            token=(sa_dir / "token").read_text().strip(),
            ca_data=(sa_dir / "ca.crt").read_bytes(),
        )

    @classmethod
    def from_kubeconfig(cls, config: Mapping[str, Any], context: str | None = None) -> Connection:
        """The connection of `context` (or the current one) of a parsed kubeconfig."""
        name = context or config.get("current-context")
        contexts = {c["name"]: c["context"] for c in config.get("contexts") or []}
        ctx = contexts.get(name) if name else next(iter(contexts.values()), None)
        clusters = {c["name"]: c["cluster"] for c in config.get("clusters") or []}
        users = {u["name"]: u.get("user") or {} for u in config.get("users") or []}
        cluster = clusters[ctx["cluster"]] if ctx else next(iter(clusters.values()))
        user = users.get(ctx.get("user", "")) if ctx else next(iter(users.values()), {})
        user = user or {}
        return cls(
            server=str(cluster["server"]).rstrip("/"),
            token=user.get("token"),
            ca_data=_b64_or_file(cluster, "certificate-authority"),
            client_cert_data=_b64_or_file(user, "client-certificate"),
            client_key_data=_b64_or_file(user, "client-key"),
            insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
        )

    def ssl_context(self) -> ssl.SSLContext | bool:
        if not self.server.startswith("https"):
            return False
        ctx = ssl.create_default_context()
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif self.ca_data:
            ctx.load_verify_locations(cadata=self.ca_data.decode())
        if self.client_cert_data and self.client_key_data:
            with _temp_files(self.client_cert_data, self.client_key_data) as (cert, key):
                ctx.load_cert_chain(cert, key)
        return ctx


def _b64_or_file(section: Mapping[str, Any], key: str) -> bytes | None:
    if data := section.get(f"{key}-data"):
        return base64.b64decode(data)
    if path := section.get(key):
        return Path(path).read_bytes()
    return None


@contextlib.contextmanager
def _temp_files(*blobs: bytes) -> Iterator[list[str]]:
    """ssl loads client certificates only from files: hold them on disk for the call, then remove."""
    paths: list[str] = []
    try:
        for blob in blobs:
            fd, path = tempfile.mkstemp(prefix="tenantctl-")
            paths.append(path)
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
        yield paths
    finally:
        for path in paths:
            Path(path).unlink(missing_ok=True)


@dataclass(frozen=True)
class Resource:
    """A served resource: where its URLs are and whether objects live in a namespace."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        base = f"/api/{self.api_version}" if "/" not in self.api_version else f"/apis/{self.api_version}"
        if self.namespaced and namespace is not None:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name is not None:
            base += f"/{name}"
        if subresource is not None:
            base += f"/{subresource}"
        return base


def selector(labels: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


@dataclass
class KubeClient:
    """An async client of one API server; discovery is cached for the client's lifetime."""

    connection: Connection
    field_manager: str = "tenantctl"
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    observer: RequestObserver | None = None
    _session: aiohttp.ClientSession | None = field(default=None, init=False, repr=False)
    _discovery: dict[str, dict[str, Resource] | None] = field(default_factory=dict, init=False, repr=False)

    async def __aenter__(self) -> Self:
        headers = {"Accept": "application/json"}
        if self.connection.token:
            headers["Authorization"] = f"Bearer {self.connection.token}"
        self._session = aiohttp.ClientSession(
            headers=headers,
            connector=aiohttp.TCPConnector(ssl=self.connection.ssl_context(), limit=64),
        )
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    # -- discovery -------------------------------------------------------------------------------

    async def resource(self, api_version: str, kind: str) -> Resource | None:
        """The resource serving `kind`, or None when its API group/version or kind is not installed."""
        if api_version not in self._discovery:
            path = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
            try:
                doc = await self._request("GET", path)
            except NotFoundError:
                self._discovery[api_version] = None
            else:
                self._discovery[api_version] = {
                    r["kind"]: Resource(api_version, r["kind"], r["name"], bool(r.get("namespaced")))
                    for r in doc.get("resources", [])
                    if "/" not in r["name"]
                }
        served = self._discovery[api_version]
        return None if served is None else served.get(kind)

    async def require(self, api_version: str, kind: str) -> Resource:
        found = await self.resource(api_version, kind)
        if found is None:
            raise NotFoundError(404, "NotFound", f"the server does not serve {kind} in {api_version}")
        return found

    # -- verbs -----------------------------------------------------------------------------------

    async def get(self, res: Resource, name: str, namespace: str | None = None) -> Obj | None:
        try:
            return await self._request("GET", res.path(namespace, name))
        except NotFoundError:
            return None

    async def list(
        self, res: Resource, namespace: str | None = None, labels: Mapping[str, str] | None = None
    ) -> list[Obj]:
        params = {"labelSelector": selector(labels)} if labels else {}
        doc = await self._request("GET", res.path(namespace), params=params)
        items: list[Obj] = doc.get("items") or []
        for item in items:
            item.setdefault("apiVersion", res.api_version)
            item.setdefault("kind", res.kind)
        return items

    async def apply(self, res: Resource, obj: Mapping[str, Any]) -> Obj:
        """Server-side apply with our field manager, forcing ownership of the fields we render."""
        meta = obj["metadata"]
        params = {"fieldManager": self.field_manager, "force": "true"}
        return await self._request(
            "PATCH",
            res.path(meta.get("namespace"), meta["name"]),
            params=params,
            body=obj,
            content_type=_APPLY_CONTENT_TYPE,
        )

    async def merge_patch(
        self, res: Resource, name: str, namespace: str | None, patch: Mapping[str, Any], *, status: bool = False
    ) -> Obj:
        return await self._request(
            "PATCH",
            res.path(namespace, name, "status" if status else None),
            body=patch,
            content_type=_MERGE_CONTENT_TYPE,
        )

    async def create(self, res: Resource, obj: Mapping[str, Any]) -> Obj:
        path = res.path(obj["metadata"].get("namespace"))
        return await self._request("POST", path, body=obj, content_type="application/json", retry_409=False)

    async def delete(self, res: Resource, name: str, namespace: str | None = None) -> bool:
        """Ask for deletion without waiting; False when it was already gone."""
        try:
            await self._request("DELETE", res.path(namespace, name), params={"propagationPolicy": "Background"})
        except NotFoundError:
            return False
        return True

    async def probe(self, timeout: float) -> None:
        """Whether the server answers at all within `timeout`: one attempt, no retries."""
        await self._request("GET", "/version", attempts=1, timeout=timeout)

    # -- transport -------------------------------------------------------------------------------

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Mapping[str, Any] | None = None,
        content_type: str | None = None,
        attempts: int | None = None,
        timeout: float | None = None,
        retry_409: bool = True,
    ) -> Obj:
        delays: Sequence[float] = self.retry.backoffs if attempts is None else self.retry.backoffs[: attempts - 1]
        for attempt in range(len(delays) + 1):
            try:
                return await self._observed(method, path, params, body, content_type, timeout or self.retry.timeout)
            except TransientAPIError as exc:
                if attempt >= len(delays) or (exc.status == 409 and not retry_409):
                    raise
                await asyncio.sleep(delays[attempt])
        raise AssertionError("unreachable")  # pragma: no cover

    async def _observed(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        body: Mapping[str, Any] | None,
        content_type: str | None,
        timeout: float,
    ) -> Obj:
        """One attempt, reported to the observer whatever its answer."""
        try:
            answer = await self._once(method, path, params, body, content_type, timeout)
        except APIError as exc:
            if self.observer is not None:
                self.observer(method, None if isinstance(exc, UnreachableError) else exc.status)
            raise
        if self.observer is not None:
            self.observer(method, 200)
        return answer

    async def _once(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        body: Mapping[str, Any] | None,
        content_type: str | None,
        timeout: float,
    ) -> Obj:
        if self._session is None:
            raise RuntimeError("KubeClient used outside `async with`")
        headers = {"Content-Type": content_type} if content_type else {}
        data = json.dumps(body).encode() if body is not None else None
        url = self.connection.server + path
        try:
            async with asyncio.timeout(timeout):
                async with self._session.request(
                    method, url, params=dict(params or {}), data=data, headers=headers
                ) as resp:
                    text = await resp.text()
                    status = resp.status
        except (TimeoutError, aiohttp.ClientConnectionError, OSError) as exc:
            raise UnreachableError(self.connection.server, f"{method} {path}: {type(exc).__name__} {exc}") from exc
        if status < 400:
            parsed: Obj = json.loads(text) if text else {}
            return parsed
        raise _error_from(status, text)


def _error_from(status: int, text: str) -> APIError:
    try:
        doc = json.loads(text)
    except ValueError:
        doc = {}
    reason = str(doc.get("reason") or "") if isinstance(doc, dict) else ""
    message = str(doc.get("message") or text) if isinstance(doc, dict) else text
    if status == 404:
        return NotFoundError(status, reason or "NotFound", message)
    if status in (400, 422) and "immutable" in message.lower():
        return ImmutableFieldError(status, reason or "Invalid", message)
    if status in _RETRIED_STATUSES:
        return TransientAPIError(status, reason or "Transient", message)
    return APIError(status, reason or "Error", message)

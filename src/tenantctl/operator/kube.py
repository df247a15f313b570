"""The one place tenantctl talks to a Kubernetes API: lightkube underneath, our thin layer on top.

Why lightkube (over kr8s): it is async on httpx, fully typed (`py.typed`, mypy-clean), and its
kubeconfig support covers what production needs and our hand-written code lacked — exec credential
plugins (re-run on 401), `tokenFile` and the in-cluster ServiceAccount token re-read on 401 (projected
tokens rotate), client certificates, `insecure-skip-tls-verify`; it handles generic (unknown-kind)
resources and server-side apply. kr8s is async too but wraps an object model we do not use, and its
typing is partial. We take lightkube's configuration, authentication and transport (an httpx client
it builds) and keep what is ours here: paths from discovery, plain dict objects, retries with
backoff, the error classes (immutable, transient, unreachable), the server-side-apply field manager.

Every call is bounded by a timeout; reads, server-side applies, merge patches and deletes are
idempotent, so 409/429/5xx answers and timeouts are retried with backoff before the caller sees a
`TransientAPIError` (which the handlers turn into a kopf retry).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx2 as httpx
from lightkube.config.kubeconfig import KubeConfig, SingleConfig
from lightkube.config.models import Cluster, User
from lightkube.core.exceptions import ConfigError

from tenantctl.operator.kube_cache import WatchCache
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
_JSON_PATCH_CONTENT_TYPE = "application/json-patch+json"

Obj = dict[str, Any]
Objs = list[Obj]
Payload = Mapping[str, Any] | Sequence[Mapping[str, Any]]
"""A request body: an object or merge patch, or the operations of a JSON patch."""
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
    """Where an API server is and how to authenticate: one context of a kubeconfig, as lightkube reads it.

    The credentials are lightkube's: a static token, `tokenFile` (re-read when the server answers
    401, so a rotated projected ServiceAccount token is picked up), exec credential plugins (EKS,
    GKE, kubelogin; re-run on 401), client certificates, basic auth.
    """

    config: SingleConfig

    @property
    def server(self) -> str:
        return str(self.config.cluster.server).rstrip("/")

    @classmethod
    def from_server(cls, server: str, token: str | None = None) -> Connection:
        """A bare server (tests, the emulator): no TLS material, an optional static token."""
        user = User(token=token) if token else User()
        return cls.from_lightkube(KubeConfig.from_one(cluster=Cluster(server=server.rstrip("/")), user=user))

    @classmethod
    def in_cluster(cls, sa_dir: Path = SERVICE_ACCOUNT_DIR) -> Connection:
        """The pod's ServiceAccount; its token is read from the file, again whenever the server refuses it."""
        return cls.from_lightkube(KubeConfig.from_service_account(sa_dir))

    @classmethod
    def from_kubeconfig(
        cls, config: Mapping[str, Any], context: str | None = None, path: Path | None = None
    ) -> Connection:
        """The connection of `context` (or the current one) of a parsed kubeconfig; relative files
        (certificates, `tokenFile`) are found next to `path` when it is given."""
        return cls.from_lightkube(KubeConfig.from_dict(dict(config), fname=path), context)

    @classmethod
    def from_lightkube(cls, config: KubeConfig, context: str | None = None) -> Connection:
        single = config.get(context_name=context)
        if single is None:
            raise ValueError("the kubeconfig has no context to use")
        if single.user is None:
            single = single._replace(user=User())
        return cls(single)

    def http_client(self, timeout: float) -> httpx.AsyncClient:
        """An httpx client with lightkube's TLS and auth for this server; timeouts are ours (per request)."""
        from lightkube.config.client_adapter import AsyncClient, ConnectionParams

        params = ConnectionParams(timeout=httpx.Timeout(timeout), trust_env=False)
        return AsyncClient(self.config, params)

    async def login(self) -> dict[str, Any]:
        """Fresh credentials for kopf's own connection (it asks again after a 401): the bearer header
        lightkube's auth would send now, plus the TLS material."""
        from lightkube.config.client_adapter import user_auth

        token: str | None = None
        auth = user_auth(self.config.user)
        if auth is not None:
            flow = auth.async_auth_flow(httpx.Request("GET", self.server + "/version"))
            request = await flow.__anext__()
            await flow.aclose()
            header = request.headers.get("Authorization", "")
            token = header.removeprefix("Bearer ") if header.startswith("Bearer ") else None
        cluster, user = self.config.cluster, self.config.user
        return {
            "server": self.server,
            "token": token,
            "insecure": bool(cluster.insecure),
            "ca_data": self._blob(cluster.certificate_auth_data, cluster.certificate_auth),
            "certificate_data": self._blob(user.client_cert_data if user else None, user.client_cert if user else None),
            "private_key_data": self._blob(user.client_key_data if user else None, user.client_key if user else None),
        }

    def _blob(self, data: str | None, path: str | None) -> bytes | None:
        if data:
            return base64.b64decode(data)
        if path:
            return Path(self.config.abs_file(path)).read_bytes()
        return None


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
    cache: WatchCache | None = None
    """Answer gets and lists from watches (the operator's management client); None: always ask."""
    observer: RequestObserver | None = None
    _session: httpx.AsyncClient | None = field(default=None, init=False, repr=False)
    _discovery: dict[str, dict[str, Resource] | None] = field(default_factory=dict, init=False, repr=False)

    async def __aenter__(self) -> Self:
        self._session = self.connection.http_client(self.retry.timeout)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        if self.cache is not None:
            await self.cache.close()
        if self._session is not None:
            await self._session.aclose()
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
        if self.cache is not None:
            answered, found = await self.cache.get(self, res, name, namespace)
            if answered:
                return found
        try:
            return await self._request("GET", res.path(namespace, name))
        except NotFoundError:
            return None

    async def list(
        self, res: Resource, namespace: str | None = None, labels: Mapping[str, str] | None = None
    ) -> list[Obj]:
        if self.cache is not None:
            cached = await self.cache.list(self, res, namespace, labels)
            if cached is not None:
                return cached
        params = {"labelSelector": selector(labels)} if labels else {}
        items, _ = await self._list(res, namespace, params)
        return items

    async def list_versioned(self, res: Resource) -> tuple[Objs, str]:
        """Every object of `res` in every namespace, from the server, with the list's resourceVersion."""
        return await self._list(res, None, {})

    async def _list(self, res: Resource, namespace: str | None, params: Mapping[str, str]) -> tuple[Objs, str]:
        doc = await self._request("GET", res.path(namespace), params=params)
        items: Objs = doc.get("items") or []
        for item in items:
            item.setdefault("apiVersion", res.api_version)
            item.setdefault("kind", res.kind)
        return items, str((doc.get("metadata") or {}).get("resourceVersion") or "")

    async def watch(self, res: Resource, resource_version: str) -> AsyncIterator[Obj]:
        """The events of `res` in every namespace after `resource_version`, until the server ends the stream.

        410 (the version is too old) and other failures raise an `APIError`: the caller lists again.
        """
        if self._session is None:
            raise RuntimeError("KubeClient used outside `async with`")
        params = {"watch": "true", "allowWatchBookmarks": "true", "timeoutSeconds": "300"}
        if resource_version:
            params["resourceVersion"] = resource_version
        timeout = httpx.Timeout(self.retry.timeout, read=None)
        path = res.path()
        try:
            async with self._session.stream(
                "GET", path, params=params, headers={"Accept": "application/json"}, timeout=timeout
            ) as resp:
                if resp.status_code >= 400:
                    raise _error_from(resp.status_code, (await resp.aread()).decode(errors="replace"))
                async for line in resp.aiter_lines():
                    if not line.strip():
                        continue
                    event: Obj = json.loads(line)
                    if event.get("type") == "ERROR":
                        status = event.get("object") or {}
                        raise _error_from(int(status.get("code") or 500), json.dumps(status))
                    yield event
        except (httpx.TransportError, OSError) as exc:
            raise UnreachableError(self.connection.server, f"WATCH {path}: {type(exc).__name__} {exc}") from exc

    async def apply(self, res: Resource, obj: Mapping[str, Any]) -> Obj:
        """Server-side apply with our field manager, forcing ownership of the fields we render."""
        meta = obj["metadata"]
        params = {"fieldManager": self.field_manager, "force": "true"}
        return self._wrote(res, await self._request(
            "PATCH",
            res.path(meta.get("namespace"), meta["name"]),
            params=params,
            body=obj,
            content_type=_APPLY_CONTENT_TYPE,
        ))

    def _wrote(self, res: Resource, answer: Obj) -> Obj:
        if self.cache is not None:
            self.cache.wrote(res, answer)
        return answer

    async def merge_patch(
        self, res: Resource, name: str, namespace: str | None, patch: Mapping[str, Any], *, status: bool = False
    ) -> Obj:
        return self._wrote(res, await self._request(
            "PATCH",
            res.path(namespace, name, "status" if status else None),
            body=patch,
            content_type=_MERGE_CONTENT_TYPE,
        ))

    async def json_patch(
        self, res: Resource, name: str, namespace: str | None, operations: Sequence[Mapping[str, Any]]
    ) -> Obj:
        """A JSON patch: its `test` operations make the change conditional on what the caller read
        (a failed test is a 422, never retried), e.g. a list of finalizers replaced only as seen."""
        return self._wrote(res, await self._request(
            "PATCH", res.path(namespace, name), body=operations, content_type=_JSON_PATCH_CONTENT_TYPE
        ))

    async def create(self, res: Resource, obj: Mapping[str, Any]) -> Obj:
        path = res.path(obj["metadata"].get("namespace"))
        return self._wrote(
            res, await self._request("POST", path, body=obj, content_type="application/json", retry_409=False)
        )

    async def delete(self, res: Resource, name: str, namespace: str | None = None) -> bool:
        """Ask for deletion without waiting; False when it was already gone."""
        try:
            await self._request("DELETE", res.path(namespace, name), params={"propagationPolicy": "Background"})
        except NotFoundError:
            return False
        return True

    async def call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Obj:
        """A raw call by path with a JSON body, for callers that address objects by URL (the e2e harness)."""
        content_type = "application/json" if body is not None else None
        return await self._request(method, path, body=body, content_type=content_type, retry_409=False)

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
        body: Payload | None = None,
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
        body: Payload | None,
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
        body: Payload | None,
        content_type: str | None,
        timeout: float,
    ) -> Obj:
        if self._session is None:
            raise RuntimeError("KubeClient used outside `async with`")
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        content = json.dumps(body).encode() if body is not None else None
        try:
            async with asyncio.timeout(timeout):
                resp = await self._session.request(
                    method, path, params=dict(params or {}), content=content, headers=headers
                )
        except (TimeoutError, httpx.TransportError, OSError) as exc:
            raise UnreachableError(self.connection.server, f"{method} {path}: {type(exc).__name__} {exc}") from exc
        except ConfigError as exc:  # a credential plugin failed or a token file is gone
            raise APIError(401, "Unauthorized", f"{self.connection.server}: {exc}") from exc
        if resp.status_code < 400:
            parsed: Obj = resp.json() if resp.content else {}
            return parsed
        raise _error_from(resp.status_code, resp.text)


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

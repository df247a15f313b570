"""A read-only Proxmox API client: proxmoxer over HTTPS with an API token, errors turned into one type.

The checks only ever call `get`; keeping proxmoxer and requests behind it lets every check report an
unreachable or forbidden endpoint as a row instead of a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from tenantctl.credentials.url import API_SUFFIX

__all__ = ["API_SUFFIX", "Api", "ApiError", "Target", "connect", "split_url"]

DEFAULT_PORT = 8006


class ApiError(Exception):
    """A failed call: `status` is the HTTP status, or None when no answer came (TLS, connection, timeout)."""

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Api(Protocol):
    def get(self, path: str, **params: Any) -> Any: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Target:
    """Where and as whom to connect; the secret never leaves this object except as the token header."""

    url: str
    token_id: str
    secret: str = field(repr=False)
    insecure: bool = False
    ca_file: str | None = None
    timeout: float = 10.0

    @property
    def verify(self) -> bool | str:
        if self.insecure:
            return False
        return self.ca_file or True


def split_url(url: str) -> tuple[str, int]:
    """Host and port of a Proxmox URL, ignoring any path (the URL check reports a bad one separately)."""
    parts = urlsplit(url if "://" in url else f"https://{url}")
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return host, parts.port or DEFAULT_PORT


class _ProxmoxerApi:
    def __init__(self, target: Target) -> None:
        from proxmoxer import ProxmoxAPI

        user, _, token_name = target.token_id.partition("!")
        host, port = split_url(target.url)
        self._quiet_tls = target.verify is False
        self._api = ProxmoxAPI(
            f"{host}:{port}",
            backend="https",
            service="PVE",
            user=user,
            token_name=token_name,
            token_value=target.secret,
            verify_ssl=target.verify,
            timeout=target.timeout,
        )

    def close(self) -> None:
        self._api._store["session"].close()

    def get(self, path: str, **params: Any) -> Any:
        import warnings

        import requests
        from proxmoxer import ResourceException  # token auth: a refused token is a 401 ResourceException
        from urllib3.exceptions import InsecureRequestWarning

        try:
            with warnings.catch_warnings():
                if self._quiet_tls:
                    # insecure is the spec's explicit choice, reported once as the TLS row.
                    warnings.simplefilter("ignore", InsecureRequestWarning)
                return self._api(path.strip("/")).get(**params)
        except ResourceException as exc:
            raise ApiError(exc.status_code, f"{exc.status_code} {exc.status_message}: {exc.content}") from None
        except requests.exceptions.SSLError as exc:
            raise ApiError(None, f"TLS verification failed: {_first_line(exc)}") from None
        except requests.exceptions.RequestException as exc:
            raise ApiError(None, f"no answer: {type(exc).__name__}: {_first_line(exc)}") from None


def _first_line(exc: Exception) -> str:
    text = str(exc)
    return text.splitlines()[0][:300] if text else type(exc).__name__


def connect(target: Target) -> Api:
    """A client for `target`; no request is made until the first `get`."""
    if "!" not in target.token_id:
        raise ValueError(f"token id {target.token_id!r} is not of the form user@realm!tokenname")
    return _ProxmoxerApi(target)

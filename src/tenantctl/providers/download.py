"""Downloading release assets, optionally through a mirror that serves the upstream paths.

The lock always records the upstream URL; a mirror only changes where the bytes come from, and the
SHA-256 pins make a mirror as trustworthy as the upstream it copies.
"""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit

import requests

__all__ = ["DownloadError", "Downloader", "sha256", "transport_url"]

_TIMEOUT = (10, 120)


class DownloadError(Exception):
    """A file could not be downloaded; the message names the URL and what went wrong."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def transport_url(url: str, mirror: str | None) -> str:
    """`https://github.com/o/r/releases/...` through mirror `http://m:8080/gh` → `http://m:8080/gh/o/r/...`."""
    if not mirror:
        return url
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    return mirror.rstrip("/") + path


class Downloader:
    """One HTTP session for a run; every failure becomes a `DownloadError` naming the URL."""

    def __init__(self, mirror: str | None = None) -> None:
        self.mirror = mirror
        self._session = requests.Session()

    def get(self, url: str) -> bytes:
        where = transport_url(url, self.mirror)
        shown = url if where == url else f"{url} (via {where})"
        try:
            response = self._session.get(where, timeout=_TIMEOUT)
        except requests.RequestException as exc:
            raise DownloadError(f"cannot download {shown}: {type(exc).__name__}") from None
        if response.status_code != 200:
            raise DownloadError(f"cannot download {shown}: HTTP {response.status_code} {response.reason}")
        return response.content

    def close(self) -> None:
        self._session.close()

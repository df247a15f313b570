"""The gzip blob a ConfigMap ships: reproducible (no name, mtime 0, level 9) and checkable."""

from __future__ import annotations

import gzip
import io
import zlib

__all__ = ["BlobError", "compress", "decompress", "header_problems"]

_MAGIC = b"\x1f\x8b"
_FNAME = 0x08


class BlobError(ValueError):
    """Not a gzip stream tenantctl can read."""


def compress(data: bytes) -> bytes:
    """Same bytes in, same bytes out: what `gzip -9 -n` does, without depending on the gzip binary."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=buffer, mtime=0) as out:
        out.write(data)
    return buffer.getvalue()


def decompress(blob: bytes) -> bytes:
    try:
        return gzip.decompress(blob)
    except (OSError, EOFError, zlib.error) as exc:
        raise BlobError(f"not a readable gzip stream ({exc})") from None


def header_problems(blob: bytes) -> list[str]:
    """What makes a blob irreproducible: a stored file name or a modification time."""
    if len(blob) < 10 or blob[:2] != _MAGIC:
        return ["not a gzip stream"]
    found = []
    if blob[3] & _FNAME:
        found.append("it stores a file name (use gzip -n)")
    mtime = int.from_bytes(blob[4:8], "little")
    if mtime:
        found.append(f"it stores a modification time ({mtime}; use gzip -n)")
    return found

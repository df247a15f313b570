"""The gzip blob: reproducible bytes, and the header faults `vendor check` names."""

from __future__ import annotations

import gzip
import io

import pytest

from tenantctl.providers.blob import BlobError, compress, decompress, header_problems

DATA = b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capi-system\n" * 50


def test_two_runs_give_identical_bytes() -> None:
    assert compress(DATA) == compress(bytes(DATA))


def test_the_blob_stores_no_name_and_no_time() -> None:
    blob = compress(DATA)
    assert header_problems(blob) == []
    assert blob[4:8] == b"\0\0\0\0"


def test_it_is_compressed_at_level_9() -> None:
    assert blob_level(compress(DATA)) == 2


def blob_level(blob: bytes) -> int:
    """The gzip XFL byte: 2 means the compressor used its maximum compression."""
    return blob[8]


def test_round_trip() -> None:
    assert decompress(compress(DATA)) == DATA


def test_a_blob_made_with_plain_gzip_is_named() -> None:
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="components.yaml", mode="wb", fileobj=buffer, mtime=1700000000) as out:
        out.write(DATA)
    problems = header_problems(buffer.getvalue())
    assert problems == ["it stores a file name (use gzip -n)",
                        "it stores a modification time (1700000000; use gzip -n)"]


def test_not_gzip_at_all() -> None:
    assert header_problems(DATA) == ["not a gzip stream"]
    with pytest.raises(BlobError, match="not a readable gzip stream"):
        decompress(DATA)


def test_a_truncated_blob_is_unreadable() -> None:
    with pytest.raises(BlobError):
        decompress(compress(DATA)[:-12])

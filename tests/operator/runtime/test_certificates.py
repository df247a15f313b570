"""A renewed webhook certificate stops the operator, so its pod restarts serving the new one."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tenantctl.operator.runtime.certificates import stop_on_new_certificate

pytestmark = [pytest.mark.timeout(10)]


async def test_a_renewed_certificate_sets_the_stop_flag(tmp_path: Path) -> None:
    (tmp_path / "tls.crt").write_text("first")
    (tmp_path / "tls.key").write_text("key")
    stop = asyncio.Event()
    watcher = asyncio.create_task(stop_on_new_certificate(tmp_path, stop, interval=0.01))
    await asyncio.sleep(0.05)
    assert not stop.is_set()
    (tmp_path / "tls.crt").write_text("renewed")
    await asyncio.wait_for(stop.wait(), 2)
    await asyncio.wait_for(watcher, 2)


async def test_an_unchanged_certificate_keeps_the_operator_running(tmp_path: Path) -> None:
    (tmp_path / "tls.crt").write_text("same")
    stop = asyncio.Event()
    watcher = asyncio.create_task(stop_on_new_certificate(tmp_path, stop, interval=0.01))
    await asyncio.sleep(0.1)
    assert not stop.is_set()
    watcher.cancel()

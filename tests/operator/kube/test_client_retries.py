"""The client's retries: each logged with its attempt, the server's Retry-After honoured up to a bound."""

from __future__ import annotations

import asyncio
import logging

import pytest
from kube_emulator import Fault, KubeEmulator

from tenantctl.operator.kube.client import Connection, KubeClient, Resource, RetryPolicy, TransientAPIError

pytestmark = [pytest.mark.timeout(10), pytest.mark.looptime]

SECRETS = Resource("v1", "Secret", "secrets", True)
POLICY = RetryPolicy(timeout=2.0, backoffs=(0.01, 0.02), longest_retry_after=3.0)


def _client(emulator: KubeEmulator) -> KubeClient:
    return KubeClient(Connection.from_server(str(emulator.url).rstrip("/")), retry=POLICY)


async def _read_after(mgmt: KubeEmulator, caplog: pytest.LogCaptureFixture, *faults: Fault) -> tuple[float, list[str]]:
    """Loop seconds a read took through `faults`, and what the client logged."""
    for fault in faults:
        mgmt.fail(fault)
    loop = asyncio.get_running_loop()
    with caplog.at_level(logging.INFO, logger="tenantctl.operator.kube.client"):
        async with _client(mgmt) as api:
            started = loop.time()
            assert await api.get(SECRETS, "missing", "ns") is None
            took = loop.time() - started
    return took, [r.getMessage() for r in caplog.records if r.name == "tenantctl.operator.kube.client"]


async def test_a_retry_after_holds_the_retry_that_long(mgmt: KubeEmulator, caplog: pytest.LogCaptureFixture) -> None:
    took, said = await _read_after(mgmt, caplog, Fault("GET", "secrets", status=429, retry_after="2"))
    assert took >= 2.0
    assert said == ["GET /api/v1/namespaces/ns/secrets/missing answered 429 Injected; attempt 2 of 3 in 2.0s"]


async def test_a_hostile_retry_after_is_bounded(mgmt: KubeEmulator, caplog: pytest.LogCaptureFixture) -> None:
    took, said = await _read_after(mgmt, caplog, Fault("GET", "secrets", status=503, retry_after="86400"))
    assert 3.0 <= took < 4.0 and said[0].endswith("attempt 2 of 3 in 3.0s")


async def test_a_date_or_junk_retry_after_leaves_the_backoff(mgmt: KubeEmulator, caplog: pytest.LogCaptureFixture
                                                           ) -> None:
    took, said = await _read_after(
        mgmt, caplog, Fault("GET", "secrets", status=503, retry_after="Wed, 21 Oct 2026 07:28:00 GMT"),
        Fault("GET", "secrets", status=500, retry_after="-5"),
    )
    assert took < 1.0
    assert [s.rsplit("attempt ", 1)[1] for s in said] == ["2 of 3 in 0.0s", "3 of 3 in 0.0s"]


async def test_a_retry_after_never_shortens_the_backoff() -> None:
    slow = RetryPolicy(timeout=2.0, backoffs=(1.5,), longest_retry_after=3.0)
    assert slow.pause(1.5, 0.0) == 1.5 and slow.pause(1.5, 2.0) == 2.0 and slow.pause(1.5, None) == 1.5


async def test_the_last_attempt_surfaces_and_nothing_secret_is_logged(
    mgmt: KubeEmulator, caplog: pytest.LogCaptureFixture,
) -> None:
    mgmt.fail(Fault("GET", "secrets", status=500, times=3, message="token=hunter2"))
    with caplog.at_level(logging.INFO, logger="tenantctl.operator.kube.client"):
        async with _client(mgmt) as api:
            with pytest.raises(TransientAPIError):
                await api.get(SECRETS, "missing", "ns")
    said = [r.getMessage() for r in caplog.records if r.name == "tenantctl.operator.kube.client"]
    assert len(said) == 2 and not any("hunter2" in s for s in said)

"""kopf's own requests and watches go over a bounded pool, with the credentials it would have used."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import kopf
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from kopf._core.intents.causes import Activity  # kopf exports no name for its activities

from tenantctl.operator.kube.client import Connection
from tenantctl.operator.runtime.handlers import OperatorContext, build_registry
from tenantctl.operator.runtime.kopf_session import KOPF_CONNECTIONS, bounded_session

pytestmark = [pytest.mark.timeout(30)]


class Recorder:
    """A server that holds every request a while, so a burst is in flight at once, and notes who asked."""

    def __init__(self) -> None:
        self.peers: set[tuple[str, int]] = set()
        self.authorizations: list[str | None] = []
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peername") if request.transport else None
        self.peers.add(tuple(peer[:2]))
        self.authorizations.append(request.headers.get("Authorization"))
        await asyncio.sleep(0.05)
        return web.json_response({"kind": "Status"})


@pytest.fixture
async def recorder() -> AsyncIterator[Recorder]:
    rec = Recorder()
    app = web.Application()
    app.router.add_get("/{tail:.*}", rec.handle)
    async with TestServer(app, host="127.0.0.1") as server:
        rec.url = str(server.make_url("")).rstrip("/")
        yield rec


async def burst(session: aiohttp.ClientSession, url: str, requests: int) -> None:
    async def one(i: int) -> None:
        async with session.get(f"{url}/apis/tenantctl.io/v1alpha1/tenantclusters/{i}") as resp:
            await resp.read()

    await asyncio.gather(*(one(i) for i in range(requests)))


async def test_a_burst_of_kopf_requests_opens_at_most_the_bound_of_connections(recorder: Recorder) -> None:
    context = bounded_session(kopf.ConnectionInfo(server=recorder.url, scheme="Bearer", token="kopf-token"))
    async with context.aiohttp_session as session:
        await burst(session, recorder.url, 3 * KOPF_CONNECTIONS)
    assert len(recorder.peers) == KOPF_CONNECTIONS, "the pool is used up to its bound, never past it"
    assert recorder.authorizations == ["Bearer kopf-token"] * 3 * KOPF_CONNECTIONS


async def test_the_session_keeps_what_kopf_reads_of_the_connection() -> None:
    info = kopf.ConnectionInfo(server="https://mgmt:6443", default_namespace="ns", priority=7)
    context = bounded_session(info, limit=5)
    async with context.aiohttp_session as session:
        assert (context.server, context.default_namespace, context.priority) == ("https://mgmt:6443", "ns", 7)
        assert session.connector is not None and session.connector.limit == 5


async def test_the_operator_logs_kopf_in_with_a_bounded_session_of_its_clients_credentials(
    recorder: Recorder, tmp_path: Path
) -> None:
    token = tmp_path / "token"
    token.write_text("operator-token\n")
    kubeconfig = {
        "clusters": [{"name": "m", "cluster": {"server": recorder.url}}],
        "users": [{"name": "u", "user": {"tokenFile": str(token)}}],
        "contexts": [{"name": "m", "context": {"cluster": "m", "user": "u"}}],
        "current-context": "m",
    }
    registry = build_registry(OperatorContext(Connection.from_kubeconfig(kubeconfig)))
    (login,) = registry._activities.get_handlers(activity=Activity.AUTHENTICATION)
    context = await login.fn()
    assert isinstance(context, kopf.AiohttpSession) and context.server == recorder.url
    async with context.aiohttp_session as session:
        await burst(session, recorder.url, 2 * KOPF_CONNECTIONS)
    assert len(recorder.peers) <= KOPF_CONNECTIONS
    assert set(recorder.authorizations) == {"Bearer operator-token"}

"""Where the watch cache resumes a stream the server ended: from the last event's or bookmark's version,
never from the list's again. A scripted apiserver on loopback answers the list and three watch streams,
and records the version each watch asked from (the emulator always answers with full type meta and sends
no bookmarks, so it cannot tell these apart)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import aiohttp.web
import pytest

from tenantctl.operator.kube.cache import WatchCache
from tenantctl.operator.kube.client import Connection, KubeClient, Resource

pytestmark = [pytest.mark.timeout(20)]

SECRETS = Resource("v1", "Secret", "secrets", True)
LISTED = {"kind": "SecretList", "apiVersion": "v1", "metadata": {"resourceVersion": "10"},
          "items": [{"metadata": {"name": "a", "namespace": "ns", "resourceVersion": "5"}}]}
# Each stream ends after its events; objects in events come without apiVersion/kind, as some servers send.
STREAMS: list[list[dict[str, Any]]] = [
    [{"type": "ADDED", "object": {"metadata": {"name": "b", "namespace": "ns", "resourceVersion": "11"}}}],
    [{"type": "BOOKMARK", "object": {"kind": "Secret", "apiVersion": "v1", "metadata": {"resourceVersion": "20"}}}],
    [],
]


async def scripted_server(
    release: asyncio.Event, streams: list[list[dict[str, Any]]] = STREAMS, gates: Sequence[asyncio.Event] = ()
) -> tuple[aiohttp.web.AppRunner, str, list[str], asyncio.Event]:
    """Serves LISTED, then each of `streams` to one watch (stream i once `gates[i]`, if given, is set), then
    holds the next watch open until `release`; `done` is set when that last watch arrives."""
    asked: list[str] = []
    done = asyncio.Event()

    async def secrets(request: aiohttp.web.Request) -> aiohttp.web.StreamResponse:
        if request.query.get("watch") != "true":
            return aiohttp.web.json_response(LISTED)
        asked.append(request.query.get("resourceVersion", ""))
        response = aiohttp.web.StreamResponse()
        await response.prepare(request)
        if len(asked) > len(streams):
            done.set()
            await release.wait()  # the last stream stays open until the test ends
        if len(asked) <= len(gates):
            await gates[len(asked) - 1].wait()
        for event in streams[len(asked) - 1]:
            await response.write(json.dumps(event).encode() + b"\n")
        return response

    app = aiohttp.web.Application()
    app.router.add_get("/api/v1/secrets", secrets)
    runner = aiohttp.web.AppRunner(app)
    await runner.setup()
    site = aiohttp.web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}", asked, done


async def test_a_stream_resumes_from_the_last_event_then_from_the_bookmark() -> None:
    release = asyncio.Event()
    runner, server, asked, done = await scripted_server(release)
    try:
        async with KubeClient(Connection.from_server(server), cache=WatchCache(retry_delay=0.01)) as api:
            assert await api.list(SECRETS, "ns") != []
            await asyncio.wait_for(done.wait(), 5)
            assert asked == ["10", "11", "20", "20"], "list version, last event's, bookmark's, bookmark's"
            [b] = [s for s in await api.list(SECRETS, "ns") if s["metadata"]["name"] == "b"]
            assert (b["apiVersion"], b["kind"]) == ("v1", "Secret"), "type meta filled in from the resource"
    finally:
        release.set()
        await runner.cleanup()


async def test_events_after_a_bookmark_in_the_same_stream_are_applied() -> None:
    """A bookmark only moves the version on: the stream goes on, and what follows it in the stream counts."""
    release = asyncio.Event()
    streams = [[
        {"type": "BOOKMARK", "object": {"kind": "Secret", "apiVersion": "v1", "metadata": {"resourceVersion": "20"}}},
        {"type": "ADDED", "object": {"metadata": {"name": "c", "namespace": "ns", "resourceVersion": "21"}}},
    ]]
    runner, server, asked, done = await scripted_server(release, streams)
    try:
        async with KubeClient(Connection.from_server(server), cache=WatchCache(retry_delay=0.01)) as api:
            assert await api.list(SECRETS, "ns") != []
            await asyncio.wait_for(done.wait(), 5)
            assert asked == ["10", "21"], "one stream, then resumed after its last event"
            assert "c" in {s["metadata"]["name"] for s in await api.list(SECRETS, "ns")}
    finally:
        release.set()
        await runner.cleanup()


def _deleted(version: str) -> dict[str, Any]:
    return {"type": "DELETED", "object": {"kind": "Secret", "apiVersion": "v1",
                                          "metadata": {"name": "a", "namespace": "ns", "resourceVersion": version}}}


async def test_a_deletion_older_than_the_copy_held_does_not_drop_it() -> None:
    """The replace step deletes an object and creates it again; the old incarnation's DELETED event may
    arrive after our create's answer. It must not drop the new copy; a newer deletion does."""
    release, gates = asyncio.Event(), [asyncio.Event(), asyncio.Event()]
    streams = [[_deleted("15")], [_deleted("25")]]
    runner, server, asked, done = await scripted_server(release, streams, gates)
    try:
        async with KubeClient(Connection.from_server(server), cache=WatchCache(retry_delay=0.01)) as api:
            assert await api.get(SECRETS, "a", "ns") is not None
            assert api.cache is not None
            recreated = {"apiVersion": "v1", "kind": "Secret",
                         "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "20"}}
            api.cache.wrote(SECRETS, recreated)
            gates[0].set()
            while len(asked) < 2:  # the first stream has ended: its stale deletion was seen
                await asyncio.sleep(0.01)
            held = api.cache.holds("v1", "secrets", "ns", "a") or {}
            assert held.get("metadata", {}).get("resourceVersion") == "20", "the stale deletion dropped the copy"
            gates[1].set()
            await asyncio.wait_for(done.wait(), 5)
            assert api.cache.holds("v1", "secrets", "ns", "a") is None, "a deletion newer than the copy drops it"
    finally:
        release.set()
        await runner.cleanup()

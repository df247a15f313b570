"""The operator's event loop is uvloop where uvloop is installed, as `kopf run` chooses it."""

from __future__ import annotations

import asyncio

import uvloop

from tenantctl.operator.runtime.event_loop import loop_factory, loop_name, run_in_loop


def test_the_factory_is_uvloop_where_it_is_installed() -> None:
    assert loop_factory() is uvloop.new_event_loop


def test_a_coroutine_runs_to_its_answer_on_a_uvloop_loop() -> None:
    async def which() -> tuple[str, int]:
        await asyncio.sleep(0)
        return loop_name(asyncio.get_running_loop()), 42

    assert run_in_loop(which()) == ("uvloop", 42)


def test_the_loop_is_closed_once_the_coroutine_ends() -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    async def keep() -> None:
        loops.append(asyncio.get_running_loop())

    run_in_loop(keep())
    assert loops[0].is_closed()


def test_the_standard_loop_is_named_asyncio() -> None:
    loop = asyncio.new_event_loop()
    try:
        assert loop_name(loop) == "asyncio"
    finally:
        loop.close()

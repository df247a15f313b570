"""The operator's event loop: uvloop where it is installed, as kopf's own `kopf run` chooses it.

On the real kube-apiserver every request and watch event is TLS. asyncio's SSL transport allocates a
256 KiB read buffer per connection, and kopf's own client pool had no limit (`kopf_session` bounds it now),
so a burst of a thousand new tenants opened as many connections and held their buffers: the operator
peaked at 430–601 MiB where the plain-HTTP emulators took 216. uvloop's transport buffers by need and
spends less CPU per request (docs/performance.md has both runs). uvloop has no Windows build; there the
standard loop runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["loop_factory", "loop_name", "run_in_loop"]

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop constructor, or None (asyncio's default) where uvloop is not installed."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def run_in_loop(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run`, on the loop `loop_factory` chooses."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """What the start-up log names: `uvloop` or `asyncio`, the package the loop's class comes from."""
    return type(loop).__module__.split(".", 1)[0]

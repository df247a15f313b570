"""The operator as the benchmarks drive it, importing what `tenantctl operator` imports and nothing of the
harness: a spawned operator or shard process loads this, so its CPU and memory are the product's.

multiprocessing's spawn re-imports the parent's main module in the child (as `__mp_main__`); the scale
scripts import their harness (emulators, the real-API helpers) only when not imported that way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import kopf

from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.kube.client import Connection
from tenantctl.operator.runtime.handlers import OperatorContext, build_registry
from tenantctl.operator.runtime.logs import TEXT_FORMAT

__all__ = ["Key", "log_to", "passed_once", "resync_every", "running_operator"]

Key = tuple[str, str]
"""A tenant: its namespace and TenantCluster name."""


@contextlib.asynccontextmanager
async def running_operator(connection: Connection, settings: OperatorSettings) -> AsyncIterator[OperatorContext]:
    """The whole kopf engine with our registry, cluster-wide, as `tenantctl operator` runs it."""
    ctx = OperatorContext(connection, settings)
    stop, ready = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(
        kopf.operator(registry=build_registry(ctx), clusterwide=True, standalone=True, stop_flag=stop, ready_flag=ready)
    )
    try:
        await asyncio.wait_for(ready.wait(), 30)
        yield ctx
    finally:
        stop.set()
        await asyncio.wait_for(task, 120)  # a thousand daemons to stop on a busy machine


def log_to(path: str) -> None:
    """INFO lines formatted as in production, written where they cost no terminal time."""
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    logging.getLogger().handlers[:] = [handler]
    logging.getLogger().setLevel(logging.INFO)


async def passed_once(ctx: OperatorContext, keys: list[Key]) -> None:
    """Until every tenant's first pass has ended (Ready is written before a pass ends)."""
    while not all(ctx.passes[key] for key in keys):
        await asyncio.sleep(0.01)


async def resync_every(ctx: OperatorContext, keys: list[Key]) -> None:
    """Wake every tenant's daemon and wait until each has run one more pass: one idle resync of all."""
    passes_before = {key: ctx.passes[key] for key in keys}
    for key in keys:
        ctx.wakeup(key).set()
    while any(ctx.passes[key] <= count for key, count in passes_before.items()):
        await asyncio.sleep(0.05)

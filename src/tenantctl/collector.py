"""How tenantctl's processes run Python's garbage collector: a render or an API pass allocates
thousands of short-lived containers (spec models, rendered dicts, decoded JSON).

At the default first threshold (700) they are scanned and promoted before they die, and the full
collections that follow walk everything alive: the operator's watch cache, or the CLI's imported
modules and schemas (a tenth of the operator's CPU at 500 tenants, a sixth of a render). At 50 000
they die young. The CLI and the operator both set it, and the render benchmark measures under it.
"""

from __future__ import annotations

import gc

__all__ = ["GC_THRESHOLDS", "tune_collector"]

GC_THRESHOLDS = (50_000, 20, 10)


def tune_collector() -> None:
    gc.set_threshold(*GC_THRESHOLDS)

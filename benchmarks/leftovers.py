"""What a benchmark step leaves running when it ends, found and ended: the runner adopts it as a subreaper.

A step killed outright (SIGKILL, the OOM killer) cannot stop its children, and the servers a step starts in
sessions of their own (kube-apiserver, etcd) are beyond any signal to its process group. Linux hands the orphans
of a process's descendants to the nearest subreaper above them: while a step runs the runner is one, so what the
step leaves behind becomes the runner's child, to be signalled and reaped. Linux only, as the benchmarks are.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Iterator

__all__ = ["adopting", "children", "end_leftovers"]

_PR_SET_CHILD_SUBREAPER = 36


@contextlib.contextmanager
def adopting() -> Iterator[None]:
    """This process as the subreaper of its descendants for the block's length (not after: a test process
    running a step must not keep the orphans of its other tests' servers)."""
    _subreaper(True)
    try:
        yield
    finally:
        _subreaper(False)


def _subreaper(on: bool) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(errno)}")


def children() -> set[int]:
    """The processes whose parent is this one, ended but unreaped ones included, as /proc lists them."""
    me, found = os.getpid(), set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()  # the command, in parentheses, may hold spaces
        except OSError:  # ended since the listing
            continue
        if int(fields[1]) == me:
            found.add(int(entry.name))
    return found


SETTLE_S = 1.0
"""How long what a step left gets to end by itself first: multiprocessing's resource tracker outlives the
process it served by a moment, cleaning up after it, and ignores SIGTERM while it does."""


def end_leftovers(kept: set[int], grace: float, settle: float = SETTLE_S) -> list[str]:
    """End every child of this process outside `kept` (what a step left, adopted): what does not end by itself
    within `settle` seconds gets SIGTERM once, and SIGKILL once `grace` more have passed; each is reaped; again,
    as each one ended hands over its own children. Returns the command lines of those it had to signal.
    Interrupted meanwhile, it SIGKILLs what is left at once before the interrupt goes on."""
    signalled: dict[int, str] = {}
    try:
        settled = time.monotonic() + settle
        while (left := children() - kept) and time.monotonic() < settled:
            _reap(left)
            time.sleep(0.02)
        deadline = time.monotonic() + grace
        while left := children() - kept:
            forced = time.monotonic() >= deadline
            for pid in left:
                if forced or pid not in signalled:
                    signalled.setdefault(pid, _command(pid))
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL if forced else signal.SIGTERM)
            _reap(left)
            time.sleep(0.02)
    except KeyboardInterrupt:
        if grace or settle:
            end_leftovers(kept, 0, 0)
        raise
    return [signalled[pid] for pid in sorted(signalled)]


def _reap(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def _command(pid: int, width: int = 60) -> str:
    """`pid`'s command line, cut to `width`, for the summary to name what was left running."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            command = cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return f"pid {pid}"
    return command if len(command) <= width else command[: width - 1] + "…"

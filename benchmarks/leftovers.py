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


def end_leftovers(kept: set[int], grace: float) -> list[int]:
    """End every child of this process outside `kept` (what a step left, adopted): SIGTERM once, SIGKILL once
    `grace` seconds have passed, each reaped; again, as each one ended hands over its own children. Returns
    the pids ended. Interrupted meanwhile, it SIGKILLs what is left at once before the interrupt goes on."""
    ended: set[int] = set()
    termed: set[int] = set()
    deadline = time.monotonic() + grace
    try:
        while left := children() - kept:
            forced = time.monotonic() >= deadline
            for pid in left:
                if forced or pid not in termed:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL if forced else signal.SIGTERM)
                    termed.add(pid)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
            ended |= left
            time.sleep(0.02)
    except KeyboardInterrupt:
        if grace:
            end_leftovers(kept, 0)
        raise
    return sorted(ended)

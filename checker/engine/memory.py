"""Resident-memory readings for statistics (Linux ``/proc``, with a portable fallback)."""

from __future__ import annotations

import gc
import resource
from collections.abc import Iterator
from contextlib import contextmanager


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark for this process (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def current_rss() -> int:
    """Resident set size now, in bytes."""
    kb = _status_kb("VmRSS")
    if kb is None:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return kb * 1024


def peak_rss() -> int:
    """Peak resident set size since the last :func:`reset_peak`, in bytes."""
    kb = _status_kb("VmHWM")
    if kb is None:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return kb * 1024


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while the block runs.

    A search allocates millions of tuples that live for a level or for good and never
    form reference cycles; the collector's periodic passes would re-scan all of them
    (about a fifth of the run time on bus1-3). Reference counting still frees every
    acyclic object at once; cyclic garbage made meanwhile waits for the collector to
    resume.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

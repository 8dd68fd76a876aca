"""Resident-memory readings for statistics (Linux ``/proc``, with a portable fallback)."""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
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

    When the block ends, what it left alive (the spec's memos: half a million tuples
    after BSS 2x5 with symmetry) would all sit in the youngest generation, and the
    first collection after resuming would scan them all (0.2 s there, a twentieth of
    the run). So every object the collector tracks is frozen (:func:`gc.freeze`)
    before it resumes, and handed back to the oldest generation (:func:`gc.unfreeze`)
    when a collection of that generation starts (:func:`_thaw`): young collections
    skip them, full ones scan them again from then on (the next, or on some Python
    versions the one after), so cyclic garbage among them is not kept for ever, and a
    process that ends first (a ``check`` command) never scans them: the interpreter's
    own full collection as it exits would, so :func:`_keep_frozen_at_exit` takes the
    callback away first (0.5 s of the 3.4 s of a ``check`` of BSS 2x5, where half a
    million objects were frozen).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if _thaw not in gc.callbacks:
                gc.callbacks.append(_thaw)
                atexit.unregister(_keep_frozen_at_exit)  # registered once
                atexit.register(_keep_frozen_at_exit)
            gc.freeze()
            gc.enable()


def _keep_frozen_at_exit() -> None:
    """At exit (an :mod:`atexit` function): stop thawing, so that the full collection
    the interpreter makes as it finalizes leaves the frozen objects alone. The process
    is ending: scanning them would find no garbage worth the time."""
    if _thaw in gc.callbacks:
        gc.callbacks.remove(_thaw)


def _thaw(phase: str, info: dict) -> None:
    """A :data:`gc.callbacks` entry: as a collection of the oldest generation starts,
    return the frozen objects to that generation, so that it scans them too."""
    if phase == "start" and info["generation"] == 2 and gc.get_freeze_count():
        gc.unfreeze()


M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter for the most malloc arenas (``malloc.h``)."""


def single_malloc_arena() -> bool:
    """Make every thread of this process allocate from glibc's main malloc arena.

    glibc gives a thread that allocates an arena of its own, reserving 64 MiB of
    address space for it (128 MiB while it aligns it) the first time: under an
    address-space limit a thread started late can take most of what is left at once
    (see :mod:`ordercheck.checker.engine.budget`). Threads created afterwards share the main
    arena instead. Whether it took effect (``False`` off glibc)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, 1))

"""The search's memory budget (``--memory-limit``).

A search's memory grows with the states it visits. Rather than die in an allocation
hours into a run, the local engine keeps within a budget: after each unit of work (at
most every :data:`CHECK_EVERY` seconds) and before every large allocation of the
visited store (:mod:`ordercheck.checker.engine.table` asks :meth:`MemoryBudget.reserve` first), the
budget compares what the run holds with its limit, and when the limit would be passed
it raises :class:`MemoryBoundReached`. The search then stops as at any other bound:
the verdicts it has not reached are ``unknown`` (exit code 3, never ``holds``), its
checkpoint is written when one was asked for, and :func:`advice` says how to go on.

What a run holds is the resident memory of this process plus what its worker processes
gained since they started (a forked worker shares its parent's pages at first). Under
an address-space limit (``ulimit -v``, ``RLIMIT_AS``) each process's address space is
also kept under :data:`AS_SHARE` of that limit, since the kernel refuses allocations
past it whatever is resident (and glibc's allocator, refused, can slow to a crawl
instead of failing).

The default limit is :data:`DEFAULT_SHARE` of the machine's memory (or of the control
group's limit, when lower).

Under an address-space limit the main process must never run out of address space
itself: CPython cannot report that reliably. Once every allocation fails, the handlers
of the stop raise MemoryError after MemoryError, each kept alive as the next one's
context; past the interpreter's sixteen preallocated MemoryError objects, creating one
needs memory, fails, and creates another, until the C stack overflows (SIGSEGV). Two
things kept the budget from preventing that, and are closed here:

* glibc gives each thread that allocates (the receiver thread of
  :mod:`ordercheck.checker.engine.shards`) a malloc arena of its own, reserving 64 MiB of address
  space at a moment no check sees: the process jumped from under the budget to within
  a few MiB of the limit. :class:`MemoryBudget` caps the arenas at one
  (:func:`ordercheck.checker.engine.memory.single_malloc_arena`) when there is a limit.
* an allocation the budget does not see can still fill the address space. The budget
  holds :data:`PARACHUTE` bytes of address space while the search runs
  (:meth:`MemoryBudget.hold`) and the search gives them back (:meth:`MemoryBudget.release`)
  as soon as it stops, by the budget or by a failed allocation, so that the stop
  (stopping the workers, gathering their counts and parent links, the checkpoint, the
  result) has room.
"""

from __future__ import annotations

import mmap
import os
import re
import resource
import time
from collections.abc import Callable, Iterable

from ordercheck.checker.engine.memory import single_malloc_arena

DEFAULT_SHARE = 0.75
"""The share of the machine's (or control group's) memory a run takes by default."""

AS_SHARE = 0.85
"""The share of an address-space limit the process keeps within."""

CHECK_EVERY = 0.1
"""Seconds between two readings of the resident memory."""

PARACHUTE = 16 << 20
"""Address space held back while a search runs under an address-space limit, for the
search's stop (see the module docstring)."""

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class MemoryBoundReached(MemoryError):
    """The search would pass its memory budget: it stops as at a bound (raised before
    the allocation, so the search's state is consistent)."""

    def __init__(self, used: int, limit: int, what: str = "memory") -> None:
        self.used = used
        self.limit = limit
        self.what = what
        super().__init__(f"{size_text(used)} of {what} in use, limit {size_text(limit)}")


def parse_size(text: str) -> int:
    """Bytes from ``"512M"``, ``"4G"``, ``"1.5G"``, ``"2000000"`` (binary units: K, M,
    G, T, an optional trailing ``B`` or ``iB``); :class:`ValueError` when malformed,
    not finite or not positive."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
    if not m:
        raise ValueError(f"{text!r} is not a size (examples: 800M, 4G, 1.5G)")
    value = float(m.group(1)) * _UNITS[m.group(2)]
    if not value >= 1 << 20:
        raise ValueError(f"{text!r} is less than a mebibyte, too little for a search")
    return int(value)


def size_text(n: float) -> str:
    """``n`` bytes in a readable unit (``1.5 GiB``)."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def _meminfo(field: str) -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def _cgroup_limit() -> int | None:
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path, encoding="ascii") as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 60:
            return int(text)
    return None


def machine_memory() -> int | None:
    """The memory this process may use at most: the machine's, or its control group's
    limit when lower (``None`` when neither can be read)."""
    values = [v for v in (_meminfo("MemTotal"), _cgroup_limit()) if v]
    if not values:
        try:
            values = [os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")]
        except (ValueError, OSError, AttributeError):
            return None
    return min(values)


def default_limit() -> int | None:
    """:data:`DEFAULT_SHARE` of :func:`machine_memory`."""
    total = machine_memory()
    return int(total * DEFAULT_SHARE) if total else None


def address_space_limit() -> int | None:
    """The soft ``RLIMIT_AS`` of this process, if any."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def _statm(pid: int | str) -> tuple[int, int] | None:
    """(address space, resident) of a process in bytes, from ``/proc/PID/statm``."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as fh:
            size, resident = fh.read().split()[:2]
        return int(size) * _PAGE, int(resident) * _PAGE
    except (OSError, ValueError):
        return None


class MemoryBudget:
    """What a search may hold: ``limit`` bytes resident (``None``: no limit but the
    address space's), this process's and its workers' (``workers``: their process ids)."""

    def __init__(self, limit: int | None, workers: Callable[[], Iterable[int]] | None = None) -> None:
        self.limit = limit
        self.workers = workers
        self.as_limit = address_space_limit()
        self._worker_base: dict[int, int] = {}
        self._last = 0.0
        self._parachute: mmap.mmap | None = None
        if self.as_limit is not None:
            single_malloc_arena()  # before the search starts a thread

    def hold(self) -> None:
        """Under an address-space limit, take :data:`PARACHUTE` bytes of address space
        (never touched, so never resident) for the stop of the search; nothing when
        there is no such limit or the space is not there (the first check then stops
        the search)."""
        if self.as_limit is None or self._parachute is not None:
            return
        try:
            self._parachute = mmap.mmap(-1, PARACHUTE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                                        prot=0)  # PROT_NONE, which the mmap module does not name
        except OSError:
            self._parachute = None

    def release(self) -> None:
        """Give back what :meth:`hold` took (at once; allocates nothing)."""
        if self._parachute is not None:
            self._parachute.close()
            self._parachute = None

    def used(self) -> tuple[int, int]:
        """(resident bytes of the run, the largest address space of its processes: each
        has its own address-space limit; the room :meth:`hold` keeps for the stop is not
        counted)."""
        own = _statm("self") or (0, 0)
        total, space = own[1], own[0] - (PARACHUTE if self._parachute is not None else 0)
        if self.workers is not None:
            for pid in self.workers():
                got = _statm(pid)
                if got is None:
                    continue
                base = self._worker_base.setdefault(pid, got[1])
                total += max(got[1] - base, 0)
                space = max(space, got[0])
        return total, space

    def reserve(self, extra: int) -> None:
        """Raise :class:`MemoryBoundReached` if allocating ``extra`` more bytes would pass
        the budget (called before the store grows)."""
        resident, space = self.used()
        if self.limit is not None and resident + extra > self.limit:
            raise MemoryBoundReached(resident + extra, self.limit)
        if self.as_limit is not None and space + extra > self.as_limit * AS_SHARE:
            raise MemoryBoundReached(space + extra, int(self.as_limit * AS_SHARE), "address space")

    def check(self) -> None:
        """:meth:`reserve` nothing, at most every :data:`CHECK_EVERY` seconds."""
        now = time.monotonic()
        if now - self._last < CHECK_EVERY:
            return
        self._last = now
        self.reserve(0)


def advice(exc: MemoryBoundReached | None = None, saved: str | None = None) -> str:
    """What a run stopped by its memory budget says about going on (``saved``: where
    its checkpoint is, if it has one)."""
    why = f" ({exc})" if exc is not None else " (an allocation failed)"
    resume = (f"resume from the checkpoint in {saved} (the same command with --resume)" if saved
              else "run again with --checkpoint DIR, to be able to resume,")
    return (
        f"the search stopped at its memory budget{why}. To go on: {resume} with more memory "
        "(--memory-limit, or a larger machine), keep the frontier on disk (--spill-dir DIR), turn "
        "reductions on (symmetry, partial-order reduction), or run on a cluster (--engine spark)"
    )

"""Finding the first prefix of a log that breaks a property, given a whole-prefix check.

``global_lock`` and ``synchronous`` are decided on a prefix of the log by one linear
pass (a graph and a topological sort); the first violation is the shortest prefix for
which that pass says "violated". Over a stretch of prefixes where the property can
only go from holding to violated (monotone), the shortest one is found by checking the
stretch's last prefix (one pass: most logs stop here), then galloping from its start
(lengths 1, 2, 4, ... past it) and bisecting: O(v log v) for a violation at event v.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def first_true(check: Callable[[int], bool], lo: int, hi: int) -> int | None:
    """The smallest ``length`` in ``[lo, hi]`` with ``check(length)``, for a ``check``
    that is monotone there (once true, true for every longer length); ``None`` when
    ``check(hi)`` is false (so none is)."""
    if lo > hi or not check(hi):
        return None
    bad = lo - 1  # check is false at every length <= bad (vacuously at lo - 1)
    step = 1
    good = hi
    while True:
        probe = min(hi, bad + step)
        if probe >= good:
            break
        if check(probe):
            good = probe
            break
        bad = probe
        step *= 2
    while good - bad > 1:
        mid = (bad + good) // 2
        if check(mid):
            good = mid
        else:
            bad = mid
    return good


def first_violated_length(check: Callable[[int], bool], events: int, breaks: Sequence[int] = ()) -> int | None:
    """The length of the shortest prefix (of a log of ``events`` events) for which
    ``check(length)`` is true, or ``None``.

    ``check`` is monotone over prefix lengths except at the events listed in ``breaks``
    (sorted event indices), after which it may turn false again, and an event of
    ``breaks`` never turns it true by itself. Each stretch between two of them is
    searched with :func:`first_true`, in order: one pass per stretch, plus the
    galloping search in the first stretch that is violated.
    """
    start = 1
    for b in [*breaks, events]:
        end = b if b < events else events  # the prefix of length b leaves event b out
        found = first_true(check, start, end)
        if found is not None:
            return found
        start = b + 2  # the prefix holding event b holds the property if the one before did
    return None

"""bus1's per-peer message queue as the kernel code implements it (``ipc/bus1/util/queue.[ch]``).

A queue is the tuple ``(clock, flush, leftmost, front, entries)``:

* ``clock``: the queue's Lamport clock; even; moved only by :func:`tick` (``+2``) and
  :func:`sync` (``max`` with an even timestamp). ``flush``: the last flush timestamp.
* ``entries``: the rb-tree as a sorted tuple of keys ``(ts, group, addr)``, exactly the
  order of ``bus1_queue_node_order`` (queue.c): timestamp, then the group tag (the
  transaction, or the owner peer for release notifications), then the node's address.
  An odd ``ts`` is a staging entry, an even one committed. Address ``0`` is ``NULL``.
* ``leftmost`` and ``front``: the cached pointers (addresses, ``0`` for ``NULL``),
  updated here step for step as the C code updates them, so that a queue whose cache
  disagrees with its tree can be reached and reported.

Every function returns the new queue and a bitmask of the ``WARN_ON`` conditions that
fired (see ``W_*``). Where the C code returns after a ``WARN_ON``, so do these
functions: the operation is skipped.
"""

from __future__ import annotations

from bisect import insort

Key = tuple[int, int, int]
Queue = tuple[int, int, int, int, tuple[Key, ...]]

EMPTY: Queue = (0, 0, 0, 0, ())

# WARN_ON conditions, one bit each.
W_ADD_GUARD = 1  # queue.c bus1_queue_add: bad timestamp/link state; the insert is skipped
W_READABLE = 2  # queue.c bus1_queue_add: a staging leftmost re-keyed, or a new odd leftmost, while readable
W_BEFORE_FRONT = 4  # queue.c bus1_queue_add: an entry inserted at or before ``front``
W_STAGE_FRONT = 8  # queue.c bus1_queue_stage: the staged entry became ``front``
W_SYNTH_FRONT = 16  # queue.c bus1_queue_commit_synthetic: the synthetic entry became ``front``
W_ODD_TS = 32  # an odd timestamp where an even one is required (sync, stage, commit, flush)
W_FLUSH = 64  # queue.c bus1_queue_flush: flush timestamp ahead of the clock or behind the last flush
W_REMOVE = 128  # queue.c bus1_queue_remove: entry not linked
W_QUEUED = 256  # stage/commit_unstaged/synthetic of an entry already linked, or commit of one not linked
W_SEALED = 512  # tx.c bus1_tx_stage: WARN_ON(SEALED), a join staging onto a sealed transaction

WARN_NAMES = {
    W_ADD_GUARD: "bus1_queue_add refused the timestamp (queue.c: WARN_ON + return)",
    W_READABLE: "bus1_queue_add: WARN_ON(readable)",
    W_BEFORE_FRONT: "bus1_queue_add: insertion at or before front",
    W_STAGE_FRONT: "bus1_queue_stage: staged entry became front",
    W_SYNTH_FRONT: "bus1_queue_commit_synthetic: synthetic entry became front",
    W_ODD_TS: "odd timestamp where an even one is required",
    W_FLUSH: "bus1_queue_flush: bad flush timestamp",
    W_REMOVE: "bus1_queue_remove: entry not linked",
    W_QUEUED: "entry linked (or not linked) against the function's precondition",
    W_SEALED: "bus1_tx_stage: WARN_ON(test_bit(BUS1_TX_BIT_SEALED)) (tx.c:137)",
}


def find(entries: tuple[Key, ...], addr: int) -> int:
    """Position of the entry with address ``addr``, or -1."""
    for i, e in enumerate(entries):
        if e[2] == addr:
            return i
    return -1


def key_of(entries: tuple[Key, ...], addr: int) -> Key | None:
    i = find(entries, addr)
    return entries[i] if i >= 0 else None


def tick(q: Queue) -> tuple[Queue, int]:
    """``bus1_queue_tick`` (queue.h): ``clock += 2``; returns the new clock."""
    clock, flush, left, front, entries = q
    clock += 2
    return (clock, flush, left, front, entries), clock


def sync(q: Queue, ts: int) -> tuple[Queue, int, int]:
    """``bus1_queue_sync`` (queue.h): ``clock = max(clock, ts)``; returns (queue, clock, warns)."""
    clock, flush, left, front, entries = q
    warn = W_ODD_TS if ts & 1 else 0
    if ts > clock:
        clock = ts
    return (clock, flush, left, front, entries), clock, warn


def add(q: Queue, addr: int, old_ts: int, group: int, ts: int) -> tuple[Queue, int]:
    """``bus1_queue_add`` (queue.c): insert ``addr`` at ``ts``, or re-key it from ``old_ts``.

    ``old_ts`` is the node's current timestamp (0 for a fresh node); a linked node is
    found by address. Mirrors the C function line by line, including its cache updates.
    """
    clock, flush, left, front, entries = q
    pos = find(entries, addr)
    linked = pos >= 0
    readable = front != 0
    if ts == 0 or ts > clock + 1:
        return q, W_ADD_GUARD
    if (old_ts == 0) == linked:
        return q, W_ADD_GUARD
    if old_ts != 0 and (not (old_ts & 1) or ts < old_ts):
        return q, W_ADD_GUARD
    if old_ts == ts:
        return q, 0
    warn = 0
    node = (ts, group, addr)
    if linked and left == addr:
        if readable:
            warn |= W_READABLE
        nxt = entries[pos + 1] if pos + 1 < len(entries) else None
        left = nxt[2] if nxt else 0
        if nxt is not None and not (nxt[0] & 1) and nxt <= node:
            front = left
    elif front:
        fkey = key_of(entries, front)
        if fkey is not None and node <= fkey:
            warn |= W_BEFORE_FRONT
    rest = list(entries)
    if linked:
        del rest[pos]
    insort(rest, node)
    if rest[0] == node:  # every comparison went left
        left = addr
        if not (ts & 1):
            front = addr
        elif readable:
            warn |= W_READABLE
    return (clock, flush, left, front, tuple(rest)), warn


def stage(q: Queue, addr: int, group: int, ts: int) -> tuple[Queue, int, int]:
    """``bus1_queue_stage`` (queue.c): sync to ``ts``, insert at ``clock + 1`` (odd).

    Returns (queue, the synced clock, warns); the caller's running maximum becomes the
    synced clock. The clock is not ticked.
    """
    warn = W_ODD_TS if ts & 1 else 0
    if key_of(q[4], addr) is not None:
        warn |= W_QUEUED
    q, clock, w = sync(q, ts)
    q, w2 = add(q, addr, 0, group, clock + 1)
    warn |= w | w2
    if q[3] == addr:
        warn |= W_STAGE_FRONT
    return q, clock, warn


def commit_staged(q: Queue, addr: int, ts: int) -> tuple[Queue, int]:
    """``bus1_queue_commit_staged`` (queue.c): re-key a staging entry to the even ``ts``."""
    warn = W_ODD_TS if ts & 1 else 0
    k = key_of(q[4], addr)
    if k is None:
        return add(q, addr, 0, 0, ts)[0], warn | W_QUEUED | W_ADD_GUARD
    q, w = add(q, addr, k[0], k[1], ts)
    return q, warn | w


def commit_unstaged(q: Queue, addr: int, group: int) -> tuple[Queue, int, int]:
    """``bus1_queue_commit_unstaged`` (queue.c): tick this queue and insert committed.

    Returns (queue, the timestamp used, warns)."""
    warn = W_QUEUED if key_of(q[4], addr) is not None else 0
    q, ts = tick(q)
    q, w = add(q, addr, 0, group, ts)
    return q, ts, warn | w


def commit_synthetic(q: Queue, addr: int, group: int, ts: int, flipped: bool = False) -> tuple[Queue, bool, int]:
    """``bus1_queue_commit_synthetic`` (queue.c): insert committed at ``ts`` only if the
    current leftmost compares lower (by ``(ts, group)``, or equal with ``node < t``
    comparing addresses, as the code has it, queue.c:350; ``flipped``: ``node > t``, the
    candidate fix for finding D). Returns (queue, queued, warns)."""
    clock, flush, left, front, entries = q
    warn = W_ODD_TS if ts & 1 else 0
    if ts > clock + 1:
        warn |= W_ADD_GUARD
    if key_of(entries, addr) is not None:
        warn |= W_QUEUED
    if left:
        t = key_of(entries, left)
        assert t is not None
        r = (t[0], t[1]) < (ts, group)
        tie = (t[0], t[1]) == (ts, group)
        if r or (tie and (addr > t[2] if flipped else addr < t[2])):
            q, w = add(q, addr, 0, group, ts)
            warn |= w
            if q[3] == addr:
                warn |= W_SYNTH_FRONT
            return q, True, warn
    return q, False, warn


def remove(q: Queue, addr: int) -> tuple[Queue, int]:
    """``bus1_queue_remove`` (queue.c): unlink ``addr``; the node keeps its timestamp."""
    clock, flush, left, front, entries = q
    pos = find(entries, addr)
    if pos < 0:
        return q, W_REMOVE
    if left == addr:
        nxt = entries[pos + 1] if pos + 1 < len(entries) else None
        left = nxt[2] if nxt else 0
        front = left if nxt is not None and not (nxt[0] & 1) else 0
    return (clock, flush, left, front, entries[:pos] + entries[pos + 1 :]), 0


def peek(q: Queue) -> Key | None:
    """``bus1_queue_peek`` (queue.c): the key at ``front``, or ``None``."""
    front = q[3]
    if not front:
        return None
    return key_of(q[4], front)


def flush(q: Queue, ts: int, recompute_front: bool = False) -> tuple[Queue, tuple[Key, ...], int]:
    """``bus1_queue_flush`` (queue.c): unlink every committed entry with ``ts <= flush``.

    Sets ``front = NULL`` and ``leftmost`` to the first entry left, and never
    recomputes ``front`` (as the code, queue.c:116 and 131-132). With ``recompute_front``
    (the fix for finding E) ``front`` is then set to ``leftmost`` when that entry is
    committed, as ``bus1_queue_remove`` does. Returns (queue, removed keys, warns).
    """
    clock, old_flush, left, front, entries = q
    warn = 0
    if ts & 1:
        warn |= W_ODD_TS
    if ts > clock + 1 or ts < old_flush:
        warn |= W_FLUSH
    kept = []
    removed = []
    for e in entries:
        if not (e[0] & 1) and e[0] <= ts:
            removed.append(e)
        else:
            kept.append(e)
    left = kept[0][2] if kept else 0
    front = left if recompute_front and kept and not kept[0][0] & 1 else 0
    return (clock, ts, left, front, tuple(kept)), tuple(removed), warn

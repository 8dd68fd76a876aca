"""A compact visited-state store: an open-addressing fingerprint table in numpy arrays.

The table holds 64-bit fingerprints in one preallocated ``uint64`` array with linear
probing (``0`` marks an empty slot; a fingerprint that happens to be ``0`` is stored as
``1``, which merges two of 2**64 values). It doubles when it is more than 3/4 full.
Beside it, by discovery number, ``parents`` (``int32``; ``int64`` past 2**31 states)
and ``actions`` (``uint16``, the action's position among its parent's enabled actions)
give each state's parent link for trace rebuilding. At 10 million states that is
about 8 / 0.75 + 4 + 2 bytes per state, against well over 100 for a Python ``set``
of tuples.

Insertion is vectorised: :meth:`FingerprintTable.insert` takes a whole batch of
fingerprints and reports which were new, in batch order, exactly as inserting them one
by one would.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

TAIL = 48
"""A batch's last fingerprints still probing are finished one by one below this many."""

REHASH_BLOCK = 1 << 18
"""Slots re-inserted per step when the table doubles."""

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def mix(hashes: np.ndarray) -> np.ndarray:
    """The fingerprints of Python ``hash`` values (``int64``), as :func:`ordercheck.checker.engine.fingerprint.fingerprint`."""
    z = hashes.astype(np.int64, copy=False).view(np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


class FingerprintTable:
    """A set of 64-bit fingerprints in an open-addressing numpy table."""

    def __init__(self, capacity: int = 1 << 16) -> None:
        size = 1 << max(4, (max(capacity, 1) * 4 // 3).bit_length())
        self.slots = np.zeros(size, dtype=np.uint64)
        self.count = 0
        self.guard: Callable[[int], None] | None = None  # told the bytes of a growth before it (ordercheck.checker.engine.budget)

    def __len__(self) -> int:
        return self.count

    @property
    def nbytes(self) -> int:
        return int(self.slots.nbytes)

    def _probe(self, fps: np.ndarray, insert: bool) -> np.ndarray:
        """Which of ``fps`` (non-zero; distinct when inserting) were absent; insert them
        if asked."""
        slots = self.slots
        mask = np.uint64(len(slots) - 1)
        absent = np.zeros(len(fps), dtype=bool)
        todo = np.arange(len(fps))
        pos = (fps & mask).astype(np.int64)
        size_mask = int(mask)
        while len(todo):
            cur = slots[pos]
            want = fps[todo]
            found = cur == want
            empty = cur == 0
            if insert and empty.any():
                cand = np.flatnonzero(empty)
                # Several fingerprints may aim at one empty slot: the first in batch order
                # wins (written last, its write stays; read back, the write that stayed
                # is the one taken whatever the order of writes). The others, distinct
                # from it, go on to the next slot.
                at = pos[cand]
                slots[at[::-1]] = want[cand][::-1]
                win = cand[slots[at] == want[cand]]
                absent[todo[win]] = True
                done = found
                done[win] = True
            else:
                absent[todo[empty]] = True
                done = found | empty
            keep = ~done
            todo = todo[keep]
            pos = (pos[keep] + 1) & size_mask
            if len(todo) <= TAIL:
                break
        # The few left sit in long clusters: walk them one by one (each round above costs
        # a dozen array operations whatever its size).
        for k, p in zip(todo.tolist(), pos.tolist()):
            f = int(fps[k])
            while True:
                c = int(slots[p])
                if c == f:
                    break
                if c == 0:
                    if insert:
                        slots[p] = f
                    absent[k] = True
                    break
                p = (p + 1) & size_mask
        return absent

    def contains(self, fps: np.ndarray) -> np.ndarray:
        """Membership of each fingerprint of ``fps``."""
        fps = np.where(fps == 0, np.uint64(1), fps).astype(np.uint64)
        if not len(fps):
            return np.zeros(0, dtype=bool)
        return ~self._probe(fps, insert=False)

    def insert(self, fps: np.ndarray) -> np.ndarray:
        """Insert a batch; return a mask of the entries that were new.

        Of equal fingerprints within the batch only the first counts as new, so the
        result equals inserting the batch one fingerprint at a time, in order.
        """
        n = len(fps)
        if not n:
            return np.zeros(0, dtype=bool)
        fps = np.where(fps == 0, np.uint64(1), fps).astype(np.uint64)
        uniq, first = np.unique(fps, return_index=True)
        self.reserve(self.count + len(uniq))
        order = np.sort(first)  # first occurrences, in batch order
        fresh = self._probe(fps[order], insert=True)
        new = np.zeros(n, dtype=bool)
        new[order[fresh]] = True
        self.count += int(fresh.sum())
        return new

    def reserve(self, count: int) -> None:
        """Grow (by doubling) so that ``count`` fingerprints stay under 3/4 load."""
        size = len(self.slots)
        if count * 4 <= size * 3:
            return
        while count * 4 > size * 3:
            size *= 2
        if self.guard is not None:
            self.guard(size * 8)
        old = self.slots
        self.slots = np.zeros(size, dtype=np.uint64)
        # Re-insert a block at a time: the temporaries stay small beside the two tables.
        for i in range(0, len(old), REHASH_BLOCK):
            block = old[i : i + REHASH_BLOCK]
            block = block[block != 0]
            if len(block):
                self._probe(block, insert=True)

    def values(self) -> np.ndarray:
        """Every stored fingerprint, in table order (for checkpoints)."""
        return self.slots[self.slots != 0]


class GrowArray:
    """An append-only numpy array that doubles its buffer as it grows."""

    def __init__(self, dtype: type, capacity: int = 1 << 16) -> None:
        self.buf = np.zeros(max(capacity, 16), dtype=dtype)
        self.n = 0
        self.guard: Callable[[int], None] | None = None  # told the bytes of a growth before it (ordercheck.checker.engine.budget)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        if not -self.n <= i < self.n:
            raise IndexError(i)
        return int(self.buf[i % self.n])

    def reserve(self, need: int) -> None:
        """Grow (by doubling) to hold ``need`` items."""
        if need > len(self.buf):
            size = len(self.buf)
            while size < need:
                size *= 2
            dtype = np.int64 if self.buf.dtype == np.int32 and need >= 1 << 31 else self.buf.dtype
            if self.guard is not None:
                self.guard(size * np.dtype(dtype).itemsize)
            grown = np.zeros(size, dtype=dtype)
            grown[: self.n] = self.buf[: self.n]
            self.buf = grown

    def growth(self, need: int) -> int:
        """The bytes :meth:`reserve` allocates to hold ``need`` items (0: they fit)."""
        size = len(self.buf)
        if need <= size:
            return 0
        while size < need:
            size *= 2
        return size * self.buf.itemsize

    def extend(self, values: np.ndarray) -> None:
        need = self.n + len(values)
        self.reserve(need)
        self.buf[self.n : need] = values
        self.n = need

    def append(self, value: int) -> None:
        self.extend(np.asarray([value], dtype=self.buf.dtype))

    def truncate(self, n: int) -> None:
        self.n = min(self.n, n)

    def view(self) -> np.ndarray:
        return self.buf[: self.n]

    @property
    def nbytes(self) -> int:
        return int(self.buf.nbytes)


class CompactStore:
    """The local engine's visited store: a :class:`FingerprintTable` (membership:
    ``table.contains``) plus parent links by state number, inserted one by one
    (:meth:`add`) or in batches in order (:meth:`add_batch`). As the outcome's store it
    is a :class:`~ordercheck.checker.engine.outcome.StatePaths`."""

    def __init__(self, capacity: int = 1 << 16) -> None:
        self.table = FingerprintTable(capacity)
        self.parents = GrowArray(np.int32, capacity)
        self.actions = GrowArray(np.uint16, capacity)

    def __len__(self) -> int:
        return len(self.parents)

    def add(self, fp: int, parent: int, action: int) -> int:
        """Record a state; return its number, or -1 if its fingerprint was seen."""
        if not self.table.insert(np.asarray([fp], dtype=np.uint64))[0]:
            return -1
        self.parents.append(parent)
        self.actions.append(action)
        return len(self.parents) - 1

    def add_batch(self, fps: np.ndarray, parents: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Insert a batch in order; return the positions of the new ones (numbered in order).

        Every array grows before anything is inserted, so a refused growth (see
        ``guard``) leaves the store as it was."""
        self.parents.reserve(len(self.parents) + len(fps))
        self.actions.reserve(len(self.actions) + len(fps))
        new = np.flatnonzero(self.table.insert(fps))
        self.parents.extend(parents[new])
        self.actions.extend(actions[new])
        return new

    def path(self, index: int) -> tuple[int, list[int]]:
        """The initial-state position and the action positions that reach ``index``."""
        steps: list[int] = []
        parents, actions = self.parents.buf, self.actions.buf
        while parents[index] >= 0:
            steps.append(int(actions[index]))
            index = int(parents[index])
        steps.reverse()
        return int(actions[index]), steps

    def guard(self, check: Callable[[int], None] | None) -> None:
        """Call ``check(bytes)`` before each growth of the table or the parent links;
        it may raise to refuse the growth (see :mod:`ordercheck.checker.engine.budget`)."""
        self.table.guard = self.parents.guard = self.actions.guard = check

    def nbytes(self) -> int:
        """Bytes held by the table and the parent links."""
        return self.table.nbytes + self.parents.nbytes + self.actions.nbytes


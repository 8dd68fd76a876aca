"""Each level's order keys, kept by the driver for the counterexamples' traces.

A state's order key is its parent's rank in the parent's level (the position of the
parent's key in that level's sorted keys) shifted by :data:`~ordercheck.checker.spark.tasks.POS_BITS`,
plus the action's position (:mod:`ordercheck.checker.spark.bfs`); an initial state's key
is its position among the initial states. So the sorted keys of every level a search
expanded are enough to walk from any state found back to an initial state: no lookup
in the visited set, which on Spark is a job scanning all of it per step.

The driver already holds each level's sorted keys while the level is expanded (they are
broadcast to the tasks); :class:`FrontierKeys` keeps them afterwards in an anonymous
temporary file (8 bytes a state, on disk; the file has no name, so nothing is left
behind however the process ends), and reads back one key per level of a trace.
"""

from __future__ import annotations

import tempfile
from typing import BinaryIO

import numpy as np

from ordercheck.checker.spark.tasks import POS_BITS, POS_MASK

_KEY = np.dtype("<i8")


class FrontierKeys:
    """The sorted order keys of each level one model's search expanded, in order
    (level 0: the initial states' positions)."""

    def __init__(self) -> None:
        self._file: BinaryIO | None = None
        self._levels: list[tuple[int, int]] = []  # (byte offset, keys) of each level
        self._end = 0

    def __len__(self) -> int:
        return len(self._levels)

    def add(self, keys: np.ndarray) -> None:
        """Keep the sorted keys of the level just expanded."""
        data = np.ascontiguousarray(keys, dtype=_KEY).tobytes()
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="ordercheck-keys-")
        self._file.seek(self._end)
        self._file.write(data)
        self._levels.append((self._end, len(keys)))
        self._end += len(data)

    def key(self, level: int, rank: int) -> int:
        """The key of the state of rank ``rank`` in level ``level``."""
        offset, count = self._levels[level]
        if not 0 <= rank < count or self._file is None:
            raise RuntimeError(f"no state of rank {rank} in level {level} ({count} states)")
        self._file.seek(offset + rank * _KEY.itemsize)
        return int(np.frombuffer(self._file.read(_KEY.itemsize), dtype=_KEY)[0])

    def path(self, level: int, rank: int, positions: list[int]) -> tuple[int, list[int]]:
        """The initial state's position and the action positions from it to the state of
        rank ``rank`` in level ``level``, followed by ``positions`` (the steps from that
        state on, in order)."""
        steps = list(reversed(positions))
        while level > 0:
            key = self.key(level, rank)
            steps.append(key & POS_MASK)
            rank = key >> POS_BITS
            level -= 1
        return self.key(0, rank), list(reversed(steps))

    def close(self) -> None:
        """Drop the file (its space is freed at once: it has no name)."""
        if self._file is not None:
            self._file.close()
            self._file = None

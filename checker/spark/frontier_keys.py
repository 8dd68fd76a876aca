"""Each level's order keys, kept by the driver for the counterexamples' traces.

A state's order key is its parent's rank in the parent's level (the position of the
parent's key in that level's sorted keys) shifted by :data:`~ordercheck.checker.spark.tasks.POS_BITS`,
plus the action's position (:mod:`ordercheck.checker.spark.bfs`); an initial state's key
is its position among the initial states. So the sorted keys of every level a search
expanded are enough to walk from any state found back to an initial state: no lookup
in the visited set, which on Spark is a job scanning all of it per step.

The driver already holds each level's sorted keys while the level is expanded (they are
broadcast to the tasks); :class:`FrontierKeys` keeps them afterwards, every model's of a
search in one anonymous temporary file (8 bytes a state, on disk; the file has no name, so nothing is left
behind however the process ends), and reads back one key per level of a trace.
"""

from __future__ import annotations

import tempfile
from typing import BinaryIO

import numpy as np

from ordercheck.checker.spark.tasks import POS_BITS, POS_MASK

_KEY = np.dtype("<i8")


class FrontierKeys:
    """The sorted order keys of each level each model of a search expanded, in order
    (level 0: the initial states' positions), all models in one file (a batch may hold
    thousands of models: one file each would run out of file descriptors)."""

    def __init__(self) -> None:
        self._file: BinaryIO | None = None
        self._levels: dict[int, list[tuple[int, int]]] = {}  # per model, (byte offset, keys) of each level
        self._end = 0

    def add(self, model: int, keys: np.ndarray) -> int:
        """Keep the sorted keys of the level model ``model`` just expanded; returns that
        level's number."""
        data = np.ascontiguousarray(keys, dtype=_KEY).tobytes()
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="ordercheck-keys-")
        self._file.seek(self._end)
        self._file.write(data)
        levels = self._levels.setdefault(model, [])
        levels.append((self._end, len(keys)))
        self._end += len(data)
        return len(levels) - 1

    def key(self, model: int, level: int, rank: int) -> int:
        """The key of the state of rank ``rank`` in level ``level`` of model ``model``."""
        offset, count = self._levels[model][level]
        if not 0 <= rank < count or self._file is None:
            raise RuntimeError(f"no state of rank {rank} in level {level} ({count} states)")
        self._file.seek(offset + rank * _KEY.itemsize)
        return int(np.frombuffer(self._file.read(_KEY.itemsize), dtype=_KEY)[0])

    def path(self, model: int, level: int, rank: int, positions: list[int]) -> tuple[int, list[int]]:
        """The initial state's position and the action positions from it to the state of
        rank ``rank`` in level ``level`` of model ``model``, followed by ``positions`` (the
        steps from that state on, in order)."""
        steps = list(reversed(positions))
        while level > 0:
            key = self.key(model, level, rank)
            steps.append(key & POS_MASK)
            rank = key >> POS_BITS
            level -= 1
        return self.key(model, 0, rank), list(reversed(steps))

    def close(self) -> None:
        """Drop the file (its space is freed at once: it has no name)."""
        if self._file is not None:
            self._file.close()
            self._file = None

"""Checkpoints of the level being searched, taken at any moment.

The local engine writes a checkpoint at a level's start (:mod:`ordercheck.checker.engine.checkpoints`).
When a search must stop inside a level (SIGINT or SIGTERM, or its memory budget), the
progress since the last checkpoint would be lost; instead it writes the checkpoint of
the current level's start, which it can still rebuild: the parent links of the states
numbered before the level's new ones, the store's fingerprints less those this level
added (:class:`LevelMark` keeps them while the level runs), the level's frontier (kept
until the level ends; worker processes keep their share with ``keep_level``) and the
counters as they were when the level began.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from ordercheck.checker.engine.checkpoints import describe, level_start_fingerprints, save
from ordercheck.checker.engine.table import GrowArray


def warn(line: str) -> None:
    """A warning line on stderr."""
    print(f"ordercheck: warning: {line}", file=sys.stderr, flush=True)


class LevelMark:
    """The start of the level being searched, for checkpoints (``ckpt``: the model's
    checkpoint directory, ``None`` for none; ``ident``: what a resume must match)."""

    def __init__(self, ckpt: Path | None, ident: dict[str, Any]) -> None:
        self.ckpt = ckpt
        self.ident = ident
        self.meta: dict[str, Any] | None = None
        self.states = 0
        self.added = GrowArray(np.uint64, 1 << 10) if ckpt is not None else None
        self.last = time.monotonic()
        self.edges: Any = None  # the search's edge log (ordercheck.checker.engine.edges), saved with it
        self.edges_at = 0  # the edges it held when the level started

    def begin(self, meta: dict[str, Any], states: int) -> None:
        """A level starts with ``states`` states stored and the counters ``meta``."""
        self.meta = meta
        self.states = states
        if self.added is not None:
            self.added.truncate(0)
        edges = self.edges
        self.edges_at = len(edges.sources) if edges is not None and edges.kept else 0

    def log(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The edge log as it was when the level started (its states by number, its
        edges' sources and targets), where the search keeps one that holds them."""
        edges = self.edges
        if edges is None or not edges.kept or edges.numbers is not None or len(edges.nodes) < self.states:
            return None
        at = self.edges_at
        return edges.nodes.view()[: self.states], edges.sources.view()[:at], edges.targets.view()[:at]

    def reserve(self, n: int) -> None:
        """Room for ``n`` more fingerprints, made before the store inserts them."""
        if self.added is not None:
            self.added.reserve(len(self.added) + n)

    def add(self, fps: np.ndarray) -> None:
        """The level stored these new fingerprints."""
        if self.added is not None:
            self.added.extend(fps)

    def due(self, every: float) -> bool:
        """Whether a periodic checkpoint is due (``every`` seconds since the last)."""
        return self.ckpt is not None and time.monotonic() - self.last >= every

    def save(self, store: Any, frontier: Any) -> bool:
        """Write the checkpoint of the level's start: at the start itself, or later in
        the level (the sharded search, :mod:`ordercheck.checker.engine.sharded`, gathers its own
        checkpoints from its workers instead). A failed write warns and
        keeps the previous checkpoint."""
        if self.ckpt is None or self.meta is None or self.added is None:
            return False
        fps = store.table.values()
        if len(self.added):
            fps = level_start_fingerprints(fps, self.added.view())
        if len(fps) != self.states:  # never write a checkpoint that would resume wrongly
            warn(f"checkpoint not written: the store holds {len(fps):,} fingerprints for the level's "
                 f"{self.states:,} states; " + (f"the previous checkpoint, {self.saved()}, is kept" if self.saved()
                                                 else "there is no earlier checkpoint"))
            return False
        ok = save(
            self.ckpt,
            self.ident,
            self.meta,
            fps,
            store.parents.view()[: self.states],
            store.actions.view()[: self.states],
            frontier,
            warn,
            self.log(),
        )
        self.last = time.monotonic()
        return ok

    def saved(self) -> str | None:
        """``DIR (level N)`` for the checkpoint in force, if any."""
        return describe(self.ckpt) if self.ckpt is not None else None

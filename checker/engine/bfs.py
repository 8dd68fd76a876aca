"""The local engine: breadth-first search over a spec's state space.

Breadth-first order makes every counterexample and witness a shortest one (in the
reduced graph when partial-order reduction is on). States are numbered in discovery
order; a level's states get consecutive numbers, so a state's number is its level's
first number plus its position in the level's frontier.
The search is deterministic: the same spec and constants give the same counts and the
same traces on every run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from ordercheck.checker.api.errors import SpecError
from ordercheck.checker.api.spec import Property, Spec
from ordercheck.checker.engine.levels import search_levels
from ordercheck.checker.engine.memory import collector_paused
from ordercheck.checker.engine.outcome import NO_BOUNDS, Bounds, Decision, SearchOutcome
from ordercheck.checker.engine.reduce import Reductions
from ordercheck.checker.engine.sharded import search_sharded

__all__ = ["NO_BOUNDS", "Bounds", "Decision", "SearchOutcome", "SpecError", "Progress", "search", "history_length",
           "GROWING_DEPTH"]


GROWING_DEPTH = 300
"""The depth past which a search with no limit (no ``max_states``, ``max_depth`` or time
limit) says once, on stderr, that its model may not be bounded. Every built-in model is
decided well within it (the deepest at depth 51: a model's depth is about the number of
events of one run, a few per message); a
model whose state keeps growing (deliveries that repeat for ever, a counter with no
cap) passes it within seconds, then runs until memory runs out. It is a question, not a
verdict: a bounded model deeper than this is checked to its end as always."""


class Progress:
    """A progress line on stderr, at most every ``interval`` seconds, once a run is long:
    states, rate, depth, queue and, when ``history`` is given (a function from a state to
    the number of events in its history, :func:`history_length`), the history length of a
    state of the level being generated.

    With ``unbounded`` (the run has no limit at all), once the depth reaches
    :data:`GROWING_DEPTH` a warning says so, once, on ``warn_stream`` (by default the
    standard error of the moment), even when ``stream`` is ``None`` (``--quiet``
    silences progress lines, not this)."""

    def __init__(self, stream: TextIO | None = sys.stderr, interval: float = 2.0, label: str = "", *,
                 unbounded: bool = False, history: Callable[[Any], int | None] | None = None,
                 warn_stream: TextIO | None = None) -> None:
        self.stream = stream
        self.interval = interval
        self.label = label
        self.start = time.monotonic()
        self.last = self.start
        self.printed = False
        self.unbounded = unbounded
        self.history = history
        self.warn_stream = warn_stream
        self.warned = False

    def tick(self, states: int, depth: int, queue: int, sample: Any = None) -> None:
        """Called often; ``sample`` is a state of the level being generated, if at hand."""
        if self.unbounded and not self.warned and depth >= GROWING_DEPTH:
            self.growing(depth)
        if self.stream is None:
            return
        now = time.monotonic()
        if now - self.last < self.interval:
            return
        self.last = now
        rate = states / max(now - self.start, 1e-9)
        prefix = f"{self.label}: " if self.label else ""
        events = self.history(sample) if self.history is not None and sample is not None else None
        hist = f", history {events:,} events" if events is not None else ""
        self.stream.write(
            f"{prefix}{states:,} states, {rate:,.0f} states/s, depth {depth}{hist}, queue {queue:,}\n"
        )
        self.stream.flush()
        self.printed = True

    def growing(self, depth: int) -> None:
        """The warning of an unbounded run past :data:`GROWING_DEPTH`, once."""
        self.warned = True
        out = self.warn_stream if self.warn_stream is not None else sys.stderr
        prefix = f"{self.label}: " if self.label else ""
        out.write(f"ordercheck: warning: {prefix}depth {depth} and growing: is the state bounded? "
                  "set max_states or max_depth (or a time limit)\n")
        out.flush()


def history_length(spec: Spec) -> Callable[[Any], int | None]:
    """A function from a state to the number of events in ``spec``'s history of it (the
    sum of its peers' logs, or ``len``), or ``None`` for a spec that keeps none."""

    def length(state: Any) -> int | None:
        try:
            h = spec.history(state)
        except Exception:  # a spec that keeps no history (NotImplementedError), or one that fails: not shown
            return None
        logs = getattr(h, "logs", None)
        try:
            return sum(len(log) for log in logs) if logs is not None else len(h)
        except TypeError:
            return None

    return length


def search(
    spec: Spec,
    props: Sequence[Property],
    bounds: Bounds = NO_BOUNDS,
    *,
    progress: Progress | None = None,
    stop_when_decided: bool = True,
    reductions: Reductions | None = None,
    workers: int = 1,
    checkpoint: str | Path | None = None,
    resume: bool = False,
    checkpoint_every: float = 30.0,
    identity: dict[str, Any] | None = None,
    spill_dir: str | Path | None = None,
    budget: Any = None,
) -> SearchOutcome:
    """Explore ``spec`` breadth-first and decide ``props``.

    With ``stop_when_decided`` the search ends as soon as every property has its
    verdict (as TLC stops at a violation); otherwise it explores everything reachable,
    which gives complete state counts. ``reductions`` (see :func:`ordercheck.checker.engine.reduce.plan`)
    turns on symmetry and partial-order reduction; ``workers`` expands each level in
    that many processes with identical results; ``checkpoint`` names a directory for
    level-boundary checkpoints (every ``checkpoint_every`` seconds) and ``resume``
    continues from the last one there. ``identity`` (e.g. the model's constants) is
    stored with a checkpoint, and a resume with a different one is refused; its
    ``sources`` entry (the digests of the model's sources) goes to the checkpoint's
    manifest instead, which :func:`ordercheck.checker.engine.run.check_sources` compares before a
    resume.
    ``spill_dir`` keeps every level's frontier in files there (by default only levels
    of more than a million states are spilled, to a temporary directory); with shard
    workers, each worker's share of a level, in files of its own. ``budget``
    (a :class:`ordercheck.checker.engine.budget.MemoryBudget`) stops the search as at a bound
    (``"memory"``) before it would hold more memory than allowed. The loop itself is
    :class:`ordercheck.checker.engine.loop.LevelLoop`, with the backend of
    :mod:`ordercheck.checker.engine.levels` (one process) or, with ``workers`` > 1, of
    :mod:`ordercheck.checker.engine.sharded` (shard workers).
    """
    reductions = reductions or Reductions()
    # Workers own shards of the visited set (and spill their shares of a level).
    loop = search_sharded if workers > 1 else search_levels
    with collector_paused():
        return loop(
            spec,
            props,
            bounds,
            progress=progress or Progress(None),
            stop_when_decided=stop_when_decided,
            reductions=reductions,
            workers=workers,
            checkpoint=checkpoint,
            resume=resume,
            checkpoint_every=checkpoint_every,
            identity=identity,
            spill_dir=spill_dir,
            budget=budget,
        )

"""The local engine: breadth-first search over a spec's state space.

Breadth-first order makes every counterexample and witness a shortest one. States are
numbered in discovery order; a level's states get consecutive numbers, so the frontier
is a plain list and a state's number is its level's first number plus its position.
The search is deterministic: the same spec and constants give the same counts and the
same traces on every run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

from checker.evaluate import Evaluator
from checker.fingerprint import MASK64, check_vocabulary, collision_probability, fingerprint
from checker.memory import current_rss, peak_rss, reset_peak
from checker.spec import Property, Spec
from checker.store import VisitedStore


class SpecError(RuntimeError):
    """The spec broke a rule of the spec API (e.g. a state holding a string)."""


@dataclass(frozen=True)
class Bounds:
    """Limits on a search. Hitting one ends the search with ``unknown`` verdicts."""

    max_states: int | None = None
    max_depth: int | None = None
    time_limit: float | None = None


NO_BOUNDS = Bounds()


@dataclass
class Decision:
    """A property decided at state number ``index`` with an explanation."""

    index: int
    explanation: str


@dataclass
class SearchOutcome:
    """The raw outcome of a search, before traces are rebuilt."""

    store: VisitedStore
    decisions: dict[str, Decision] = field(default_factory=dict)
    transitions: int = 0
    depth: int = 0
    seconds: float = 0.0
    peak_memory_bytes: int = 0
    bound: str | None = None
    complete: bool = True
    maybe_cyclic: bool = False  # an edge leads back to a level at or above its source

    @property
    def distinct_states(self) -> int:
        return len(self.store)

    @property
    def collision_probability(self) -> float:
        return collision_probability(self.distinct_states, self.transitions + self.initial_states)

    initial_states: int = 0


class Progress:
    """A progress line on stderr, at most every ``interval`` seconds, once a run is long."""

    def __init__(self, stream: TextIO | None = sys.stderr, interval: float = 2.0, label: str = "") -> None:
        self.stream = stream
        self.interval = interval
        self.label = label
        self.start = time.monotonic()
        self.last = self.start
        self.printed = False

    def tick(self, states: int, depth: int, queue: int) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if now - self.last < self.interval:
            return
        self.last = now
        rate = states / max(now - self.start, 1e-9)
        prefix = f"{self.label}: " if self.label else ""
        self.stream.write(
            f"{prefix}{states:,} states, {rate:,.0f} states/s, depth {depth}, queue {queue:,}\n"
        )
        self.stream.flush()
        self.printed = True


def search(
    spec: Spec,
    props: Sequence[Property],
    bounds: Bounds = NO_BOUNDS,
    *,
    progress: Progress | None = None,
    stop_when_decided: bool = True,
) -> SearchOutcome:
    """Explore ``spec`` breadth-first and decide ``props``.

    With ``stop_when_decided`` the search ends as soon as every property has its
    verdict (as TLC stops at a violation); otherwise it explores everything reachable,
    which gives complete state counts.
    """
    started = time.monotonic()
    reset_peak()
    baseline = current_rss()
    evaluator = Evaluator(spec, props)
    store = VisitedStore()
    seen = store.seen
    parents = store.parents
    actions = store.actions
    outcome = SearchOutcome(store)
    decisions = outcome.decisions
    next_states = spec.next_states
    history_key = spec.history_key if evaluator.uses_history else None
    max_states = bounds.max_states
    max_depth = bounds.max_depth
    deadline = None if bounds.time_limit is None else started + bounds.time_limit
    progress = progress or Progress(None)
    # Cycles matter only to `eventually` properties: an edge into a state discovered
    # before the current level is the one kind of edge that can close a cycle.
    track_cycles = any(p.kind == "eventually" for p in props)
    level_new: set[int] = set()

    def record(found: list[tuple[str, str]], index: int) -> None:
        for name, sentence in found:
            if name not in decisions:
                decisions[name] = Decision(index, sentence)
                evaluator.decide(name)

    frontier: list = []
    for i, s in enumerate(spec.init_states()):
        problem = check_vocabulary(s)
        if problem:
            raise SpecError(f"{spec.name}: initial {problem}")
        fp = fingerprint(s)
        if fp in seen:
            continue
        idx = store.add(fp, -1, i)
        key = history_key(s) if history_key else None
        record(evaluator.on_state(s, key, None), idx)
        frontier.append(s)
    outcome.initial_states = len(frontier)

    level_start = 0
    depth = 0  # level of the states in `frontier`: the number of steps from an initial state
    vocabulary_checks = 1000
    transitions = 0
    stop = stop_when_decided and evaluator.done
    while frontier and not stop:
        at_depth_bound = max_depth is not None and depth >= max_depth
        next_frontier: list = []
        append_next = next_frontier.append
        for k, s in enumerate(frontier):
            idx = level_start + k
            succ = next_states(s)
            if not succ:
                if evaluator.terminal_state or evaluator.terminal_history:
                    key = history_key(s) if history_key else None
                    record(evaluator.on_terminal(s, key), idx)
                continue
            parent_key = history_key(s) if history_key else None
            checks = evaluator.state_checks or evaluator.history_checks
            pos = -1
            for _label, t in succ:
                pos += 1
                transitions += 1
                z = hash(t) & MASK64
                z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
                z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
                fp = z ^ (z >> 31)
                if fp in seen:
                    if track_cycles and fp not in level_new:
                        outcome.maybe_cyclic = True
                    continue
                if at_depth_bound:
                    outcome.bound = "max_depth"
                    continue
                if max_states is not None and len(parents) >= max_states:
                    outcome.bound = "max_states"
                    stop = True
                    break
                seen.add(fp)
                if track_cycles:
                    level_new.add(fp)
                parents.append(idx)
                actions.append(pos)
                if vocabulary_checks:
                    vocabulary_checks -= 1
                    problem = check_vocabulary(t)
                    if problem:
                        raise SpecError(f"{spec.name}: {problem}")
                if checks:
                    found = evaluator.on_state(t, history_key(t) if history_key else None, parent_key)
                    if found:
                        record(found, len(parents) - 1)
                        checks = evaluator.state_checks or evaluator.history_checks
                append_next(t)
            if stop or (stop_when_decided and evaluator.done):
                stop = True
                break
            if (k & 255) == 255:
                if deadline is not None and time.monotonic() > deadline:
                    outcome.bound = "time_limit"
                    stop = True
                    break
                progress.tick(len(parents), depth + 1, len(frontier) - k + len(next_frontier))
        level_start += len(frontier)
        frontier = next_frontier
        level_new.clear()
        if frontier:
            depth += 1
        if deadline is not None and not stop and frontier and time.monotonic() > deadline:
            outcome.bound = "time_limit"
            stop = True

    outcome.transitions = transitions
    outcome.depth = depth + 1 if len(store) else 0
    outcome.complete = outcome.bound is None and not (stop and frontier)
    outcome.seconds = time.monotonic() - started
    outcome.peak_memory_bytes = max(peak_rss() - baseline, 0)
    return outcome

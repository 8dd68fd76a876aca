"""The rules of a breadth-first level, written once for every engine.

A level's parents are expanded in their order (their *rank*); their successors, in the
parent's order, are the level's candidates, and a candidate not visited before (the
first of equal ones) is a new state, numbered in that order. Every engine reaches the
same counts, verdicts and traces by these rules:

* **depth bound** (:func:`depth_bound_reached`): at ``max_depth`` the last level is
  expanded without adding to it; a successor not visited before sets the bound;
* **state bound**: the ``room``-th new state (:func:`room`) is the first not kept; the
  level's transitions count up to and including that successor (:func:`settle`);
* **every property decided** (with ``stop_when_decided``): the level ends after the
  parent at which the last property was decided; a decision at a terminal parent ends
  it after the next parent with successors (:func:`first_busy`), in the next level if
  there is none;
* **coverage and the cycle test** count whole chunks of parents up to where the level
  ended, as the one-process merge meets them (:func:`counted`);
* **the level boundary** (:func:`next_depth`, :func:`time_up`): the depth grows by a
  level with states; a stop inside a level counts the next level's states found so far
  towards the depth; the time limit is tested between levels (and while one is
  searched, where the search can stop consistently);
* **the cycle proviso** of partial-order reduction (:func:`must_expand_fully`): a
  reduced parent is expanded fully when two of its successors are equal or one of them
  was met before (at an earlier level or from a parent of smaller rank, as finally
  expanded). One process applies it to each chunk at the merge
  (:func:`ordercheck.checker.engine.levels.proviso`), the shard workers to the successors each
  owns, in rounds (:meth:`ordercheck.checker.engine.shards._Shard.rounds`); both expand the parents
  it names fully and apply it again until it names no more.

The one-process loop (:mod:`ordercheck.checker.engine.levels`) applies them state by state as it
merges a chunk; the shard workers' main process (:mod:`ordercheck.checker.engine.sharded`) and
Spark's driver (:mod:`ordercheck.checker.spark.bfs`) apply :func:`settle` to a level's arrays. Each
model's counts, decisions and stop are kept by a :class:`ordercheck.checker.engine.ledger.Ledger`,
which applies these rules to them for every engine.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ordercheck.checker.api.errors import SpecError
from ordercheck.checker.api.spec import Property, Spec
from ordercheck.checker.engine.fingerprint import check_vocabulary

PHASES = ("expand", "exchange", "dedup", "check")
"""The timed phases of a level (:class:`~ordercheck.checker.api.result.LevelTiming`)."""

VOCABULARY_CHECKS = 1000
"""How many new states (per model, per worker) are checked for values outside the
state vocabulary (:func:`ordercheck.checker.engine.fingerprint.check_vocabulary`)."""

KEY_BITS = 16
"""An order key is ``rank << KEY_BITS | position``: a parent has at most 65536 successors."""

OFFSET_MASK = (1 << KEY_BITS) - 1


def tracks_cycles(spec: Spec, props: Sequence[Property]) -> bool:
    """Whether a search of ``spec`` for ``props`` must notice an edge that can close a
    cycle (``maybe_cyclic``): only the check of an ``acyclic`` declaration
    (:func:`ordercheck.checker.engine.declarations.check_acyclic`), the fair-cycle search of
    ``eventually`` properties and the fairness warning (which needs one too) read it."""
    return bool(spec.acyclic) or any(p.kind == "eventually" for p in props)


def initial_level(spec: Spec, fingerprints: Callable[[list], np.ndarray]) -> tuple[list, np.ndarray, np.ndarray]:
    """The first level: ``spec``'s distinct initial states (the first of equal ones, by
    ``fingerprints``, in their order), their positions among the initial states and
    their fingerprints. An initial state with a value outside the state vocabulary
    raises :class:`~ordercheck.checker.api.errors.SpecError`."""
    inits = list(spec.init_states())
    for s in inits:
        problem = check_vocabulary(s)
        if problem:
            raise SpecError(f"{spec.name}: initial {problem}")
    fps = fingerprints(inits)
    _u, first = np.unique(fps, return_index=True)
    positions = np.sort(first)
    return [inits[i] for i in positions.tolist()], positions, fps[positions]


def depth_bound_reached(max_depth: int | None, depth: int) -> bool:
    """Whether the level at ``depth`` is the last (expanded, nothing added)."""
    return max_depth is not None and depth >= max_depth


def room(max_states: int | None, stored: int, new: int) -> int:
    """How many of a level's ``new`` states are kept with ``stored`` states stored."""
    return new if max_states is None else max(min(new, max_states - stored), 0)


def first_busy(counts: np.ndarray, rank: int) -> int | None:
    """The first parent at or after ``rank`` with successors (``None``: none)."""
    later = np.flatnonzero(counts[rank:] > 0)
    return rank + int(later[0]) if len(later) else None


def counted(block: int, last_block: int | None) -> bool:
    """Whether chunk ``block`` counts (coverage, the cycle test) in a level that ended
    in chunk ``last_block`` (``None``: the level ended at its end)."""
    return last_block is None or block <= last_block


def next_depth(depth: int, next_states: int, at_depth_bound: bool) -> int:
    """The depth after a level at ``depth`` that kept ``next_states`` new states (a level
    stopped inside counts those found so far): one more, unless none were kept or the
    level was the depth bound's (which keeps none)."""
    return depth + 1 if next_states and not at_depth_bound else depth


def time_up(deadline: float | None) -> bool:
    """Whether the time limit has passed."""
    return deadline is not None and time.monotonic() > deadline


@dataclass(frozen=True)
class LevelEnd:
    """Where a level ends (:func:`settle`): the new states kept, the transitions
    counted, the last parent merged (``None``: the whole level), whether the search
    stops and the bound met (``"max_states"`` or ``None``)."""

    kept: int
    transitions: int
    last_rank: int | None
    stop: bool
    bound: str | None


def settle(counts: np.ndarray, events: Sequence[tuple[int, int, Any]], keys: np.ndarray, room: int,
           decided: bool, record: Callable[[Any], bool], whole_chunks: int | None = None) -> LevelEnd:
    """Decide a level from its arrays as one process decides it state by state.

    ``counts``: each parent's successors, by rank; ``events``: ``(rank, position,
    finding)`` sorted (a terminal parent's at position ``-1``); ``keys``: the new
    states' order keys, sorted; ``room``: how many new states may be kept
    (:func:`room`); ``decided``: every property was decided before the level (with
    ``stop_when_decided``), so it ends after its first parent with successors;
    ``record(finding)`` records a finding and says whether that decided every property
    (always ``False`` without ``stop_when_decided``). ``whole_chunks``: at the depth
    bound the one-process loop counts the transitions of whole chunks of this many
    parents (``None``: parent by parent)."""
    n_new = len(keys)
    cut = (int(keys[room] >> KEY_BITS), int(keys[room] & OFFSET_MASK)) if room < n_new else None
    stop_parent = first_busy(counts, 0) if decided else None
    for rank, sub, found in events:
        if stop_parent is not None and rank > stop_parent:
            break
        if cut is not None and (rank, sub) >= cut:
            break
        if record(found) and stop_parent is None:
            stop_parent = first_busy(counts, rank)
    if stop_parent is not None and (cut is None or stop_parent < cut[0]):
        kept = int(np.searchsorted(keys, (stop_parent + 1) << KEY_BITS))
        end = stop_parent + 1
        if whole_chunks is not None:
            end = min(len(counts), (stop_parent // whole_chunks + 1) * whole_chunks)
        return LevelEnd(kept, int(counts[:end].sum()), stop_parent, True, None)
    if cut is not None:
        return LevelEnd(room, int(counts[: cut[0]].sum()) + cut[1] + 1, cut[0], True, "max_states")
    return LevelEnd(n_new, int(counts.sum()), None, False, None)


def must_expand_fully(fps: np.ndarray, ranks: np.ndarray, reduced: np.ndarray,
                      visited: np.ndarray | None = None) -> np.ndarray:
    """The cycle proviso of partial-order reduction, the rule itself: of a level's
    successors (``fps``, their parents' ``ranks``, whether each parent's expansion is
    ``reduced`` and, where known, whether each was ``visited`` at an earlier level), the
    ranks (sorted, distinct) of the reduced parents that must be expanded fully: those
    with a successor visited before, equal to another of their own, or equal to one of a
    parent of smaller rank. A parent expanded fully adds its other successors (not
    reduced) and the rule is applied again, until it names no new parent: a parent's
    decision depends on smaller ranks only, so that is the decision taken parent by
    parent in the level's order. One process applies it to a chunk's successors (those
    of earlier chunks are in the store, so ``visited``), a shard worker to the
    successors it owns."""
    hit = np.zeros(len(fps), dtype=bool) if visited is None else np.array(visited, dtype=bool)
    if len(fps) > 1:
        order = np.lexsort((ranks, fps))  # by fingerprint, then rank: the first of equal ones does not trigger
        hit[order[1:][fps[order][1:] == fps[order][:-1]]] = True
    return np.unique(ranks[hit & reduced])

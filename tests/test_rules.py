"""The level rules of ordercheck.checker.engine.rules, on small hand-made levels.

The engines' agreement on every model is tested elsewhere (tests/test_workers.py,
tests/test_spark.py); here each rule of ``settle`` is pinned to numbers worked out by
hand. The level: parents 0..3 with 2, 0, 3 and 1 successors; its new states are the
successors with the keys below (rank << 16 | position), five of the six."""

from __future__ import annotations

import numpy as np
import pytest

from ordercheck.checker.engine import rules
from ordercheck.checker.engine.rules import KEY_BITS, LevelEnd, settle

COUNTS = np.asarray([2, 0, 3, 1], dtype=np.int64)
KEYS = np.asarray([0 << KEY_BITS | 0, 0 << KEY_BITS | 1, 2 << KEY_BITS | 0, 2 << KEY_BITS | 2, 3 << KEY_BITS | 0],
                  dtype=np.int64)


def recorder(closing: object | None) -> tuple[list, object]:
    """A ``record`` that keeps what it is given and says "all decided" at ``closing``."""
    got: list = []

    def record(finding: object) -> bool:
        got.append(finding)
        return finding == closing

    return got, record


def test_a_level_without_bound_or_decision_is_kept_whole() -> None:
    got, record = recorder(None)
    end = settle(COUNTS, [(2, 1, "a")], KEYS, len(KEYS), False, record)
    assert end == LevelEnd(5, 6, None, False, None) and got == ["a"]


def test_the_state_bound_cuts_at_the_successor_and_counts_transitions_up_to_it() -> None:
    """Room for 3: the fourth new state (parent 2, position 2) is the first not kept;
    transitions: parent 0's two, then parent 2's up to and including position 2."""
    got, record = recorder(None)
    events = [(0, 1, "before"), (2, 2, "at the cut"), (3, 0, "after")]
    end = settle(COUNTS, events, KEYS, 3, False, record)
    assert end == LevelEnd(3, 2 + 3, 2, True, "max_states")
    assert got == ["before"]  # a finding at or past the cut is not recorded


def test_a_decision_at_a_terminal_parent_ends_the_level_after_the_next_busy_parent() -> None:
    """Parent 1 has no successors: the level ends after parent 2 (its states kept)."""
    got, record = recorder("last")
    end = settle(COUNTS, [(1, -1, "last"), (3, 0, "later")], KEYS, len(KEYS), False, record)
    assert end == LevelEnd(4, 2 + 0 + 3, 2, True, None)
    assert got == ["last"]


def test_a_decision_at_a_busy_parent_ends_the_level_after_that_parent() -> None:
    got, record = recorder("last")
    end = settle(COUNTS, [(0, 1, "last"), (2, 0, "later")], KEYS, len(KEYS), False, record)
    assert end == LevelEnd(2, 2, 0, True, None)


def test_everything_decided_before_the_level_ends_it_after_its_first_busy_parent() -> None:
    zero_first = np.asarray([0, 0, 3, 1], dtype=np.int64)
    keys = KEYS[2:]
    got, record = recorder(None)
    end = settle(zero_first, [(3, 0, "late")], keys, len(keys), True, record)
    assert end == LevelEnd(2, 3, 2, True, None) and got == []


def test_at_the_depth_bound_transitions_count_whole_chunks() -> None:
    got, record = recorder("last")
    empty = np.zeros(0, dtype=np.int64)
    end = settle(COUNTS, [(0, -1, "last")], empty, 0, False, record, whole_chunks=2)
    assert end == LevelEnd(0, 2 + 0, 0, True, None)  # stops at parent 0: chunk 0 is parents 0 and 1
    end = settle(COUNTS, [(1, -1, "last")], empty, 0, False, recorder("last")[1], whole_chunks=2)
    assert end == LevelEnd(0, 2 + 0 + 3 + 1, 2, True, None)  # after parent 2: its chunk, parents 2 and 3


def test_the_small_rules() -> None:
    assert rules.first_busy(COUNTS, 1) == 2 and rules.first_busy(COUNTS, 4) is None
    assert rules.room(None, 10, 5) == 5 and rules.room(12, 10, 5) == 2 and rules.room(8, 10, 5) == 0
    assert rules.depth_bound_reached(3, 3) and not rules.depth_bound_reached(3, 2)
    assert not rules.depth_bound_reached(None, 99)
    assert rules.next_depth(4, 7, False) == 5 and rules.next_depth(4, 0, False) == 4
    assert rules.next_depth(4, 7, True) == 4
    assert rules.counted(3, None) and rules.counted(3, 3) and not rules.counted(4, 3)


# -- the cycle proviso's rule and the first level ------------------------------------------


def test_the_cycle_proviso_names_reduced_parents_whose_successors_were_met_before() -> None:
    """Successors by fingerprint and parent rank: parent 1 (reduced) meets parent 0's 5;
    parent 2 repeats its own 9 but is not reduced; parent 3 (reduced) repeats its own 4;
    parent 4 (reduced) reaches a state visited at an earlier level; parent 0, reduced,
    generated 5 first and 7 first, so the rule does not name it."""
    fps = np.asarray([5, 7, 5, 9, 9, 4, 4, 6], dtype=np.uint64)
    ranks = np.asarray([0, 0, 1, 2, 2, 3, 3, 4], dtype=np.int64)
    reduced = np.asarray([True, True, True, False, False, True, True, True])
    visited = np.asarray([False] * 7 + [True])
    assert rules.must_expand_fully(fps, ranks, reduced, visited).tolist() == [1, 3, 4]
    assert rules.must_expand_fully(fps, ranks, reduced).tolist() == [1, 3]
    later_first = np.asarray([3, 0], dtype=np.int64)  # rank order, not position order, says which is first
    assert rules.must_expand_fully(np.asarray([8, 8], dtype=np.uint64), later_first, np.asarray([True, False])).tolist() == [3]
    assert rules.must_expand_fully(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64),
                                   np.zeros(0, dtype=bool)).tolist() == []


class _Inits:
    """A stand-in spec: only its name and initial states are read."""

    name = "inits"

    def __init__(self, states: list) -> None:
        self.states = states

    def init_states(self) -> list:
        return self.states


def test_the_first_level_is_the_first_of_equal_initial_states() -> None:
    from ordercheck.checker.api.errors import SpecError
    from ordercheck.checker.engine.fingerprint import fingerprint

    def fps(states: list) -> np.ndarray:
        return np.fromiter((fingerprint(s) for s in states), dtype=np.uint64, count=len(states))

    level, positions, got = rules.initial_level(_Inits([(1,), (2,), (1,), (3,)]), fps)  # type: ignore[arg-type]
    assert level == [(1,), (2,), (3,)] and positions.tolist() == [0, 1, 3]
    assert got.tolist() == [fingerprint(s) for s in level]
    with pytest.raises(SpecError, match=r"inits: initial state\[1\] is a str"):
        rules.initial_level(_Inits([(1,), (1, "x")]), fps)  # type: ignore[arg-type]

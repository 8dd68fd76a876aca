"""The ledger (ordercheck.checker.engine.ledger): one model's level bookkeeping, held by the local
level loop and by each model of a Spark search.

The unit tests pin each rule the ledger applies; ``test_every_local_engine_stops_*``
pins what one process and two shard workers reach through it on fifo-4 variants that
stop early in different ways, and ``tests/test_spark.py`` pins the same figures for
Spark (``FIGURES``): an agreement test alone would miss a rule broken for every engine
at once."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest

from ordercheck.checker.api.result import LevelTiming
from ordercheck.checker.engine.ledger import Ledger, decided_at
from ordercheck.checker.engine.outcome import NO_BOUNDS, Bounds, Decision, SearchOutcome
from ordercheck.checker.engine.rules import KEY_BITS
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import model_from_dict

PLAIN = Options(progress=False, symmetry=False, por=False)


def fifo4(name: str = "fifo-4-variant", **check: object):
    """A fifo model of 4 peers, 240 states, ``check`` its model file's ``[check]``."""
    raw = {"spec": "fifo", "constants": {"peers": 4, "script": {"a": ["bcd"], "b": ["cd"]}}, "check": check}
    return model_from_dict(raw, name)


EARLY = {
    # stopped by max_states inside a level, at its first state, at the end of one
    "max-states-1": dict(properties=["fifo", "causal", "total"], max_states=1),
    "max-states-57": dict(properties=["fifo", "causal", "total"], max_states=57),
    "max-states-120": dict(properties=["fifo", "causal", "total"], max_states=120),
    "max-depth-6": dict(properties=["fifo", "causal", "total"], max_depth=6),
    # only violated properties: the search stops inside a level, after the parent whose
    # successor decided the last one
    "all-decided": dict(properties=["causal", "total"]),
    "full": dict(properties=["fifo", "causal", "total"]),
}

CAUSAL = [None, "a starts sending a1 to b,c,d", "append a1 to b's queue", "b receives a1", "b starts sending b1 to c,d",
          "append b1 to c's queue", "c receives b1"]
"""The first causal violation met in breadth-first order: its trace's actions."""

FIGURES = {
    # distinct states, transitions, depth, bound, each property's verdict (and the causal trace)
    "max-states-1": (1, 1, 1, "max_states", {"fifo": "unknown", "causal": "unknown", "total": "unknown"}),
    "max-states-57": (57, 93, 7, "max_states", {"fifo": "unknown", "causal": "violated", "total": "unknown"}),
    "max-states-120": (120, 208, 9, "max_states", {"fifo": "unknown", "causal": "violated", "total": "unknown"}),
    "max-depth-6": (58, 152, 7, "max_depth", {"fifo": "unknown", "causal": "violated", "total": "unknown"}),
    "all-decided": (222, 443, 12, None, {"causal": "violated", "total": "violated"}),
    "full": (240, 493, 13, None, {"fifo": "holds", "causal": "violated", "total": "violated"}),
}
"""What every engine reaches on the ``EARLY`` variants (worked out by one process
before the ledger held the rules; the state bound's counts by hand: the 57th state is
the last kept)."""


def assert_figures(name: str, result) -> None:
    s = result.stats
    distinct, transitions, depth, bound, verdicts = FIGURES[name]
    assert (s.distinct_states, s.transitions, s.depth, s.bound) == (distinct, transitions, depth, bound), name
    assert {k: p.status for k, p in result.properties.items()} == verdicts, name
    causal = result.properties["causal"]
    if causal.status == "violated":
        assert [step.action for step in causal.trace] == CAUSAL, name


@pytest.mark.parametrize("workers", [1, 2])
def test_every_local_engine_stops_where_the_ledger_says(workers: int) -> None:
    for name, check in EARLY.items():
        if workers > 1 and name not in ("max-states-57", "max-depth-6", "all-decided"):
            continue  # the settle path of the sharded backend, in three of its ends
        assert_figures(name, check_model(fifo4(name, **check), replace(PLAIN, workers=workers)))


# -- the rules, one by one ------------------------------------------------------------------


def ledger(bounds: Bounds = NO_BOUNDS, stop_when_decided: bool = True, told: list | None = None) -> Ledger:
    return Ledger(["p", "q"], bounds, stop_when_decided=stop_when_decided, track_cycles=True,
                  on_decide=None if told is None else told.append)


def test_the_first_finding_of_a_property_is_its_decision() -> None:
    told: list[str] = []
    book = ledger(told=told)
    assert not book.record(decided_at(5, [("q", "first")]))
    assert book.record(decided_at(3, [("q", "later"), ("p", "then p")]))  # every property decided
    assert book.decisions == {"q": Decision(5, "first"), "p": Decision(3, "then p")}
    assert told == ["q", "p"] and book.open == []
    assert not ledger(stop_when_decided=False).record(decided_at(1, [("p", "x"), ("q", "y")]))


def test_the_state_bound_cuts_a_level_but_not_at_the_depth_bound() -> None:
    counts = np.asarray([2, 1], dtype=np.int64)
    keys = np.asarray([0 << KEY_BITS | 0, 0 << KEY_BITS | 1, 1 << KEY_BITS | 0], dtype=np.int64)
    book = ledger(Bounds(max_states=11))
    end = book.settle(counts, [], keys, stored=10)  # room for one: cut at the second, parent 0's position 1
    assert (end.kept, end.transitions, book.stop, book.bound, book.transitions) == (1, 2, True, "max_states", 2)
    deep = ledger(Bounds(max_states=11, max_depth=0))
    assert deep.begin_level()
    end = deep.settle(counts, [], keys, stored=10)  # every unvisited successor is counted, none kept
    assert (end.kept, deep.stop, deep.bound, deep.transitions) == (3, False, None, 3)
    assert deep.end_level(end.kept) == 0 and deep.depth == 0
    deep.beyond_depth_bound()
    assert deep.bound == "max_depth"


def test_a_level_decides_in_its_order_and_stops_after_the_deciding_parent() -> None:
    counts = np.asarray([1, 1, 1], dtype=np.int64)
    keys = np.asarray([r << KEY_BITS for r in range(3)], dtype=np.int64)
    book = ledger()
    book.record(decided_at(0, [("p", "initial")]))
    events = [(0, 0, [("q", "at 0")]), (1, 0, [("q", "at 1")])]
    end = book.settle(counts, events, keys, stored=1)
    assert (end.kept, end.transitions, book.stop, book.bound) == (1, 1, True, None)
    assert book.decisions["q"] == "at 0"


def test_the_depth_grows_by_a_level_with_states_and_the_time_limit_is_tested_between_levels() -> None:
    book = ledger(Bounds(time_limit=0.0))
    book.start(time.monotonic() - 1.0)
    assert not book.stop and not book.begin_level()
    assert book.end_level(4) == 4 and book.depth == 1 and book.bound == "time_limit" and book.stop
    last = ledger(Bounds(time_limit=0.0))
    last.start(time.monotonic() - 1.0)
    assert last.end_level(0) == 0 and last.depth == 0 and not last.stop  # no next level: no stop
    inside = ledger(Bounds(time_limit=0.0))
    inside.start(time.monotonic() - 1.0)
    inside.stop_at("max_states")
    assert inside.end_level(3) == 3 and inside.depth == 1 and inside.bound == "max_states"
    decided = ledger()
    decided.record(decided_at(0, [("p", "x"), ("q", "y")]))
    decided.start(time.monotonic())
    assert decided.stop and decided.bound is None  # every property decided on the initial states


def test_an_edge_that_can_close_a_cycle_is_noticed_once_and_only_when_read() -> None:
    book = ledger()
    assert book.wants_back_edges
    book.back_edge()
    assert book.maybe_cyclic and not book.wants_back_edges
    blind = Ledger(["p"], Bounds(), stop_when_decided=True, track_cycles=False)
    blind.back_edge()
    assert not blind.maybe_cyclic and not blind.wants_back_edges


def test_the_outcome_is_complete_only_without_a_bound_or_a_stop_with_states_left() -> None:
    book = ledger()
    book.record(decided_at(2, [("p", "x")]))
    book.depth, book.transitions, book.initial_states = 3, 9, 1
    book.timed(LevelTiming(0, 1, 2))
    out = book.fill(SearchOutcome(store=None), stored=7, remaining=True, decisions=dict(book.decisions))
    assert (out.depth, out.transitions, out.initial_states, out.bound, out.complete) == (4, 9, 1, None, True)
    assert out.decisions == {"p": Decision(2, "x")} and out.levels == [LevelTiming(0, 1, 2)]
    book.stop = True
    assert not book.fill(SearchOutcome(store=None), 7, True, {}).complete
    assert book.fill(SearchOutcome(store=None), 7, False, {}).complete
    assert book.fill(SearchOutcome(store=None), 0, False, {}).depth == 0
    book.stop_at("memory")
    assert not book.fill(SearchOutcome(store=None), 7, False, {}).complete

"""The local engine on specs whose state spaces are known by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ordercheck.checker.api.trace import replay
from ordercheck.checker.engine.bfs import Bounds, SpecError, search
from tests.toyspecs import Chatty, Counter, Grid, Stuck


def run(spec, **kw):
    return search(spec, spec.properties(), **kw)


def test_counter_counts_and_depth():
    out = run(Counter(limit=3), stop_when_decided=False)
    assert out.distinct_states == 4
    assert out.transitions == 3
    assert out.depth == 4  # TLC's depth: states on the longest shortest path
    assert out.complete and out.bound is None


@given(st.integers(min_value=0, max_value=12))
@settings(max_examples=20, deadline=None)
def test_grid_counts_match_formula(n):
    out = run(Grid(n=n), stop_when_decided=False)
    assert out.distinct_states == (n + 1) ** 2
    assert out.transitions == 2 * n * (n + 1)
    assert out.depth == 2 * n + 1


def test_violation_is_shortest_and_replays():
    spec = Grid(n=3)
    out = run(spec, stop_when_decided=False)
    d = out.decisions["diagonal_ok"]
    init, path = out.store.path(d.index)
    assert len(path) == 2  # (0,0) -> (1,0) -> (1,1): two steps, the minimum
    steps = replay(spec, init, path)
    assert steps[-1][2] == (1, 1)
    far = out.decisions["not_corner"]
    assert len(out.store.path(far.index)[1]) == 6


def test_sometimes_witness_and_eventually_at_terminal():
    spec = Counter(limit=3)
    out = run(spec, stop_when_decided=False)
    assert "reaches_two" in out.decisions  # witness found
    assert "ends_at_limit" not in out.decisions  # the only terminal state is 3
    short = Counter(limit=1)
    out = run(short, stop_when_decided=False)
    assert "reaches_two" not in out.decisions


def test_deadlock_found_at_terminal_state():
    out = run(Stuck(), stop_when_decided=False)
    d = out.decisions["no_deadlock"]
    assert d.explanation == "stuck in state 3"
    assert out.store.path(d.index) == (0, [1])  # the second action of the initial state


def test_max_states_bound_is_reported():
    out = run(Grid(n=5), bounds=Bounds(max_states=10), stop_when_decided=False)
    assert out.bound == "max_states"
    assert out.distinct_states == 10
    assert not out.complete


def test_max_depth_bound_only_when_it_cuts():
    # Counter(limit=3) has its last state 3 steps deep.
    cut = run(Counter(limit=3), bounds=Bounds(max_depth=2), stop_when_decided=False)
    assert cut.bound == "max_depth" and cut.distinct_states == 3
    exact = run(Counter(limit=3), bounds=Bounds(max_depth=3), stop_when_decided=False)
    assert exact.bound is None and exact.distinct_states == 4


def test_time_limit_bound():
    out = run(Grid(n=400), bounds=Bounds(time_limit=0.05), stop_when_decided=False)
    assert out.bound == "time_limit"


def test_deterministic_runs():
    a = run(Grid(n=6), stop_when_decided=False)
    b = run(Grid(n=6), stop_when_decided=False)
    assert list(a.store.parents) == list(b.store.parents)
    assert list(a.store.actions) == list(b.store.actions)
    assert {k: v.index for k, v in a.decisions.items()} == {k: v.index for k, v in b.decisions.items()}


def test_stops_once_every_property_is_decided():
    spec = Grid(n=50)
    out = search(spec, [p for p in spec.properties() if p.name == "diagonal_ok"])
    assert out.decisions and out.distinct_states < 51 * 51


def test_state_vocabulary_is_enforced():
    with pytest.raises(SpecError, match="str"):
        run(Chatty())

"""bus1's wiki algorithm: the built-in models, the mutants and their counterexamples."""

from __future__ import annotations

import pytest

from ordercheck.checker.engine.bfs import Bounds, search
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from tests.conftest import MODELS

QUIET = Options(progress=False)


@pytest.mark.parametrize("name", ["bus1-2", "bus1-4-signal", "fifo-3", "fifo-4"])
def test_small_models_meet_expectations(name):
    result = check_model(load_model(MODELS / f"{name}.toml"), QUIET)
    assert result.exit_code() == 0, {n: p.status for n, p in result.properties.items()}


def test_three_peer_model_is_exhaustive():
    # Unreduced: the pinned count is the model's full state space.
    result = check_model(load_model(MODELS / "bus1-3.toml"), Options(progress=False, symmetry=False, por=False))
    assert result.exit_code() == 0
    assert result.stats.bound is None
    assert result.stats.distinct_states == 233_478  # pinned: a change here is a change of model


MUTANTS = {
    "bus1-mutant-no-block": ("causal", ["a1", "c1", "b delivered a1"]),
    "bus1-mutant-no-sync-sender": ("global_lock", ["a1", "b1", "c1", "a consumed b1 last"]),
    "bus1-mutant-sync-while-queueing": ("causal", ["a2", "c1", "d delivered c1", "b signalled c"]),
    "bus1-mutant-tiebreak-by-arrival": ("total", ["a1", "b1", "d delivered b1 before a1", "c delivered a1 before b1"]),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_caught_with_shortest_counterexample(name):
    prop_name, words = MUTANTS[name]
    model = load_model(MODELS / f"{name}.toml")
    result = check_model(model, QUIET)
    assert result.exit_code() == 0
    verdict = result.properties[prop_name]
    assert verdict.status == "violated"
    for word in words:
        assert word in verdict.explanation
    steps = len(verdict.trace) - 1
    # BFS proof of shortness: no violation exists within one step less.
    prop = model.spec.property_map()[prop_name]
    shorter = search(model.spec, [prop], Bounds(max_depth=steps - 1))
    assert prop_name not in shorter.decisions
    exact = search(model.spec, [prop], Bounds(max_depth=steps))
    assert prop_name in exact.decisions


def test_full_algorithm_passes_the_mutants_scenarios():
    # The scenarios that break the mutants are harmless to the whole algorithm.
    for name in MUTANTS:
        model = load_model(MODELS / f"{name}.toml")
        spec = type(model.spec)(**{**model.constants, **{a: True for a in model.spec.ablations()}})
        props = [p for p in spec.properties() if p.name in ("fifo", "causal", "total", "global_lock")]
        out = search(spec, props)
        assert out.decisions == {}, name


def test_trace_describes_states_readably():
    result = check_model(load_model(MODELS / "bus1-mutant-no-block.toml"), QUIET)
    trace = result.properties["causal"].trace
    assert trace[1].action == "c starts sending c1 to a,b"
    last = trace[-1].state["peers"]["b"]
    assert last["delivered"] == ["a1"]  # b got a1 while c1, which happened before it, was still on its way

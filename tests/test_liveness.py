"""Liveness on the state graph: fair cycles, lassos, and the SCC algorithm."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ordercheck.checker.api.trace import replay
from ordercheck.checker.engine.bfs import search
from ordercheck.checker.engine.fingerprint import fingerprint
from ordercheck.checker.engine.liveness import Graph, components, find_lassos
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model, model_from_dict
from tests.conftest import MODELS
from tests.toyspecs import Spinner

QUIET = Options(progress=False)


def test_livelock_is_a_lasso_that_terminal_checks_cannot_see():
    model = load_model(MODELS / "retransmit-weak.toml")
    # The breadth-first search alone finds no terminal state with a1 undelivered ...
    plain = search(model.spec, model.properties)
    assert "eventual_delivery" not in plain.decisions and plain.maybe_cyclic
    # ... the cycle check does.
    result = check_model(model, QUIET)
    verdict = result.properties["eventual_delivery"]
    assert verdict.status == "violated" and result.exit_code() == 0
    # What is outstanding on the loop, then the loop; the run does not end there, so the
    # sentence does not say it does (a stopped run's sentence does: see the next test).
    assert verdict.explanation.startswith(
        "a1 to b is never delivered: a sent a1 to b, and b has neither delivered nor dropped it: "
        "the run can repeat a 2-step loop")
    assert "ends" not in verdict.explanation
    assert ": the run can repeat a 2-step loop (a transmits a1; the channel from a loses a1) for ever" in (
        verdict.explanation
    )
    assert verdict.loop_start is not None
    # The loop really returns to where it started.
    positions = [step.index for step in verdict.trace]
    path = replay(model.spec, positions[0], positions[1:])
    assert fingerprint(path[-1][2]) == fingerprint(path[verdict.loop_start][2])
    assert len(path) - 1 > verdict.loop_start


def test_a_run_that_stops_with_messages_outstanding_says_it_ends():
    result = check_model(load_model(MODELS / "skeen-2-lossy.toml"), QUIET)
    verdict = result.properties["eventual_delivery"]
    assert verdict.status == "violated" and verdict.loop_start is None
    assert verdict.explanation == ("a1 to b and b1 to a are never delivered: a sent a1 to b, "
                                   "and the run ends with none of them delivered or dropped")


def test_strong_fairness_rules_the_livelock_out():
    result = check_model(load_model(MODELS / "retransmit-strong.toml"), QUIET)
    assert result.properties["eventual_delivery"].status == "holds"


@pytest.mark.parametrize(
    "fair,flaky,status",
    [
        ("none", False, "violated"),  # nothing forces finish: spin for ever
        ("weak", False, "holds"),  # finish continuously enabled, so it must happen
        ("weak", True, "violated"),  # finish only now and then: weak fairness lets it wait
        ("strong", True, "holds"),  # enabled infinitely often: strong fairness forces it
    ],
)
def test_weak_and_strong_fairness(fair, flaky, status):
    spec = Spinner(fair_finish=fair, flaky=flaky)
    found, graph = find_lassos(spec, spec.properties())
    assert ("done" in found) == (status == "violated")
    assert len(graph) == 3


def test_symmetry_with_liveness_is_warned_about():
    model = model_from_dict(
        {"spec": "retransmit", "constants": {"receive_fairness": "weak"}, "check": {"symmetry": True}}, "m.toml"
    )
    result = check_model(model, QUIET)
    assert any("unsound" in w for w in result.warnings)


def test_acyclic_models_skip_the_graph_pass():
    out = search(*(lambda m: (m.spec, m.properties))(load_model(MODELS / "bus1-2.toml")))
    assert not out.maybe_cyclic


@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30))))
@settings(max_examples=150, deadline=None)
def test_components_match_networkx(case):
    n, edges = case
    g = Graph()
    by_src: dict[int, list[int]] = {u: [] for u in range(n)}
    for u, v in edges:
        by_src[u].append(v)
    for u in range(n):
        g.parents.append(-1)
        g.dst.extend(by_src[u])
        g.offsets.append(len(g.dst))
    ours = {frozenset(c) for c in components(g, range(n))}
    ref_graph = nx.DiGraph()
    ref_graph.add_nodes_from(range(n))
    ref_graph.add_edges_from(edges)
    assert ours == {frozenset(c) for c in nx.strongly_connected_components(ref_graph)}

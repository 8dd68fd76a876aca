"""Random simulation: the default budget finds every bus1 mutant at 4 peers x 3 sends
(far beyond exhaustive search), shrinks the walk to within a few steps of the shortest
counterexample of the small model, and is reproducible from its seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ordercheck.checker.api.trace import replay
from ordercheck.checker.engine.bfs import search
from ordercheck.checker.loading.modelfile import load_model, model_from_dict
from ordercheck.checker.simulate.run import simulate
from ordercheck.checker.simulate.shrink import shrink, substitute
from ordercheck.checker.simulate.walk import Found, News, Simulator

ROOT = Path(__file__).resolve().parent.parent
SIM = ROOT / "models" / "simulate"
SLACK = 3  # the shrunk trace may be this many steps longer than the small model's shortest

MUTANTS = ["no-block", "no-sync-sender", "sync-while-queueing", "tiebreak-by-arrival"]


def small_shortest(name: str, prop: str) -> int:
    """Steps of the shortest counterexample to ``prop`` in ``models/bus1-mutant-NAME``."""
    small = load_model(ROOT / "models" / f"bus1-mutant-{name}.toml")
    out = search(small.spec, [p for p in small.properties if p.name == prop])
    return len(out.store.path(out.decisions[prop].index)[1])


def check_real_run(model, verdict) -> None:
    """The reported trace is a run of the model: replaying its positions gives its actions."""
    positions = [s.index for s in verdict.trace]
    path = replay(model.spec, positions[0], positions[1:])
    assert [s.action for s in verdict.trace[1:]] == [model.spec.format_action(lab) for lab, _p, _s in path[1:]]


@pytest.mark.slow
@pytest.mark.parametrize("name", MUTANTS)
def test_default_budget_catches_mutant_at_4x3_and_shrinks(name):
    model = load_model(SIM / f"bus1-4x3-mutant-{name}.toml")
    assert model.constants["peers"] == 4 and model.constants["sends"] == 3
    prop = model.properties[0].name
    result = simulate(model)  # default runs, depth and seed
    verdict = result.properties[prop]
    assert verdict.status == "violated", verdict.explanation
    assert len(verdict.trace) - 1 <= small_shortest(name, prop) + SLACK
    check_real_run(model, verdict)


@pytest.mark.slow
def test_another_seed_catches_the_side_channel_race():
    # The hardest mutant: a multicast half queued, its first destination signals a third
    # peer, which sends to a destination the multicast has not reached yet.
    # (Seed 4: any seed but the default one serves; this one meets the race within some
    # 12,000 transitions where seed 1 needed 680,000, at no loss to what is checked.)
    model = load_model(SIM / "bus1-4x3-mutant-sync-while-queueing.toml")
    verdict = simulate(model, seed=4).properties["causal"]
    assert verdict.status == "violated", verdict.explanation
    assert len(verdict.trace) - 1 <= small_shortest("sync-while-queueing", "causal") + SLACK


def test_correct_algorithm_shows_no_violation():
    model = load_model(SIM / "bus1-4x3.toml")
    result = simulate(model, runs=40, seed=3)
    assert {p.status for p in result.properties.values()} == {"unknown"}
    assert result.stats.transitions > 4000


def test_same_seed_same_result():
    model = load_model(SIM / "bus1-4x3-mutant-tiebreak-by-arrival.toml")
    a = simulate(model, runs=60, seed=7)
    b = simulate(model, runs=60, seed=7)
    assert json.dumps(a.properties["total"].to_json()) == json.dumps(b.properties["total"].to_json())


# -- the pieces -----------------------------------------------------------------------

A, B, C, D = range(4)


def bus1(**constants):
    return model_from_dict(
        {"spec": "bus1", "constants": {"peers": 4, "sends": 3, "signals": 2, "destinations": "subsets", **constants},
         "check": {"properties": ["causal"]}},
        "bus1-test",
    )


def walk_to(spec, labels):
    state = spec.init_states()[0]
    for label in labels:
        state = next(s for lab, s in spec.next_states(state) if lab == label)
    return state


def test_news_follows_deliveries_and_signals():
    model = bus1(sync_receivers_before_queueing=False)
    spec = model.spec
    sim = Simulator(spec, model.properties, 50)
    a1 = 0  # a's first message
    run = [("send", A, a1, 1 << B | 1 << D), ("block", A, B, a1), ("block", A, D, a1), ("tick", A, a1),
           ("sync_queue", A, B, a1)]
    news = News(spec, sim.history, walk_to(spec, run))
    assert news.focus is None and not news.fresh()
    state = walk_to(spec, [*run, ("deliver", B, a1)])
    assert news.update(state)
    assert news.focus == B and news.news[B] == a1
    assert news.fresh()  # d has not got a1 yet
    # b's reactions: signalling c tells a peer without a1; delivering tells no one.
    knowers = news.knowers(a1)
    assert knowers == {A, B}
    options = {lab: s for lab, s in spec.next_states(state) if lab[1] == B}
    assert news.spreads(options[("signal", B, C)], knowers)
    assert not any(news.spreads(s, knowers) for lab, s in options.items() if lab[0] == "send" and lab[3] & 1 << A)
    signalled = options[("signal", B, C)]
    assert news.update(signalled)
    assert news.focus == C and news.news[C] == a1


def test_substitute_trades_a_multicast_for_a_smaller_one():
    model = bus1(block_destinations=False)
    sim = Simulator(model.spec, model.properties, 60)
    a1, b1 = 0, 3
    bcd, acd = 1 << B | 1 << C | 1 << D, 1 << A | 1 << C | 1 << D
    labels = [("send", A, a1, bcd), *[("block", A, d, a1) for d in (B, C, D)], ("tick", A, a1),
              *[("sync", A, d, a1) for d in (B, C, D)], ("queue", A, B, a1), ("deliver", B, a1),
              ("send", B, b1, acd), *[("block", B, d, b1) for d in (A, C, D)], ("tick", B, b1),
              *[("sync", B, d, b1) for d in (A, C, D)], ("queue", B, A, b1), ("queue", B, C, b1),
              ("deliver", C, b1)]  # c delivers b1 while a1, which happened before it, is not there yet
    found = sim.replay_labels(0, labels, "causal")
    assert found is not None and len(found.labels) == len(labels) == 21
    smaller = substitute(sim, found)
    assert len(smaller.labels) < 21
    best = shrink(sim, found)
    assert len(best.labels) <= small_shortest("no-block", "causal")
    again = sim.replay_labels(0, best.labels, "causal")
    assert again is not None and again.labels == best.labels


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_walk_is_a_function_of_its_draw(data):
    model = model_from_dict(
        {"spec": "bus1", "constants": {"peers": 4, "script": {"a": ["cd"], "b": ["cd"]}, "tiebreak_by_sender": False},
         "check": {"properties": ["total"]}},
        "tie",
    )
    sim = Simulator(model.spec, model.properties, 40)
    walk = data.draw(sim.strategy())
    first, second = sim.run(walk, {"total"}), sim.run(walk, {"total"})
    assert (first is None) == (second is None)
    if isinstance(first, Found):
        assert first.labels == second.labels
        # A violating walk is a real run, and replaying it breaks the property again.
        assert sim.replay_labels(first.init, first.labels, "total").labels == first.labels


def test_simulate_command(run_cli, tmp_path):
    path = tmp_path / "m.toml"
    path.write_text(
        'spec = "bus1"\n[constants]\npeers = 4\nscript = { a = ["cd"], b = ["cd"] }\ntiebreak_by_sender = false\n'
        '[expect]\ntotal = "violated"\nfifo = "holds"\n'
    )
    out = tmp_path / "r.json"
    res = run_cli("simulate", path, "--runs", "200", "--seed", "1", "--json", out)
    assert res.exit_code == 0, res.output
    assert "in different orders" in res.output and ("c delivered" in res.output or "d delivered" in res.output)
    data = json.loads(out.read_text())
    assert data["engine"] == "simulate"
    assert data["properties"]["total"]["status"] == "violated"
    assert data["properties"]["fifo"]["status"] == "unknown"


def test_simulate_command_on_a_4x3_mutant(run_cli):
    res = run_cli("simulate", SIM / "bus1-4x3-mutant-no-block.toml")
    assert res.exit_code == 0, res.output
    assert "violated" in res.output


def test_simulate_json_names_every_reduction_check_names(run_cli, tmp_path):
    # The same model through both commands: check applies symmetry here; simulate's
    # record has the same keys, each false (random walks take the unreduced model's steps).
    model = ROOT / "models" / "bss-2.toml"
    checked, simulated = tmp_path / "check.json", tmp_path / "simulate.json"
    assert run_cli("check", model, "--quiet", "--json", checked).exit_code == 0
    assert run_cli("simulate", model, "--runs", "5", "--json", simulated).exit_code == 0
    by_check = json.loads(checked.read_text())["reductions"]
    by_simulate = json.loads(simulated.read_text())["reductions"]
    assert set(by_simulate) == set(by_check) == {"symmetry", "por", "deferred_arrivals", "solo_steps", "cycle_proviso"}
    assert by_check["symmetry"] and not any(by_simulate.values()), (by_check, by_simulate)

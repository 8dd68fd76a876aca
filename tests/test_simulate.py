"""Random simulation: finds the bus1 mutants at sizes search cannot finish, shrinks the
walks, and is reproducible from its seed."""

from __future__ import annotations

import json

import pytest

from checker.model import model_from_dict
from checker.simulate import simulate
from checker.trace import replay

# Four peers, three sends each, any subset of the others as destinations: far beyond
# what the breadth-first search can exhaust.
BIG = {"peers": 4, "sends": 3, "signals": 2, "destinations": "subsets"}

# (ablation, property it breaks, shortest counterexample known from the small models)
MUTANTS = [
    ("sync_sender", "global_lock", 27),
    ("tiebreak_by_sender", "total", 20),
]


def big_model(flag: str, prop: str):
    return model_from_dict(
        {"spec": "bus1", "constants": {**BIG, flag: False}, "check": {"properties": [prop]}}, f"bus1-{flag}-4x3"
    )


@pytest.mark.parametrize("flag,prop,shortest", MUTANTS)
def test_simulation_catches_mutant_and_shrinks(flag, prop, shortest):
    model = big_model(flag, prop)
    result = simulate(model, seed=0)
    verdict = result.properties[prop]
    assert verdict.status == "violated", verdict.explanation
    steps = len(verdict.trace) - 1
    assert steps <= shortest + 6
    # The shrunk walk is a real run of the model.
    positions = [s.index for s in verdict.trace]
    path = replay(model.spec, positions[0], positions[1:])
    assert [s.action for s in verdict.trace[1:]] == [model.spec.format_action(lab) for lab, _p, _s in path[1:]]


def test_same_seed_same_result():
    a = simulate(big_model("tiebreak_by_sender", "total"), runs=60, seed=7)
    b = simulate(big_model("tiebreak_by_sender", "total"), runs=60, seed=7)
    assert json.dumps(a.properties["total"].to_json()) == json.dumps(b.properties["total"].to_json())


def test_correct_algorithm_shows_no_violation():
    model = model_from_dict(
        {"spec": "bus1", "constants": BIG, "check": {"properties": ["causal", "total", "global_lock"]}}, "bus1-4x3"
    )
    result = simulate(model, runs=25, seed=3)
    assert {p.status for p in result.properties.values()} == {"unknown"}
    assert result.stats.transitions > 1000


def test_simulate_command(run_cli, tmp_path):
    path = tmp_path / "m.toml"
    path.write_text(
        'spec = "bus1"\n[constants]\npeers = 4\nscript = { a = ["cd"], b = ["cd"] }\ntiebreak_by_sender = false\n'
        '[expect]\ntotal = "violated"\nfifo = "holds"\n'
    )
    out = tmp_path / "r.json"
    res = run_cli("simulate", path, "--runs", "200", "--seed", "1", "--json", out)
    assert res.exit_code == 0, res.output
    assert "c got" in res.output or "d got" in res.output
    data = json.loads(out.read_text())
    assert data["engine"] == "simulate"
    assert data["properties"]["total"]["status"] == "violated"
    assert data["properties"]["fifo"]["status"] == "unknown"

"""Z3 queries on bus1: the strengthened invariant, counterexamples to induction, BMC."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from checker.api.errors import InputError
from checker.cli import main
from checker.engine.run import Options, check_model
from checker.loading.modelfile import model_from_dict
from checker.loading.registry import spec_class
from checker.symbolic.prove import ProveOptions, bmc_queries, invariant_queries, prove_model
from specs.bus1_symbolic import SymbolicBus1


def unbounded(queue_bound: int = 2, **constants) -> SymbolicBus1:
    return SymbolicBus1(spec_class("bus1")(peers=3, **constants), queue_bound=queue_bound, bounded=False)


def by_name(queries):
    return {q.name: q for q in queries}


@pytest.mark.slow
def test_bus1_invariant_is_inductive_and_implies_the_targets() -> None:
    sym = unbounded()
    queries = by_name(invariant_queries(sym, list(sym.lemmas), list(sym.targets), None, {}))
    assert queries["initiation"].status == "proved"
    for name in sym.lemmas:
        assert queries[f"inductive: {name}"].status == "proved", queries[f"inductive: {name}"].explanation
    for name in sym.targets:
        assert queries[f"implies: {name}"].status == "proved"


def test_dropping_a_lemma_gives_a_readable_counterexample_to_induction() -> None:
    sym = unbounded()
    lemmas = [n for n in sym.lemmas if n != "message_after_block"]
    q = by_name(invariant_queries(sym, lemmas, [], None, {}, only=["dequeue_order"]))["inductive: dequeue_order"]
    assert q.status == "refuted"
    before, after = q.trace
    assert before.action is None and after.action.startswith("queue ")
    assert after.label[0] == "queue"
    assert q.explanation.startswith("counterexample to induction")
    assert "orders after" in q.explanation and "last dequeued key" in q.explanation
    # Both states are drawn per peer, with queues and transactions.
    assert set(before.state["peers"]) == {"a", "b", "c"}
    assert any(p["transaction"] for p in before.state["peers"].values())


@pytest.mark.parametrize(
    ("ablation", "lemma", "action"),
    [
        ("block_destinations", "blocks_pending", "block"),
        ("sync_sender", "message_after_block", "tick"),
        ("sync_receivers_before_queueing", "sync_before_queue", "tick"),
        ("tiebreak_by_sender", "distinct_keys", "queue"),
    ],
)
def test_each_ablation_breaks_its_lemma(ablation: str, lemma: str, action: str) -> None:
    sym = unbounded(**{ablation: False})
    q = by_name(invariant_queries(sym, list(sym.lemmas), [], None, {}, only=[lemma]))[f"inductive: {lemma}"]
    assert q.status == "refuted"
    assert q.trace[1].label[0] == action
    # The correct protocol keeps the same lemma.
    ok = unbounded()
    assert by_name(invariant_queries(ok, list(ok.lemmas), [], None, {}, only=[lemma]))[f"inductive: {lemma}"].status == "proved"


def model(constants: dict, properties: list[str], prove: dict | None = None):
    data = {"spec": "bus1", "constants": constants, "check": {"properties": properties}}
    if prove is not None:
        data["prove"] = prove
    return model_from_dict(data, "test.toml")


BMC_PROPS = ["fifo", "causal", "total", "message_after_block", "ready_is_final", "entries_behind_clock",
             "waits_behind_block", "equal_timestamps", "deadlock_free", "eventual_delivery"]


@pytest.mark.parametrize(
    ("constants", "depth"),
    [
        ({"peers": 2, "sends": 1}, 5),
        ({"peers": 2, "sends": 1, "sync_sender": False}, 6),
    ],
)
def test_bmc_agrees_with_the_explicit_engine(constants: dict, depth: int) -> None:
    m = model(constants, BMC_PROPS)
    explicit = check_model(m, Options(max_depth=depth, progress=False, stop_when_decided=False))
    sym = SymbolicBus1(m.spec, bounded=True)
    found = by_name(bmc_queries(sym, BMC_PROPS, depth, None))
    for name in BMC_PROPS:
        e, b = explicit.properties[name], found[f"bmc: {name}"]
        decided = (e.status == "holds") if e.kind == "sometimes" else (e.status == "violated")
        bmc_decided = (b.status == "proved") if e.kind == "sometimes" else (b.status == "refuted")
        assert decided == bmc_decided, (name, e.status, b.status)
        if decided:
            assert len(e.trace) == len(b.trace), name
    if constants.get("sync_sender") is False:
        assert found["bmc: message_after_block"].status == "refuted"


def test_prove_table_is_validated() -> None:
    with pytest.raises(InputError, match="prove.queue_bound"):
        model({"peers": 2}, ["fifo"], {"queue_bound": 0})
    with pytest.raises(InputError, match="prove.colour"):
        model({"peers": 2}, ["fifo"], {"colour": 1})
    with pytest.raises(InputError, match="prove.expect.x"):
        model({"peers": 2}, ["fifo"], {"expect": {"x": "maybe"}})
    bad = model({"peers": 2}, ["fifo"], {"drop": ["no_such_lemma"]})
    with pytest.raises(InputError, match="prove.drop"):
        prove_model(bad, ProveOptions())


def test_cli_prove_end_to_end(tmp_path) -> None:
    path = tmp_path / "bus1-2.toml"
    path.write_text(
        'spec = "bus1"\n[constants]\npeers = 2\nsends = 1\n[check]\nproperties = ["causal"]\n'
        "[prove]\nqueue_bound = 1\ndepth = 3\n"
    )
    out = tmp_path / "prove.json"
    res = CliRunner().invoke(main, ["prove", str(path), "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "invariant: inductive; Z3 time" in res.output
    data = json.loads(out.read_text())
    assert data["inductive"] is True and data["engine"] == "z3"
    assert data["queries"]["bmc: causal"]["status"] == "proved"
    assert all(q["seconds"] >= 0 for q in data["queries"].values())

    weak = CliRunner().invoke(main, ["prove", str(path), "--drop", "message_after_block", "--depth", "0"])
    assert weak.exit_code == 1
    assert "refuted" in weak.output and "counterexample to induction" in weak.output

    bad = tmp_path / "bad.toml"
    bad.write_text('spec = "bus1"\n[prove]\ndepth = "deep"\n')
    res = CliRunner().invoke(main, ["prove", str(bad)])
    assert res.exit_code == 2
    assert "prove.depth" in res.output and "Traceback" not in res.output

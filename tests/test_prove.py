"""Z3 queries on bus1: the strengthened invariant, counterexamples to induction, BMC."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.cli import main
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import model_from_dict
from ordercheck.checker.loading.registry import spec_class
from ordercheck.checker.symbolic.prove import ProveOptions, bmc_queries, invariant_queries, prove_model
from ordercheck.specs.bus1_symbolic import SymbolicBus1
from tests.symbolic_helpers import by_name


def unbounded(queue_bound: int = 2, **constants) -> SymbolicBus1:
    return SymbolicBus1(spec_class("bus1")(peers=3, **constants), queue_bound=queue_bound, bounded=False)


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
        bmc_decided = (b.status == "holds") if e.kind == "sometimes" else (b.status == "violated")
        assert b.status in ("holds", "violated", "bounded"), (name, b.status)
        assert decided == bmc_decided, (name, e.status, b.status)
        if decided:
            assert len(e.trace) == len(b.trace), name
    if constants.get("sync_sender") is False:
        assert found["bmc: message_after_block"].status == "violated"


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
        "[prove]\nqueue_bound = 2\ndepth = 3\n"
    )
    out = tmp_path / "prove.json"
    res = CliRunner().invoke(main, ["prove", str(path), "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "invariant: inductive; Z3 time" in res.output
    data = json.loads(out.read_text())
    assert data["inductive"] is True and data["engine"] == "z3"
    assert data["queries"]["bmc: causal"]["status"] == "bounded"
    assert data["queries"]["bmc: causal"]["explanation"] == "no counterexample within 3 steps"
    assert data["queries"]["proof: causal"]["status"] == "holds"
    assert all(q["outcome"] == "ok" for q in data["queries"].values())
    assert all(q["seconds"] >= 0 for q in data["queries"].values())

    weak = CliRunner().invoke(main, ["prove", str(path), "--drop", "message_after_block", "--depth", "0"])
    assert weak.exit_code == 1
    assert "refuted" in weak.output and "counterexample to induction" in weak.output
    assert "proof: causal" not in weak.output  # an invariant that is not inductive proves nothing

    bad = tmp_path / "bad.toml"
    bad.write_text('spec = "bus1"\n[prove]\ndepth = "deep"\n')
    res = CliRunner().invoke(main, ["prove", str(bad)])
    assert res.exit_code == 2
    assert "prove.depth" in res.output and "Traceback" not in res.output


# -- verdicts against the model's [expect] (issue 28) -------------------------------------


def expecting(constants: dict, expect: dict[str, str], prove: dict | None = None):
    data = {"spec": "bus1", "constants": constants, "check": {"properties": list(expect)}, "expect": expect}
    if prove is not None:
        data["prove"] = prove
    return model_from_dict(data, "test.toml")


def outcomes(result) -> dict[str, tuple[str, str]]:
    return {q.name: (q.status, q.outcome) for q in result.queries if q.kind in ("bmc", "proof")}


def test_bounded_search_against_an_expected_violation_is_unknown() -> None:
    """Correct bus1, 2 peers: no counterexample within 2 steps is no answer to an
    expected violation: unknown (exit 3), saying the depth is too small."""
    result = prove_model(expecting({"peers": 2, "sends": 1}, {"causal": "violated"}), ProveOptions(depth=2, bmc_only=True))
    assert outcomes(result) == {"bmc: causal": ("bounded", "unknown")}
    q = result.queries[0]
    assert q.shown_status == "no counterexample within 2 steps" and "depth is too small to decide" in q.note
    assert result.exit_code() == 3


def test_bounded_search_against_an_expected_holds_is_no_proof() -> None:
    result = prove_model(expecting({"peers": 2, "sends": 1}, {"causal": "holds"}), ProveOptions(depth=2, bmc_only=True))
    assert outcomes(result) == {"bmc: causal": ("bounded", "unknown")}
    assert "no proof" in result.queries[0].note
    assert result.exit_code() == 3


def test_a_counterexample_against_each_expectation() -> None:
    """Without sync_sender, message_after_block breaks in 6 steps: a mismatch against
    "holds" (exit 1), as expected against "violated" (exit 0)."""
    mutant = {"peers": 2, "sends": 1, "sync_sender": False}
    bad = prove_model(expecting(mutant, {"message_after_block": "holds"}), ProveOptions(depth=6, bmc_only=True))
    assert outcomes(bad) == {"bmc: message_after_block": ("violated", "mismatch")}
    assert bad.exit_code() == 1
    good = prove_model(expecting(mutant, {"message_after_block": "violated"}), ProveOptions(depth=6, bmc_only=True))
    assert outcomes(good) == {"bmc: message_after_block": ("violated", "ok")}
    assert good.exit_code() == 0


def test_a_proof_against_each_expectation() -> None:
    """The inductive invariant implies causal on every run of a 2-peer model whose queues
    fit the bound (2): that is a proof, so an expected violation is a mismatch (exit 1),
    an expected holds passes, and a bounded search beside the proof passes too. With
    queues of 1 entry the proof does not cover the model: no proof, and the bounded search
    alone is unknown."""
    one = {"peers": 2, "sends": 1}
    wrong = prove_model(expecting(one, {"causal": "violated"}, {"queue_bound": 2}), ProveOptions(depth=0))
    assert outcomes(wrong) == {"proof: causal": ("holds", "mismatch")}
    assert wrong.exit_code() == 1
    both = prove_model(expecting(one, {"causal": "holds"}, {"queue_bound": 2}), ProveOptions(depth=2))
    assert outcomes(both) == {"proof: causal": ("holds", "ok"), "bmc: causal": ("bounded", "ok")}
    assert both.exit_code() == 0
    short = prove_model(expecting(one, {"causal": "holds"}, {"queue_bound": 1}), ProveOptions(depth=2))
    assert outcomes(short) == {"bmc: causal": ("bounded", "unknown")}
    assert short.uncovered == ["causal"] and short.exit_code() == 3


@pytest.mark.parametrize(
    ("kind", "status", "expected", "proved", "outcome"),
    [
        # always/terminal property: a counterexample
        ("bmc", "violated", "holds", False, "mismatch"),
        ("bmc", "violated", "violated", False, "ok"),
        ("bmc", "violated", None, False, "mismatch"),
        # sometimes property: a witness
        ("bmc", "holds", "holds", False, "ok"),
        ("bmc", "holds", "violated", False, "mismatch"),
        ("bmc", "holds", None, False, "ok"),
        # a proof
        ("proof", "holds", "holds", True, "ok"),
        ("proof", "holds", "violated", True, "mismatch"),
        ("proof", "holds", None, True, "ok"),
        # bounded, with a proof beside it
        ("bmc", "bounded", "holds", True, "ok"),
        ("bmc", "bounded", "violated", True, "unknown"),
        ("bmc", "bounded", None, True, "ok"),
        # bounded, no proof
        ("bmc", "bounded", "holds", False, "unknown"),
        ("bmc", "bounded", "violated", False, "unknown"),
        ("bmc", "bounded", None, False, "unknown"),
        # Z3 gave up
        ("bmc", "unknown", "holds", False, "unknown"),
        ("bmc", "unknown", "violated", False, "unknown"),
    ],
)
def test_outcome_table(kind: str, status: str, expected: str | None, proved: bool, outcome: str) -> None:
    """Each cell of the table in checker/symbolic/prove.py's docstring (and proofs.md)."""
    from ordercheck.checker.symbolic.prove import ProveResult, Query, judge

    queries = [Query(f"{kind}: causal", kind, status, 0.0, expected, explanation="no counterexample within 3 steps")]
    if proved and kind != "proof":
        queries.append(Query("proof: causal", "proof", "holds", 0.0, expected))
    judge(queries)
    assert queries[0].outcome == outcome
    result = ProveResult("m.toml", "bus1", {}, 2, [], [], 3, queries=queries[:1])
    assert result.exit_code() == {"ok": 0, "mismatch": 1, "unknown": 3}[outcome]


def test_cli_prove_bmc_only_never_says_proved(tmp_path) -> None:
    """Issue 28: a bounded search on a model expecting a violation it does not reach
    prints what it did not find and exits 3, never "proved" and exit 0."""
    path = tmp_path / "mutant.toml"
    path.write_text('spec = "bus1"\n[constants]\npeers = 2\nsends = 1\nblock_destinations = false\n'
                    '[check]\nproperties = ["causal"]\n[expect]\ncausal = "violated"\n')
    res = CliRunner().invoke(main, ["prove", str(path), "--bmc-only", "--depth", "2"])
    assert res.exit_code == 3, res.output
    assert "bmc: causal  no counterexample within 2 steps" in res.output
    assert "expected violated  UNKNOWN" in res.output and "depth is too small to decide" in res.output
    assert "proved" not in res.output


@pytest.mark.parametrize("expected", ["violated", "holds"])
def test_an_expectation_no_query_decides_is_undecided(tmp_path, expected: str) -> None:
    """A property the model expects something of, which prove has no query for (no
    symbolic form of global_lock; any property at --depth 0 without a proof), is
    undecided: one line naming it and exit 3, never a silent 0 (the review found
    `prove --bmc-only --depth 0` on the no-block mutant exiting 0 with no verdict)."""
    path = tmp_path / "mutant.toml"
    path.write_text('spec = "bus1"\n[constants]\npeers = 2\nsends = 1\nblock_destinations = false\n'
                    f'[check]\nproperties = ["global_lock", "causal"]\n[expect]\nglobal_lock = "{expected}"\n')
    res = CliRunner().invoke(main, ["prove", str(path), "--bmc-only", "--depth", "1"])
    assert res.exit_code == 3, res.output
    assert f"undecided: global_lock, expected {expected}: no query here decides it" in res.output
    res = CliRunner().invoke(main, ["prove", str(path), "--bmc-only", "--depth", "0"])
    assert res.exit_code == 3, res.output
    assert f"undecided: global_lock, expected {expected}" in res.output
    result = prove_model(expecting({"peers": 2, "sends": 1}, {"causal": expected}), ProveOptions(depth=0, bmc_only=True))
    assert result.undecided == {"causal": expected} and result.exit_code() == 3
    assert result.to_json()["undecided"] == {"causal": expected}


def test_a_run_that_asks_nothing_is_no_pass(tmp_path) -> None:
    """--bmc-only --depth 0 on a model that expects nothing asks Z3 nothing: exit 3 with
    a line saying so (it was exit 0)."""
    path = tmp_path / "plain.toml"
    path.write_text('spec = "bus1"\n[constants]\npeers = 2\nsends = 1\n')
    res = CliRunner().invoke(main, ["prove", str(path), "--bmc-only", "--depth", "0"])
    assert res.exit_code == 3, res.output
    assert "no query was asked (--bmc-only with --depth 0): nothing is shown  UNKNOWN" in res.output


def test_no_proof_from_an_invariant_that_is_not_inductive() -> None:
    """Without block_destinations a lemma is refuted; the invariant still implies the
    targets, but an invariant that is not inductive proves nothing about the runs."""
    result = prove_model(expecting({"peers": 2, "sends": 1, "block_destinations": False}, {"causal": "holds"},
                                   {"queue_bound": 2}), ProveOptions(depth=0))
    assert not result.inductive
    assert by_name(result.queries)["implies: causal_per_queue"].status == "proved"
    assert "proof: causal" not in by_name(result.queries)
    assert result.exit_code() == 1

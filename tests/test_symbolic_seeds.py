"""Z3 proofs of the seed protocols' ordering guarantees (BSS, matrix clocks, sequencer,
Skeen, Lamport's total order, SES, synchronous ordering).

Each correct model's invariant is inductive and proves its guarantee for any number of
messages; each ablation mutant's proof fails with a counterexample to induction (two
states and an action); and each encoding is checked against its explicit spec: every
explored reachable state satisfies the lemmas and every explicit step is a step of the
encoding (tests/symbolic_helpers.py).
"""

from __future__ import annotations

import pytest

from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.loading.registry import spec_class
from ordercheck.checker.symbolic.encodings import symbolic_class
from ordercheck.checker.symbolic.prove import ProveOptions, prove_model
from tests.symbolic_helpers import by_name, check_against_spec


@pytest.mark.parametrize(
    ("model", "proofs"),
    [
        ("bss-3", {"causal"}),
        ("matrix-3", {"causal"}),
        ("sequencer-2", {"total", "total_global", "total_prefix"}),
        ("skeen-4", {"total", "total_global"}),
        ("lamport-2", {"total", "total_global", "total_prefix"}),
        ("ses-3", {"causal"}),
        ("synchronous-3", {"synchronous"}),
    ],
)
def test_the_guarantee_is_proved_for_any_number_of_messages(model: str, proofs: set[str]) -> None:
    result = prove_model(load_model(f"models/{model}.toml"), ProveOptions())
    assert result.inductive and result.queue_free == (model not in ("skeen-4", "lamport-2"))
    found = {q.name.removeprefix("proof: ") for q in result.queries if q.kind == "proof" and q.status == "holds"}
    assert found == proofs
    assert all(q.outcome == "ok" for q in result.queries)


@pytest.mark.parametrize(
    ("model", "refuted", "action"),
    [
        ("bss-mutant-no-causal-condition", {"causal_delivery"}, "deliver"),
        ("matrix-mutant-no-causal-condition", {"clock_counts_deliveries", "causal_delivery"}, "deliver"),
        ("sequencer-mutant-own-delivery", {"expect_counts_deliveries", "delivery_by_number"}, "send"),
        ("sequencer-mutant-no-hold-back", {"expect_counts_deliveries", "delivery_by_number"}, "deliver"),
        ("skeen-mutant-min", {"entries_after_last"}, "final"),
        ("skeen-mutant-no-wait", {"entries_after_last"}, "deliver"),
        ("skeen-mutant-no-tiebreak", {"entries_after_last"}, "deliver"),
        ("lamport-mutant-no-wait", {"received_past_last"}, "deliver"),
        ("lamport-unordered", {"entries_after_last"}, "receive"),
        ("ses-mutant-no-merge", {"buffer_names_send"}, "deliver"),
        ("ses-mutant-no-buffer-check", {"destination_delivers_first", "causal_delivery"}, "deliver"),
        ("synchronous-3-mutant-no-permission", {"small_receiver_waits"}, "send"),
        ("synchronous-mutant-no-ack", {"big_sender_waits"}, "send"),
    ],
)
def test_each_mutant_breaks_a_lemma_with_a_counterexample_to_induction(model: str, refuted: set[str], action: str) -> None:
    result = prove_model(load_model(f"models/{model}.toml"), ProveOptions())
    assert not result.inductive
    bad = {q.name.removeprefix("inductive: "): q for q in result.queries if q.kind == "inductive" and q.status == "refuted"}
    assert set(bad) == refuted
    for q in bad.values():
        before, after = q.trace
        assert before.action is None and after.label[0] == action
        assert before.state["lines"] and after.state["lines"]
        assert q.explanation.startswith("counterexample to induction") and q.outcome == "ok"
    assert not [q for q in result.queries if q.kind == "proof"]  # no proof from a refuted lemma


def test_dropping_the_counting_lemma_breaks_the_proof() -> None:
    """BSS's causal_delivery needs V to count deliveries: without that lemma the
    delivery condition alone says nothing about what was delivered."""
    m = load_model("models/bss-3.toml")
    result = prove_model(m, ProveOptions(drop=("clock_counts_deliveries",)))
    q = by_name(result.queries)["inductive: causal_delivery"]
    assert q.status == "refuted" and not result.inductive
    assert "proof: causal" not in by_name(result.queries)


CONFIGS = [
    ("bss", {"peers": 3, "sends": 1, "channel": "unordered"}, 80),
    ("bss", {"peers": 3, "update": "increment", "condition_b": False}, 60),
    ("matrix", {"peers": 3, "script": {"a": ["c", "b"], "b": ["c"], "c": ["a"]}}, 80),
    ("sequencer", {"peers": 2, "sends": 2}, 120),
    ("sequencer", {"peers": 2, "sends": 2, "own_via_sequencer": False}, 120),
    ("sequencer", {"peers": 2, "senders": "a", "sends": 2, "channel": "unordered", "hold_back": False}, 120),
    ("skeen", {"peers": 4, "script": {"a": ["cd"], "b": ["cd"]}}, 120),
    ("skeen", {"peers": 2, "sends": 2}, 100),
    ("skeen", {"peers": 4, "script": {"a": ["cd"], "b": ["cd"]}, "take_max": False, "mutant_final": "min"}, 100),
    ("skeen", {"peers": 4, "script": {"a": ["cd"], "b": ["cd"]}, "wait_for_undeliverable": False}, 100),
    ("lamport_total", {"peers": 2, "sends": 1}, 60),
    ("lamport_total", {"peers": 2, "sends": 1, "rule": "later_timestamp", "duplicates": 1}, 60),
    ("lamport_total", {"peers": 2, "sends": 1, "fifo_links": False}, 60),
    ("synchronous", {"peers": 2, "sends": 2}, 80),
    ("synchronous", {"peers": 3, "sends": 1}, 60),
]


@pytest.mark.parametrize(("name", "constants", "states"), CONFIGS)
def test_the_encoding_simulates_the_spec(name: str, constants: dict, states: int) -> None:
    spec = spec_class(name)(**constants)
    sym = symbolic_class(spec)(spec, bounded=True)
    correct = all(constants.get(k, True) for k in ("condition_b", "own_via_sequencer", "hold_back", "take_max",
                                                    "wait_for_undeliverable", "fifo_links"))
    if correct:
        matched = check_against_spec(spec, sym, states)
    else:  # a mutant's states may break the lemmas; its steps are still the encoding's
        sym.lemmas = {}
        matched = check_against_spec(spec, sym, states)
    assert any(k.startswith("deliver") for k in matched)
    assert any(k.startswith(("send", "propose")) for k in matched)


@pytest.mark.parametrize("watch", [(0, 2)])
def test_the_ses_encoding_simulates_the_spec(watch: tuple[int, int]) -> None:
    """SES's encoding watches one copy: a1 -> c, which b1 -> c follows causally (through
    a2 -> b), on ses-3's configuration."""
    spec = spec_class("ses")(peers=3, script={"a": ["c", "b"], "b": ["c"], "c": ["a"]})
    sym = symbolic_class(spec)(spec, bounded=True)
    sym.watch = watch
    matched = check_against_spec(spec, sym, 50)
    assert any("watching" in k for k in matched) and any(k.startswith("receive") for k in matched)


def test_a_wrong_encoding_is_caught() -> None:
    """The correct BSS encoding does not allow the steps of BSS without condition (b):
    the comparison fails on them."""
    mutant = spec_class("bss")(peers=3, sends=1, condition_b=False)
    sym = symbolic_class(mutant)(spec_class("bss")(peers=3, sends=1), bounded=True)
    sym.lemmas = {}
    with pytest.raises(AssertionError):
        check_against_spec(mutant, sym, 200)


@pytest.mark.parametrize(
    ("name", "wrong", "right", "watch"),
    [
        # the FIFO encoding has no step for a broadcast overtaking an acknowledgement
        ("lamport_total", {"peers": 2, "sends": 1, "fifo_links": False}, {"peers": 2, "sends": 1}, None),
        # SES's encoding has no step delivering a message that names no pair a merge would have passed on
        ("ses", {"peers": 3, "script": {"a": ["c", "b"], "b": ["c"]}, "merge_buffer": False},
         {"peers": 3, "script": {"a": ["c", "b"], "b": ["c"]}}, (0, 2)),
        # the synchronous encoding's big sender turns passive
        ("synchronous", {"peers": 2, "sends": 2, "wait_for_ack": False}, {"peers": 2, "sends": 2}, None),
    ],
)
def test_a_wrong_encoding_is_caught_lamport_ses_synchronous(name: str, wrong: dict, right: dict, watch: tuple | None) -> None:
    mutant = spec_class(name)(**wrong)
    sym = symbolic_class(mutant)(spec_class(name)(**right), bounded=True)
    sym.lemmas = {}
    if watch is not None:
        sym.watch = watch
    with pytest.raises(AssertionError):
        check_against_spec(mutant, sym, 300)

"""The total-order seed protocols: sequencer, Lamport, Skeen."""

from __future__ import annotations

import pytest
from seedwalk import reachable, run_model, walk

from checker import ConstantError
from specs.lamport_total import LamportTotal
from specs.sequencer import Sequencer
from specs.skeen import Skeen

# -- ablations and assumptions caught, with their shortest counterexamples -------------

CAUGHT = [
    # model, property, steps of the shortest counterexample
    ("sequencer-mutant-no-hold-back", "total", 8),
    ("sequencer-unordered", "fifo", 5),
    ("sequencer-2-signal", "causal", 6),
    ("lamport-mutant-no-wait", "total", 8),
    ("lamport-unordered", "total", 12),
    ("lamport-unordered-garg", "total", 10),
    ("lamport-2-signal", "causal", 6),
    ("skeen-mutant-min", "total", 18),
    ("skeen-mutant-first", "total", 18),
    ("skeen-mutant-no-wait", "total", 18),
    ("skeen-3-fifo", "fifo", 14),
    ("sequencer-2-duplicating", "causal", 12),
    ("skeen-2-lossy", "eventual_delivery", 4),
]


@pytest.mark.parametrize("model,prop,steps", CAUGHT)
def test_ablation_caught_with_shortest_counterexample(model: str, prop: str, steps: int) -> None:
    result = run_model(model)
    verdict = result.properties[prop]
    assert verdict.status == "violated"
    assert verdict.trace is not None and len(verdict.trace) - 1 == steps
    assert result.exit_code() == 0


@pytest.mark.parametrize("model", ["lamport-2", "lamport-3", "lamport-2-garg", "lamport-2-duplicating", "skeen-3", "skeen-4"])
def test_correct_protocols_hold(model: str) -> None:
    """Every ordering property holds; only ``synchronous`` may break (concurrent sends
    make a crown, which no asynchronous protocol prevents)."""
    result = run_model(model)
    statuses = {name: p.status for name, p in result.properties.items()}
    assert statuses.pop("synchronous") in ("holds", "violated")
    assert set(statuses) == {"fifo", "causal", "total", "global_lock", "eventual_delivery"}
    assert set(statuses.values()) == {"holds"}


def test_skeen_total_needs_the_maximum() -> None:
    """Same configuration, only the final rule differs: max holds, min breaks."""
    script = {"a": ["cd"], "b": ["cd"]}
    from checker.engine.bfs import search
    from specs.properties import TOTAL

    good = search(Skeen(peers=4, script=script), [TOTAL])
    bad = search(Skeen(peers=4, script=script, take_max=False), [TOTAL])
    assert "total" not in good.decisions and good.complete
    assert "total" in bad.decisions


# -- the sequencer ------------------------------------------------------------------------


def test_sequencer_is_an_extra_process_outside_the_history() -> None:
    spec = Sequencer(peers=2, sends=1)
    s = walk(spec, [("send", 0, 0, 0b11), ("sequence", 0, 0, 0)])[-1]
    h = spec.history(s)
    assert len(h.peers) == 2
    assert h.messages[0].dests == frozenset({0, 1})  # the sender delivers its own too
    in_transit = dict(s[4])
    assert set(in_transit) == {(2, 0), (2, 1)}  # numbered copies from S to both peers
    assert in_transit[(2, 0)] == ((0, 0),)


def test_sequencer_holds_back_an_early_number() -> None:
    spec = Sequencer(peers=2, sends=1, channel="unordered")
    states = walk(
        spec,
        [
            ("send", 0, 0, 0b11),
            ("send", 1, 1, 0b11),
            ("sequence", 0, 0, 0),
            ("sequence", 1, 1, 1),
            ("receive", 0, 1, 1),  # #1 arrives first and waits
        ],
    )
    labels = [label for label, _s in spec.next_states(states[-1])]
    assert ("deliver", 0, 1) not in labels
    after = walk(spec, [*_labels_of(states, spec), ("receive", 0, 0, 0), ("deliver", 0, 0), ("deliver", 0, 1)])
    assert spec.history(after[-1]).deliveries(0) == [0, 1]


def _labels_of(states: list, spec) -> list:
    out = []
    for prev, nxt in zip(states, states[1:]):
        out.append(next(label for label, s in spec.next_states(prev) if s == nxt))
    return out


# -- Lamport ------------------------------------------------------------------------------


def test_lamport_waits_for_every_acknowledgement() -> None:
    spec = LamportTotal(peers=2, sends=1)
    s = walk(spec, [("send", 0, 0, 0b11)])[-1]
    # a has its own acknowledgement only: the head of its queue stays.
    assert not any(label[0] == "deliver" for label, _ in spec.next_states(s))
    s = walk(spec, [("send", 0, 0, 0b11), ("receive", 1, 0, 1), ("ack", 0, 1, 0, 3)])[-1]
    assert ("deliver", 0, 0) in [label for label, _ in spec.next_states(s)]


def test_lamport_garg_rule_needs_a_later_timestamp_from_everyone() -> None:
    spec = LamportTotal(peers=2, sends=1, rule="later_timestamp")
    # b gets a1 (ts 1) and a's own acknowledgement (ts 2): a later timestamp from a.
    s = walk(spec, [("send", 0, 0, 0b11), ("receive", 1, 0, 1)])[-1]
    assert ("deliver", 1, 0) not in [label for label, _ in spec.next_states(s)]
    s = walk(spec, [("send", 0, 0, 0b11), ("receive", 1, 0, 1), ("ack", 1, 0, 0, 2)])[-1]
    assert ("deliver", 1, 0) in [label for label, _ in spec.next_states(s)]


def test_lamport_rejects_an_unknown_sender() -> None:
    with pytest.raises(ConstantError):
        LamportTotal(peers=2, senders="z")


# -- Skeen: Garg's worked example -----------------------------------------------------------


def test_skeen_garg_example_proposals_2_and_4_final_4() -> None:
    """Garg: process 0 multicasts to 1 and 2, which propose 2 and 4; the final is 4 and
    both mark the message deliverable at 4 (here a, b, c for 0, 1, 2)."""
    spec = Skeen(peers=3, sends=1, destinations="subsets")
    a1 = 0

    def proposals(s: tuple) -> dict[int, int]:
        return {q: ts for q in (1, 2) for ts, m, ok in s[7][q] if m == a1 and not ok}

    def example(s: tuple) -> bool:
        sent = s[0][0][0]
        return bool(sent) and sent[0][0] == 0b110 and proposals(s) == {1: 2, 2: 4}

    state = reachable(spec, example)
    assert state is not None, "Garg's proposals 2 and 4 are reachable"
    # Let the proposals reach a; the final it sends is the maximum, 4.
    finals = set()
    frontier = [state]
    for _ in range(12):
        nxt = []
        for s in frontier:
            for label, t in spec.next_states(s):
                if label[0] == "finalise" and label[3] == a1:
                    finals.add(label[5])
                elif label[0] in ("collect", "propose", "final", "send", "deliver"):
                    nxt.append(t)
        frontier = nxt[:200]
    assert finals == {4}


def test_skeen_lower_undeliverable_entry_blocks() -> None:
    spec = Skeen(peers=3, script={"a": ["c"], "b": ["c"]})
    s = walk(
        spec,
        [
            ("send", 0, 0, 0b100),
            ("send", 1, 1, 0b100),
            ("propose", 2, 0, 2),  # c proposes 2 for a1
            ("propose", 2, 1, 3),  # and 3 for b1
            ("finalise", 1, 2, 1, 3, 3),  # b1's final is 3
            ("final", 2, 1, 3),
        ],
    )[-1]
    # b1 is deliverable at 3, but a1 (undeliverable, proposed 2) is ahead of it.
    assert ("deliver", 2, 1) not in [label for label, _ in spec.next_states(s)]
    mutant = Skeen(peers=3, script={"a": ["c"], "b": ["c"]}, wait_for_undeliverable=False)
    t = walk(mutant, [("send", 0, 0, 0b100), ("send", 1, 1, 0b100), ("propose", 2, 0, 2), ("propose", 2, 1, 3),
                      ("finalise", 1, 2, 1, 3, 3), ("final", 2, 1, 3)])[-1]
    assert ("deliver", 2, 1) in [label for label, _ in mutant.next_states(t)]


def test_total_order_is_not_fifo_in_skeen() -> None:
    """Garg: total order "does not imply causal or even FIFO ordering"."""
    result = run_model("skeen-3-fifo")
    assert result.properties["total"].status == "holds"
    assert result.properties["fifo"].status == "violated"
    assert result.properties["fifo"].explanation == (
        "peer b delivered a2 while a1, which a sent before it, had not been delivered"
    )


def test_skeen_ignores_duplicated_copies() -> None:
    """Every kind of copy (message, proposal, final) is ignored: the order survives."""
    from checker.engine.bfs import search
    from specs.properties import LIBRARY

    spec = Skeen(peers=2, sends=1, duplicates=1)
    props = [p for p in LIBRARY if p.name != "synchronous"]
    outcome = search(spec, props, stop_when_decided=False)
    assert outcome.complete and outcome.decisions == {}
    kinds = set()
    frontier = spec.init_states()
    for _ in range(12):
        nxt = []
        for s in frontier:
            for label, t in spec.next_states(s):
                if label[0] == "discard":
                    kinds.add(label[3])
                nxt.append(t)
        frontier = list(dict.fromkeys(nxt))
    assert kinds == {0, 1, 2}

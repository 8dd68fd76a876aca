"""The total-order seed protocols: sequencer, Lamport, Skeen."""

from __future__ import annotations

import pytest
from seedwalk import reachable, run_model, walk

from ordercheck.checker import ConstantError
from ordercheck.specs.async_peers import CHANS
from ordercheck.specs.lamport_total import MSG, QUEUES, LamportTotal
from ordercheck.specs.sequencer import Sequencer
from ordercheck.specs.skeen import Skeen

# -- ablations and assumptions caught, with their shortest counterexamples -------------

CAUGHT = [
    # model, property, steps of the shortest counterexample
    ("sequencer-mutant-no-hold-back", "total", 8),
    ("sequencer-mutant-own-delivery", "total", 10),
    ("sequencer-unordered", "fifo", 5),
    ("sequencer-2-signal", "causal", 6),
    ("sequencer-2-duplicating", "integrity", 8),
    ("sequencer-tlc-channel-faults", "integrity", 8),
    ("lamport-mutant-no-wait", "total", 8),
    ("lamport-mutant-no-tiebreak", "total", 12),
    ("lamport-unordered", "total", 12),
    ("lamport-unordered-garg", "total", 10),
    ("lamport-2-signal", "causal", 6),
    ("lamport-mutant-keep-duplicates", "integrity", 7),
    ("lamport-tlc-mutant-keep-duplicates", "integrity", 7),
    ("skeen-mutant-min", "total", 18),
    ("skeen-mutant-first", "total", 18),
    ("skeen-mutant-no-wait", "total", 18),
    ("skeen-mutant-no-tiebreak", "total", 18),
    ("skeen-3-fifo", "fifo", 14),
    ("skeen-3-signal", "causal", 7),
    ("skeen-tlc-mutant-keep-duplicates", "integrity", 8),
    ("skeen-2-lossy", "eventual_delivery", 4),
]


@pytest.mark.parametrize("model,prop,steps", CAUGHT)
def test_ablation_caught_with_shortest_counterexample(model: str, prop: str, steps: int) -> None:
    result = run_model(model)
    verdict = result.properties[prop]
    assert verdict.status == "violated"
    assert verdict.trace is not None and len(verdict.trace) - 1 == steps
    assert result.exit_code() == 0


# -- the protocols' claims, checked on configurations built here (not read from models/) ----

TOTAL_ORDERS = ["total", "total_global", "total_prefix"]
CLAIMS = [
    # spec, constants, what the literature claims there, the witnesses that it is at stake,
    # and an ablation of the same configuration with what it must break
    ("sequencer", {"peers": 2, "sends": 2}, ["fifo", "causal", *TOTAL_ORDERS, "eventual_delivery"],
     ["fifo_race", "causal_race", "total_race"], {"own_via_sequencer": False}, TOTAL_ORDERS),
    ("sequencer", {"peers": 2, "senders": "a", "sends": 2, "channel": "unordered"}, [*TOTAL_ORDERS, "eventual_delivery"],
     [], {"hold_back": False}, TOTAL_ORDERS),
    ("lamport_total", {"peers": 2, "sends": 1}, ["causal", *TOTAL_ORDERS, "eventual_delivery"],
     ["causal_race", "total_race"], {"wait_acks": False}, TOTAL_ORDERS),
    ("lamport_total", {"peers": 2, "sends": 1}, ["causal", *TOTAL_ORDERS, "eventual_delivery"],
     ["causal_race", "total_race"], {"fifo_links": False}, TOTAL_ORDERS),
    ("lamport_total", {"peers": 2, "sends": 1}, ["causal", *TOTAL_ORDERS, "eventual_delivery"],
     ["causal_race", "total_race"], {"tiebreak_by_sender": False}, TOTAL_ORDERS),
    ("lamport_total", {"peers": 2, "sends": 1, "rule": "later_timestamp"}, ["causal", *TOTAL_ORDERS, "eventual_delivery"],
     ["causal_race", "total_race"], {"fifo_links": False}, TOTAL_ORDERS),
    ("lamport_total", {"peers": 2, "senders": "a", "sends": 1, "fifo_links": False, "lossy": True, "duplicates": 1},
     ["integrity"], [], {"discard_duplicates": False}, ["integrity"]),
    ("skeen", {"peers": 4, "script": {"a": ["cd"], "b": ["cd"]}}, [*TOTAL_ORDERS, "eventual_delivery"],
     ["total_race"], {"take_max": False}, TOTAL_ORDERS),
    ("skeen", {"peers": 4, "script": {"a": ["cd"], "b": ["cd"]}}, [*TOTAL_ORDERS, "eventual_delivery"],
     ["total_race"], {"tiebreak_by_sender": False}, TOTAL_ORDERS),
    ("skeen", {"peers": 4, "script": {"a": ["cd"], "b": ["cd"]}}, [*TOTAL_ORDERS, "eventual_delivery"],
     ["total_race"], {"wait_for_undeliverable": False}, TOTAL_ORDERS),
    ("skeen", {"peers": 2, "script": {"a": ["b"]}, "channel": "unordered", "lossy": True, "duplicates": 1},
     ["integrity"], [], {"discard_duplicates": False}, ["integrity"]),
]


def _check(spec: str, constants: dict, props: list[str]):
    from ordercheck.checker.engine.run import Options, check_model
    from ordercheck.checker.loading.modelfile import model_from_dict

    model = model_from_dict({"spec": spec, "constants": constants, "check": {"properties": props}})
    return check_model(model, Options(progress=False, stop_when_decided=False))


@pytest.mark.parametrize(
    "spec,constants,claims,witnesses,ablation,breaks", CLAIMS,
    ids=[f"{c[0]}-{'-'.join(c[4])}" for c in CLAIMS],
)
def test_the_protocols_claims_hold_where_they_are_at_stake(spec, constants, claims, witnesses, ablation, breaks):
    """The sequencer, Lamport's algorithm and Skeen's claim one delivery order for all
    (pairwise, global and gap-free), Lamport's and the sequencer FIFO and causal order too
    (without side channels), and each keeps copies from a duplicating channel out. Each
    claim must hold, on a configuration where it is at stake (its witnesses are reached),
    and break when one step of the algorithm is switched off."""
    full = _check(spec, constants, [*claims, *witnesses])
    assert full.stats.bound is None
    assert {n: full.properties[n].status for n in claims} == dict.fromkeys(claims, "holds")
    assert {n: full.properties[n].status for n in witnesses} == dict.fromkeys(witnesses, "holds")
    mutant = _check(spec, {**constants, **ablation}, breaks)
    assert {n: mutant.properties[n].status for n in breaks} == dict.fromkeys(breaks, "violated")


def test_skeen_triangle_is_a_global_cycle_every_pair_agrees_on() -> None:
    """The issue's Skeen triangle, replayed: with the minimum proposal as final, a->bc,
    b->cd and c->bd are delivered round a cycle a1 -> c1 -> b1 -> a1, each peer's order
    consistent with the other peers' on the one message they share, so pairwise total
    holds at every step while total_global breaks. (The exhaustive check is
    models/large/skeen-mutant-min-triangle.toml, 2.6 million states.)"""
    from ordercheck.specs.properties import global_lock, total, total_global, total_prefix

    script = {"a": ["bc"], "b": ["cd"], "c": ["bd"]}
    mutant = Skeen(peers=4, script=script, take_max=False, mutant_final="min")
    states = walk(mutant, TRIANGLE)
    for s in states:
        h = mutant.history(s)
        assert total(h) is None and total_prefix(h) is None
    h = mutant.history(states[-1])
    explanation = total_global(h) or ""
    assert "no single order of a1, c1, b1 explains the peers' deliveries, which form a cycle" in explanation
    for step in ("b delivered a1", "before c1", "d delivered c1", "before b1", "c delivered b1", "before a1"):
        assert step in explanation, step
    assert global_lock(h) is not None
    assert total_global(mutant.history(states[-2])) is None  # the last delivery closes the cycle
    # The full algorithm cannot take the mutant's decisive step: c's proposal 5 for a1
    # is final, not b's 2.
    full = Skeen(peers=4, script=script)
    before = walk(full, TRIANGLE[:6])[-1]
    finals = [label for label, _s in full.next_states(before) if label[0] == "finalise"]
    assert finals == [("finalise", 0, 2, 0, 5, 5)]


TRIANGLE = [
    ("send", 0, 0, 6), ("propose", 1, 0, 2), ("collect", 0, 1, 0, 2), ("send", 1, 1, 12), ("propose", 2, 1, 4),
    ("propose", 2, 0, 5), ("finalise", 0, 2, 0, 5, 2), ("final", 1, 0, 2), ("collect", 1, 2, 1, 4), ("deliver", 1, 0),
    ("send", 2, 2, 10), ("propose", 1, 2, 7), ("collect", 2, 1, 2, 7), ("propose", 3, 2, 7), ("propose", 3, 1, 8),
    ("finalise", 1, 3, 1, 8, 4), ("final", 2, 1, 4), ("finalise", 2, 3, 2, 7, 7), ("final", 1, 2, 7),
    ("final", 3, 2, 7), ("deliver", 1, 2), ("deliver", 2, 1), ("final", 2, 0, 2), ("deliver", 2, 0),
    ("deliver", 3, 2), ("final", 3, 1, 4), ("deliver", 3, 1),
]


def test_skeen_total_needs_the_maximum() -> None:
    """Same configuration, only the final rule differs: max holds, min breaks."""
    script = {"a": ["cd"], "b": ["cd"]}
    from ordercheck.checker.engine.bfs import search
    from ordercheck.specs.properties import TOTAL

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


def test_sequencer_shortcut_delivers_own_message_at_once_and_skips_its_number() -> None:
    """The own_via_sequencer ablation: a delivers a1 when it sends it; when #0 (a1) comes
    back, a passes the number without delivering a1 again."""
    spec = Sequencer(peers=2, sends=1, own_via_sequencer=False)
    s = walk(spec, [("send", 0, 0, 0b11)])[-1]
    assert spec.history(s).deliveries(0) == [0]
    s = walk(spec, [("send", 0, 0, 0b11), ("sequence", 0, 0, 0), ("receive", 0, 0, 0), ("skip", 0, 0, 0)])[-1]
    assert spec.history(s).deliveries(0) == [0] and s[6][0] == 1  # expects #1 next
    full = Sequencer(peers=2, sends=1)
    assert full.history(walk(full, [("send", 0, 0, 0b11)])[-1]).deliveries(0) == []


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


def test_lamport_without_tiebreak_may_deliver_either_of_two_equal_timestamps() -> None:
    """a1 and b1 both carry timestamp 1: the tie-break by sender id lets a deliver only a1
    first; without it, a may deliver b1 first once it holds every acknowledgement."""
    labels = [("send", 0, 0, 0b11), ("send", 1, 1, 0b11), ("receive", 0, 1, 1), ("receive", 1, 0, 1),
              ("ack", 0, 1, 1, 2), ("ack", 0, 1, 0, 4)]
    full = LamportTotal(peers=2, sends=1)
    mutant = LamportTotal(peers=2, sends=1, tiebreak_by_sender=False)
    delivered = [sorted(lab for lab, _s in spec.next_states(walk(spec, labels)[-1]) if lab[:2] == ("deliver", 0))
                 for spec in (full, mutant)]
    assert delivered == [[("deliver", 0, 0)], [("deliver", 0, 0), ("deliver", 0, 1)]]


def _copy_in_transit(spec: LamportTotal, state: tuple, where: str) -> bool:
    """Whether a copy of a broadcast is on its way to a peer that has the broadcast
    ``"queued"`` (undelivered, in its queue) or has ``"delivered"`` it already."""
    history = spec.history(state)
    for (_src, dst), msgs in state[CHANS]:
        for kind, mid, _ts in msgs:
            if kind != MSG:
                continue
            if where == "queued" and any(entry[2] == mid for entry in state[QUEUES][dst]):
                return True
            if where == "delivered" and mid in history.deliveries(dst):
                return True
    return False


@pytest.mark.parametrize("rule", ["all_acks", "later_timestamp"])
def test_lamport_on_fifo_links_a_copy_arrives_before_its_original_is_delivered(rule: str) -> None:
    """Why ``integrity`` holds on FIFO links even with ``discard_duplicates`` off (as on
    lamport-3-a2-dup): the copy a duplicating link makes travels right behind the
    original, so ahead of the sender's acknowledgement, which the sender puts on the
    same link after the broadcast; the receiver delivers only once it has that
    acknowledgement (``all_acks``: one from every process; ``later_timestamp``: a later
    timestamp from every other process, the sender's first being that acknowledgement).
    Every copy therefore arrives while the original is still queued, where it adds
    nothing (a queue holds each ``(timestamp, sender, message)`` once). On unordered
    links the copy can come after the delivery, and is delivered a second time."""
    constants = {"peers": 2, "senders": "a", "sends": 1, "duplicates": 1, "discard_duplicates": False, "rule": rule}
    fifo = LamportTotal(**constants)
    assert reachable(fifo, lambda s: _copy_in_transit(fifo, s, "queued")) is not None
    assert reachable(fifo, lambda s: _copy_in_transit(fifo, s, "delivered")) is None
    assert _check("lamport_total", constants, ["integrity"]).properties["integrity"].status == "holds"
    unordered = LamportTotal(**constants, fifo_links=False)
    assert reachable(unordered, lambda s: _copy_in_transit(unordered, s, "delivered")) is not None
    broken = _check("lamport_total", {**constants, "fifo_links": False}, ["integrity"])
    assert broken.properties["integrity"].status == "violated"


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
    """Garg: total order "does not imply causal or even FIFO ordering": the full
    algorithm (every ablation flag on), over FIFO channels, breaks FIFO order."""
    spec = Skeen(peers=3, script={"a": ["bc", "b"], "c": ["b"]})
    assert all(getattr(spec, flag) for flag in Skeen.ablations()) and spec.channel == "fifo"
    result = run_model("skeen-3-fifo")
    assert result.constants == spec.values
    assert result.properties["fifo"].status == "violated"
    explanation = result.properties["fifo"].explanation
    assert explanation.startswith("b delivered a2")
    assert "while a1, which a sent before it, had not been delivered" in explanation


def test_skeen_ignores_duplicated_copies() -> None:
    """Every kind of copy (message, proposal, final) is ignored: the order survives."""
    from ordercheck.checker.engine.bfs import search
    from ordercheck.specs.properties import LIBRARY

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

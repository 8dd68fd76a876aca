"""The property library on hand-made histories that hold and that break each property.

The library's functions are the monitors' decisions (ordercheck.checker.monitors) on the history
laid out as a log; the sentences are the monitors' (they name the peers, the messages
and the events that show the violation). The random test compares them with the
independent oracle of tests/validate_oracle.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ordercheck.specs.properties import causal, eventual_delivery, fifo, global_lock, total
from tests.histories import history
from tests.validate_oracle import violated

# a multicasts a1 to b and c; b reacts with b1 to c.
CAUSE_EFFECT_DESTS = {"a1": "bc", "b1": "c"}


def test_fifo_holds_and_breaks():
    ok = history("ab", {"a": ["send a1", "send a2"], "b": ["recv a1", "recv a2"]}, {"a1": "b", "a2": "b"})
    assert fifo(ok) is None
    bad = history("ab", {"a": ["send a1", "send a2"], "b": ["recv a2", "recv a1"]}, {"a1": "b", "a2": "b"})
    explanation = fifo(bad)
    assert explanation is not None and explanation.startswith("b delivered a2")
    assert "while a1, which a sent before it, had not been delivered" in explanation
    assert explanation.endswith("a sent a1 to b, a sent a2 to b, b received a2")


def test_causal_holds_and_breaks_with_chain():
    ok = history(
        "abc",
        {"a": ["send a1"], "b": ["recv a1", "send b1"], "c": ["recv a1", "recv b1"]},
        CAUSE_EFFECT_DESTS,
    )
    assert causal(ok) is None
    bad = history(
        "abc",
        {"a": ["send a1"], "b": ["recv a1", "send b1"], "c": ["recv b1", "recv a1"]},
        CAUSE_EFFECT_DESTS,
    )
    explanation = causal(bad)
    assert explanation is not None and explanation.startswith("c delivered b1")
    assert "while a1, which happened before it, had not been delivered" in explanation
    assert explanation.endswith("a sent a1 to b,c, b received a1, b sent b1 to c, c received b1")
    assert fifo(bad) is None  # different senders: FIFO cannot see it


def test_causal_through_a_side_channel():
    bad = history(
        "abc",
        {"a": ["send a1", "sig b"], "b": ["got a", "send b1"], "c": ["recv b1", "recv a1"]},
        {"a1": "c", "b1": "c"},
    )
    explanation = causal(bad)
    assert explanation is not None
    assert "a signalled b" in explanation and "b sent b1" in explanation
    without_signal = history(
        "abc",
        {"a": ["send a1"], "b": ["send b1"], "c": ["recv b1", "recv a1"]},
        {"a1": "c", "b1": "c"},
    )
    assert causal(without_signal) is None


def test_total_holds_and_breaks():
    dests = {"a1": "cd", "b1": "cd"}
    same = history("abcd", {"a": ["send a1"], "b": ["send b1"], "c": ["recv a1", "recv b1"], "d": ["recv a1", "recv b1"]}, dests)
    assert total(same) is None
    split = history("abcd", {"a": ["send a1"], "b": ["send b1"], "c": ["recv a1", "recv b1"], "d": ["recv b1", "recv a1"]}, dests)
    explanation = total(split)
    assert explanation is not None and "delivered b1 and a1 in different orders" in explanation
    assert "d delivered b1" in explanation and "c delivered a1" in explanation


def test_global_lock_holds_for_a_serial_run():
    h = history(
        "abc",
        {"a": ["send a1"], "b": ["recv a1", "send b1"], "c": ["recv a1", "recv b1"]},
        CAUSE_EFFECT_DESTS,
    )
    assert global_lock(h) is None


def test_global_lock_breaks_on_opposite_queue_orders():
    dests = {"a1": "cd", "b1": "cd"}
    h = history("abcd", {"a": ["send a1"], "b": ["send b1"], "c": ["recv a1", "recv b1"], "d": ["recv b1", "recv a1"]}, dests)
    explanation = global_lock(h)
    assert explanation is not None and "a cycle" in explanation
    assert "a1 sent before b1" in explanation and "b1 sent before a1" in explanation


def test_global_lock_sees_a_waiting_message():
    # c received b1 (caused by a1) but still waits for a1: no serial order fits, and
    # causal delivery is broken at that delivery already, whether a1 comes later or not.
    h = history(
        "abc",
        {"a": ["send a1"], "b": ["recv a1", "send b1"], "c": ["recv b1"]},
        CAUSE_EFFECT_DESTS,
    )
    explanation = causal(h)
    assert explanation is not None and explanation.startswith("c delivered b1")
    assert explanation.endswith("a sent a1 to b,c, b received a1, b sent b1 to c, c received b1")
    assert "still waits for a1" in global_lock(h)


LOCK_CYCLES_THROUGH_PROGRAM_ORDER = [
    # a received b1 before sending a1, and c received a1 before b1.
    (
        {"a": ["recv b1", "send a1"], "b": ["send b1"], "c": ["recv a1", "recv b1"]},
        {"a1": "c", "b1": "ac"},
        ["a received b1 before a sent a1", "a1 sent before b1", "b1 sent", "before a received it"],
    ),
    # as above, with a drop between the receipt and the send.
    (
        {"a": ["recv b1", "drop c1", "send a1"], "b": ["send b1"], "c": ["send c1", "recv a1", "recv b1"]},
        {"a1": "c", "b1": "ac", "c1": "a"},
        ["a received b1 before a", "a1 sent before b1", "b1 sent", "before a received it"],
    ),
    # a sent a1 and then signalled b, which then sent b1; c received b1 first.
    (
        {"a": ["send a1", "sig b"], "b": ["got a", "send b1"], "c": ["recv b1", "recv a1"]},
        {"a1": "c", "b1": "c"},
        ["before a signalled b", "a signalled b", "b got a signal from a before b sent b1", "b1 sent before a1"],
    ),
]


@pytest.mark.parametrize("logs,dests,steps", LOCK_CYCLES_THROUGH_PROGRAM_ORDER)
def test_global_lock_names_each_kind_of_event_on_a_program_order_edge(logs, dests, steps):
    """A cycle through one peer's program order is told event by event: sends,
    deliveries, drops and both ends of a signal each in their own words."""
    h = history("abc", logs, dests)
    explanation = global_lock(h)
    assert explanation is not None and explanation.startswith("no single global lock can explain")
    assert explanation.endswith("a cycle")
    for step in steps:
        assert step in explanation, step


def test_eventual_delivery():
    done = history("ab", {"a": ["send a1"], "b": ["recv a1"]}, {"a1": "b"})
    assert eventual_delivery(done) is None
    pending = history("abc", {"a": ["send a1"], "b": ["recv a1"]}, {"a1": "bc"})
    assert eventual_delivery(pending).startswith("a1 to c is never delivered")
    dropped = history("abc", {"a": ["send a1"], "b": ["recv a1"], "c": ["drop a1"]}, {"a1": "bc"})
    assert eventual_delivery(dropped) is None
    failed = history("abc", {"a": ["send a1"], "b": ["recv a1"]}, {"a1": "bc"}, failed="c")
    assert eventual_delivery(failed) is None


@st.composite
def random_history(draw):
    """Random runs of three peers sending to random destinations and receiving in random
    orders; pasts follow DESIGN.md by construction."""
    peers = "abc"
    dests = {}
    logs: dict[str, list[str]] = {p: [] for p in peers}
    inbox: dict[str, list[str]] = {p: [] for p in peers}
    counts = dict.fromkeys(peers, 0)
    for _ in range(draw(st.integers(1, 9))):
        p = draw(st.sampled_from(peers))
        action = draw(st.sampled_from(["send", "recv", "sig"]))
        if action == "send" and counts[p] < 3:
            counts[p] += 1
            name = f"{p}{counts[p]}"
            to = draw(st.sets(st.sampled_from([q for q in peers if q != p]), min_size=1))
            dests[name] = "".join(sorted(to))
            logs[p].append(f"send {name}")
            for q in to:
                inbox[q].append(name)
        elif action == "recv" and inbox[p]:
            name = inbox[p].pop(draw(st.integers(0, len(inbox[p]) - 1)))
            logs[p].append(f"recv {name}")
        elif action == "sig":
            q = draw(st.sampled_from([q for q in peers if q != p]))
            logs[p].append(f"sig {q}")
            logs[q].append(f"got {p}")
    return history(peers, logs, dests)


@given(random_history())
@settings(max_examples=80, deadline=None)
def test_library_agrees_with_the_oracle_and_property_relations(h):
    # Each library verdict is the oracle's (written from the definitions, on the history).
    for name, check in (("fifo", fifo), ("causal", causal), ("total", total), ("global_lock", global_lock)):
        assert (check(h) is not None) == violated(name, h), name
    # Causal order implies FIFO order (a sender's earlier message is in the causal past
    # of its later ones), and a run that fits a global lock is causal and total.
    if causal(h) is None:
        assert fifo(h) is None
    if global_lock(h) is None:
        assert causal(h) is None
        assert total(h) is None

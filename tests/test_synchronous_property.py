"""The ``synchronous`` (crown-free) property on hand-made histories."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ordercheck.specs.properties import LIBRARY, causal, synchronous
from tests.histories import history

PEERS = "abc"


def test_in_library_last():
    assert [p.name for p in LIBRARY] == [
        "fifo", "causal", "integrity", "total", "total_global", "total_prefix", "global_lock", "eventual_delivery",
        "synchronous",
    ]


def _steps(explanation: str) -> set[str]:
    """The crown's steps, without the places a recording's sentence would give (a
    history's log has none: NEED-monitors.md item 6)."""
    return set(explanation.split(": ", 1)[1].replace(" ()", "").split("; "))


def test_request_and_reply_is_synchronous():
    h = history("ab", {"a": ["send a1", "recv b1"], "b": ["recv a1", "send b1"]}, {"a1": "b", "b1": "a"})
    assert synchronous(h) is None


def test_crossing_messages_are_a_crown_of_two():
    h = history("ab", {"a": ["send a1", "recv b1"], "b": ["send b1", "recv a1"]}, {"a1": "b", "b1": "a"})
    explanation = synchronous(h) or ""
    assert "form a crown, so they cannot all have been instantaneous" in explanation
    assert _steps(explanation) == {"a sent a1 before a received b1", "b sent b1 before b received a1"}
    assert causal(h) is None  # causally ordered, yet not synchronous


def test_crown_of_three_is_named_in_cycle_order():
    h = history(
        PEERS,
        {"a": ["send a1", "recv c1"], "b": ["send b1", "recv a1"], "c": ["send c1", "recv b1"]},
        {"a1": "b", "b1": "c", "c1": "a"},
    )
    explanation = synchronous(h) or ""
    assert "form a crown, so they cannot all have been instantaneous" in explanation
    steps = explanation.split(": ", 1)[1].replace(" ()", "").split("; ")
    # in cycle order, from any message: a1 -> c1 -> b1 -> a1
    k = steps.index("a sent a1 before a received c1")
    assert steps[k:] + steps[:k] == [
        "a sent a1 before a received c1", "c sent c1 before c received b1", "b sent b1 before b received a1",
    ]
    # Any one receipt moved before its peer's send breaks the cycle.
    h2 = history(
        PEERS,
        {"a": ["send a1", "recv c1"], "b": ["recv a1", "send b1"], "c": ["send c1", "recv b1"]},
        {"a1": "b", "b1": "c", "c1": "a"},
    )
    assert synchronous(h2) is None


def test_a_chain_through_a_third_peer_and_a_signal_counts():
    # a sends a1 to c, then receives b1. Nothing links b's send of b1 to c's receipt
    # of a1, so there is no crown.
    dests = {"a1": "c", "b1": "a"}
    plain = history(PEERS, {"a": ["send a1", "recv b1"], "b": ["send b1"], "c": ["recv a1"]}, dests)
    assert synchronous(plain) is None
    # b1 is sent before a signal that reaches c before c receives a1: send(b1) happened
    # before receive(a1), and send(a1) before receive(b1): a crown through the signal.
    signalled = history(
        PEERS, {"a": ["send a1", "recv b1"], "b": ["send b1", "sig c"], "c": ["got b", "recv a1"]}, dests
    )
    assert "form a crown" in (synchronous(signalled) or "")


def test_undelivered_messages_add_no_edges():
    h = history("ab", {"a": ["send a1"], "b": ["send b1", "recv a1"]}, {"a1": "b", "b1": "a"})
    assert synchronous(h) is None


def test_a_message_is_not_a_crown_with_itself():
    h = history("ab", {"a": ["send a1"], "b": ["recv a1"]}, {"a1": "b"})
    assert synchronous(h) is None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["ab", "ba"]), min_size=1, max_size=5))
def test_request_reply_rounds_never_form_a_crown(rounds):
    """Strictly alternating rounds (one message in flight at a time) are synchronous."""
    logs: dict[str, list[str]] = {"a": [], "b": []}
    dests: dict[str, str] = {}
    counts = {"a": 0, "b": 0}
    for src, dst in rounds:
        counts[src] += 1
        name = f"{src}{counts[src]}"
        dests[name] = dst
        logs[src].append(f"send {name}")
        logs[dst].append(f"recv {name}")
    assert synchronous(history("ab", logs, dests)) is None

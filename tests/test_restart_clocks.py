"""The restart-count post's consumer scenarios, pinned as traces of ``restart_clocks``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seedwalk import run_model, walk

from ordercheck.checker import ConstantError
from ordercheck.specs.restart_clocks import RestartClocks, follows

AB = 0b11
HI, HOW, WELL = 0, 1, 2


def test_first_scenario_per_queue_counters_miss_how_are_you() -> None:
    """Hi (A:1, B:1) read; TTL collects the queue; How are you? is again (A:1, B:1)."""
    spec = RestartClocks(clock_mode="per_queue", crashes=0)
    states = walk(spec, [("write", 0, HI, AB), ("poll", 1 << HI), ("collect",), ("write", 0, HOW, AB)])
    last = states[-1]
    assert last[3] == ((HOW, ((0, 1), (0, 1)), AB),)
    assert last[5] == ((0, 1), (0, 1))  # the consumer's clock: Hi's
    assert spec.poll(last) == ()  # "c1 asks for all messages since Hi and gets nothing"
    assert "missed p1.m2 'How are you?' (A:1, B:1)" in spec.missed(last)


def test_second_scenario_per_node_counters_survive_collection_not_a_crash() -> None:
    spec = RestartClocks(clock_mode="per_node")
    states = walk(spec, [("write", 0, HI, AB), ("poll", 1 << HI), ("collect",), ("write", 0, HOW, AB)])
    assert states[-1][3][0][1] == ((0, 2), (0, 2))  # (A:2, B:2)
    assert spec.poll(states[-1])  # "gets How are you? ... Yay!"
    states = walk(
        spec,
        [("write", 0, HI, AB), ("poll", 1 << HI), ("collect",), ("write", 0, HOW, AB), ("poll", 1 << HOW),
         ("crash", 0), ("restart", 0), ("write", 0, WELL, AB)],
    )
    last = states[-1]
    assert last[3][-1][1] == ((0, 1), (0, 3))  # (A:1, B:3)
    assert spec.poll(last) == ()  # "We get no messages"
    assert spec.missed(last) is not None


def test_third_scenario_restart_counts_deliver_im_doing_well() -> None:
    spec = RestartClocks(clock_mode="restart_count")
    states = walk(
        spec,
        [("write", 0, HI, AB), ("poll", 1 << HI), ("collect",), ("write", 0, HOW, AB), ("poll", 1 << HOW),
         ("crash", 0), ("restart", 0), ("write", 0, WELL, AB)],
    )
    assert states[1][3][0][1] == ((1, 1), (1, 1))  # (A:1/1, B:1/1)
    assert states[4][3][0][1] == ((1, 2), (1, 2))  # (A:1/2, B:1/2)
    last = states[-1]
    assert last[3][-1][1] == ((2, 1), (1, 3))  # (A:2/1, B:1/3)
    assert all(spec.missed(s) is None for s in states)
    assert spec.poll(last) == (last[3][-1],)  # "Success!"


@pytest.mark.parametrize(
    "model,verdict,steps",
    [
        ("restart-per-queue", "violated", 4),
        ("restart-per-node", "violated", 6),
        ("restart-count", "holds", None),
        ("restart-count-3-nodes", "holds", None),
        ("restart-count-two-producers-atomic", "holds", None),
        ("restart-count-two-producers", "violated", 7),
        ("restart-count-partial-quorum", "violated", 3),
    ],
)
def test_models(model: str, verdict: str, steps: int | None) -> None:
    result = run_model(model)
    prop = result.properties["no_missed_message"]
    assert prop.status == verdict
    if steps is not None:
        assert len(prop.trace) - 1 == steps


def test_the_restart_count_gap_needs_no_crash() -> None:
    """The counterexample the fix leaves open: crossed clocks from two writers."""
    result = run_model("restart-count-two-producers")
    actions = [step.action for step in result.properties["no_missed_message"].trace[1:]]
    assert not any("dies" in a for a in actions)
    assert "(A:1/1, B:1/2)" in result.properties["no_missed_message"].explanation


def test_quorum_larger_than_nodes_is_rejected() -> None:
    with pytest.raises(ConstantError):
        RestartClocks(nodes=2, quorum=3)


clock = st.tuples(st.tuples(st.integers(0, 3), st.integers(0, 3)), st.tuples(st.integers(0, 3), st.integers(0, 3)))


@settings(max_examples=200, deadline=None)
@given(clock, clock, clock)
def test_follows_is_a_strict_partial_order(x: tuple, y: tuple, z: tuple) -> None:
    assert not follows(x, x)
    assert not (follows(x, y) and follows(y, x))
    if follows(x, y) and follows(y, z):
        assert follows(x, z)

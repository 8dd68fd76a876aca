"""Every ordering property on hand-written histories, one row per situation.

Each row names a history, a property and the exact verdict: ``None`` (holds) or the
sentence the property gave before the monitors decided it; the monitor's sentence must
name every message that one named (the wording is the monitors', ordercheck.checker.monitors). The rows cover what the literature's definitions
decide and weaker ones would not: predecessors never delivered, duplicates, deliveries
to peers a message is not addressed to, deliveries before the send, gaps, cycles across
peers with every pair agreeing, and the seeds' worked examples. A property weakened back
(pairs compared only when both were delivered, total order checked pairwise only...)
fails rows here.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ordercheck.specs.history import DELIVER, DROP, SEND, SIGNAL_IN, SIGNAL_OUT, Event, History, Message
from ordercheck.specs.properties import (
    LIBRARY,
    causal,
    fifo,
    global_lock,
    integrity,
    total,
    total_global,
    total_prefix,
)
from tests.histories import history

CHECKS: dict[str, Callable[[History], str | None]] = {
    "fifo": fifo,
    "causal": causal,
    "integrity": integrity,
    "total": total,
    "total_global": total_global,
    "total_prefix": total_prefix,
}

# -- the histories ------------------------------------------------------------------

# a multicasts a1 to b and c; b delivers it and reacts with b1 to c (the BSS seed's
# three-process example; Garg's causal chat: the query a1, the reply b1).
CHAIN = {"a1": "bc", "b1": "c"}
CHAIN_IN_ORDER = history("abc", {"a": ["send a1"], "b": ["recv a1", "send b1"], "c": ["recv a1", "recv b1"]}, CHAIN)
CHAIN_OVERTAKEN = history("abc", {"a": ["send a1"], "b": ["recv a1", "send b1"], "c": ["recv b1", "recv a1"]}, CHAIN)
# The case: c delivers b1 and a1 never arrives ("c delivered b1, still waits for a1").
CHAIN_NEVER = history("abc", {"a": ["send a1"], "b": ["recv a1", "send b1"], "c": ["recv b1"]}, CHAIN)
# The same, a1 dropped at c with a reason before b1: nothing is left to wait for.
CHAIN_DROPPED = history("abc", {"a": ["send a1"], "b": ["recv a1", "send b1"], "c": ["drop a1", "recv b1"]}, CHAIN)
# a1 is addressed to b only: c has nothing to wait for.
CHAIN_NOT_TO_C = history(
    "abc", {"a": ["send a1"], "b": ["recv a1", "send b1"], "c": ["recv b1"]}, {"a1": "b", "b1": "c"}
)
# The WhatsApp example of the BSS seed: Bob asks (b1 to a and c), Alice answers (a1 to
# c) after reading the question; Charlie must not see the answer first.
WHATSAPP = {"b1": "ac", "a1": "c"}
WHATSAPP_ANSWER_FIRST = history(
    "abc", {"b": ["send b1"], "a": ["recv b1", "send a1"], "c": ["recv a1"]}, WHATSAPP
)
# Causality through a side channel (bus1 seed): a signals b after sending a1, b sends b1.
SIGNALLED = {"a1": "c", "b1": "c"}
SIGNAL_OVERTAKEN = history(
    "abc", {"a": ["send a1", "sig b"], "b": ["got a", "send b1"], "c": ["recv b1"]}, SIGNALLED
)
NO_SIGNAL = history("abc", {"a": ["send a1"], "b": ["send b1"], "c": ["recv b1"]}, SIGNALLED)

# One sender, two messages to b.
TWO = {"a1": "b", "a2": "b"}
FIFO_IN_ORDER = history("ab", {"a": ["send a1", "send a2"], "b": ["recv a1", "recv a2"]}, TWO)
FIFO_SWAPPED = history("ab", {"a": ["send a1", "send a2"], "b": ["recv a2", "recv a1"]}, TWO)
FIFO_GAP = history("ab", {"a": ["send a1", "send a2"], "b": ["recv a2"]}, TWO)
FIFO_DROPPED_FIRST = history("ab", {"a": ["send a1", "send a2"], "b": ["drop a1", "recv a2"]}, TWO)
FIFO_OTHER_DEST = history("abc", {"a": ["send a1", "send a2"], "b": ["recv a2"]}, {"a1": "c", "a2": "b"})
FIFO_TWO_MISSING = history(
    "ab", {"a": ["send a1", "send a2", "send a3"], "b": ["recv a3"]}, {"a1": "b", "a2": "b", "a3": "b"}
)
FIFO_REPEAT = history("ab", {"a": ["send a1", "send a2"], "b": ["recv a1", "recv a2", "recv a1"]}, TWO)

# Integrity.
ONCE = history("ab", {"a": ["send a1"], "b": ["recv a1"]}, {"a1": "b"})
TWICE = history("ab", {"a": ["send a1"], "b": ["recv a1", "recv a1"]}, {"a1": "b"})
MISADDRESSED = history("abc", {"a": ["send a1"], "b": ["recv a1"], "c": ["recv a1"]}, {"a1": "b"})
DROPPED_AFTER = history("ab", {"a": ["send a1"], "b": ["recv a1", "drop a1"]}, {"a1": "b"})
DROPPED_MISADDRESSED = history("abc", {"a": ["send a1"], "c": ["drop a1"]}, {"a1": "b"})

# Total order. a1 and b1 go to c and d.
PAIR = {"a1": "cd", "b1": "cd"}
SAME_ORDER = history(
    "abcd", {"a": ["send a1"], "b": ["send b1"], "c": ["recv a1", "recv b1"], "d": ["recv a1", "recv b1"]}, PAIR
)
SPLIT = history(
    "abcd", {"a": ["send a1"], "b": ["send b1"], "c": ["recv a1", "recv b1"], "d": ["recv b1", "recv a1"]}, PAIR
)
# Skeen's triangle (a -> bc, b -> cd, c -> bd): every pair of peers shares one message
# only, so every pair agrees, yet a1 -> c1 -> b1 -> a1 is a cycle.
SKEEN = {"a1": "bc", "b1": "cd", "c1": "bd"}
TRIANGLE = history(
    "abcd",
    {
        "a": ["send a1"], "b": ["send b1", "recv a1", "recv c1"], "c": ["send c1", "recv b1", "recv a1"],
        "d": ["recv c1", "recv b1"],
    },
    SKEEN,
)
TRIANGLE_SERIAL = history(
    "abcd",
    {
        "a": ["send a1"], "b": ["send b1", "recv a1", "recv c1"], "c": ["send c1", "recv a1", "recv b1"],
        "d": ["recv c1", "recv b1"],
    },
    SKEEN,
)
# One sender multicasting a1 and a2 to b and c: b delivers a2 without a1, c a1 then a2.
GAP = {"a1": "bc", "a2": "bc"}
GAP_SKIPPED = history("abc", {"a": ["send a1", "send a2"], "b": ["recv a2"], "c": ["recv a1", "recv a2"]}, GAP)
GAP_BEHIND = history("abc", {"a": ["send a1", "send a2"], "b": ["recv a1"], "c": ["recv a1", "recv a2"]}, GAP)
# a1 is addressed to c only: b's a2 skips nothing that c and b share.
GAP_NOT_SHARED = history(
    "abc", {"a": ["send a1", "send a2"], "b": ["recv a2"], "c": ["recv a1", "recv a2"]}, {"a1": "c", "a2": "bc"}
)
# Garg: total order "does not imply causal or even FIFO ordering": both peers deliver
# a2 before a1, in the same order.
SAME_WRONG_ORDER = history(
    "abc", {"a": ["send a1", "send a2"], "b": ["recv a2", "recv a1"], "c": ["recv a2", "recv a1"]}, GAP
)
# A repeated delivery leaves the order of first deliveries alone.
REPEATED = history(
    "abcd",
    {"a": ["send a1"], "b": ["send b1"], "c": ["recv a1", "recv b1", "recv a1"], "d": ["recv a1", "recv b1"]},
    PAIR,
)


def raw(peers: str, messages: dict[str, str], logs: dict[str, list[str]]) -> History:
    """A history built directly, in any order (``tests.histories`` replays a consistent
    one and so cannot deliver a message before its send). Messages have empty pasts;
    ``messages`` maps a name such as ``a1`` to its destinations; events as there, with
    ``recv``/``drop``/``send`` naming any message, sent or not."""
    msgs = {}
    for name, dests in messages.items():
        sender = peers.index(name[0])
        mid = sender * 4 + int(name[1:]) - 1
        msgs[mid] = Message(mid, name, sender, int(name[1:]) - 1, frozenset(peers.index(d) for d in dests), frozenset())
    kinds = {"send": SEND, "recv": DELIVER, "drop": DROP, "sig": SIGNAL_OUT, "got": SIGNAL_IN}
    out = []
    for p in peers:
        log = []
        for word in logs.get(p, []):
            verb, arg = word.split()
            target = peers.index(arg) if verb in ("sig", "got") else peers.index(arg[0]) * 4 + int(arg[1:]) - 1
            log.append(Event(kinds[verb], target))
        out.append(tuple(log))
    return History(tuple(peers), msgs, tuple(out))


NEVER_SENT = raw("ab", {}, {"b": ["recv a1"]})
SENT_LATER_SAME_PEER = raw("ab", {"a1": "ab"}, {"a": ["recv a1", "send a1"]})
SENT_AFTER_HEARING = raw(
    "ab", {"a1": "b"}, {"a": ["got b", "send a1"], "b": ["recv a1", "sig a"]}
)
SIGNAL_LOOP = raw("ab", {}, {"a": ["got b", "sig b"], "b": ["got a", "sig a"]})

# -- the table ----------------------------------------------------------------------

ROWS: list[tuple[str, History, str, str | None]] = [
    # fifo: earlier messages of the same sender, addressed to the peer, come first.
    ("fifo in order", FIFO_IN_ORDER, "fifo", None),
    (
        "fifo swapped", FIFO_SWAPPED, "fifo",
        "b delivered a2 while a1, which a sent before it, had not been delivered there: a sent a1 to b, a sent a2 "
        "to b, b received a2",
    ),
    (
        "fifo gap: a2 without a1", FIFO_GAP, "fifo",
        "b delivered a2 while a1, which a sent before it, had not been delivered there: a sent a1 to b, a sent a2 "
        "to b, b received a2",
    ),
    ("fifo: a1 dropped with a reason first", FIFO_DROPPED_FIRST, "fifo", None),
    ("fifo: a1 not addressed to b", FIFO_OTHER_DEST, "fifo", None),
    (
        "fifo: two predecessors missing", FIFO_TWO_MISSING, "fifo",
        "b delivered a3 while a1 and a2, which a sent before it, had not been delivered there: a sent a1 to b, a "
        "sent a3 to b, b received a3",
    ),
    ("fifo: a repeat is integrity's", FIFO_REPEAT, "fifo", None),
    ("fifo: causal chain across senders is not fifo's", CHAIN_NEVER, "fifo", None),
    (
        "fifo: Garg, same wrong order everywhere", SAME_WRONG_ORDER, "fifo",
        "b delivered a2 while a1, which a sent before it, had not been delivered there: a sent a1 to b,c, a sent a2 "
        "to b,c, b received a2",
    ),
    # causal: every message that happened before, addressed to the peer, comes first.
    ("causal chain in order", CHAIN_IN_ORDER, "causal", None),
    (
        "causal chain overtaken (BSS seed example)", CHAIN_OVERTAKEN, "causal",
        "c delivered b1 while a1, which happened before it, had not been delivered there: a sent a1 to b,c, b "
        "received a1, b sent b1 to c, c received b1",
    ),
    (
        "causal: c delivered b1, a1 never arrives", CHAIN_NEVER, "causal",
        "c delivered b1 while a1, which happened before it, had not been delivered there: a sent a1 to b,c, b "
        "received a1, b sent b1 to c, c received b1",
    ),
    ("causal: a1 dropped at c with a reason", CHAIN_DROPPED, "causal", None),
    ("causal: a1 not addressed to c", CHAIN_NOT_TO_C, "causal", None),
    (
        "causal: WhatsApp answer before the question", WHATSAPP_ANSWER_FIRST, "causal",
        "c delivered a1 while b1, which happened before it, had not been delivered there: b sent b1 to a,c, a "
        "received b1, a sent a1 to c, c received a1",
    ),
    (
        "causal through a side channel", SIGNAL_OVERTAKEN, "causal",
        "c delivered b1 while a1, which happened before it, had not been delivered there: a sent a1 to c, a "
        "signalled b, b got a signal from a, b sent b1 to c, c received b1",
    ),
    ("causal: concurrent without the signal", NO_SIGNAL, "causal", None),
    (
        "causal implies fifo", FIFO_GAP, "causal",
        "b delivered a2 while a1, which happened before it, had not been delivered there: a sent a1 to b, a sent a2 "
        "to b, b received a2",
    ),
    # integrity: at most once, only at destinations, only after the send.
    ("integrity once", ONCE, "integrity", None),
    (
        "integrity: delivered twice", TWICE, "integrity",
        "b delivered a1 twice: a sent a1 to b, b received a1, b received a1",
    ),
    (
        "integrity: misaddressed", MISADDRESSED, "integrity",
        "c delivered a1, which is addressed to b only: a sent a1 to b, c received a1",
    ),
    (
        "integrity: dropped after delivery", DROPPED_AFTER, "integrity",
        "b dropped a1 after delivering it: a sent a1 to b, b received a1, b dropped a1",
    ),
    (
        "integrity: misaddressed drop", DROPPED_MISADDRESSED, "integrity",
        "c dropped a1, which is addressed to b only: a sent a1 to b, c dropped a1",
    ),
    (
        "integrity: never sent", NEVER_SENT, "integrity",
        "b delivered message 0, which is never sent in the run",
    ),
    (
        "integrity: delivered before its own send", SENT_LATER_SAME_PEER, "integrity",
        "a delivered a1 before it was sent (a sent a1 to a,b)",
    ),
    (
        "integrity: delivered before the sender sent it", SENT_AFTER_HEARING, "integrity",
        "b delivered a1 before it was sent: b received a1, b signalled a, a got a signal from b, a sent a1 to b",
    ),
    (
        "integrity: signals in a loop", SIGNAL_LOOP, "integrity",
        "a got a signal from b before it was sent (b signalled a)",
    ),
    ("integrity: the chain is fine", CHAIN_OVERTAKEN, "integrity", None),
    # total: pairwise, on messages both delivered.
    ("total same order", SAME_ORDER, "total", None),
    (
        "total split", SPLIT, "total",
        "d and c delivered b1 and a1 in different orders: d delivered b1 before a1, c delivered a1 before b1",
    ),
    ("total: Skeen triangle passes pairwise", TRIANGLE, "total", None),
    ("total: a gap passes pairwise", GAP_SKIPPED, "total", None),
    ("total: a repeat is integrity's", REPEATED, "total", None),
    ("total: Garg, total without fifo", SAME_WRONG_ORDER, "total", None),
    # total_global: one order of all messages fits every peer.
    ("total_global same order", SAME_ORDER, "total_global", None),
    (
        "total_global split", SPLIT, "total_global",
        "no single order of b1, a1 explains the peers' deliveries, which form a cycle: d delivered b1 before a1; c "
        "delivered a1 before b1",
    ),
    (
        "total_global: Skeen triangle", TRIANGLE, "total_global",
        "no single order of a1, c1, b1 explains the peers' deliveries, which form a cycle: b delivered a1 before "
        "c1; d delivered c1 before b1; c delivered b1 before a1",
    ),
    ("total_global: Skeen serial", TRIANGLE_SERIAL, "total_global", None),
    ("total_global: a gap is no cycle", GAP_SKIPPED, "total_global", None),
    ("total_global: a repeat is integrity's", REPEATED, "total_global", None),
    # total_prefix: of the messages two peers share, one order is a prefix of the other.
    ("total_prefix same order", SAME_ORDER, "total_prefix", None),
    (
        "total_prefix split", SPLIT, "total_prefix",
        "d and c deliver different messages as their message number 1 addressed to both (c delivered a1, d "
        "delivered b1), so neither order is a prefix of the other: a sent a1 to c,d, b sent b1 to c,d, "
        "c received a1, d received b1",
    ),
    (
        "total_prefix: a2 without a1 against a1 then a2", GAP_SKIPPED, "total_prefix",
        "c and b deliver different messages as their message number 1 addressed to both (b delivered a2, c "
        "delivered a1), so neither order is a prefix of the other: a sent a1 to b,c, a sent a2 to b,c, "
        "b received a2, c received a1",
    ),
    ("total_prefix: one peer behind", GAP_BEHIND, "total_prefix", None),
    ("total_prefix: a1 not shared", GAP_NOT_SHARED, "total_prefix", None),
    ("total_prefix: Skeen triangle shares one message per pair", TRIANGLE, "total_prefix", None),
    ("total_prefix: a repeat is integrity's", REPEATED, "total_prefix", None),
]


@pytest.mark.parametrize("case,h,prop,expected", ROWS, ids=[r[0] for r in ROWS])
def test_row(case: str, h: History, prop: str, expected: str | None) -> None:
    got = CHECKS[prop](h)
    assert (got is None) == (expected is None), got
    assert got == expected


def test_every_new_property_has_rows_both_ways() -> None:
    verdicts: dict[str, set[bool]] = {}
    for _case, _h, prop, expected in ROWS:
        verdicts.setdefault(prop, set()).add(expected is None)
    assert verdicts == dict.fromkeys(CHECKS, {True, False})


def test_the_library_offers_every_property_with_its_performance_facts() -> None:
    props = {p.name: p for p in LIBRARY}
    assert set(CHECKS) <= set(props)
    for name, check in CHECKS.items():
        p = props[name]
        assert p.check is check and p.kind == "always" and p.over == "history" and p.stable
        assert p.changed_by == ({"deliver", "drop"} if name == "integrity" else {"deliver"})


# -- relations between the properties, and the facts engines rely on ------------------


@st.composite
def runs(draw):
    """A run of three peers as one sequence of events (each a peer and a word, as
    :func:`tests.histories.history` reads them): sends to random destinations, receipts
    in random order, some duplicated or misaddressed, drops and signals."""
    peers = "abc"
    dests: dict[str, str] = {}
    events: list[tuple[str, str]] = []
    sent: list[str] = []
    counts = dict.fromkeys(peers, 0)
    for _ in range(draw(st.integers(1, 12))):
        p = draw(st.sampled_from(peers))
        action = draw(st.sampled_from(["send", "recv", "recv", "drop", "sig"]))
        if action == "send" and counts[p] < 3:
            counts[p] += 1
            name = f"{p}{counts[p]}"
            to = draw(st.sets(st.sampled_from(peers), min_size=1))
            dests[name] = "".join(sorted(to))
            sent.append(name)
            events.append((p, f"send {name}"))
        elif action in ("recv", "drop") and sent:
            events.append((p, f"{action} {draw(st.sampled_from(sent))}"))
        elif action == "sig":
            q = draw(st.sampled_from([q for q in peers if q != p]))
            events += [(p, f"sig {q}"), (q, f"got {p}")]
    return peers, dests, events


def build(peers: str, dests: dict[str, str], events: list[tuple[str, str]]) -> History:
    logs: dict[str, list[str]] = {}
    for p, word in events:
        logs.setdefault(p, []).append(word)
    return history(peers, logs, dests)


@given(runs())
@settings(max_examples=150, deadline=None)
def test_stable_and_changed_by_hold_on_every_prefix(run) -> None:
    """What partial-order reduction and the engines' skipping rely on: a verdict that
    fails on a prefix fails on the whole run (``stable``), and appending events of kinds
    outside ``changed_by`` never turns a verdict."""
    peers, dests, events = run
    kinds = {"send": "send", "recv": "deliver", "drop": "drop", "sig": "signal_out", "got": "signal_in"}
    props = [p for p in LIBRARY if p.kind == "always" and p.stable]
    before = {p.name: None for p in props}
    for k in range(1, len(events) + 1):
        h = build(peers, dests, events[:k])
        kind = kinds[events[k - 1][1].split()[0]]
        for p in props:
            now = p.check(h)
            if before[p.name] is not None:
                assert now is not None, f"{p.name} is not stable"
            elif p.changed_by is not None and kind not in p.changed_by:
                assert now is None, f"{p.name} changed on a {kind}"
            before[p.name] = now


@given(runs())
@settings(max_examples=150, deadline=None)
def test_how_the_properties_relate(run) -> None:
    h = build(*run)
    if causal(h) is None:
        assert fifo(h) is None  # the seeds: causal order implies FIFO order
    if integrity(h) is None:
        if total_global(h) is None:
            assert total(h) is None  # a disagreeing pair is a cycle of two
        if total_prefix(h) is None:
            assert total(h) is None
        if global_lock(h) is None and not any(e.kind == DROP for log in h.logs for e in log):
            # one global lock serialises everything: one order, no gaps, causal
            assert total_global(h) is None and total_prefix(h) is None and causal(h) is None

"""Differential test: ``validate`` against a plain reference checker on random logs.

The reference (``tests/validate_reference.py``) is written from the definitions in
docs/reference/properties.md and the log format's pairing of signals, shares no code
with ``checker``, and reads the same JSON Lines text ``validate`` reads. The logs are
seeded random recordings of up to eight peers with sends, deliveries, drops, odd
deliveries (repeated, misaddressed, of ids never sent) and side-channel signals of all
three kinds (one-line ``signal``, ``signal_out`` and a later ``signal_in``, and receipts
recorded before their signal), biased toward signals: an instant signal between two
peers with an older signal still in flight is what validate once paired wrongly.
"""

from __future__ import annotations

import json
import random

import pytest

from ordercheck.checker.validate.checks import check_log
from ordercheck.checker.validate.jsonl import read_jsonl
from tests.validate_reference import REFERENCE_PROPERTIES, first_violation

LOGS = 1500
"""Logs per run (a few seconds in all). With signals paired first-in-first-out across
one-line signals (before issue 28), 180 of these logs disagreed: causal on 9,
integrity on 144, global_lock on 36, synchronous on 6."""


def random_log(seed: int) -> str:
    """One random log as JSON Lines text: 2 to 8 peers, 4 to 40 records.

    Biased toward what exposes signal pairing: most signals are among the first three
    peers and half of them repeat the previous signal's pair (so a one-line signal often
    meets a split one still in flight between the same two peers), half the sends are by
    the peer last signalled (a reaction to the signal) and half reuse the previous
    send's destinations, and half the deliveries take the latest message in flight (so
    deliveries overtake each other)."""
    rng = random.Random(seed)
    n = rng.randint(2, 8)
    peers = [chr(ord("a") + i) for i in range(n)]
    signalling = peers[:3]
    lines = [json.dumps({"format": "ordercheck-log", "version": 1, "peers": peers})]
    pending: list[tuple[str, str]] = []  # (message, peer) addressed and not consumed
    sent: list[str] = []
    in_flight: list[tuple[str, str]] = []  # split signals not yet received
    count = dict.fromkeys(peers, 0)
    weights = {"send": 4, "deliver": 5, "drop": 1, "odd": 1, "signal": 4, "signal_out": 4, "signal_in": 1,
               "early_in": 1}
    kinds = list(weights)
    last_signalled: str | None = None
    last_pair: tuple[str, str] | None = None
    last_dests: list[str] | None = None
    for _ in range(rng.randint(4, 40)):
        what = rng.choices(kinds, [weights[k] for k in kinds])[0]
        if what == "send" or (what in ("deliver", "drop") and not pending):
            p = last_signalled if last_signalled and rng.random() < 0.5 else rng.choice(peers)
            count[p] += 1
            m = f"{p}{count[p]}"
            if last_dests and p not in last_dests and rng.random() < 0.5:
                dests = last_dests
            else:
                dests = last_dests = sorted(rng.sample(peers, rng.randint(1, min(3, n))))
            lines.append(json.dumps({"peer": p, "kind": "send", "msg": m, "to": dests}))
            sent.append(m)
            pending += [(m, d) for d in dests]
        elif what in ("deliver", "drop"):
            m, q = pending.pop(-1 if rng.random() < 0.5 else rng.randrange(len(pending)))
            lines.append(json.dumps({"peer": q, "kind": what, "msg": m}))
        elif what == "odd":  # a repeat, a misaddressed delivery or one of an id never sent
            m = rng.choice(sent) if sent and rng.random() < 0.7 else f"x{len(lines)}"
            lines.append(json.dumps({"peer": rng.choice(peers), "kind": "deliver", "msg": m}))
        elif what in ("signal", "signal_out", "early_in"):
            if last_pair and rng.random() < 0.5:
                p, q = last_pair
            else:
                p, q = rng.sample(signalling if rng.random() < 0.9 else peers, 2)
            last_pair, last_signalled = (p, q), q
            if what == "early_in":  # a receipt recorded before any signal pairs with it
                lines.append(json.dumps({"peer": q, "kind": "signal_in", "from": p}))
            else:
                lines.append(json.dumps({"peer": p, "kind": what, "to": q}))
            if what == "signal_out":
                in_flight.append((p, q))
        elif in_flight:  # the receipt of a split signal in flight
            p, q = in_flight.pop(rng.randrange(len(in_flight)))
            lines.append(json.dumps({"peer": q, "kind": "signal_in", "from": p}))
    return "\n".join(lines) + "\n"


def _validate(text: str, source: str) -> dict[str, int | None]:
    log = read_jsonl(text.splitlines(), source)
    found = check_log(log, REFERENCE_PROPERTIES)
    return {name: None if v is None else v.line(log) for name, v in found.items()}


def test_the_issue_log_is_causal_violated_at_line_6() -> None:
    text = "\n".join([
        '{"format":"ordercheck-log","version":1,"peers":["a","b","c"]}',
        '{"peer":"a","kind":"signal_out","to":"b"}',
        '{"peer":"a","kind":"send","msg":"m1","to":["c"]}',
        '{"peer":"a","kind":"signal","to":"b"}',
        '{"peer":"b","kind":"send","msg":"m2","to":["c"]}',
        '{"peer":"c","kind":"deliver","msg":"m2"}',
        '{"peer":"c","kind":"deliver","msg":"m1"}',
        '{"peer":"b","kind":"signal_in","from":"a"}',
    ]) + "\n"
    assert first_violation(text, "causal") == 6
    assert _validate(text, "issue.jsonl")["causal"] == 6


@pytest.mark.parametrize("block", range(3))
def test_validate_agrees_with_the_reference_on_random_logs(block: int) -> None:
    disagreements = []
    violated = dict.fromkeys(REFERENCE_PROPERTIES, 0)
    for seed in range(block * LOGS // 3, (block + 1) * LOGS // 3):
        text = random_log(seed)
        got = _validate(text, f"random-{seed}.jsonl")
        for name in REFERENCE_PROPERTIES:
            want = first_violation(text, name)
            violated[name] += want is not None
            if got[name] != want:
                disagreements.append(f"seed {seed}, {name}: validate line {got[name]}, reference line {want}\n{text}")
    assert not disagreements, f"{len(disagreements)} disagreements; the first:\n{disagreements[0]}"
    # the logs exercise both verdicts of every property
    assert all(0 < v < LOGS // 3 for v in violated.values()), violated

"""validate's property checks: hand-written edge cases, and random logs against a literal oracle.

The hand-written logs in tests/data/validate/ each name, in their header's ``expect``,
every property's verdict: ``holds``, or the line at which the log first breaks it.
Random logs are compared with :mod:`validate_oracle`, which reads the definitions
literally on every prefix of the log: same verdict, and the first violation at the
same event. Every violation's window must break the property on its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from validate_oracle import PREFIX_SAFE, first_violation, random_logs, violated

from ordercheck.checker.monitors.order import happened_before
from ordercheck.checker.validate.checks import CHECKS, check_log
from ordercheck.checker.validate.log import Log, sub_log, to_history
from ordercheck.checker.validate.readers import read_log

DATA = Path(__file__).parent / "data" / "validate"
CASES = sorted(DATA.glob("*.jsonl"))


def test_every_property_has_edge_cases() -> None:
    """Each property is broken by at least two hand-written logs and held by others."""
    broken: dict[str, int] = dict.fromkeys(CHECKS, 0)
    for path in CASES:
        for name, want in read_log(path).header["expect"].items():
            broken[name] += want != "holds"
    assert all(count >= 2 for count in broken.values()), broken


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_hand_written_logs(path: Path) -> None:
    log = read_log(path)
    expect = log.header["expect"]
    assert set(expect) == set(CHECKS)
    found = check_log(log, list(CHECKS))
    got = {name: "holds" if v is None else log.line[v.at] for name, v in found.items()}
    assert got == expect
    for name, v in found.items():
        if v is not None:
            assert f"line {log.line[v.at]}" in v.sentence
            if name in PREFIX_SAFE:
                assert v.at in v.events
                assert window_breaks(log, name, v.events), (name, v.sentence)


def window_breaks(log: Log, name: str, events: tuple[int, ...]) -> bool:
    """The log made of the window's events breaks ``name`` by itself (under validate and
    under the oracle)."""
    window, _kept = sub_log(log, events)
    return CHECKS[name](window) is not None and first_violation(window, name) is not None


@settings(max_examples=300, deadline=None)
@given(random_logs())
def test_random_logs_match_the_oracle(log: Log) -> None:
    found = check_log(log, list(CHECKS))
    history = to_history(log)
    for name in PREFIX_SAFE:
        v = found[name]
        first = first_violation(log, name)
        assert (v.at if v is not None else None) == first, (name, v and v.sentence)
        if v is not None:
            assert window_breaks(log, name, v.events), (name, v.sentence)
    assert (found["eventual_delivery"] is not None) == violated("eventual_delivery", history)


def test_causal_chain_is_the_fewest_hops() -> None:
    """The chain in a causal sentence takes the shortest route, through the signal."""
    log = read_log(DATA / "causal-long-chain.jsonl")
    v = check_log(log, ["causal"])["causal"]
    assert v is not None
    assert [log.line[i] for i in v.events] == [2, 3, 4, 5, 6, 8]
    assert "a sent a1 to b,d (line 2), b received a1 (line 3), b sent b1 to c (line 4)" in v.sentence
    side = read_log(DATA / "causal-side-channel.jsonl")
    path = happened_before(side, 0, 3)  # a's send of a1 .. b's send of b1
    assert [side.describe(i) for i in path] == ["a sent a1 to c", "a signalled b", "b got a signal from a", "b sent b1 to c"]
    with pytest.raises(ValueError):
        happened_before(side, 3, 0)


def test_sentences_name_the_peers_and_lines() -> None:
    log = read_log(DATA / "total-disagree.jsonl")
    v = check_log(log, ["total"])["total"]
    assert v is not None
    assert v.sentence == (
        "d and c delivered b1 and a1 in different orders: d delivered b1 (line 6) before a1 (line 7), "
        "c delivered a1 (line 4) before b1 (line 5)"
    )
    tri = read_log(DATA / "total-triangle.jsonl")
    g = check_log(tri, ["total_global"])["total_global"]
    assert g is not None and "cycle" in g.sentence
    assert {tri.line[i] for i in g.offending} == {5, 6, 7, 8, 9, 10}

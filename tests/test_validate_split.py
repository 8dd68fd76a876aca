"""Checking a log in parts (one per receiving peer), as the Spark engine does for large
logs: the earliest of the parts' first violations is the whole log's, with the same
record (event, line, sentence, window). Spark itself is exercised in test_validate_spark.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from validate_oracle import random_logs

from ordercheck.checker.validate.checks import CHECKS
from ordercheck.checker.validate.generate import synthetic_log
from ordercheck.checker.validate.log import Log
from ordercheck.checker.validate.readers import read_log
from ordercheck.checker.validate.split import SPLITTABLE, check_part, combine, part_events

DATA = Path(__file__).parent / "data" / "validate"


def _whole(log: Log, name: str):
    v = CHECKS[name](log)
    return None if v is None else v.to_json(log)


def _in_parts(log: Log, name: str):
    best = combine([check_part(log, p, [name]) for p in range(len(log.peers))], [name])[name]
    return None if best is None else best[1]


@settings(max_examples=300, deadline=None)
@given(random_logs())
def test_parts_give_the_whole_logs_first_violation(log: Log) -> None:
    for name in SPLITTABLE:
        assert _in_parts(log, name) == _whole(log, name), name


@pytest.mark.parametrize("path", sorted(DATA.glob("*.jsonl")), ids=lambda p: p.stem)
def test_hand_written_logs_in_parts(path: Path) -> None:
    log = read_log(path)
    for name in SPLITTABLE:
        assert _in_parts(log, name) == _whole(log, name), name


@pytest.mark.parametrize("fault", [None, "fifo"])
def test_synthetic_log_in_parts(fault) -> None:
    log = synthetic_log(3000, 6, seed=5, fault=fault)
    for name in SPLITTABLE:
        assert _in_parts(log, name) == _whole(log, name), name
    assert (_whole(log, "fifo") is not None) == (fault == "fifo")


def test_a_part_is_one_receivers_events() -> None:
    """Part c of the misaddressed log is c's delivery and the send of a1, which c
    consumed although a1 is addressed to b only: without that send the delivery would
    read as one of a message never sent, and the sentence would differ."""
    log = read_log(DATA / "integrity-not-addressed.jsonl")
    c = log.peers.index("c")
    assert [log.describe(i) for i in part_events(log, c)] == ["a sent a1 to b", "c received a1"]
    assert [log.describe(i) for i in part_events(log, log.peers.index("a"))] == []
    assert "addressed to b only" in _in_parts(log, "integrity")["explanation"]
    with pytest.raises(ValueError, match="not checked in parts"):
        check_part(log, c, ["causal"])

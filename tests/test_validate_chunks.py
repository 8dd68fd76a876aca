"""Reading a JSON Lines log in parts and joining them (what ``validate --engine spark``
does with a large log): the joined log is the sequential read's, field by field, so
every property's first violation (event, line, sentence, window) is the local engine's,
wherever the cuts fall. The Spark job itself is exercised in test_validate_spark.py.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from validate_oracle import random_logs

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.validate.checks import CHECKS
from ordercheck.checker.validate.chunks import count_lines, join, parts_at, plan, read_part
from ordercheck.checker.validate.generate import synthetic_log
from ordercheck.checker.validate.jsonl import write_jsonl
from ordercheck.checker.validate.log import Log
from ordercheck.checker.validate.readers import read_log
from ordercheck.checker.validate.spark_job import batches, combine, property_groups
from ordercheck.checker.validate.verdicts import Job, judge

DATA = Path(__file__).parent / "data" / "validate"
EVERY = tuple(CHECKS)


def _starts(path: Path) -> list[int]:
    """The byte offset of each line's start, by line number (index 0: line 1)."""
    offsets, at = [], 0
    for raw in path.read_bytes().splitlines(keepends=True):
        offsets.append(at)
        at += len(raw)
    return offsets


def _joined(path: Path, cuts: list[int]) -> Log | None:
    parts = [read_part(str(path), p) for p in parts_at(str(path), cuts)]
    return None if any(p is None for p in parts) else join(parts)  # type: ignore[arg-type]


def _records(log: Log, props: tuple[str, ...] = EVERY) -> dict:
    return judge(log, Job(props)).properties


def _write(log: Log, path: Path, *, header: bool = True) -> Path:
    buf = io.StringIO()
    write_jsonl(log, buf, header=header)
    path.write_text(buf.getvalue())
    return path


@pytest.mark.parametrize("path", sorted(DATA.glob("*.jsonl")), ids=lambda p: p.stem)
def test_every_single_cut_gives_the_sequential_log(path: Path) -> None:
    whole = read_log(path)
    starts = _starts(path)
    for line in range(2, len(starts) + 1):  # a cut before each line but the first
        assert _joined(path, [starts[line - 1]]) == whole, line
    if len(starts) > 3:
        assert _joined(path, starts[1:]) == whole  # one line per part


@settings(max_examples=150, deadline=None)
@given(random_logs(), st.booleans(), st.data())
def test_random_logs_and_cuts(tmp_path_factory, log: Log, header: bool, data) -> None:
    """Without a header the peers are numbered in the order the lines first name them,
    so a part's numbering differs from the whole file's: the join renumbers."""
    if not len(log):
        return
    path = _write(log, tmp_path_factory.mktemp("random") / "r.jsonl", header=header)
    whole = read_log(path)
    starts = _starts(path)
    cuts = sorted(data.draw(st.sets(st.sampled_from(starts[1:]), max_size=4))) if len(starts) > 1 else []
    assert _joined(path, cuts) == whole


@pytest.mark.parametrize("fault", ["fifo", "total"])
@pytest.mark.parametrize("header", [True, False])
def test_violation_just_before_at_and_after_a_cut(tmp_path: Path, fault: str, header: bool) -> None:
    """For each property a log violates, cuts so that its first violation's event is the
    last line of the first part, the first of the second, and the second of the second:
    every property's record is the sequential one. The part after the cut, read alone,
    is a different log (the carried state matters: without it the messages sent before
    the cut are unknown there)."""
    path = _write(synthetic_log(400, 4, seed=3, fault=fault), tmp_path / "s.jsonl", header=header)
    whole = read_log(path)
    expected = _records(whole)
    violated = [name for name, p in expected.items() if p["status"] == "violated"]
    assert fault in violated
    starts = _starts(path)
    for name in violated:
        line = expected[name]["line"]
        for cut_line in (line + 1, line, line - 1):  # the part after the cut starts at this line
            cut = [starts[cut_line - 1]]
            joined = _joined(path, cut)
            assert joined == whole, (name, cut_line)
            assert _records(joined) == expected, (name, cut_line)
            alone = read_part(str(path), parts_at(str(path), cut)[1])
            assert alone is not None and _records(alone)[name] != expected[name], (name, cut_line)


def test_plan_cuts_at_line_ends_and_keeps_the_header_first(tmp_path: Path) -> None:
    path = _write(synthetic_log(300, 4, seed=1), tmp_path / "s.jsonl")
    data = path.read_bytes()
    for count in (1, 2, 3, 7):
        parts = plan(str(path), count)
        assert 1 <= len(parts) <= count
        assert parts[0].start == 0 and parts[-1].end == len(data) and parts[0].peers is None
        assert all(a.end == b.start and data[b.start - 1:b.start] == b"\n" for a, b in zip(parts, parts[1:]))
        assert all(p.peers == ("p0", "p1", "p2", "p3") for p in parts[1:])
        assert [p.first_line for p in parts] == [data[:p.start].count(b"\n") + 1 for p in parts]
        assert _joined(path, [p.start for p in parts[1:]]) == read_log(path)


def test_bad_input_is_left_to_the_sequential_read(tmp_path: Path) -> None:
    """A part with a bad line, a header after the first line, or an id sent in two parts
    (each part alone is fine) gives no log: the caller then reads the file sequentially
    and raises its error."""
    good = '{"peer": "a", "kind": "send", "msg": "m1", "to": ["b"]}\n{"peer": "b", "kind": "deliver", "msg": "m1"}\n'
    cases = {
        "bad-json": good + '{"peer": "a", "kind":\n',
        "late-header": good + '{"format": "ordercheck-log", "version": 1}\n',
        "sent-twice": good + '{"peer": "b", "kind": "send", "msg": "m1", "to": ["a"]}\n',
        "not-utf8": good + '{"peer": "a", "kind": "send", "msg": "\xff", "to": ["b"]}\n',
    }
    for name, text in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(text.encode("latin-1") if name == "not-utf8" else text.encode())
        with pytest.raises(InputError):
            read_log(path)
        cut = [len(good.encode())]
        assert _joined(path, cut) is None, name
    sent_twice = tmp_path / "sent-twice.jsonl"
    assert all(read_part(str(sent_twice), p) is not None for p in parts_at(str(sent_twice), [len(good.encode())]))


def test_count_lines(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text("{}\n" * 10)
    assert count_lines(str(path), 9) == 10 and count_lines(str(path), 10) is None
    path.write_text("{}\n" * 10 + "{}")  # a last line without its newline
    assert count_lines(str(path), 10) == 11
    path.write_text("{}\r\n" * 10)  # carriage returns: line numbers by universal newlines, never cut
    assert count_lines(str(path), 1) is None
    assert count_lines(str(tmp_path / "missing.jsonl"), 1) is None


def test_property_groups_share_out_every_check_once() -> None:
    job = Job(("fifo", "causal", "integrity", "total"), model_path="m.toml", model_raw={"x": 1})
    for count in (1, 2, 3, 8):
        groups = property_groups(job, count)
        assert len(groups) == min(count, 5)
        assert sorted(p for g in groups for p in g.props) == sorted(job.props)
        assert sum(g.model_path is not None for g in groups) == 1
        assert all(list(g.props) == [p for p in job.props if p in g.props] for g in groups)
    assert [g.props for g in property_groups(Job(("fifo", "causal", "integrity", "total")), 2)] == [
        ("causal",), ("fifo", "integrity", "total")]


def test_groups_combine_into_the_whole_verdict() -> None:
    log = read_log(DATA / "fifo-swapped.jsonl")
    job = Job(("fifo", "causal", "integrity", "total"))
    whole = judge(log, job, diagrams=True)
    parts = [judge(log, g, diagrams=True) for g in property_groups(job, 3)]
    joined = combine(job, parts)
    assert {**joined.to_json(), "seconds": 0} == {**whole.to_json(), "seconds": 0}
    assert joined.diagrams == whole.diagrams and list(joined.properties) == list(job.props)


def test_batches_balance_by_size() -> None:
    assert batches([5, 1, 1, 1, 1, 1], 2) == [[0], [1, 2, 3, 4, 5]]
    assert batches([1] * 5, 2) == [[0, 2, 4], [1, 3]]
    assert batches([3], 4) == [[0]]
    assert batches([], 2) == []
    found = batches([7, 3, 9, 1, 4, 4, 2], 3)
    assert sorted(i for b in found for i in b) == list(range(7))

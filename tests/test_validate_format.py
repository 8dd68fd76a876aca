"""The log formats: the JSON Lines format's fields and errors, ShiViz logs and ITF traces.

Every bad line is one error naming the file, the line and the field (and through the
CLI: exit code 2, one line, no traceback, nothing written). Logs written by
:func:`write_jsonl`, by the reports' ShiViz writer and by the reports' ITF writer read
back to the same events.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.cli import main
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.simulate.run import simulate
from ordercheck.checker.validate.diagram import timeline_of
from ordercheck.checker.validate.generate import walk
from ordercheck.checker.validate.itf_log import read_itf
from ordercheck.checker.validate.jsonl import read_jsonl, write_jsonl
from ordercheck.checker.validate.log import DELIVER, DROP, SEND, SIGNAL_IN, SIGNAL_OUT, STEP
from ordercheck.checker.validate.readers import expand_logs, format_of, read_log, read_text
from ordercheck.checker.validate.shiviz_log import read_shiviz
from ordercheck.reports.itf import itf_trace
from ordercheck.reports.shiviz import PARSER, shiviz_log

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "validate"


def read(lines: list[str]):
    return read_jsonl(io.StringIO("\n".join(lines) + "\n"), "t.jsonl")


def test_every_kind_and_optional_field() -> None:
    log = read([
        '{"format": "ordercheck-log", "version": 1, "peers": ["a", "b", "c"], "note": "kept"}',
        '{"peer": "a", "kind": "send", "msg": "a1", "to": ["b", "c"], "lamport": 1, "time": "10:00:00.120"}',
        "",
        '{"peer": "b", "kind": "deliver", "msg": "a1", "vc": {"a": 1, "b": 1}, "thread": "ignored"}',
        '{"peer": "c", "kind": "drop", "msg": "a1", "reason": "full"}',
        '{"peer": "b", "kind": "signal", "to": "c", "time": 12.5}',
        '{"peer": "a", "kind": "signal_out", "to": "c"}',
        '{"peer": "c", "kind": "signal_in", "from": "a"}',
        '{"peer": "c", "kind": "fail"}',
        '{"peer": "c", "kind": "restart"}',
        '{"peer": "a", "kind": "step", "action": ["commit", 0, 1]}',
        '{"peer": "b", "kind": "step", "action": "b ticks its clock"}',
        '{"peer": "b", "kind": "send", "msg": 7, "to": ["a"]}',
    ])
    assert log.peers == ["a", "b", "c"] and log.header["note"] == "kept"
    assert log.kind == [SEND, DELIVER, DROP, SIGNAL_OUT, SIGNAL_IN, SIGNAL_OUT, SIGNAL_IN, 5, 6, STEP, STEP, SEND]
    assert log.line == [2, 4, 5, 6, 6, 7, 8, 9, 10, 11, 12, 13]
    assert log.msg_name == ["a1", "7"] and log.msg_dests == [(1, 2), (0,)] and log.msg_seq == [0, 0]
    assert log.meta[0] == {"lamport": 1, "time": "10:00:00.120"}
    assert log.meta[1] == {"vc": {"a": 1, "b": 1}}
    assert log.meta[2] == {"reason": "full"}
    assert log.actions == [("commit", 0, 1), "b ticks its clock"]
    assert log.describe(2) == "c dropped a1 (full)" and log.where(3) == "b signalled c (line 6)"


def test_written_logs_read_back() -> None:
    w = walk(load_model(ROOT / "models" / "bus1-4-signal.toml"), 3, 200)
    buf = io.StringIO()
    write_jsonl(w.log, buf)
    back = read_jsonl(io.StringIO(buf.getvalue()), "x.jsonl")
    assert (back.peer, back.kind, back.arg) == (w.log.peer, w.log.kind, w.log.arg)
    assert (back.msg_name, back.msg_dests, back.msg_seq) == (w.log.msg_name, w.log.msg_dests, w.log.msg_seq)
    assert back.header["expect"] == w.verdicts
    assert any(k == SIGNAL_OUT for k in back.kind), "the walk should hold a signal"


BAD = [
    ('{"peer": "a", "kind": "send", "msg": "a1", "to": ["b"]', "t.jsonl:2: is not valid JSON"),
    ('["peer", "a"]', "t.jsonl:2: is not a JSON object (one event per line)"),
    ('{"kind": "deliver", "msg": "a1"}', "t.jsonl:2: peer: missing"),
    ('{"peer": "", "kind": "deliver", "msg": "a1"}', "t.jsonl:2: peer: expected a peer name (a non-empty string), got ''"),
    ('{"peer": "b", "msg": "a1"}', "t.jsonl:2: kind: missing (one of send, deliver, drop, signal, signal_out, "
                                   "signal_in, fail, restart, step)"),
    ('{"peer": "b", "kind": "recv", "msg": "a1"}', "t.jsonl:2: kind: unknown kind 'recv'"),
    ('{"peer": "b", "kind": "deliver"}', "t.jsonl:2: msg: missing (the message id)"),
    ('{"peer": "b", "kind": "deliver", "msg": true}', "t.jsonl:2: msg: expected a message id"),
    ('{"peer": "a", "kind": "send", "msg": "a2"}', "t.jsonl:2: to: missing (the destinations of the send)"),
    ('{"peer": "a", "kind": "send", "msg": "a2", "to": []}', "t.jsonl:2: to: expected a non-empty list of peer names"),
    ('{"peer": "a", "kind": "send", "msg": "a2", "to": ["b", "b"]}', "t.jsonl:2: to: names a destination twice"),
    ('{"peer": "a", "kind": "send", "msg": "a1", "to": ["b"]}', "t.jsonl:2: msg: message 'a1' was already sent on line 1"),
    ('{"peer": "a", "kind": "signal", "to": "a"}', "t.jsonl:2: to: a peer cannot signal itself"),
    ('{"peer": "a", "kind": "signal_in"}', "t.jsonl:2: from: missing"),
    ('{"peer": "b", "kind": "drop", "msg": "a1", "reason": 3}', "t.jsonl:2: reason: expected a string, got 3"),
    ('{"peer": "b", "kind": "deliver", "msg": "a1", "vc": {"a": -1}}', "t.jsonl:2: vc: expected an object from peer names"),
    ('{"peer": "b", "kind": "deliver", "msg": "a1", "lamport": "3"}', "t.jsonl:2: lamport: expected a non-negative integer"),
    ('{"peer": "b", "kind": "deliver", "msg": "a1", "time": null}', "t.jsonl:2: time: expected a number or a string"),
    ('{"peer": "b", "kind": "step", "action": []}', "t.jsonl:2: action: expected the spec step as text or as a list"),
    ('{"format": "ordercheck-log"}', "t.jsonl:2: format: a header is only allowed on the first line"),
]


@pytest.mark.parametrize("line,message", BAD, ids=[m.split(": ", 2)[1] + str(i) for i, (_l, m) in enumerate(BAD)])
def test_bad_lines(line: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        read(['{"peer": "a", "kind": "send", "msg": "a1", "to": ["b"]}', line])
    assert err.value.line().startswith(message)


def test_first_line_is_line_one_and_headers_are_checked() -> None:
    """The send above sits on line 1 (no header): errors count lines from 1."""
    for header, message in [
        ('{"format": "other"}', "t.jsonl:1: format: expected 'ordercheck-log', got 'other'"),
        ('{"format": "ordercheck-log", "version": 2}', "t.jsonl:1: version: this reader knows version 1, the log says 2"),
        ('{"format": "ordercheck-log", "peers": ["a", "a"]}', "t.jsonl:1: peers: names a peer twice"),
        ('{"format": "ordercheck-log", "peers": "ab"}', "t.jsonl:1: peers: expected a list of peer names"),
    ]:
        with pytest.raises(InputError) as err:
            read([header])
        assert err.value.line().startswith(message)
    with pytest.raises(InputError) as err:
        read(['{"format": "ordercheck-log", "peers": ["a", "b"]}', '{"peer": "c", "kind": "fail"}'])
    assert err.value.line() == ("t.jsonl:2: peer: 'c' is not one of the peers the header names (a, b)")


def test_cli_bad_line_is_one_line_exit_2_and_nothing_written(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text((DATA / "causal-relayed.jsonl").read_text())
    bad = tmp_path / "zz-bad.jsonl"
    bad.write_text('{"peer": "a", "kind": "send", "msg": "a1", "to": ["b"]}\n{"peer": "b", "kind": "deliver", "mgs": "a1"}\n')
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["validate", str(tmp_path), "-o", str(out), "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == f"ordercheck: error: {bad}:2: msg: missing (the message id)"
    assert "Traceback" not in result.output
    assert not out.exists() and not (tmp_path / "r.json").exists()


def test_cli_unknown_property_and_missing_log(tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(main, ["validate", str(DATA / "fifo-swapped.jsonl"), "-p", "fifo,order"])
    assert r.exit_code == 2 and "--properties: unknown property 'order'" in r.output
    r = runner.invoke(main, ["validate", str(tmp_path / "nope.jsonl")])
    assert r.exit_code == 2 and "nope.jsonl: no such file or directory" in r.output
    r = runner.invoke(main, ["validate", str(tmp_path / "*.jsonl")])
    assert r.exit_code == 2 and "no file matches this pattern" in r.output


def test_shiviz_logs_read_back() -> None:
    log = read_log(DATA / "causal-signal-split.jsonl")
    text = shiviz_log(timeline_of(log))
    back = read_shiviz(text, "x.shiviz.log")
    assert [back.describe(i) for i in range(len(back))] == [log.describe(i) for i in range(len(log))]
    assert back.fmt == "shiviz" and back.line[0] == 3 and back.meta[0] == {"vc": {"a": 1}}
    assert format_of("x.log", text) == "shiviz"
    same = read_text(text, "whatever.txt")
    assert same.kind == log.kind and same.fmt == "shiviz"


@pytest.mark.parametrize("text,where", [
    (PARSER + "\n\nnot an event\nb {}\n", "x:3: event: 'not an event' is not an event the reports write"),
    (PARSER + "\n\na received a1 (step 1)\nb {}\n", "x:3: host: the event is a's but the host is 'b'"),
    (PARSER + "\n\na received a1\na {oops}\n", "x:4: clock: is not valid JSON"),
    (PARSER + "\n\na received a1\na {}\nstray text\n", "x:5: event: does not match the parser expression"),
    (PARSER + "\n=== run ===\n", "x:2: delimiter: several executions in one file are not supported"),
    ("(?<x>.*)\n\n", "x:1: parser: lacks the named group(s) event, host"),
    ("(?<event>[\n\n", "x:1: parser: is not a regular expression"),
])
def test_shiviz_errors(text: str, where: str) -> None:
    with pytest.raises(InputError) as err:
        read_shiviz(text, "x")
    assert err.value.line().startswith(where)


def test_itf_traces_read_back() -> None:
    """A counterexample written as ITF (as the reports write it) replays into the events
    the spec's history records, at the states they lead to."""
    model = load_model(ROOT / "models" / "sequencer-mutant-no-hold-back.toml")
    result = simulate(model, 200, 60, 0)
    trace = result.properties["total"].trace
    assert trace
    doc = itf_trace(trace, source=model.path, extra_meta={"spec": model.spec_name, "constants": model.constants})
    text = json.dumps(doc)
    log = read_itf(text, "t.itf.json")
    assert log.fmt == "itf" and log.unit == "state"
    assert format_of("t.itf.json", text) == "itf" and format_of("t.json", text) == "itf"
    assert "state" in log.where(0)
    from ordercheck.checker.validate.checks import check_log

    v = check_log(log, ["total"])["total"]
    assert v is not None and "(state " in v.sentence
    bad = dict(doc, states=[doc["states"][0], dict(doc["states"][1], **{"#meta": {"index": 1, "label": ["nope"]}})])
    with pytest.raises(InputError) as err:
        read_itf(json.dumps(bad), "t.itf.json")
    assert err.value.line().startswith("t.itf.json: states[1].#meta.label: no enabled action of spec 'sequencer'")
    with pytest.raises(InputError) as err:
        read_itf(json.dumps(dict(doc, **{"#meta": {}})), "t.itf.json")
    assert "#meta.spec: missing" in err.value.line()


def test_directories_pick_log_files(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for name in ("a.jsonl", "sub/b.shiviz.log", "sub/c.itf.json", "notes.txt", "d.json"):
        (tmp_path / name).write_text("")
    names = [p.relative_to(tmp_path).as_posix() for p in expand_logs([str(tmp_path)])]
    assert names == ["a.jsonl", "sub/b.shiviz.log", "sub/c.itf.json"]
    assert [p.name for p in expand_logs([str(tmp_path / "*.json")])] == ["d.json"]

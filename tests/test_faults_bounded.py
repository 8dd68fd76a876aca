"""Inputs are bounded (issue 30): every file a command reads is a regular file, read
within a limit the error names; globs and directory walks never go round a symbolic
link that loops nor name a file twice; JSON is parsed to a bounded depth in every
reader; and a spec that breaks the spec API or raises in ``setup()`` is one line.

A named pipe, ``/dev/zero`` or a link to it once made a command wait for ever or read
until the out-of-memory killer came: those runs are separate processes under a wall
clock limit and an address-space limit, so that a regression fails here instead of
hanging the suite or filling the machine.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from tests.faults_helpers import MODELS, checkpoint_of, invoke, limits, one_error_line, run

FIFO_3 = MODELS / "fifo-3.toml"
BOUND = limits(address_space=3 << 30)  # /dev/zero read whole fails here at once rather than filling the machine
HEADER = '{"format": "ordercheck-log", "version": 1, "peers": ["a", "b"]}\n'
LOG = HEADER + '{"peer": "a", "kind": "send", "msg": "m", "to": ["b"]}\n{"peer": "b", "kind": "deliver", "msg": "m"}\n'


def _quick(*args: str | Path) -> tuple[int, str, float]:
    """A run in a process of its own, at most 30 seconds: (exit code, its one line, seconds)."""
    start = time.monotonic()
    out = run(*args, preexec=BOUND, timeout=30)
    return out.returncode, one_error_line(out.stderr), time.monotonic() - start


# -- files that are not regular files --------------------------------------------------------


def _fifo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


def _zero_link(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.symlink_to("/dev/zero")
    return path


@pytest.mark.parametrize(("command", "make", "says"), [
    ("check", _fifo, "is a named pipe (FIFO), not a regular file"),
    ("check", _zero_link, "is a character device, not a regular file (a symbolic link to /dev/zero)"),
    ("report", _fifo, "is a named pipe (FIFO), not a regular file"),
    ("report", _zero_link, "is a character device, not a regular file (a symbolic link to /dev/zero)"),
    ("validate-model", _fifo, "is a named pipe (FIFO), not a regular file"),
], ids=["check-fifo", "check-zero-link", "report-fifo", "report-zero-link", "validate-model-fifo"])
def test_a_file_that_is_not_regular_is_refused_at_once(tmp_path: Path, command: str, make, says: str) -> None:
    """A named pipe waited for a writer for ever (check, report, validate --model); a
    model or result file that is a link to /dev/zero was read until memory ran out."""
    path = make(tmp_path, "in.toml" if command != "report" else "in.json")
    if command == "report":
        args: tuple = ("report", path, "-o", tmp_path / "out")
    elif command == "validate-model":
        (tmp_path / "l.jsonl").write_text(LOG)
        args = ("validate", tmp_path / "l.jsonl", "--model", path)
    else:
        args = ("check", path)
    code, line, seconds = _quick(*args)
    assert code == 2, line
    assert line == f"ordercheck: error: {path}: {says}" + ("" if "symbolic" in says else " (reading one waits for a writer)")
    assert seconds < 20
    assert not (tmp_path / "out").exists()


def test_report_of_dev_zero_and_a_socket(tmp_path: Path) -> None:
    """``report /dev/zero`` read until the out-of-memory killer; a socket is no file either."""
    code, line, seconds = _quick("report", "/dev/zero", "-o", tmp_path / "out")
    assert (code, line) == (2, "ordercheck: error: /dev/zero: is a character device, not a regular file")
    assert seconds < 20
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "s.toml"))
        out = invoke("check", tmp_path / "s.toml")
    finally:
        sock.close()
    assert out.returncode == 2
    assert one_error_line(out.stderr) == f"ordercheck: error: {tmp_path / 's.toml'}: is a socket, not a regular file"


def test_a_checkpoint_whose_current_leads_to_dev_zero(tmp_path: Path) -> None:
    """A checkpoint's CURRENT that is a link to /dev/zero was read until memory ran out."""
    ckpt = tmp_path / "ckpt"
    assert invoke("check", FIFO_3, "--quiet", "--checkpoint", ckpt, "--checkpoint-every", "0").returncode == 0
    current = checkpoint_of(ckpt) / "CURRENT"
    current.unlink()
    current.symlink_to("/dev/zero")
    code, line, seconds = _quick("check", FIFO_3, "--checkpoint", ckpt, "--resume")
    assert code == 2, line
    assert line.startswith(f"ordercheck: error: {current}: damaged checkpoint: is a character device, "
                           "not a regular file (a symbolic link to /dev/zero)"), line
    assert "and run again with --resume" in line  # the intact level is named, never deleted
    assert seconds < 20


def test_links_that_loop_are_named_as_such(tmp_path: Path) -> None:
    """A model path that loops said "no such file"; a mutant path that loops was a traceback."""
    (tmp_path / "a.toml").symlink_to("b.toml")
    (tmp_path / "b.toml").symlink_to("a.toml")
    out = invoke("check", tmp_path / "a.toml")
    assert out.returncode == 2
    assert one_error_line(out.stderr) == (f"ordercheck: error: {tmp_path / 'a.toml'}: is a symbolic link that loops "
                                          "(too many levels of symbolic links)")
    model = tmp_path / "m.toml"
    model.write_text('spec = "fifo"\n[constants]\npeers = 2\n[expect]\nfifo = "holds"\n'
                     '[evidence]\nfifo = { mutant = "a.toml" }\n')
    out = invoke("check", model)
    assert out.returncode == 2
    assert one_error_line(out.stderr) == (f"ordercheck: error: {model}: evidence.fifo.mutant: 'a.toml' cannot be "
                                          "looked up (a symbolic link that loops)")


# -- size limits --------------------------------------------------------------------------------


def test_a_model_file_past_its_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model file is read within 1 MiB, which the error names with the way to raise it."""
    model = tmp_path / "big.toml"
    model.write_text(FIFO_3.read_text() + "# " + "x" * (1 << 20) + "\n")
    out = invoke("check", model, "--quiet")
    assert out.returncode == 2
    assert one_error_line(out.stderr) == (f"ordercheck: error: {model}: is larger than 1 MiB, the limit for a model "
                                          "file (set ORDERCHECK_MAX_INPUT, e.g. ORDERCHECK_MAX_INPUT=4G, to raise it)")
    monkeypatch.setenv("ORDERCHECK_MAX_INPUT", "2M")
    assert invoke("check", model, "--quiet").returncode == 0
    monkeypatch.setenv("ORDERCHECK_MAX_INPUT", "lots")
    out = invoke("check", model, "--quiet")
    assert out.returncode == 2
    assert one_error_line(out.stderr) == ("ordercheck: error: ORDERCHECK_MAX_INPUT: expected a size such as 4G, 512M "
                                          "or 100000 (bytes), got 'lots'")


def test_a_model_through_a_pipe_that_never_ends() -> None:
    """``check /dev/stdin`` (an anonymous pipe, still allowed) fed by ``yes``: read within
    the limit, not until memory runs out."""
    import subprocess

    from tests.faults_helpers import EXE, env

    yes = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        out = subprocess.run([*EXE, "check", "/dev/stdin"], stdin=yes.stdout, capture_output=True, text=True,
                             env=env(), timeout=30, preexec_fn=BOUND)
    finally:
        yes.kill()
        yes.wait()
    assert out.returncode == 2, out.stderr
    assert one_error_line(out.stderr).startswith("ordercheck: error: /dev/stdin: is larger than 1 MiB, the limit "
                                                 "for a model file")


def test_a_log_line_past_its_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A JSON Lines log has a limit per line, not per file; another format one per file."""
    log = tmp_path / "l.jsonl"
    log.write_text(HEADER + '{"peer": "a", "kind": "send", "msg": "m", "to": ["b"], "x": "' + "y" * (1 << 20) + '"}\n')
    out = invoke("validate", log)
    assert out.returncode == 2
    assert one_error_line(out.stderr) == (f"ordercheck: error: {log}:2: is longer than 1 MiB, the limit for one line "
                                          "of a log (set ORDERCHECK_MAX_INPUT, e.g. ORDERCHECK_MAX_INPUT=64M, to raise it)")
    itf = tmp_path / "t.itf.json"
    itf.write_text('{"#meta": {"spec": "fifo"}, "states": [' + " " * 3000 + "]}")
    monkeypatch.setenv("ORDERCHECK_MAX_INPUT", "2K")
    out = invoke("validate", itf)
    assert out.returncode == 2
    assert one_error_line(out.stderr).startswith(f"ordercheck: error: {itf}: is larger than 2 KiB, the limit for a log "
                                                 "in the itf format")


# -- globs and directory walks --------------------------------------------------------------------


def test_a_glob_over_links_that_loop_names_each_log_once(tmp_path: Path) -> None:
    """Two links back up the tree: ``**`` went round them until the path was too long
    (the same file 41 times with one link; with two, no end in sight)."""
    sub = tmp_path / "logs" / "sub"
    sub.mkdir(parents=True)
    (sub / "a.jsonl").write_text(LOG)
    (sub / "up").symlink_to("..")
    (sub / "again").symlink_to("../sub")
    (sub / "same.jsonl").symlink_to("a.jsonl")  # the same file by a second name
    out = run("validate", f"{tmp_path}/logs/**/*.jsonl", timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count(": 2 events, 2 peers") == 1, out.stdout
    assert f"{sub / 'a.jsonl'}: 2 events" in out.stdout
    walked = invoke("validate", tmp_path / "logs")
    assert walked.returncode == 0, walked.stderr
    assert walked.stdout.count(": 2 events, 2 peers") == 1, walked.stdout


# -- JSON nested deeply, in every reader ------------------------------------------------------------

DEEP = "[" * 1000 + "]" * 1000  # 2 KB


@pytest.mark.parametrize(("name", "text", "says"), [
    ("l.jsonl", HEADER + '{"peer": "a", "kind": "send", "msg": "m", "to": ["b"], "x": ' + DEEP + "}\n",
     ":2: is nested too deeply to be an event (more than 100 levels of arrays and objects)"),
    ("t.itf.json", '{"#meta": {"spec": "fifo"}, "vars": ["x"], "states": [{"x": ' + DEEP + "}]}",
     ": is nested too deeply to be an ITF trace (more than 500 levels of arrays and objects)"),
    ("s.shiviz.log", "(?<host>\\S+) (?<clock>.*)\\n(?<event>.*)\n\na " + DEEP + "\na sent a1 to b\n",
     ":4: clock: is nested too deeply to be a vector clock (more than 100 levels of arrays and objects)"),
    ("l.jsonl", HEADER + '{"peer": "a", "kind": "send", "msg": "m", "to": ["b"], "x": ' + "[" * 150 + "]" * 150 + "}\n",
     ":2: is nested too deeply to be an event (more than 100 levels of arrays and objects)"),
], ids=["jsonl", "itf", "shiviz", "jsonl-past-the-limit-only"])
def test_deep_json_in_a_log_names_the_limit(tmp_path: Path, name: str, text: str, says: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    out = invoke("validate", path)
    assert out.returncode == 2, out.stderr
    assert one_error_line(out.stderr) == f"ordercheck: error: {path}{says}"


def test_deep_json_in_a_result_file_and_a_checkpoint(tmp_path: Path) -> None:
    result = tmp_path / "r.json"
    result.write_text(DEEP)
    out = invoke("report", result, "-o", tmp_path / "out")
    assert out.returncode == 2
    assert one_error_line(out.stderr) == (f"ordercheck: error: {result}: is nested too deeply to be a result file "
                                          "(more than 500 levels of arrays and objects)")
    ckpt = tmp_path / "ckpt"
    assert invoke("check", FIFO_3, "--quiet", "--checkpoint", ckpt, "--checkpoint-every", "0").returncode == 0
    model_dir = checkpoint_of(ckpt)
    manifest = model_dir / (model_dir / "CURRENT").read_text().strip() / "manifest.json"
    manifest.write_text(DEEP)
    out = invoke("check", FIFO_3, "--checkpoint", ckpt, "--resume")
    assert out.returncode == 2
    assert (f"{manifest}: damaged checkpoint: cannot be read: is nested too deeply to be a checkpoint manifest "
            "(more than 64 levels of arrays and objects)") in one_error_line(out.stderr)


# -- a spec that breaks the spec API, or raises while it is made -------------------------------------

LIST_STATE = """\
from ordercheck.checker import Property, Spec


class Listy(Spec):
    name = "listy"

    def init_states(self):
        return [(0,)]

    def next_states(self, state):
        return [(("go",), (1, [2]))] if state[0] == 0 else []

    def properties(self):
        return [Property.always("ok", lambda s: None)]
"""

BAD_SETUP = LIST_STATE.replace('name = "listy"', 'name = "badsetup"\n\n    def setup(self):\n'
                                                 '        raise ValueError("no such configuration")')


@pytest.mark.parametrize("extra", [(), ("--workers", "2")], ids=["workers-1", "workers-2"])
def test_a_list_inside_a_successor_state_is_exit_2(tmp_path: Path, extra: tuple[str, ...]) -> None:
    """The search again that looks for the spec's exception hashed the state itself: a
    TypeError traceback, exit 1."""
    (tmp_path / "listy.py").write_text(LIST_STATE)
    model = tmp_path / "m.toml"
    model.write_text('spec = "listy.py"\n')
    out = invoke("check", model, *extra)
    assert out.returncode == 2, out.stderr
    assert one_error_line(out.stderr).startswith("ordercheck: error: spec listy: state[1] is a list ([2]); states "
                                                 "may hold only ints, bools, tuples and frozensets")


def test_a_list_inside_a_state_under_graph_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "listy.py").write_text(LIST_STATE)
    model = tmp_path / "m.toml"
    model.write_text('spec = "listy.py"\n')
    out = invoke("graph", model, "-o", tmp_path / "g")
    assert out.returncode == 2, out.stderr
    assert one_error_line(out.stderr).startswith("ordercheck: error: spec listy: state[1] is a list")
    assert not (tmp_path / "g").exists()


def test_an_exception_in_setup_is_exit_5(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(BAD_SETUP)
    model = tmp_path / "m.toml"
    model.write_text('spec = "bad.py"\n')
    out = invoke("check", model)
    assert out.returncode == 5, out.stderr
    assert one_error_line(out.stderr) == (f"ordercheck: spec error: {model}: spec bad.py raised ValueError: no such "
                                          "configuration at bad.py:8 while the model was loaded")


@pytest.mark.parametrize(("spec", "says"), [
    ("a\\u0000b.py", "spec: 'a\\x00b.py' is not a file name (it holds a NUL character)"),
    ("loop.py", "spec: 'loop.py' cannot be looked up (Symlink loop from"),
    ("fifo.py", "spec: 'fifo.py' is not a file (TMP/fifo.py is a named pipe (FIFO), not a regular file"),
], ids=["nul", "loop", "fifo"])
def test_a_spec_path_with_a_nul_a_loop_or_a_fifo(tmp_path: Path, spec: str, says: str) -> None:
    """A NUL and a loop were one line before issue 30 (kept so that they stay one); a
    named pipe was said not to exist."""
    (tmp_path / "loop.py").symlink_to("loop2.py")
    (tmp_path / "loop2.py").symlink_to("loop.py")
    os.mkfifo(tmp_path / "fifo.py")
    says = says.replace("TMP", str(tmp_path.resolve()))
    model = tmp_path / "m.toml"
    model.write_text(f'spec = "{spec}"\n')
    out = invoke("check", model)
    assert out.returncode == 2, out.stderr
    assert one_error_line(out.stderr).startswith(f"ordercheck: error: {model}: {says}")


def test_a_spec_raising_under_graph_is_exit_5(tmp_path: Path) -> None:
    """``graph`` ran the spec's code with no search again behind it: a traceback, exit 1."""
    (tmp_path / "raiser.py").write_text(LIST_STATE.replace("(1, [2])", "(1 // 0,)").replace('"listy"', '"raiser"'))
    model = tmp_path / "m.toml"
    model.write_text('spec = "raiser.py"\n')
    out = invoke("graph", model, "-o", tmp_path / "g")
    assert out.returncode == 5, out.stderr
    assert one_error_line(out.stderr) == (f"ordercheck: spec error: {model}: spec raiser raised ZeroDivisionError: "
                                          "integer division or modulo by zero at raiser.py:11 in next_states, "
                                          "taken from an initial state")
    assert not (tmp_path / "g").exists()


# -- a result file whose fields have the wrong types ----------------------------------------


@pytest.fixture(scope="module")
def violated_record(tmp_path_factory: pytest.TempPathFactory) -> dict:
    import json

    out = tmp_path_factory.mktemp("record") / "r.json"
    assert invoke("check", MODELS / "bss-mutant-no-causal-condition.toml", "--quiet", "--json", out).returncode == 0
    return json.loads(out.read_text())


def _set(record: dict, path: tuple, value: object) -> dict:
    import copy

    changed = copy.deepcopy(record)
    at = changed
    for key in path[:-1]:
        at = at[key] if not isinstance(key, str) or key != "*" else next(iter(at.values()))
    last = path[-1]
    if last == "*":
        last = next(iter(at))
    at[last] = value
    return changed


@pytest.mark.parametrize(("path", "value", "field", "what"), [
    (("spec",), [], "spec", "expected a string, found an array"),
    (("model",), 3, "model", "expected a string, found a number"),
    (("constants",), [], "constants", "expected a JSON object, found an array"),
    (("properties",), [], "properties", "expected a JSON object, found an array"),
    (("properties", "causal", "status"), "fine", "properties.causal.status",
     "expected one of 'holds', 'violated', 'unknown', found 'fine'"),
    (("properties", "causal", "trace"), {}, "properties.causal.trace", "expected an array, found an object or expected null, found an object"),
    (("stats", "distinct_states"), "many", "stats.distinct_states", "expected an integer, found a string"),
    (("stats", "surprise"), 1, "stats.surprise", "is not a field of this record"),
    (("coverage",), {"send": "x"}, "coverage.send", "expected an integer, found a string"),
])
def test_a_result_field_of_the_wrong_type_is_named(tmp_path: Path, violated_record: dict, path: tuple, value: object,
                                                   field: str, what: str) -> None:
    """`report` on a result record whose field has the wrong type (a hand-edited or crafted
    file) was a traceback, exit 1: one line naming the file, the field and its type, exit 2."""
    import json

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_set(violated_record, path, value)))
    done = invoke("report", bad, "-o", tmp_path / "out")
    assert done.returncode == 2, done.stderr
    assert one_error_line(done.stderr) == f"ordercheck: error: {bad}: {field}: {what}"
    assert not (tmp_path / "out").exists()


def test_a_step_of_a_trace_is_checked_too(tmp_path: Path, violated_record: dict) -> None:
    import copy
    import json

    changed = copy.deepcopy(violated_record)
    trace = changed["properties"]["causal"]["trace"]
    assert trace, "the mutant's causal counterexample has steps"
    trace[1]["state"] = "not a state"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([changed]))
    done = invoke("report", bad, "-o", tmp_path / "out")
    assert done.returncode == 2, done.stderr
    assert one_error_line(done.stderr) == (f"ordercheck: error: {bad}: [0].properties.causal.trace[1].state: "
                                           "expected a JSON object, found a string")

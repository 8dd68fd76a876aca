"""Data never runs code (issue 30).

Logs, result files and checkpoints are data: a crafted file of each kind that would
create a marker file if ordercheck ran code from it (a spec file a log or a result
names, a pickled checkpoint frontier) is refused with exit code 2 and one line, and the
marker never exists. A spec file runs only when the user names it: ``validate --spec``
and ``report --spec`` (see docs/explanation/security.md). The runs are in this process
(the refusals come before any search) on toy specs and the smallest models.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from pathlib import Path

import pytest

from ordercheck.checker.engine.frontier import write_record
from tests.faults_helpers import MODELS, checkpoint_of, invoke, one_error_line

EVIL = '''
import pathlib
pathlib.Path({marker!r}).write_text("code ran")

from ordercheck.checker import Property, Spec


class Evil(Spec):
    name = "evil"

    def init_states(self):
        return [0]

    def next_states(self, state):
        return []

    def properties(self):
        return [Property.always("fine", lambda s: None)]
'''

COUNTER = '''
from ordercheck.checker import Constant, Property, Spec


class Counter(Spec):
    name = "counter"
    constants = (Constant("limit", int, 2, "largest value"),)

    def init_states(self):
        return [0]

    def next_states(self, s):
        return [(("inc",), s + 1)] if s < self.limit else []

    def properties(self):
        return [Property.always("small", lambda s: None if s <= 1 else f"{s} > 1")]
'''

SEQUENCER = '''
from ordercheck.specs.sequencer import SPEC as _Builtin


class Mine(_Builtin):
    """The built-in sequencer under a name of the user's: a spec file that is not built in."""

    name = "mine"
'''


@pytest.fixture
def evil(tmp_path: Path) -> tuple[Path, Path]:
    """A spec file whose import creates ``marker``: (the file, the marker)."""
    marker = tmp_path / "marker"
    path = tmp_path / "evil.py"
    path.write_text(EVIL.format(marker=str(marker)))
    return path, marker


def refused(out, *words: str) -> str:
    assert out.returncode == 2, out.stdout + out.stderr
    line = one_error_line(out.stderr)
    for w in words:
        assert w in line, line
    return line


# -- ITF logs: #meta.spec -------------------------------------------------------------


def _itf(spec: str, constants: dict | None = None) -> str:
    return json.dumps({"#meta": {"format": "ITF", "spec": spec, "constants": constants or {}},
                       "vars": ["x"], "states": [{"#meta": {"index": 0}, "x": 0}]})


@pytest.mark.parametrize("how", ["file", "directory", "glob"])
def test_an_itf_log_never_imports_the_spec_file_it_names(tmp_path: Path, evil, how: str) -> None:
    spec, marker = evil
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "trace.itf.json"
    log.write_text(_itf(f"{spec}:Evil"))
    arg = {"file": log, "directory": logs, "glob": logs / "*.itf.json"}[how]
    out = invoke("validate", arg)
    assert not marker.exists()
    refused(out, f"{log}: #meta.spec: names ", "evil.py", "never imports code a data file names", "--spec")


@pytest.mark.parametrize("ref", ["evil.py", "evil_module", "evil_module:Evil"])
def test_an_itf_log_never_imports_a_relative_file_or_a_module(tmp_path: Path, evil, ref: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Relative to the working directory, or a module found there: refused all the same."""
    spec, marker = evil
    (tmp_path / "evil_module.py").write_text(spec.read_text())
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "t.itf.json"
    log.write_text(_itf(ref))
    out = invoke("validate", log)
    assert not marker.exists()
    if ref == "evil_module":  # a bare name selects among built-in and registered specs only
        refused(out, "#meta.spec: unknown spec 'evil_module'")
    else:
        refused(out, "#meta.spec: names ", "--spec")


def test_validate_spec_replays_an_itf_trace_through_the_spec_the_user_names(tmp_path: Path) -> None:
    from ordercheck.checker.loading.modelfile import load_model
    from ordercheck.checker.simulate.run import simulate
    from ordercheck.reports.itf import itf_trace

    model = load_model(MODELS / "sequencer-mutant-no-hold-back.toml")
    trace = simulate(model, 200, 60, 0).properties["total"].trace
    mine = tmp_path / "mine.py"
    mine.write_text(SEQUENCER)
    log = tmp_path / "t.itf.json"
    sender = "/home/sender/project/mine.py:Mine"  # where the trace was written, not here
    log.write_text(json.dumps(itf_trace(trace, source=model.path,
                                        extra_meta={"spec": sender, "constants": model.constants})))
    refused(invoke("validate", log, "-p", "total"), "#meta.spec: names ", "--spec")
    out = invoke("validate", log, "-p", "total", "--spec", mine)
    assert out.returncode == 1, out.stdout + out.stderr  # read, replayed, and total is violated
    assert "total VIOLATED" in out.stdout
    both = invoke("validate", log, "--spec", mine, "--model", MODELS / "sequencer-mutant-no-hold-back.toml")
    refused(both, "--spec: ", "leave one out")
    refused(invoke("validate", log, "--spec", tmp_path / "nope.py"), "--spec: ", "is not a file")


def test_a_jsonl_header_naming_a_spec_runs_nothing(tmp_path: Path, evil) -> None:
    """A JSON Lines header may carry ``spec`` and ``model`` (generate-logs writes them):
    they are recorded, never loaded."""
    spec, marker = evil
    log = tmp_path / "l.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in [
        {"format": "ordercheck-log", "version": 1, "spec": f"{spec}:Evil", "model": str(spec)},
        {"peer": "a", "kind": "send", "msg": "m1", "to": ["b"]},
        {"peer": "b", "kind": "deliver", "msg": "m1"},
    ]) + "\n")
    out = invoke("validate", log, "-p", "fifo")
    assert out.returncode == 0, out.stdout + out.stderr
    assert not marker.exists()


# -- result files: "spec" -------------------------------------------------------------


@pytest.fixture
def result(tmp_path: Path) -> tuple[Path, Path]:
    """A ``check --json`` result of a model whose spec is a file of the user's (its
    trace replays through it): (the result, the spec file)."""
    spec = tmp_path / "counter.py"
    spec.write_text(COUNTER)
    model = tmp_path / "m.toml"
    model.write_text(f'spec = "{spec.name}"\n[constants]\nlimit = 2\n')
    out = tmp_path / "r.json"
    run = invoke("check", model, "--quiet", "--json", out)
    assert run.returncode == 1, run.stdout + run.stderr  # small is violated: a trace to replay
    assert json.loads(out.read_text())["spec"] == f"{spec}:Counter"
    return out, spec


def test_a_result_file_never_imports_the_spec_it_names(tmp_path: Path, result, evil) -> None:
    path, _spec = result
    spec, marker = evil
    path.write_text(json.dumps(dict(json.loads(path.read_text()), spec=f"{spec}:Evil")))
    out = invoke("report", path, "-o", tmp_path / "report")
    assert not marker.exists()
    refused(out, f"{path}: spec: names ", "evil.py", "--spec")
    assert not (tmp_path / "report").exists()
    # A list of records names the one at fault.
    path.write_text(json.dumps([json.loads(path.read_text())] * 2))
    out = invoke("report", path, "-o", tmp_path / "report")
    assert not marker.exists()
    refused(out, f"{path}: [0].spec: names ")


def test_report_spec_replays_the_results_of_a_users_spec(tmp_path: Path, result) -> None:
    path, checked = result
    # The result as it comes from another machine: its spec file's path is the sender's,
    # and the same file is here under another path, which this process never imported.
    spec = tmp_path / "elsewhere" / "counter.py"
    spec.parent.mkdir()
    spec.write_text(checked.read_text())
    path.write_text(json.dumps(dict(json.loads(path.read_text()), spec="/home/sender/counter.py:Counter")))
    refused(invoke("report", path, "-o", tmp_path / "report"), f"{path}: spec: names ", "--spec")
    out = invoke("report", path, "-o", tmp_path / "report", "--spec", spec)
    assert out.returncode == 0, out.stdout + out.stderr
    page = (tmp_path / "report" / "index.html").read_text()
    assert "cannot be replayed" not in page and "2 &gt; 1" in page
    other = tmp_path / "other.py"
    other.write_text(COUNTER.replace("class Counter", "class Other"))
    # Among several, a result takes the one of its class name; none of it: refused.
    two = invoke("report", path, "-o", tmp_path / "r3", "--spec", other, "--spec", spec)
    assert two.returncode == 0, two.stdout + two.stderr
    assert "2 &gt; 1" in (tmp_path / "r3" / "index.html").read_text()
    # A registered name not installed here is no code to refuse: a note in the report, or the --spec given.
    path.write_text(json.dumps(dict(json.loads(path.read_text()), spec="my_counter")))
    note = invoke("report", path, "-o", tmp_path / "r5")
    assert note.returncode == 0 and "is not installed" in (tmp_path / "r5" / "index.html").read_text()
    named = invoke("report", path, "-o", tmp_path / "r6", "--spec", spec)
    assert named.returncode == 0 and "2 &gt; 1" in (tmp_path / "r6" / "index.html").read_text()
    path.write_text(json.dumps(dict(json.loads(path.read_text()), spec="/home/sender/counter.py:Counter")))
    third = tmp_path / "third.py"
    third.write_text(COUNTER.replace("class Counter", "class Third"))
    refused(invoke("report", path, "-o", tmp_path / "r4", "--spec", other, "--spec", third),
            "none of the specs given with --spec is 'Counter'")
    refused(invoke("report", path, "-o", tmp_path / "r2", "--spec", other, "--spec", spec.parent / "nope.py"),
            "--spec: ", "is not a file")


# -- checkpoints: frontier.bin ---------------------------------------------------------


class _Boom:
    """Unpickled, it creates the marker file (``open(marker, "w")``)."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _craft(where: Path, marker: Path, fmt: int) -> None:
    """Replace ``frontier.bin`` by a pickle that creates ``marker`` and reseal the
    manifest (as format ``fmt``): only reading the frontier's contents can notice."""
    with open(where / "frontier.bin", "wb") as fh:
        write_record(fh, pickle.dumps([_Boom(marker)]))
    manifest = json.loads((where / "manifest.json").read_text())
    for name, entry in manifest["files"].items():
        data = (where / name).read_bytes()
        entry["bytes"], entry["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    manifest["format"] = fmt
    (where / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize("fmt", [3, 4], ids=["older-format", "this-format"])
def test_a_pickled_checkpoint_frontier_is_never_unpickled(tmp_path: Path, fmt: int) -> None:
    model = MODELS / "fifo-3.toml"
    ckpt = tmp_path / "ckpt"
    first = invoke("check", model, "--quiet", "--checkpoint", ckpt, "--checkpoint-every", "0")
    assert first.returncode == 0, first.stdout + first.stderr
    model_dir = checkpoint_of(ckpt)
    for level in (d for d in model_dir.iterdir() if d.is_dir()):  # the one in force and the one before it
        _craft(level, tmp_path / "marker", fmt)
    out = invoke("check", model, "--quiet", "--checkpoint", ckpt, "--resume", "--json", tmp_path / "out.json")
    assert not (tmp_path / "marker").exists()
    if fmt == 3:
        refused(out, "manifest.json: format: is checkpoint format 3, written by an older version of ordercheck",
                "never loads", "without --resume")
    else:
        refused(out, "frontier.bin: damaged checkpoint: cannot be read (record 1 is not UTF-8 JSON)")
    assert not (tmp_path / "out.json").exists()


def test_the_frontier_format_holds_states_and_nothing_else(tmp_path: Path) -> None:
    """A record of ``frontier.bin`` gives back the states written, bools and frozensets
    as they were, and refuses any other JSON value naming it."""
    from ordercheck.checker.engine.checkpoints import save
    from ordercheck.checker.engine.frontier import Frontier, decode_json, encode_json

    states = [(1, (True, False), frozenset({(1, 2), frozenset()})), 5, -3, 10**30, ()]
    back = decode_json(encode_json(states))
    assert back == states and [type(s) for s in back] == [type(s) for s in states]
    assert type(back[0][1][0]) is bool and type(back[0][2]) is frozenset
    for data, words in [(b'[["x"]]', "holds a string"), (b"[[1.5]]", "a number with a fraction"),
                        (b'[{"set": 1}]', "an object other than a set"), (b"[" * 100_000, "nested too deeply"),
                        (b"{}", "not a list of states"), (b"\x80", "not UTF-8")]:
        with pytest.raises(ValueError, match=words):
            decode_json(data)
    # A state outside the vocabulary: no checkpoint, a warning, the search goes on.
    frontier = Frontier(None)
    frontier.append([(1, object())])
    warned: list[str] = []
    import numpy as np

    assert not save(tmp_path / "ck", {}, {"depth": 1}, np.zeros(1, np.uint64), np.full(1, -1), np.zeros(1, np.uint16),
                    frontier.seal(), warned.append)
    assert len(warned) == 1 and "checkpoint not written (a state holds a value of type object" in warned[0]
    assert not any((tmp_path / "ck").iterdir())

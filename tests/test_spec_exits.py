"""No exit code 0 without verdicts: a user's spec that leaves its code by ``sys.exit(0)``,
a ``KeyboardInterrupt`` or another ``BaseException`` of its own, or ``os._exit`` (in a
worker process, or in the main process under the command line's guard), ends every
command that runs it with exit code 5 and one line naming the model, the spec, the
action (or "at import") and the shortest trace; and a checking command that ends with 0
without printing its verdicts is exit code 5 too (issue 28).

Each spec is a file of a user's project under a temporary directory, run by
``ordercheck`` in a process of its own (tests/faults_helpers.py), so that the exits are
real ones."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from faults_helpers import ROOT, run

LEAVER = '''
import os
import sys

from ordercheck.checker import Constant, Property, Spec


class Leave(BaseException):
    """Not an Exception: what a spec might use to unwind its own code."""


def leave(how):
    if how == "exit":
        sys.exit(0)
    if how == "interrupt":
        raise KeyboardInterrupt
    if how == "base":
        raise Leave("stop here")
    if how == "os_exit":
        os._exit(0)


class Leaver(Spec):
    name = "leaver"
    constants = (
        Constant("limit", int, 4, "largest value"),
        Constant("how", str, "", "how the spec's code leaves at 2"),
        Constant("where", str, "next", "next: in next_states; property: in the property"),
        Constant("guard", bool, True, "a step to switch off (for ablate)", ablation=True),
    )

    def init_states(self):
        return [0]

    def next_states(self, s):
        label = ("inc",)
        if s == 2 and self.where == "next":
            leave(self.how)
        return [(label, s + 1)] if s < self.limit else []

    def properties(self):
        def small(s):
            if s == 2 and self.where == "property":
                leave(self.how)
            return None

        return [Property.always("small", small)]
'''

MODEL = 'spec = "../specs/leaver.py"\n[constants]\nhow = "{how}"\nwhere = "{where}"\n[expect]\nsmall = "holds"\n'


def project(tmp_path: Path, how: str, where: str = "next", spec: str = LEAVER) -> Path:
    """A user's project with specs/leaver.py and models/m.toml; returns the model."""
    (tmp_path / "specs").mkdir(exist_ok=True)
    (tmp_path / "specs" / "leaver.py").write_text(spec)
    (tmp_path / "models").mkdir(exist_ok=True)
    model = tmp_path / "models" / "m.toml"
    model.write_text(MODEL.format(how=how, where=where))
    return model


def one_spec_line(proc, model: Path) -> str:
    """Exit code 5, one line on stderr, no traceback, naming the model; returns it."""
    assert proc.returncode == 5, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr[-3000:]
    assert lines[0].startswith(f"ordercheck: spec error: {model}: spec "), lines[0]
    return lines[0]


WHAT = {
    "exit": "raised SystemExit(0) (sys.exit) at leaver.py:",
    "interrupt": "raised KeyboardInterrupt at leaver.py:",
    "base": "raised Leave: stop here at leaver.py:",
    "os_exit": "raised os._exit(0) called at leaver.py:",
}


@pytest.mark.parametrize("how", ["exit", "interrupt", "base", "os_exit"])
@pytest.mark.parametrize("where", ["next", "property"])
def test_check_a_spec_that_leaves_is_exit_5_naming_action_and_trace(tmp_path, how, where):
    model = project(tmp_path, how, where)
    line = one_spec_line(run("check", model, "--quiet", cwd=tmp_path), model)
    assert "spec leaver " + WHAT[how] in line
    if where == "next":
        assert line.endswith("in action inc() (next_states), taken from the state after 2 steps: inc(); inc()"), line
    else:
        assert line.endswith("in action inc() (property small), taken from the state after 1 step: inc()"), line


@pytest.mark.parametrize("how", ["exit", "interrupt", "os_exit"])
def test_check_with_two_workers_is_exit_5_diagnosed_in_the_main_process(tmp_path, how):
    """A worker whose spec code calls sys.exit or raises KeyboardInterrupt reports it; one
    that dies by os._exit is searched again in the main process: exit 5, not 0 nor 4."""
    model = project(tmp_path, how)
    line = one_spec_line(run("check", model, "--quiet", "--workers", "2", cwd=tmp_path), model)
    assert "spec leaver " + WHAT[how] in line
    assert line.endswith("in action inc() (next_states), taken from the state after 2 steps: inc(); inc()"), line


WORKER_ONLY = LEAVER.replace(
    'if s == 2 and self.where == "next":',
    'if s == 2 and self.where == "next" and __import__("multiprocessing").current_process().name != "MainProcess":',
)


def test_a_worker_s_exit_not_found_again_is_still_exit_5(tmp_path):
    """A spec that leaves only in a worker process (its code asks which process it runs
    in): the main process's search again finds nothing, and the run is still the spec's
    failure, one line and exit 5 (it was a traceback and exit 1)."""
    assert WORKER_ONLY != LEAVER
    model = project(tmp_path, "exit", spec=WORKER_ONLY)
    line = one_spec_line(run("check", model, "--quiet", "--workers", "2", cwd=tmp_path), model)
    assert "spec leaver raised SystemExit(0) in a worker process" in line, line
    assert line.endswith("the state was not found again (search it with `ordercheck simulate`)"), line


def test_sys_exit_at_import_is_exit_5_at_import(tmp_path):
    spec = "import sys\nsys.exit(0)\n" + LEAVER
    model = project(tmp_path, "", spec=spec)
    line = one_spec_line(run("check", model, "--quiet", cwd=tmp_path), model)
    assert line == f"ordercheck: spec error: {model}: spec ../specs/leaver.py raised SystemExit(0) (sys.exit) at leaver.py:2 at import"


def test_an_exception_at_import_stays_bad_input(tmp_path):
    model = project(tmp_path, "", spec="raise ValueError('no')\n" + LEAVER)
    proc = run("check", model, "--quiet", cwd=tmp_path)
    assert proc.returncode == 2 and "ValueError: no" in proc.stderr, proc.stderr


@pytest.mark.parametrize("how", ["exit", "interrupt", "os_exit"])
def test_simulate_a_spec_that_leaves_is_exit_5(tmp_path, how):
    model = project(tmp_path, how)
    line = one_spec_line(run("simulate", model, "--runs", "20", cwd=tmp_path), model)
    assert "spec leaver " + WHAT[how] in line and line.endswith("inc(); inc()"), line


@pytest.mark.parametrize("command", ["ablate", "matrix"])
def test_ablate_and_matrix_a_spec_that_leaves_is_exit_5(tmp_path, command):
    model = project(tmp_path, "exit")
    line = one_spec_line(run(command, model, "--quiet", cwd=tmp_path), model)
    assert "spec leaver " + WHAT["exit"] in line and line.endswith("inc(); inc()"), line


VALIDATE_SPEC = '''
import sys

from ordercheck.specs.fifo import Fifo


class ExitingFifo(Fifo):
    name = "exiting_fifo"

    def next_states(self, s):
        if s not in self.init_states():
            sys.exit(0)
        return super().next_states(s)
'''

LOG = """{"format":"ordercheck-log","version":1,"peers":["a","b","c"]}
{"peer":"a","kind":"send","msg":"m1","to":["b","c"]}
{"peer":"b","kind":"deliver","msg":"m1"}
"""


def validate_project(tmp_path: Path) -> tuple[Path, Path]:
    """A user's project with the leaving FIFO spec, its model and a log of it; returns
    the model and the log."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "fifo_exit.py").write_text(VALIDATE_SPEC)
    model = tmp_path / "m.toml"
    model.write_text('spec = "specs/fifo_exit.py"\n[constants]\npeers = 3\nsends = 1\n')
    log = tmp_path / "run.jsonl"
    log.write_text(LOG)
    return model, log


def test_validate_model_conformance_a_spec_that_leaves_is_exit_5(tmp_path):
    model, log = validate_project(tmp_path)
    line = one_spec_line(run("validate", "--model", model, log), model)
    assert "spec exiting_fifo raised SystemExit(0) (sys.exit) at fifo_exit.py:" in line, line
    assert " in next_states, taken from the state after 1 step: a starts sending a1 to b,c" in line, line


def test_a_real_sigint_is_not_the_spec_s(monkeypatch):
    """A KeyboardInterrupt where SIGINT's handler is Python's own may be a real Ctrl-C
    (the API used from a shell): not diagnosed as the spec's."""
    import signal

    from ordercheck.checker.api.spec_errors import SpecExited, left_spec_code
    from ordercheck.checker.engine.diagnose import is_own_error
    from ordercheck.checker.engine.interrupts import Interrupted

    monkeypatch.setattr(signal, "getsignal", lambda _s: signal.default_int_handler)
    assert not left_spec_code(KeyboardInterrupt()) and is_own_error(KeyboardInterrupt())
    monkeypatch.setattr(signal, "getsignal", lambda _s: signal.SIG_IGN)
    assert left_spec_code(KeyboardInterrupt()) and not is_own_error(KeyboardInterrupt())
    assert not left_spec_code(Interrupted(signal.SIGINT)) and is_own_error(Interrupted(signal.SIGINT))
    assert left_spec_code(SystemExit(0)) and left_spec_code(SpecExited(0)) and not left_spec_code(ValueError())


def test_a_verdict_command_that_exits_0_without_its_verdicts_is_exit_5(monkeypatch):
    """The belt: whatever path lets a sys.exit(0) through (here a check that exits in the
    middle), check does not end with 0 unless it printed its verdicts."""
    from ordercheck.checker.cli import check as check_module
    from ordercheck.checker.cli import main

    monkeypatch.setattr(check_module, "check_one", lambda *_a, **_k: sys.exit(0))
    got = CliRunner().invoke(main, ["check", str(ROOT / "models" / "fifo-2.toml"), "--quiet"])
    assert got.exit_code == 5, got.output
    assert got.stderr.strip() == ("ordercheck: spec error: check ended by SystemExit(0) before printing its verdicts "
                                  "(a spec's code calling sys.exit or os._exit?); no verdict was reached")
    monkeypatch.undo()
    monkeypatch.setattr(check_module, "exit_after_verdicts", lambda _code: None)  # returns, nothing recorded
    got = CliRunner().invoke(main, ["check", str(ROOT / "models" / "fifo-2.toml"), "--quiet"])
    assert got.exit_code == 5 and "check returned before printing its verdicts" in got.stderr, got.output


def test_tlc_that_exits_0_without_its_comparison_is_exit_5(monkeypatch):
    """``tlc`` reports verdicts too (ours against TLC's): a sys.exit(0) in the middle (here
    from the cross-check, standing for a spec's code run by the export) is exit 5."""
    import ordercheck.tla.tlc
    from ordercheck.checker.cli import main
    from ordercheck.checker.cli import tla as tla_module

    monkeypatch.setattr(ordercheck.tla.tlc, "find_tlc", lambda *_a, **_k: None)
    monkeypatch.setattr(tla_module, "cross_check", lambda *_a, **_k: sys.exit(0))
    got = CliRunner().invoke(main, ["tlc", str(ROOT / "models" / "fifo-2.toml")])
    assert got.exit_code == 5, got.output
    assert "tlc ended by SystemExit(0) before printing its verdicts" in got.stderr, got.output


def test_os_exit_is_guarded_only_in_this_process():
    """Under the guard, os._exit raises here; a forked child still exits with its status."""
    import os

    from ordercheck.checker.api.spec_errors import SpecExited, guard_os_exit

    with guard_os_exit():
        with pytest.raises(SpecExited):
            os._exit(3)
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 7
    assert os._exit.__module__ == "posix" or os._exit.__name__ == "_exit"


def test_a_worker_never_hands_a_system_exit_to_the_main_process():
    """The engine itself (no command line around it): a spec's sys.exit(0) in a worker
    comes back as an Exception to diagnose, not as a SystemExit that would end the
    caller's process with status 0."""
    from ordercheck.checker import Constant, Property, Spec
    from ordercheck.checker.engine.bfs import search
    from ordercheck.checker.engine.shards import SpecLeftWorker

    class Leaves(Spec):
        name = "leaves_in_a_worker"
        constants = (Constant("limit", int, 4, "largest value"),)

        def init_states(self):
            return [0]

        def next_states(self, s):
            if s == 2:
                sys.exit(0)
            return [(("inc",), s + 1)]

        def properties(self):
            return [Property.always("any", lambda s: None)]

    spec = Leaves()
    with pytest.raises(SpecLeftWorker, match=r"SystemExit\(0\)"):
        search(spec, spec.properties(), workers=2)


@pytest.mark.parametrize("place,how", [("executor", "exit"), ("executor", "interrupt"), ("executor", "os_exit"),
                                       ("driver", "exit"), ("driver", "os_exit")])
def test_spark_a_spec_that_leaves_is_exit_5(spark, tmp_path, monkeypatch, place, how):
    """On Spark, in a task (the Python worker's sys.exit or os._exit fails the task, then
    the job) or on the driver (the first levels it expands itself, where os._exit is
    guarded): exit 5 and the local engine's line.
    In this session's Spark context (tests/conftest.py), as tests/test_spark.py does."""
    from ordercheck.checker.cli import main
    from ordercheck.checker.spark import bfs

    monkeypatch.setattr(bfs, "DRIVER_STATES", 0 if place == "executor" else 10**6)
    model = project(tmp_path, how)
    got = CliRunner().invoke(main, ["check", str(model), "--quiet", "--engine", "spark"])
    assert got.exit_code == 5, got.output[-3000:]
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in got.stderr, got.stderr[-3000:]
    assert lines[0].startswith(f"ordercheck: spec error: {model}: spec leaver " + WHAT[how]), lines[0]
    assert lines[0].endswith("in action inc() (next_states), taken from the state after 2 steps: inc(); inc()")
    assert got.stdout == ""


def test_validate_model_on_spark_a_spec_that_leaves_in_a_task_is_exit_5(spark, tmp_path):
    """validate --model --engine spark: the task's sys.exit fails the job (exit 4 before);
    the model is searched again here, and the run ends with the spec's line."""
    from ordercheck.checker.cli import main

    model, log = validate_project(tmp_path)
    got = CliRunner().invoke(main, ["validate", "--engine", "spark", "--model", str(model), str(log)])
    assert got.exit_code == 5, got.output[-3000:]
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in got.stderr, got.stderr[-3000:]
    assert lines[0].startswith(f"ordercheck: spec error: {model}: spec exiting_fifo raised SystemExit(0) (sys.exit)")


def test_run_model_conformance_a_spec_that_leaves_is_exit_5(tmp_path):
    # ordercheck run --model: the same conformance search on each execution's log, the same diagnosis
    model, _log = validate_project(tmp_path)
    node = f"{sys.executable} -S {ROOT / 'examples' / 'nodes' / 'causal_broadcast.py'}"
    proc = run("run", "--node-cmd", node, "--broadcasts", "1", "--runs", "1", "--model", model, cwd=tmp_path)
    line = one_spec_line(proc, model)
    assert "spec exiting_fifo raised SystemExit(0) (sys.exit) at fifo_exit.py:" in line, line
    assert not (tmp_path / "run-replay.json").exists()

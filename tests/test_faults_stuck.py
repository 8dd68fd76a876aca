"""Every run stops (issue 30): a spec stuck inside one step (an endless loop in
``next_states``) is stopped by ``--time-limit`` and by a single SIGINT or SIGTERM, with
and without worker processes, within the stop's grace; a worker that goes silent is a
lost worker; a message of a worker that cannot be read does not leave the stop
waiting for it. Each run checks its exit code, its one line and that no process of it
is left. The grace and the heartbeat timeout are cut short through the environment
(``ORDERCHECK_STOP_GRACE``, ``ORDERCHECK_HEARTBEAT_TIMEOUT``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.faults_helpers import (
    EXE,
    MODELS,
    ROOT,
    assert_no_survivors,
    env,
    one_error_line,
    session,
    started,
    stop_stray_runs,
    wait_for,
)

SPIN = '''
import os

from ordercheck.checker import Constant, Property, Spec


class Spin(Spec):
    name = "spin"
    constants = (
        Constant("limit", int, 40, "largest value"),
        Constant("at", int, 3, "the state whose step never returns"),
        Constant("marker", str, "", "a file written when the step starts its endless loop"),
    )

    def init_states(self):
        return [0]

    def next_states(self, s):
        if s == self.at:
            with open(self.marker, "w"):
                pass
            while True:
                pass
        return [(("inc",), s + 1)] if s < self.limit else []

    def properties(self):
        return [Property.always("small", lambda s: None)]
'''

GRACE = "0.5"


def _model(tmp_path: Path) -> tuple[Path, Path]:
    """A user's project with the spinning spec; returns the model and the marker."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "spin.py").write_text(SPIN)
    (tmp_path / "models").mkdir()
    marker = tmp_path / "stuck"
    model = tmp_path / "models" / "m.toml"
    model.write_text(f'spec = "../specs/spin.py"\n[constants]\nmarker = "{marker.as_posix()}"\n'
                     '[expect]\nsmall = "holds"\n')
    return model, marker


def _start(*args: str | Path, extra: dict[str, str] | None = None, exe: list[str] = EXE) -> subprocess.Popen:
    environment = env()
    environment["ORDERCHECK_STOP_GRACE"] = GRACE
    environment.update(extra or {})
    return started(subprocess.Popen([*exe, *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, start_new_session=True, env=environment))


def _end(proc: subprocess.Popen, timeout: float) -> tuple[str, str, float]:
    """Wait for the run's end (killing it past ``timeout``): stdout, stderr, seconds."""
    began = time.monotonic()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"the run did not stop within {timeout} s: {err}") from None
    finally:
        assert_no_survivors(proc.pid, grace=5)
    return out, err, time.monotonic() - began


@pytest.mark.parametrize(("workers", "stop"), [(1, "time"), (1, signal.SIGTERM), (2, signal.SIGINT), (2, "time")],
                         ids=["1-time-limit", "1-SIGTERM", "2-SIGINT", "2-time-limit"])
def test_a_step_that_never_returns_is_stopped(tmp_path: Path, workers: int, stop) -> None:
    model, marker = _model(tmp_path)
    args = ["check", model, "--workers", str(workers), "--quiet"]
    if stop == "time":
        args += ["--time-limit", "1"]
    proc = _start(*args)
    wait_for(marker.exists, proc=proc)
    if stop != "time":
        os.kill(proc.pid, stop)
    out, err, seconds = _end(proc, timeout=30)
    line = one_error_line(err)
    if stop == "time":
        assert proc.returncode == 3, err
        assert "stopped by time_limit" in out or "time_limit" in out, out
        if workers == 1:
            assert line == ("ordercheck: warning: the time limit passed while the spec's code, next_states "
                            "(spin.py:22) was running; it was interrupted 0.5 s later"), line
        else:
            assert line.startswith("ordercheck: warning: worker process ") and "did not stop within 0.5 s" in line, line
        assert seconds < 15, seconds
    else:
        name = signal.Signals(stop).name
        assert proc.returncode == 128 + stop, err
        assert line.startswith(f"ordercheck: interrupted by {name}; "), line
        if workers == 1:
            assert "did not return within 0.5 s and was interrupted in the spec's code, next_states (spin.py:22)" in line
        else:
            assert "did not stop within 0.5 s" in line and "was killed" in line, line
        assert line.endswith("nothing was saved (with --checkpoint DIR a run can be resumed with --resume)"), line
        assert seconds < 10, seconds


def test_a_stuck_step_after_a_checkpoint_gives_the_resume_hint(tmp_path: Path) -> None:
    """The watchdog's stop keeps the last checkpoint and says how to resume from it."""
    model, marker = _model(tmp_path)
    ckpt = tmp_path / "ckpt"
    proc = _start("check", model, "--quiet", "--checkpoint", ckpt, "--checkpoint-every", "0")
    wait_for(marker.exists, proc=proc)
    os.kill(proc.pid, signal.SIGINT)
    _out, err, seconds = _end(proc, timeout=30)
    line = one_error_line(err)
    assert proc.returncode == 130, err
    assert "was interrupted in the spec's code, next_states (spin.py:22); progress saved in " in line, line
    assert line.endswith("run the same command with --resume to continue from there"), line
    assert seconds < 10, seconds


def test_a_silent_worker_is_lost(tmp_path: Path) -> None:
    """A worker stopped by SIGSTOP sends no heartbeat: past the heartbeat timeout it is
    killed and the run ends with exit code 4, naming it."""
    proc = _start("check", MODELS / "bus1-3.toml", "--no-por", "--workers", "2", "--quiet",
                  extra={"ORDERCHECK_HEARTBEAT_TIMEOUT": "1"})
    wait_for(lambda: len(session(proc.pid)) >= 3, proc=proc)
    time.sleep(0.5)
    worker = max(p.pid for p in session(proc.pid) if p.pid != proc.pid)
    os.kill(worker, signal.SIGSTOP)
    _out, err, seconds = _end(proc, timeout=30)
    line = one_error_line(err)
    assert proc.returncode == 4, err
    assert line.startswith("ordercheck: error: local: worker process "), line
    assert "sent nothing, not even a heartbeat, for 1 s (stopped or hung) and was killed" in line, line
    assert "killed on purpose, not for memory" in line and "out-of-memory" not in line, line  # no wrong advice
    assert seconds < 10, seconds


INJECT = '''
import os, threading
import multiprocessing.connection as connection

main_pid = os.getpid()
recv = connection.Connection.recv
seen = [0]


def failing_recv(self):
    """The main process's reader thread runs out of memory reading its 4th message."""
    msg = recv(self)
    if os.getpid() == main_pid and threading.current_thread() is not threading.main_thread():
        seen[0] += 1
        if seen[0] == 4:
            raise MemoryError
    return msg


connection.Connection.recv = failing_recv
from ordercheck.checker.cli import main

main(prog_name="ordercheck")
'''


def test_memory_error_reading_a_worker_message_does_not_hang_the_stop(tmp_path: Path) -> None:
    """The worker whose message was lost is not waited for: the run stops at its memory
    bound (exit code 3) within the grace, and no worker is left."""
    proc = _start("check", MODELS / "bus1-3.toml", "--no-por", "--workers", "2", "--quiet",
                  exe=[sys.executable, "-c", INJECT])
    out, err, seconds = _end(proc, timeout=40)
    assert proc.returncode == 3, err
    assert "memory" in out, out
    line = one_error_line(err)
    assert line.startswith("ordercheck: warning: worker process "), line
    assert "could not be read" in line, line
    assert seconds < 20, seconds


HALF_WAY = '''
import os, signal, struct
import multiprocessing.connection as connection

main_pid = os.getpid()
send_bytes = connection.Connection._send_bytes


def half_way(self, buf):
    """A worker writes half of its first large message to the main process (not a batch
    or shipment to another worker), then stops as SIGSTOP would stop it."""
    head = bytes(memoryview(buf)[:300])
    if os.getpid() != main_pid and len(buf) > 50_000 and b"Batch" not in head and b"Ship" not in head:
        view = memoryview(buf)
        self._send(struct.pack("!i", len(view)))
        self._send(view[: len(view) // 2])
        os.kill(os.getpid(), signal.SIGSTOP)
    return send_bytes(self, buf)


connection.Connection._send_bytes = half_way
from ordercheck.checker.cli import main

main(prog_name="ordercheck")
'''


def test_a_worker_stopped_half_way_through_a_message_is_lost(tmp_path: Path) -> None:
    """The main process's reader is in the middle of the stopped worker's message, so no
    heartbeat can tell it apart from a long message: the message itself must arrive within
    the heartbeat timeout, else the worker is killed and the run ends with exit code 4
    naming it (it used to wait for the rest of the message for ever)."""
    proc = _start("check", MODELS / "bus1-3.toml", "--no-por", "--workers", "2", "--quiet",
                  exe=[sys.executable, "-c", HALF_WAY], extra={"ORDERCHECK_HEARTBEAT_TIMEOUT": "1"})
    _out, err, seconds = _end(proc, timeout=60)
    line = one_error_line(err)
    assert proc.returncode == 4, err
    assert line.startswith("ordercheck: error: local: worker process "), line
    assert "its message stopped half-way: nothing more came for 1 s (stopped or hung)" in line, line
    assert "out-of-memory" not in line, line
    assert seconds < 30, seconds


@pytest.mark.spark
def test_sigint_stops_a_stuck_spark_run(tmp_path: Path) -> None:
    """Under Spark a SIGINT cancels the jobs and ends the run with 130 within seconds;
    the JVM and its Python workers end with it (PySpark's own SIGINT handler, which
    raised a KeyboardInterrupt that ended as exit code 4 with a traceback, is replaced).
    The step is stuck in an executor: every level is a Spark job
    (``ORDERCHECK_SPARK_DRIVER_STATES=0``), so state 3 is expanded there. Spark's scratch
    files went to a directory of the run's own under ``$TMPDIR`` (named with a space and a
    quote, which the JVM's options must carry), and nothing of them is left."""
    model, marker = _model(tmp_path)
    scratch = tmp_path / 'tm p"q'
    scratch.mkdir()
    proc = _start("check", model, "--engine", "spark", "--master", "local[2]", "--quiet",
                  extra={"ORDERCHECK_SPARK_DRIVER_STATES": "0", "TMPDIR": str(scratch)})
    wait_for(marker.exists, timeout=120, proc=proc)
    # Asserted once the run has ended: a failed assertion here would leave the run (its
    # JVM and Python workers in a process group of their own) spinning on the stuck step.
    during = [p.name for p in scratch.iterdir()]
    os.kill(proc.pid, signal.SIGINT)
    _out, err, seconds = _end(proc, timeout=60)
    assert proc.returncode == 130, err
    line = one_error_line(err)
    assert line.startswith("ordercheck: interrupted by SIGINT; ") and line.endswith(
        "nothing was saved (with --checkpoint DIR a run can be resumed with --resume)"), line
    assert seconds < 10, seconds
    assert any(name.startswith("ordercheck-spark-") for name in during), during
    assert list(scratch.iterdir()) == []


@pytest.mark.spark
def test_sigterm_stops_validate_on_spark_while_its_jobs_run(tmp_path: Path) -> None:
    """``validate --engine spark`` signalled while its job runs (PySpark's daemon has
    started the tasks' workers): the job is cancelled, the run ends with 143 within
    seconds in one line (no Py4J traceback, no claim that a spec step was stuck), and
    nothing of it is left, neither the JVM nor PySpark's daemon and workers (which a
    JVM that dies first leaves behind)."""
    import psutil

    from ordercheck.checker.validate.generate import synthetic_log
    from ordercheck.checker.validate.jsonl import write_jsonl

    logs = tmp_path / "logs"
    logs.mkdir()
    with (logs / "run-0.jsonl").open("w") as fh:  # about a second of a task's time
        write_jsonl(synthetic_log(150_000, 8, seed=1), fh)
    for i in range(1, 6):  # one task each, two at a time: tasks run when the signal comes
        os.link(logs / "run-0.jsonl", logs / f"run-{i}.jsonl")
    proc = _start("validate", logs, "--engine", "spark", "--master", "local[2]", "--quiet")

    def tasks_running() -> bool:
        for child in psutil.Process(proc.pid).children(recursive=True):
            try:
                if "pyspark.daemon" in " ".join(child.cmdline()):
                    return True
            except psutil.Error:
                pass
        return False

    waited = f"the run did not stop within {GRACE} s and was interrupted while waiting for Spark's jobs; "
    wait_for(tasks_running, timeout=120, proc=proc)
    os.kill(proc.pid, signal.SIGTERM)
    began = time.monotonic()
    try:
        _out, err = proc.communicate(timeout=60)
    finally:
        seconds = time.monotonic() - began
        assert_no_survivors(proc.pid, grace=0.2)  # they end with the run, not after it
    assert proc.returncode == 143, err
    line = one_error_line(err)
    # the job ended when cancelled, or (a loaded machine) the watchdog ended the JVM and the wait
    assert line in ("ordercheck: interrupted by SIGTERM; " + middle + "nothing was saved (with --checkpoint "
                    "DIR a run can be resumed with --resume)" for middle in ("", waited)), line
    assert seconds < 10, seconds


class _Exits:
    """Unpickled, it calls ``sys.exit(3)``: a message whose reading ends in a
    :class:`BaseException`, which ends a thread silently."""

    def __reduce__(self):
        return (sys.exit, (3,))


def test_a_worker_reader_that_cannot_read_says_why() -> None:
    """The worker's reader thread reports the cause (here a SystemExit raised while a
    message was read), instead of dying silently and leaving the worker waiting."""
    import multiprocessing
    import queue
    import threading

    from ordercheck.checker.engine.messages import Failed
    from ordercheck.checker.engine.shards import _receive

    ours, theirs = multiprocessing.Pipe()
    theirs.send(_Exits())
    inbox: queue.SimpleQueue = queue.SimpleQueue()
    reader = threading.Thread(target=_receive, args=([ours], ours, inbox, lambda: None), daemon=True)
    reader.start()
    try:
        got = inbox.get(timeout=5)
    except queue.Empty:
        raise AssertionError("the reader said nothing") from None
    finally:
        theirs.close()
        ours.close()
    assert type(got) is Failed
    assert "could not read a message: SystemExit(3)" in str(got.error), got


def test_a_bad_grace_is_bad_input() -> None:
    proc = _start("check", MODELS / "fifo-3.toml", "--quiet", extra={"ORDERCHECK_STOP_GRACE": "soon"})
    _out, err, _seconds = _end(proc, timeout=60)
    assert proc.returncode == 2, err
    assert one_error_line(err) == ("ordercheck: error: environment variable ORDERCHECK_STOP_GRACE: 'soon' is not "
                                   "a number of seconds above 0")


def test_the_watchdog_names_a_wait_on_spark_not_the_spec() -> None:
    """The frame the watchdog interrupts is the spec's code only when it is a spec's:
    the installed ``ordercheck`` script is not, and a main thread in PySpark's or Py4J's
    code is waiting for Spark's jobs (the line says so)."""
    import sysconfig

    from ordercheck.checker.cli.faults import interrupted_line
    from ordercheck.checker.engine.interrupts import WAITING_FOR_SPARK, Interrupted, where

    def frame_in(filename: str):  # a frame of FILENAME, called from the standard library alone
        import threading

        space: dict = {}
        code = compile("import sys\nframe = sys._getframe()\n", filename, "exec")
        thread = threading.Thread(target=exec, args=(code, space))
        thread.start()
        thread.join()
        return space["frame"]

    script = frame_in(str(Path(sysconfig.get_paths()["scripts"]) / "ordercheck"))
    assert not where(script).startswith("the spec's code"), where(script)
    spark = frame_in(str(Path(sysconfig.get_paths()["purelib"]) / "py4j" / "clientserver.py"))
    assert where(spark) == WAITING_FOR_SPARK
    assert where(frame_in("/project/specs/spin.py")).startswith("the spec's code, <module> (spin.py:2)")
    line = interrupted_line(Interrupted(signal.SIGTERM, stuck=WAITING_FOR_SPARK))
    assert line.startswith("ordercheck: interrupted by SIGTERM; the run did not stop within "), line
    assert "s and was interrupted while waiting for Spark's jobs; nothing was saved" in line, line


def test_a_run_a_test_leaves_running_is_killed_when_the_test_ends() -> None:
    # What tests/conftest.py does after every test: a run, its two workers and all.
    proc = _start("check", MODELS / "bus1-3.toml", "--no-por", "--no-symmetry", "--workers", "2", "--quiet")
    wait_for(lambda: len(session(proc.pid)) >= 3, proc=proc)
    killed = stop_stray_runs()
    assert len(killed) >= 3 and all("ordercheck" in line or "python" in line for line in killed), killed
    assert_no_survivors(proc.pid, grace=5)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert stop_stray_runs() == []  # each session is stopped once

"""Real signals to real runs (issue 18): SIGINT and SIGTERM stop a search at once,
with and without worker processes and on Spark, reap every process, save the
progress when --checkpoint is set and say how to resume; SIGKILL of the parent leaves
no worker behind.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from tests.faults_helpers import (
    BUS1_3,
    MODELS,
    assert_no_survivors,
    bus1_3_reference,
    checkpoint_of,
    command_line,
    counts,
    one_error_line,
    run,
    session,
    start,
)

MODEL = MODELS / "bus1-3.toml"
ARGS = BUS1_3
reference = bus1_3_reference


class Stderr:
    """Collects a running process's stderr lines in a thread."""

    def __init__(self, proc) -> None:
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self.thread.start()

    def _read(self, proc) -> None:
        for line in proc.stderr:
            self.lines.append(line)

    def text(self) -> str:
        self.thread.join(timeout=30)
        return "".join(self.lines)


def _started(proc, workers: int) -> None:
    """Wait until the run's workers are up, and a little more (the search runs)."""
    deadline = time.monotonic() + 60
    while len(session(proc.pid)) < 1 + workers:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.5)


def _searching(proc, err: Stderr, timeout: float = 120) -> None:
    """Wait for the first progress line (two seconds into the search)."""
    deadline = time.monotonic() + timeout
    while not any("states/s" in line for line in err.lines):
        assert proc.poll() is None, f"the run ended first: {err.text()}"
        assert time.monotonic() < deadline, "no progress line"
        time.sleep(0.02)


@pytest.mark.parametrize(("workers", "signum"), [(1, signal.SIGINT), (2, signal.SIGTERM)], ids=["1-SIGINT", "2-SIGTERM"])
def test_signal_saves_the_level_and_resume_ends_as_uninterrupted(reference, tmp_path: Path, workers: int,
                                                                   signum: int) -> None:
    """No periodic checkpoint is due (every 1000 s): the one on disk is written by the stop."""
    ckpt = tmp_path / "ckpt"
    args = (*ARGS, "--workers", str(workers), "--checkpoint", ckpt, "--checkpoint-every", "1000")
    proc = start(*args)
    err = Stderr(proc)
    if workers > 1:
        # Two workers search bus1-3 in about 2.4 s: the first progress line (at 2 s)
        # would leave the signal a few tenths of a second; once the workers are up, the
        # search is under way.
        _started(proc, workers)
        assert len(session(proc.pid)) == 1 + workers
    else:
        _searching(proc, err)
    assert proc.poll() is None, f"the run ended first: {err.text()}"
    sent = time.monotonic()
    os.kill(proc.pid, signum)
    proc.wait(timeout=60)
    stopped = time.monotonic() - sent
    assert proc.returncode == 128 + signum, err.text()
    assert_no_survivors(proc.pid)
    name = signal.Signals(signum).name
    line = one_error_line("".join(x for x in err.text().splitlines(True) if "states/s" not in x))
    model_dir = checkpoint_of(ckpt)
    assert line.startswith(f"ordercheck: interrupted by {name}; progress saved in {model_dir} (level ")
    assert "run the same command with --resume" in line
    assert stopped < 20, stopped  # at once: a unit of work and the checkpoint, not the rest of the search
    assert not list(model_dir.glob("*.tmp"))
    resumed = run(*args, "--quiet", "--resume", "--json", tmp_path / "out.json")
    assert resumed.returncode == 0, resumed.stderr
    assert counts(tmp_path / "out.json") == reference




def test_signal_without_checkpoint(tmp_path: Path) -> None:
    proc = start(*ARGS, "--workers", "2", "--json", tmp_path / "out.json")
    _started(proc, 2)
    os.kill(proc.pid, signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert_no_survivors(proc.pid)
    assert one_error_line(err) == ("ordercheck: interrupted by SIGTERM; nothing was saved "
                                   "(with --checkpoint DIR a run can be resumed with --resume)")
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_to_the_process_group() -> None:
    """A terminal's Ctrl-C reaches every process of the group: the workers leave the
    decision to the parent, which stops them."""
    proc = start(*ARGS, "--workers", "2")
    _started(proc, 2)
    os.killpg(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert_no_survivors(proc.pid)
    assert "interrupted by SIGINT" in one_error_line(err) and "KeyboardInterrupt" not in err


@pytest.mark.parametrize("args", [
    (*ARGS, "--workers", "2"),
    (*ARGS, "--workers", "2", "--spill-dir", "SPILL"),
    ("check", MODEL, "--workers", "2"),  # reduced (visibility; its acyclic spec skips the cycle proviso)
], ids=["shards", "shards-spilled", "reduced"])
def test_workers_exit_when_the_parent_is_killed(tmp_path: Path, args: tuple) -> None:
    """SIGKILL of the parent alone: its workers read end-of-file from their pipes and exit;
    shard workers delete the files of their shares as they go."""
    spill = tmp_path / "spill"
    proc = start(*[spill if a == "SPILL" else a for a in args])
    _started(proc, 2)
    if "SPILL" in args:
        _spilling(proc, spill)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert_no_survivors(proc.pid, grace=15)
    if "SPILL" in args:
        assert list(spill.iterdir()) == []


def _spilling(proc, spill: Path) -> None:
    """Wait until the run's workers hold files of their shares in ``spill``."""
    deadline = time.monotonic() + 60
    while not list(spill.glob("share-*")):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)


def test_sigint_leaves_the_spill_dir_empty_and_resumes_with_other_workers(reference, tmp_path: Path) -> None:
    """SIGINT to a run whose workers keep their shares in --spill-dir: the checkpoint of
    the level is saved and no file stays in the spill directory; resumed with three
    workers (spilling again) it ends with the counts of an uninterrupted run, and the
    spill directory is empty again."""
    ckpt, spill = tmp_path / "ckpt", tmp_path / "spill"
    args = (*ARGS, "--checkpoint", ckpt, "--checkpoint-every", "1000", "--spill-dir", spill)
    proc = start(*args, "--workers", "2")
    err = Stderr(proc)
    _spilling(proc, spill)
    os.kill(proc.pid, signal.SIGINT)
    proc.wait(timeout=60)
    assert proc.returncode == 130, err.text()
    assert_no_survivors(proc.pid)
    assert "progress saved in" in one_error_line("".join(x for x in err.text().splitlines(True) if "states/s" not in x))
    assert list(spill.iterdir()) == []
    resumed = run(*args, "--workers", "3", "--quiet", "--resume", "--json", tmp_path / "out.json")
    assert resumed.returncode == 0, resumed.stderr
    assert counts(tmp_path / "out.json") == reference
    assert list(spill.iterdir()) == []


@pytest.mark.spark
def test_signal_to_a_spark_run(tmp_path: Path) -> None:
    """The driver stops Spark's JVM (and so its Python workers) before it exits."""
    proc = start("check", MODEL, "--engine", "spark", "--master", "local[2]")
    err = Stderr(proc)
    deadline = time.monotonic() + 120
    while not any("java" in " ".join(command_line(p)[:1]) for p in session(proc.pid)):
        assert proc.poll() is None and time.monotonic() < deadline, err.text()
        time.sleep(0.1)
    time.sleep(1)
    os.kill(proc.pid, signal.SIGTERM)
    proc.wait(timeout=60)
    assert proc.returncode == 143, err.text()
    assert_no_survivors(proc.pid, grace=20)
    assert "nothing was saved" in one_error_line(err.text())

"""Models that never end (issue 28): a search with no limit says once that its depth keeps
growing; each model's verdict lines reach standard output as soon as they are decided,
line by line even through a pipe, so a run killed later keeps them; ``ablate`` keeps
the model file's limits for every mutant."""

from __future__ import annotations

import os
import queue
import signal
import threading
import time
from pathlib import Path

from faults_helpers import MODELS, assert_no_survivors, run, start

FOREVER = '''
from ordercheck.checker import Constant, Property, Spec


class Forever(Spec):
    """A buggy variant: without its guard a peer delivers the same message again and
    again, so the history never stops growing."""

    name = "forever"
    constants = (Constant("guard", bool, False, "deliver each message once", ablation=True),)

    def init_states(self):
        return [(0, ())]

    def next_states(self, s):
        n, log = s
        if self.guard and n >= 3:
            return []
        return [(("deliver", "a", "m1"), (n + 1, log + (n % 3,)))]

    def properties(self):
        return [Property.always("small_log", lambda s: None if len(s[1]) <= 3 else "log too long"),
                Property.always("fine", lambda s: None)]
'''


def forever_model(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / "specs").mkdir(exist_ok=True)
    (tmp_path / "specs" / "forever.py").write_text(FOREVER)
    (tmp_path / "models").mkdir(exist_ok=True)
    model = tmp_path / "models" / "forever.toml"
    model.write_text('spec = "../specs/forever.py"\n[check]\nproperties = ["fine"]\n' + extra)
    return model


def _lines(stream, into: queue.Queue) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


def read_until(lines: queue.Queue, got: list[str], want: str, seconds: float) -> bool:
    """Collect lines into ``got`` until one contains ``want``; whether one did in time."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            continue
        if line is None:
            return False
        got.append(line)
        if want in line:
            return True
    return False


def test_a_killed_run_keeps_the_verdicts_of_the_models_it_decided(tmp_path):
    """Two models, the second never ends: the first one's verdict lines arrive through
    the pipe while the run goes on (not all at the end, not held in a buffer), and a
    SIGKILL, which flushes nothing, loses none of them."""
    first = MODELS / "fifo-2.toml"
    proc = start("check", first, forever_model(tmp_path), cwd=tmp_path)
    out: queue.Queue = queue.Queue()
    err: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stdout, out), daemon=True).start()
    threading.Thread(target=_lines, args=(proc.stderr, err), daemon=True).start()
    try:
        got: list[str] = []
        assert read_until(out, got, "fingerprint collision probability", 120), "".join(got)
        warned: list[str] = []
        assert read_until(err, warned, "and growing", 120), "".join(warned)  # the second model is running
        assert proc.poll() is None
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert_no_survivors(proc.pid)
    text = "".join(got)
    assert text.startswith(f"{first}: fifo, "), text
    assert "  fifo  " in text and "expected holds" in text, text
    assert "forever" not in text
    assert [w for w in warned if "and growing" in w] == [
        "ordercheck: warning: forever: depth 300 and growing: is the state bounded? "
        "set max_states or max_depth (or a time limit)\n"]


def test_the_growing_warning_is_said_once_even_quiet_and_never_with_a_limit(tmp_path):
    model = forever_model(tmp_path, "max_depth = 400\n")
    bounded = run("check", model, "--quiet", cwd=tmp_path)
    assert bounded.returncode == 3, bounded.stderr
    assert "growing" not in bounded.stderr
    model.write_text(model.read_text().replace("max_depth = 400\n", ""))
    proc = start("check", model, "--quiet", "--workers", "2", cwd=tmp_path)
    err: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stderr, err), daemon=True).start()
    try:
        got: list[str] = []
        assert read_until(err, got, "depth 300 and growing", 120), "".join(got)
        read_until(err, got, "never", 3)  # nothing more is said
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert_no_survivors(proc.pid)
    assert sum("growing" in line for line in got) == 1, got


def test_progress_shows_depth_and_history_length():
    import io

    from ordercheck.checker.engine.bfs import Progress, history_length
    from ordercheck.checker.loading.modelfile import load_model

    model = load_model(MODELS / "bus1-3.toml")
    stream = io.StringIO()
    progress = Progress(stream, interval=0.0, label="bus1-3", history=history_length(model.spec))
    state = model.spec.init_states()[0]
    (label, after), *_ = model.spec.next_states(state)
    progress.tick(10, 2, 5, after)
    assert stream.getvalue().startswith("bus1-3: 10 states, ")
    assert stream.getvalue().endswith(", depth 2, history 1 events, queue 5\n"), stream.getvalue()


def test_ablate_keeps_the_model_files_limits_for_every_mutant(tmp_path):
    """The model file's max_depth bounds the mutant that never ends too: ablate finishes,
    the full algorithm decided, the mutant unknown (exit 3), no growing warning."""
    model = forever_model(tmp_path, "max_depth = 50\n")
    model.write_text(model.read_text() + '[constants]\nguard = true\n')
    proc = run("ablate", model, cwd=tmp_path, timeout=120)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "growing" not in proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith(("none ", "guard ")) and ":" not in line]
    assert rows == [["none", "(full", "algorithm)", "holds"], ["guard", "UNKNOWN"]], proc.stdout
    assert "fine unknown: the search stopped at its max_depth bound first" in proc.stdout


def test_spark_says_so_too(spark, tmp_path):
    """The same warning from the Spark engine, once, for a model with no limit that is
    deeper than the threshold (capped at 320 here, so that the run ends: the warning
    is a question, and the verdict is still earned to the end)."""
    from click.testing import CliRunner

    from ordercheck.checker.cli import main

    model = forever_model(tmp_path)
    (tmp_path / "specs" / "forever.py").write_text(FOREVER.replace("if self.guard and n >= 3:", "if n >= 320:"))
    got = CliRunner().invoke(main, ["check", str(model), "--quiet", "--engine", "spark"])
    assert got.exit_code == 0, got.output[-3000:]
    assert ": 1 verdict as expected" in got.stdout, got.stdout  # --quiet: the verdict in the statistics line
    warned = [line for line in got.stderr.splitlines() if "growing" in line]
    assert warned == ["ordercheck: warning: forever: depth 300 and growing: is the state bounded? "
                      "set max_states or max_depth (or a time limit)"], got.stderr[-3000:]


def test_ablate_never_says_nothing_breaks_when_a_bound_left_verdicts_unknown(tmp_path):
    """bus1-3 cut at 50 states: every verdict unknown, for the full algorithm and every
    mutant; the explanation says so instead of "nothing breaks without this step"."""
    text = (MODELS / "bus1-3.toml").read_text().replace("[check]\n", "[check]\nmax_states = 50\n", 1)
    model = tmp_path / "bus1-3-cut.toml"
    model.write_text(text[: text.index("[evidence]")])
    proc = run("ablate", model, "--quiet", cwd=tmp_path, timeout=300)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "nothing breaks" not in proc.stdout, proc.stdout
    assert ("block_destinations (block each destination before taking the timestamp): unknown whether anything "
            "breaks without this step: causal, global_lock") in proc.stdout, proc.stdout

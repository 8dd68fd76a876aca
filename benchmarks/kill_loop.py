"""Kill a checkpointing run with SIGKILL at random moments, resume it each time, and
compare its final counts with an uninterrupted run's (issue 18).

Each run checkpoints at every level (``--checkpoint-every 0``), so the kills land in the
middle of levels, of checkpoint writes and of start-ups alike. Only the main process is
killed: its workers must notice and exit on their own before the next run starts. When
a run ends before its kill comes, its counts are compared and the loop starts afresh
with an empty checkpoint directory, until the number of kills asked for is reached.

    python benchmarks/kill_loop.py [--model models/bus1-3.toml] [--kills 20] [--workers 1,2] [--seed 0]

It prints, per worker count, the kills made, the runs that completed and their counts
against the uninterrupted run's; it exits 1 if any differs or a process was left.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXE = [sys.executable, "-c", "from ordercheck.checker.cli import main; main(prog_name='ordercheck')"]


@dataclass
class LoopResult:
    """What one loop did: the kills made, the counts of every completed run (each must
    equal ``reference``), and processes found alive after their parent was killed."""

    reference: tuple
    kills: int = 0
    completed: list[tuple] = field(default_factory=list)
    survivors: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return bool(self.completed) and all(c == self.reference for c in self.completed) and not (
            self.survivors or self.leftovers)


def counts(path: Path) -> tuple:
    """(distinct states, transitions, depth, verdicts) of a ``--json`` result."""
    data = json.loads(path.read_text())
    st = data["stats"]
    return st["distinct_states"], st["transitions"], st["depth"], {n: p["status"] for n, p in data["properties"].items()}


def _session(sid: int) -> list[int]:
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getsid(int(entry)) != sid:
                continue
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            alive.append(int(entry))
    return alive


def _wait_gone(sid: int, grace: float) -> list[int]:
    deadline = time.monotonic() + grace
    while (left := _session(sid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return left


def reference_counts(args: list[str], work: Path) -> tuple:
    """The counts of an uninterrupted run of ``ordercheck check ARGS``."""
    out = work / "reference.json"
    subprocess.run([*EXE, "check", *args, "--quiet", "--json", str(out)], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    return counts(out)


def kill_loop(args: list[str], workers: int, kills: int, work: Path, reference: tuple, *, seed: int = 0,
              low: float = 0.3, high: float = 1.2) -> LoopResult:
    """Kill ``ordercheck check ARGS --workers N`` ``kills`` times at moments drawn
    uniformly from ``[low, high]`` seconds after each start, resuming each time."""
    rng = random.Random(seed)
    result = LoopResult(reference)
    started = time.monotonic()
    tmp = work / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp)}
    round_no = 0

    def ckpt_root() -> Path:
        return work / f"ckpt-{workers}-{round_no}"

    def command(out: Path) -> list[str]:
        root = ckpt_root()
        resume = any(root.glob("*/CURRENT"))
        return [*EXE, "check", *args, "--quiet", "--workers", str(workers), "--checkpoint", str(root),
                "--checkpoint-every", "0", "--json", str(out), *(["--resume"] if resume else [])]

    out = work / f"out-{workers}.json"
    while True:
        out.unlink(missing_ok=True)
        proc = subprocess.Popen(command(out), cwd=ROOT, env=env, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if result.kills < kills:
            try:
                proc.wait(rng.uniform(low, high))
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)  # the main process only: its workers must follow
                proc.wait()
                result.kills += 1
                left = _wait_gone(proc.pid, 15)
                if left:
                    result.survivors.append(f"after kill {result.kills}: {left}")
                proc.stderr.close()
                continue
        err = proc.communicate()[1]
        if proc.returncode != 0:
            raise RuntimeError(f"run failed ({proc.returncode}): {err.decode(errors='replace')[-2000:]}")
        result.completed.append(counts(out))
        model_dirs = [d for d in ckpt_root().iterdir() if d.is_dir()]
        result.leftovers += [str(p) for d in model_dirs for p in d.glob("*.tmp")]
        if result.kills >= kills:
            break
        round_no += 1  # finished before its kill: again from the start, until every kill is made
    result.leftovers += [str(p) for p in tmp.iterdir()]
    result.seconds = time.monotonic() - started
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(ROOT / "models" / "bus1-3.toml"))
    parser.add_argument("--kills", type=int, default=20, help="kills per worker count")
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    parser.add_argument("--seed", type=int, default=0)
    ns = parser.parse_args()
    args = [ns.model, "--no-por"]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="kill-loop-") as tmp:
        work = Path(tmp)
        reference = reference_counts(args, work)
        print(f"{Path(ns.model).name}: uninterrupted {reference[0]:,} states, {reference[1]:,} transitions, "
              f"depth {reference[2]}")
        for w in (int(x) for x in ns.workers.split(",")):
            res = kill_loop(args, w, ns.kills, work / f"w{w}", reference, seed=ns.seed + w)
            same = sum(c == reference for c in res.completed)
            print(f"  --workers {w}: {res.kills} kills, {len(res.completed)} completed runs, {same} with the same "
                  f"counts and verdicts; {len(res.survivors)} kills left a process; {res.seconds:.1f}s")
            for line in res.survivors + res.leftovers:
                print(f"    {line}")
            bad += not res.ok
            shutil.rmtree(work / f"w{w}", ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

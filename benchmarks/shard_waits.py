"""Where the shard workers' wall time goes, and the main process's: timed steps, not samples.

Runs ``ordercheck check MODEL --workers N --quiet`` in this process with the steps of
the shard workers (:class:`ordercheck.checker.engine.shards._Shard`) and of the main
process (:class:`ordercheck.checker.engine.sharded.ShardedLevels`,
:class:`ordercheck.checker.engine.shards.Shards`) wrapped in wall-clock timers; the
forked workers inherit the wrappers and write their timings to a temporary directory
as they end. Each step's time is its own, less the wrapped steps it calls. A worker's
waits for messages (``serve``) are told apart by the step that waits: ``serve<-run``
is a worker idle between the main process's commands (the main process working, or
messages on their way), ``serve<-exchanged`` the end of a level's exchange (waiting for
the other workers' successors: the slowest worker), ``serve<-announce`` the owners'
answers, ``serve<-commit`` states shipped to balance the shares.

Prints, per step, the mean and the largest of the workers' seconds and the mean number
of calls, then the main process's steps (``gather K``: waiting for every worker's
reply ``K``; ``search_level``: its own work on a level's reports).

    python benchmarks/shard_waits.py [MODEL.toml] [--workers 16] [--max-states N]

The default model is ``benchmarks/models/bus1-3x2.toml``. The timers cost about a
microsecond a call, far less than the steps they time.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = ROOT / "benchmarks" / "models" / "bus1-3x2.toml"

WORKER_STEPS = ("level", "expand", "route", "flush", "take", "drain", "exchanged", "new_states", "announce",
                "check", "commit", "keep", "serve", "rounds", "expand_fully", "triggers")
MAIN_STEPS = ("search_level", "settle", "_gathered", "committed", "proviso_rounds", "checkpoint")


class Timers:
    """Exclusive wall seconds and calls by step name, for the wrapped methods of one process."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.stack: list[float] = []

    def wrap(self, owner: type, name: str, label: Callable[..., str] | None = None) -> None:
        """Time ``owner.name``, as ``label(args)`` where given (else ``name``)."""
        fn = getattr(owner, name)
        timers = self

        @functools.wraps(fn)
        def timed(*args: Any, **kw: Any) -> Any:
            step = label(args) if label is not None else name
            timers.stack.append(0.0)
            began = time.perf_counter()
            try:
                return fn(*args, **kw)
            finally:
                took = time.perf_counter() - began
                inner = timers.stack.pop()
                timers.seconds[step] += took - inner
                timers.calls[step] += 1
                if timers.stack:
                    timers.stack[-1] += took

        setattr(owner, name, timed)


def caller(_args: tuple) -> str:
    """``serve`` named by the step that called it."""
    return "serve<-" + sys._getframe(2).f_code.co_name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", nargs="?", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--workers", type=int, default=16, help="worker count (default 16)")
    ap.add_argument("--max-states", type=int, default=None, help="stop the run at this many distinct states")
    args = ap.parse_args(argv)
    if args.workers < 2 or (args.max_states is not None and args.max_states < 1):
        ap.error("--workers must be at least 2 and --max-states at least 1")
    if str(ROOT) not in sys.path:  # a checkout, not installed
        sys.path.insert(0, str(ROOT))
    from profile_main import run_check  # this folder, first on the path of a script

    from ordercheck.checker.engine import sharded, shards

    worker_timers, main_timers = Timers(), Timers()
    for step in WORKER_STEPS:
        if hasattr(shards._Shard, step):
            worker_timers.wrap(shards._Shard, step, caller if step == "serve" else None)
    for step in MAIN_STEPS:
        if hasattr(sharded.ShardedLevels, step):
            main_timers.wrap(sharded.ShardedLevels, step)
    main_timers.wrap(shards.Shards, "gather", lambda a: "gather " + a[1].__name__)
    main_timers.wrap(shards.Shards, "send")

    out = Path(tempfile.mkdtemp(prefix="ordercheck-shard-waits-"))
    original = shards._worker

    def worker(me: int, *rest: Any, **kw: Any) -> None:
        began = time.perf_counter()
        try:
            original(me, *rest, **kw)
        finally:
            worker_timers.seconds["(lifetime)"] = time.perf_counter() - began
            (out / f"w{me}.json").write_text(json.dumps({"seconds": worker_timers.seconds,
                                                        "calls": worker_timers.calls}))

    shards._worker = worker
    cmd = ["check", str(args.model), "--quiet", "--workers", str(args.workers)]
    if args.max_states is not None:
        cmd += ["--max-states", str(args.max_states)]
    began = time.perf_counter()
    code = run_check(cmd)
    wall = time.perf_counter() - began
    time.sleep(0.5)  # the last workers' files
    runs = [json.loads(f.read_text()) for f in sorted(out.glob("w*.json"))]
    for f in out.glob("w*.json"):
        f.unlink()
    out.rmdir()
    print(f"\n{args.workers} workers, exit code {code}, wall {wall:.2f} s; {len(runs)} workers' timings")
    steps = sorted({s for r in runs for s in r["seconds"]},
                   key=lambda s: -sum(r["seconds"].get(s, 0.0) for r in runs))
    print(f"\n{'worker step':<24} {'mean s':>8} {'max s':>8} {'calls':>9}")
    for s in steps:
        vals = [r["seconds"].get(s, 0.0) for r in runs]
        calls = sum(r["calls"].get(s, 0) for r in runs) / max(len(runs), 1)
        print(f"{s:<24} {sum(vals) / len(vals):>8.3f} {max(vals):>8.3f} {calls:>9.0f}")
    print(f"\n{'main step':<24} {'s':>8} {'calls':>9}")
    for s, v in sorted(main_timers.seconds.items(), key=lambda kv: -kv[1]):
        print(f"{s:<24} {v:>8.3f} {main_timers.calls[s]:>9}")
    return 0 if code in (0, 3) else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Where the main process of a sharded check spends its time: a profile of it alone.

Runs ``ordercheck check MODEL --workers N --quiet`` in this process under
:mod:`cProfile` (the forked workers turn the profiler off as they start, so only the
main process, which orders, decides and commits each level, is profiled) and prints
the main process's wall and CPU seconds and its functions with the most own time and
the most cumulative time. With many workers this process's share of each level is
what does not shrink as workers are added; the profiler slows it, so read the
functions' shares, not their absolute seconds.

    python benchmarks/profile_main.py [MODEL.toml] [--workers 16] [--max-states N] [--top 30]

The default model is ``benchmarks/models/bus1-3x2.toml``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import resource
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = ROOT / "benchmarks" / "models" / "bus1-3x2.toml"


def run_check(cmd: list[str]) -> int | str | None:
    """``ordercheck CMD...`` in this process: its exit code."""
    from ordercheck.checker.cli import main as cli

    try:
        cli(args=cmd, prog_name="ordercheck")
    except SystemExit as exc:
        return exc.code
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", nargs="?", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--workers", type=int, default=16, help="worker count (default 16)")
    ap.add_argument("--max-states", type=int, default=None, help="stop the run at this many distinct states")
    ap.add_argument("--top", type=int, default=30, help="functions listed per ordering (default 30)")
    args = ap.parse_args(argv)
    if args.workers < 1 or (args.max_states is not None and args.max_states < 1):
        ap.error("--workers and --max-states must be at least 1")
    import ordercheck.checker.cli  # noqa: F401 - loaded before the profiler starts

    cmd = ["check", str(args.model), "--quiet", "--workers", str(args.workers)]
    if args.max_states is not None:
        cmd += ["--max-states", str(args.max_states)]
    prof = cProfile.Profile()
    os.register_at_fork(after_in_child=prof.disable)
    began, cpu0 = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF)
    prof.enable()
    try:
        code = run_check(cmd)
    finally:
        prof.disable()
    wall, cpu1 = time.monotonic() - began, resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    print(f"\nmain process, profiled, {args.workers} workers: exit code {code}, wall {wall:.1f} s, CPU {cpu:.1f} s "
          f"({cpu / wall:.0%} of the wall)")
    for order in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(order).print_stats(args.top)
        text = buf.getvalue()
        print(f"\nby {order}:\n" + text[text.find("   ncalls"):].rstrip())
    return 0 if code in (0, 3) else 1


if __name__ == "__main__":
    raise SystemExit(main())

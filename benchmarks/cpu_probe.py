"""How much of N cores this machine gives N CPU-bound Python processes at once.

Times one pure-Python loop alone, then in N processes started together, for each N
asked, and prints each N's mean and slowest time against the loop alone, and what that
caps: N processes that wait for the slowest of them at every step (as the shard
workers wait at each level's exchange) can go at most ``N * alone / slowest`` times
faster than one, and ``N * alone / mean`` is the work the machine gets done. Read it
beside ``benchmarks/workers.py``: on a machine where the slowest of 16 copies takes far
longer than one alone, no level-synchronous search reaches 16x.

    python benchmarks/cpu_probe.py [--processes 2,4,8,16] [--loop 15000000]

By default N is every power of two up to the machine's cores, and the cores.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import time
from typing import Any

from workers import parse_workers  # this folder, first on the path of a script


def spin(loop: int) -> float:
    """Seconds this process takes to add up ``loop`` integers in a Python loop."""
    began = time.perf_counter()
    total = 0
    for i in range(loop):
        total += i
    return time.perf_counter() - began


def _one(loop: int, start: Any, out: Any) -> None:
    """A process of a probe: wait until all are started, then time the loop."""
    start.wait()
    out.put(spin(loop))


def together(n: int, loop: int) -> list[float]:
    """Each process's seconds for the loop, ``n`` processes released together (a process
    each, not a pool, which may give one process two of the loops)."""
    ctx = multiprocessing.get_context("fork")
    start, out = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_one, args=(loop, start, out)) for _ in range(n)]
    for p in procs:
        p.start()
    took = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return took


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cores = os.cpu_count() or 1
    default = sorted({1 << k for k in range(cores.bit_length()) if 1 << k <= cores} | {cores})
    ap.add_argument("--processes", type=parse_workers, default=default, help="process counts, e.g. 2,4,8,16")
    ap.add_argument("--loop", type=int, default=15_000_000, help="additions per process (default 15,000,000)")
    args = ap.parse_args(argv)
    if args.loop < 1:
        ap.error("--loop must be at least 1")
    print(f"machine: {platform.machine()}, {cores} cores, Python {platform.python_version()}, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    alone = spin(args.loop)
    print(f"one process alone: {alone:.3f} s")
    print(f"{'processes':>9} {'mean s':>8} {'slowest s':>9} {'work done (cores)':>17} {'if each step waits':>18}")
    for n in args.processes:
        took = together(n, args.loop)
        mean, slowest = sum(took) / n, max(took)
        print(f"{n:>9} {mean:>8.3f} {slowest:>9.3f} {n * alone / mean:>17.1f} {n * alone / slowest:>17.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

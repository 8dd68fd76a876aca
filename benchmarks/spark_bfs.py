"""Spark engine throughput: states per second on local[1] and local[2], per-level overhead.

    python benchmarks/spark_bfs.py [MODEL.toml] [--max-states N] [--masters local[1],local[2]]
                                   [--tiny MODEL.toml]

MODEL is explored completely (no early stop once verdicts are known) or up to
``--max-states`` distinct states, unreduced, by the local engine and then, for each
master, in a fresh process (Spark allows one master per process) by the Spark engine.
Each line gives distinct states, levels, seconds and states per second, CPU seconds of
the whole process tree (driver, JVM, Python workers; read from /proc, so Linux only) and
states per CPU second (what the wall figures mean on a shared machine), the mean and
largest level time, and the driver's own share (its work between jobs: level keys,
counts, decisions). The per-level overhead is the median level time on TINY, a model
whose levels hold a dozen states, so what is left is Spark's fixed cost of a level (a job
of two stages with a shuffle, a checkpoint, the driver's bookkeeping). Spark's startup
is printed apart and excluded. The load average before and after is printed: on a
shared machine every figure moves with it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def cpu_seconds(root: int) -> float:
    """CPU seconds (user + system, with reaped children) of process ``root`` and every
    live descendant, from /proc: the JVM with its Python daemon and workers."""
    tick = os.sysconf("SC_CLK_TCK")
    parent, cpu = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(entry)] = int(fields[1])
        cpu[int(entry)] = sum(int(x) for x in fields[11:15]) / tick
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo.extend(p for p, pp in parent.items() if pp == pid)
    return total


def _bounds(max_states: int | None):
    from checker.engine.bfs import Bounds

    return Bounds(max_states=max_states)


def one(master: str, model_path: str, tiny_path: str, max_states: int | None) -> dict:
    """Run in a child process: start Spark on ``master``, time the two models."""
    from checker.loading.modelfile import load_model
    from checker.spark.bfs import SparkOptions, SparkSearch
    from checker.spark.session import get_spark

    started = time.monotonic()
    sc = get_spark(master, {"spark.ui.enabled": "false"})
    out: dict = {"master": master, "startup_seconds": round(time.monotonic() - started, 2)}
    jvm = sc._gateway.proc.pid
    for label, path, cap in (("tiny", tiny_path, None), ("model", model_path, max_states)):
        model = load_model(path)
        search = SparkSearch(sc, model.spec, model.properties, SparkOptions(master=master))
        cpu = time.process_time() + cpu_seconds(jvm)
        outcome = search.run(_bounds(cap), stop_when_decided=False)
        cpu = time.process_time() + cpu_seconds(jvm) - cpu
        levels = search.stats.level_seconds
        out[label] = {
            "distinct_states": outcome.distinct_states,
            "levels": search.stats.levels,
            "partitions": search.stats.partitions,
            "seconds": round(outcome.seconds, 2),
            "states_per_second": round(outcome.distinct_states / outcome.seconds, 1),
            "mean_level": round(statistics.mean(levels), 3),
            "median_level": round(statistics.median(levels), 3),
            "max_level": round(max(levels), 3),
            "driver_seconds": round(search.stats.driver_seconds, 2),
            "cpu_seconds": round(cpu, 2),
            "states_per_cpu_second": round(outcome.distinct_states / cpu, 1),
            "cpu_per_level": round(cpu / max(search.stats.levels, 1), 3),
        }
    sc.stop()
    return out


def local_rate(model_path: str, max_states: int | None) -> dict:
    from checker.engine.bfs import search
    from checker.loading.modelfile import load_model

    model = load_model(model_path)
    cpu = time.process_time()
    outcome = search(model.spec, model.properties, _bounds(max_states), stop_when_decided=False)
    cpu = time.process_time() - cpu
    return {"distinct_states": outcome.distinct_states, "depth": outcome.depth, "seconds": round(outcome.seconds, 2),
            "states_per_second": round(outcome.distinct_states / outcome.seconds, 1),
            "cpu_seconds": round(cpu, 2), "states_per_cpu_second": round(outcome.distinct_states / cpu, 1)}


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default=str(ROOT / "models" / "bus1-3.toml"))
    parser.add_argument("--max-states", type=int, default=None)
    parser.add_argument("--masters", default="local[1],local[2]")
    parser.add_argument("--tiny", default=str(ROOT / "models" / "fifo-4.toml"))
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.model, args.tiny, args.max_states)))
        return
    cap = f", cut at {args.max_states:,} states" if args.max_states else ""
    print(f"model {Path(args.model).name}{cap}; {os.cpu_count()} cores; load average {load()}")
    loc = local_rate(args.model, args.max_states)
    print(f"local engine: {loc['distinct_states']:,} states, depth {loc['depth']}, {loc['seconds']}s = "
          f"{loc['states_per_second']:,.0f} states/s; {loc['cpu_seconds']} CPU s = "
          f"{loc['states_per_cpu_second']:,.0f} states per CPU second; load average {load()}")
    for master in args.masters.split(","):
        proc = subprocess.run(
            [sys.executable, __file__, args.model, "--tiny", args.tiny, "--one", master]
            + (["--max-states", str(args.max_states)] if args.max_states else []),
            capture_output=True, text=True, check=False,
        )
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode or not lines:
            print(f"{master}: failed\n{proc.stderr[-2000:]}")
            continue
        r = json.loads(lines[-1])
        m, t = r["model"], r["tiny"]
        print(
            f"{master}: {m['distinct_states']:,} states, {m['levels']} levels, {m['partitions']} partitions, "
            f"{m['seconds']}s = {m['states_per_second']:,.0f} states/s; {m['cpu_seconds']} CPU s (driver, JVM, "
            f"workers) = {m['states_per_cpu_second']:,.0f} states per CPU second; level mean {m['mean_level']}s, "
            f"largest {m['max_level']}s; driver's own work {m['driver_seconds']}s; "
            f"per-level overhead {t['median_level']:.3f}s, {t['cpu_per_level']} CPU s (median; CPU mean of "
            f"{t['levels']} levels of "
            f"{Path(args.tiny).name}, {t['distinct_states']} states); Spark startup {r['startup_seconds']}s; "
            f"load average {load()}"
        )


if __name__ == "__main__":
    main()

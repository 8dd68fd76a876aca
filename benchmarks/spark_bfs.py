"""Spark engine throughput: states per second on local[1] and local[2], per-level overhead.

    python benchmarks/spark_bfs.py [MODEL.toml] [--masters local[1],local[2]] [--tiny MODEL.toml]

For each master, a fresh process (Spark allows one master per process) checks MODEL
with the Spark engine and prints distinct states, seconds and states per second; the
local engine's figure on the same model is printed for comparison. The per-level
overhead is the mean time of a level on TINY, a model whose levels hold almost no work,
so what is left is Spark's fixed cost of a level (a job of two stages, a shuffle, a
checkpoint and the driver's bookkeeping). Startup time of Spark is excluded.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def one(master: str, model_path: str, tiny_path: str) -> dict:
    """Run in a child process: start Spark on ``master``, time the two models."""
    from checker.model import load_model
    from checker.run import Options, bounds_for
    from checker.spark_bfs import SparkOptions, SparkSearch
    from checker.spark_session import get_spark

    started = time.monotonic()
    sc = get_spark(master, {"spark.ui.enabled": "false"})
    startup = time.monotonic() - started
    out = {"master": master, "startup_seconds": round(startup, 2)}
    for label, path in (("tiny", tiny_path), ("model", model_path)):
        model = load_model(path)
        search = SparkSearch(sc, model.spec, model.properties, SparkOptions(master=master))
        outcome = search.run(bounds_for(model, Options()), stop_when_decided=False)
        out[label] = {
            "model": path,
            "distinct_states": outcome.distinct_states,
            "transitions": outcome.transitions,
            "levels": search.stats.levels,
            "partitions": search.stats.partitions,
            "seconds": round(outcome.seconds, 2),
            "states_per_second": round(outcome.distinct_states / outcome.seconds, 1),
            "seconds_per_level": round(sum(search.stats.level_seconds) / max(search.stats.levels, 1), 3),
        }
    sc.stop()
    return out


def local_rate(model_path: str) -> dict:
    from checker.bfs import search
    from checker.model import load_model

    model = load_model(model_path)
    outcome = search(model.spec, model.properties, stop_when_decided=False)
    return {"distinct_states": outcome.distinct_states, "seconds": round(outcome.seconds, 2),
            "states_per_second": round(outcome.distinct_states / outcome.seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default=str(ROOT / "models" / "bus1-3.toml"))
    parser.add_argument("--masters", default="local[1],local[2]")
    parser.add_argument("--tiny", default=str(ROOT / "models" / "fifo-4.toml"))
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.model, args.tiny)))
        return
    print(f"model {args.model}")
    loc = local_rate(args.model)
    print(f"local engine: {loc['distinct_states']:,} states in {loc['seconds']}s = {loc['states_per_second']:,.0f} states/s")
    for master in args.masters.split(","):
        proc = subprocess.run(
            [sys.executable, __file__, args.model, "--tiny", args.tiny, "--one", master],
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
            f"{m['seconds']}s = {m['states_per_second']:,.0f} states/s; "
            f"per-level overhead {t['seconds_per_level']:.3f}s ({t['levels']} levels of {Path(t['model']).name}); "
            f"Spark startup {r['startup_seconds']}s"
        )


if __name__ == "__main__":
    main()

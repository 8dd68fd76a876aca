"""Local workers that own shards of the visited set: speed-up and per-level time split.

Runs ``ordercheck check MODEL --workers N`` in a fresh process for each worker count
(reductions as the model file says), checks that every run found the same distinct
states, transitions and verdicts, and prints per worker count the search's wall
seconds, the CPU seconds of the run and its workers, states per wall second and the
speed-up over one worker, then each run's per-level time split (the ``levels`` of the
JSON result: expand, exchange, dedup, check, other, each the mean over the workers, and
busiest, the most one worker spent expanding, deduplicating and checking).

    python benchmarks/workers.py [MODEL.toml] [--workers 1,2] [--max-states N] [--spill-dir DIR] [--json FILE]

The default model is ``benchmarks/models/bus1-3x2.toml`` (7,101,387 states reduced).
With ``--max-states`` every run stops at the same state; the sharded search expands
the whole level it stops in before it cuts it (one process stops at the state), so a
cut run slightly understates the workers' speed-up. With ``--spill-dir`` every run
keeps every level in files there (one process its frontier, each worker its share).
The load average before and after is printed: on a shared machine wall times stretch
with it. Each run prints a line as it ends, and with ``--json`` the file is rewritten
after each run with the JSON results so far (a list, each with ``workers``, ``wall_s``
and ``cpu_s`` added), so a run cut short by a time limit keeps the runs it finished.
The table lists the runs by worker count, whatever order ``--workers`` gives.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = ROOT / "benchmarks" / "models" / "bus1-3x2.toml"
PHASES = ("expand_s", "exchange_s", "dedup_s", "check_s", "other_s", "busiest_s")


def parse_workers(text: str) -> list[int]:
    """``"1,2"`` as ``[1, 2]``: positive worker counts, comma-separated."""
    try:
        counts = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of worker counts") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: worker counts are at least 1")
    return counts


def run(model: Path, workers: int, max_states: int | None, spill_dir: Path | None = None) -> dict:
    """One check in a fresh process (every level in files under ``spill_dir``, when
    given): its JSON result, with the wall and CPU seconds of the whole process tree
    added (``wall_s``, ``cpu_s``)."""
    with tempfile.TemporaryDirectory(prefix="ordercheck-bench-") as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "ordercheck.checker.cli", "check", str(model), "--quiet", "--workers", str(workers),
               "--json", str(out)]
        if max_states is not None:
            cmd += ["--max-states", str(max_states)]
        if spill_dir is not None:
            cmd += ["--spill-dir", str(spill_dir)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.monotonic()
        proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - began
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode not in (0, 3):
            raise SystemExit(f"workers {workers}: exit code {proc.returncode}: {proc.stderr.strip()}")
        data = json.loads(out.read_text())
        results = data if isinstance(data, list) else data.get("results", [data])
        result = results[0]
    result["workers"] = workers
    result["wall_s"] = wall
    result["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def answers(result: dict) -> tuple:
    """What must be equal across worker counts."""
    st = result["stats"]
    verdicts = {n: p["status"] for n, p in result["properties"].items()}
    return st["distinct_states"], st["transitions"], st["depth"], st["bound"], verdicts


def save(path: Path, results: list[dict]) -> None:
    """``results`` as a JSON list in ``path``, replaced whole (never half-written)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(results, indent=1) + "\n")
    os.replace(tmp, path)


def level_table(levels: list[dict]) -> list[str]:
    """The per-level split as text lines, with a line of totals."""
    lines = [f"  {'depth':>5} {'frontier':>10} {'new':>10} " + " ".join(f"{p[:-2]:>8}" for p in PHASES)]
    for lv in levels:
        lines.append(f"  {lv['depth']:>5} {lv['frontier']:>10,} {lv['new_states']:>10,} "
                     + " ".join(f"{lv.get(p, 0.0):>8.2f}" for p in PHASES))
    total = {p: sum(lv.get(p, 0.0) for lv in levels) for p in PHASES}
    lines.append(f"  {'all':>5} {sum(lv['frontier'] for lv in levels):>10,} {sum(lv['new_states'] for lv in levels):>10,} "
                 + " ".join(f"{total[p]:>8.2f}" for p in PHASES))
    if total["busiest_s"]:
        work = total["expand_s"] + total["dedup_s"] + total["check_s"]
        lines.append(f"  the busiest worker's expand, dedup and check: {total['busiest_s']:.2f} s against a mean of "
                     f"{work:.2f} s ({total['busiest_s'] - work:.2f} s the others waited for it)")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", nargs="?", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--workers", type=parse_workers, default=[1, 2], help="worker counts, e.g. 1,2 (default 1,2)")
    ap.add_argument("--max-states", type=int, default=None, help="stop every run at this many distinct states")
    ap.add_argument("--spill-dir", type=Path, default=None, help="keep every level in files in this directory")
    ap.add_argument("--json", type=Path, default=None, help="write the runs' JSON results here (after each run)")
    args = ap.parse_args(argv)
    if args.max_states is not None and args.max_states < 1:
        ap.error("--max-states must be at least 1")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    shown = args.model.resolve().relative_to(ROOT) if args.model.resolve().is_relative_to(ROOT) else args.model
    print(f"model: {shown}" + (f", cut at {args.max_states:,} states" if args.max_states else "")
          + (", every level spilled" if args.spill_dir else ""))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    runs: dict[int, dict] = {}
    for w in args.workers:
        r = runs[w] = run(args.model, w, args.max_states, args.spill_dir)
        print(f"  {w} worker{'s' if w > 1 else ''}: {r['stats']['distinct_states']:,} states, search "
              f"{r['stats']['seconds']:.1f} s, wall {r['wall_s']:.1f} s, CPU {r['cpu_s']:.1f} s", flush=True)
        if args.json is not None:
            save(args.json, list(runs.values()))
    runs = dict(sorted(runs.items()))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    first = runs[args.workers[0]]
    same = all(answers(r) == answers(first) for r in runs.values())
    base = runs[1]["stats"]["seconds"] if 1 in runs else None
    print(f"\n{'workers':>7} {'states':>11} {'search s':>9} {'wall s':>8} {'CPU s':>8} {'states/s':>10} {'speed-up':>8}")
    for w, r in runs.items():
        st = r["stats"]
        speed = f"{base / st['seconds']:.2f}x" if base else "-"
        print(f"{w:>7} {st['distinct_states']:>11,} {st['seconds']:>9.1f} {r['wall_s']:>8.1f} {r['cpu_s']:>8.1f} "
              f"{st['distinct_states'] / st['seconds']:>10,.0f} {speed:>8}")
    print(f"identical states, transitions, depth, bound and verdicts: {'yes' if same else 'NO'}")
    for w, r in runs.items():
        print(f"\nper-level time split (seconds), {w} worker{'s' if w > 1 else ''}:")
        print("\n".join(level_table(r["stats"]["levels"])))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())

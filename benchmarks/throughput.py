"""Distinct states per second and peak memory per state of the local engine on bus1.

Each model is explored completely (no early stop once verdicts are known), unreduced, in
a fresh process pinned to one CPU core, with every property of the model file checked.
Throughput is given per second of wall time and per second of the process's own CPU
time (the latter is what one core delivers when the machine is shared). Memory
is the growth of that process's resident set during the search (Linux's peak-RSS mark
is reset when the search starts), divided by the number of distinct states.

    python benchmarks/throughput.py [MODEL.toml ...]
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from ordercheck.checker.engine.bfs import search
from ordercheck.checker.loading.modelfile import load_model

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["bus1-2.toml", "bus1-3.toml", "bus1-4-signal.toml", "bus1-mutant-no-sync-sender.toml"]


def measure(path: Path) -> str:
    """One model in this process: the table row."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    model = load_model(path)
    cpu = time.process_time()
    out = search(model.spec, model.properties, stop_when_decided=False)
    cpu = time.process_time() - cpu
    n = out.distinct_states
    rate = n / out.seconds if out.seconds else 0.0
    cpu_rate = n / cpu if cpu else 0.0
    per_state = out.peak_memory_bytes / n if n else 0.0
    return (
        f"{path.name:<36} {n:>10,} {out.transitions:>12,} {out.seconds:>8.2f} {rate:>10,.0f} "
        f"{cpu:>8.2f} {cpu_rate:>12,.0f} {per_state:>12,.0f}"
    )


def main(argv: list[str]) -> None:
    if argv[:1] == ["--one"]:
        print(measure(Path(argv[1])))
        return
    paths = [Path(a) for a in argv] or [ROOT / "models" / name for name in DEFAULT]
    print(f"python {platform.python_version()}, {platform.machine()}, one core, full exploration")
    print(
        f"{'model':<36} {'states':>10} {'transitions':>12} {'wall s':>8} {'states/s':>10} "
        f"{'cpu s':>8} {'states/cpu-s':>12} {'bytes/state':>12}"
    )
    for path in paths:
        row = subprocess.run([sys.executable, __file__, "--one", str(path)], capture_output=True, text=True, check=True)
        print(row.stdout.strip(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

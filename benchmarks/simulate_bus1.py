"""How fast the default simulation budget catches each bus1 mutant at 4 peers x 3 sends.

For every ``models/simulate/bus1-4x3-mutant-*.toml`` and seed, runs ``simulate`` with the
default runs and depth and prints: whether the expected violation was found, the walk
that first broke the property, the walks run in all (shrinking included), the seconds,
the length of the shrunk trace and the length of the shortest counterexample that
breadth-first search finds in the small model of the same mutant
(``models/bus1-mutant-*.toml``). Then the correct ``bus1-4x3.toml`` with the whole
default budget (no violation expected).

    python benchmarks/simulate_bus1.py [SEED ...]      (default seeds: 0 1 2 3 4)
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ordercheck.checker.engine.bfs import search  # noqa: E402
from ordercheck.checker.loading.modelfile import load_model  # noqa: E402
from ordercheck.checker.simulate.run import DEFAULT_DEPTH, DEFAULT_RUNS, simulate  # noqa: E402

SIM = ROOT / "models" / "simulate"


def small_shortest(big: Path, prop: str) -> int:
    """Steps of the shortest counterexample to ``prop`` in the small model of the mutant."""
    small = load_model(ROOT / "models" / big.name.replace("bus1-4x3-", "bus1-"))
    out = search(small.spec, [p for p in small.properties if p.name == prop])
    _init, positions = out.store.path(out.decisions[prop].index)
    return len(positions)


def main(seeds: list[int]) -> None:
    print(f"default budget: {DEFAULT_RUNS} walks of up to {DEFAULT_DEPTH} steps; {os.cpu_count()} cores")
    print(f"{'model':<42} {'seed':>4} {'found':>5} {'first':>5} {'walks':>5} {'sec':>6} {'steps':>5} {'small':>5}")
    for path in sorted(SIM.glob("bus1-4x3-mutant-*.toml")):
        model = load_model(path)
        prop = model.properties[0].name
        shortest = small_shortest(path, prop)
        for seed in seeds:
            started = time.monotonic()
            result = simulate(model, seed=seed)
            seconds = time.monotonic() - started
            verdict = result.properties[prop]
            found = verdict.status == "violated"
            walks = int(result.warnings[0].split()[0])
            first = re.search(r"\(walk (\d+) of seed", verdict.explanation or "")
            steps = len(verdict.trace) - 1 if verdict.trace else "-"
            print(
                f"{path.stem:<42} {seed:>4} {'yes' if found else 'NO':>5} {first.group(1) if first else '-':>5} "
                f"{walks:>5} {seconds:>6.1f} {steps:>5} {shortest:>5}",
                flush=True,
            )
    model = load_model(SIM / "bus1-4x3.toml")
    started = time.monotonic()
    result = simulate(model, seed=seeds[0])
    bad = [n for n, p in result.properties.items() if p.status == "violated"]
    print(
        f"{'bus1-4x3 (correct)':<42} {seeds[0]:>4} {'none' if not bad else ','.join(bad):>5} {'-':>5} "
        f"{int(result.warnings[0].split()[0]):>5} {time.monotonic() - started:>6.1f} "
        f"({result.stats.transitions} steps)"
    )


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or [0, 1, 2, 3, 4])

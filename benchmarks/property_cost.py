"""What each library property costs on the hot path: microseconds per history.

The histories are those of the first reachable states of a model (breadth first, up to
``--states``), built once; each library property the spec offers is then run on all of
them and timed (the fastest of ``--repeat`` runs, as the machine may be shared). The figures compare properties with each other and show that none is
out of line (each is linear in the history, or quadratic in the number of peers only).

    python benchmarks/property_cost.py [MODEL.toml ...] [--states N]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ordercheck.checker.loading.modelfile import load_model
from ordercheck.specs.properties import LIBRARY

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["bus1-3.toml", "sequencer-3.toml", "skeen-4.toml", "matrix-3-multicast.toml"]


def histories(path: Path, limit: int) -> list:
    """The histories of up to ``limit`` reachable states of the model, breadth first."""
    spec = load_model(path).spec
    seen = set()
    frontier = list(spec.init_states())
    out = []
    while frontier and len(out) < limit:
        nxt = []
        for state in frontier:
            if state in seen:
                continue
            seen.add(state)
            out.append(spec.history(state))
            if len(out) >= limit:
                break
            nxt.extend(t for _label, t in spec.next_states(state))
        frontier = nxt
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=DEFAULT)
    parser.add_argument("--states", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5, help="runs per property; the fastest counts")
    args = parser.parse_args()
    names = [p.name for p in LIBRARY if p.kind == "always"]
    print(f"{'model':28} {'histories':>9} " + " ".join(f"{n:>12}" for n in names) + "   (us per history)")
    for name in args.models:
        path = Path(name) if Path(name).exists() else ROOT / "models" / name
        hs = histories(path, args.states)
        cells = []
        for prop in LIBRARY:
            if prop.kind != "always":
                continue
            best = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                for h in hs:
                    prop.check(h)
                best = min(best, time.perf_counter() - start)
            cells.append(f"{best / len(hs) * 1e6:12.1f}")
        print(f"{path.stem:28} {len(hs):>9} " + " ".join(cells))


if __name__ == "__main__":
    main()

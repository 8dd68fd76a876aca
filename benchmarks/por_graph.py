"""The partial-order-reduced graph of the peer specs, summarised so that two versions of
the reduction code can be compared: for each model, the reduced search's distinct
states, transitions and depth (every property checked to the end, not stopping when
decided), and a digest of the stubborn-set choice (positions and member processes) on
every state of the unreduced search, up to a bound.

    python benchmarks/por_graph.py                    # bus1 and fifo models
    python benchmarks/por_graph.py --cut 1000000      # also bus1-3x2 cut at 1,000,000 states
    python benchmarks/por_graph.py --whole            # also the whole bus1-3x2

Same output before and after a change means the same reduced graph on these models.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ordercheck.checker.engine.reduce import stubborn  # noqa: E402
from ordercheck.checker.engine.run import Options, check_model  # noqa: E402
from ordercheck.checker.loading.modelfile import load_model  # noqa: E402

MODELS = sorted(
    [p for p in (ROOT / "models").glob("*.toml") if p.stem.startswith(("bus1-", "fifo-")) and "impl" not in p.stem]
    + [ROOT / "benchmarks/models/fifo-4-three-multicasts.toml"]
)
BIG = ROOT / "benchmarks/models/bus1-3x2.toml"


def counts(path: Path, max_states: int | None = None) -> tuple[int, int, int]:
    """Distinct states, transitions and depth of the reduced search of ``path``."""
    model = load_model(path)
    res = check_model(model, Options(progress=False, por=True, max_states=max_states, stop_when_decided=False))
    return res.stats.distinct_states, res.stats.transitions, res.stats.depth


def choice_digest(path: Path, limit: int) -> tuple[int, str]:
    """A digest of ``stubborn`` on the first ``limit`` states of the unreduced search."""
    spec = load_model(path).spec
    seen = set(spec.init_states())
    order = list(seen)
    h = hashlib.sha256()
    i = 0
    while i < len(order) and i < limit:
        s = order[i]
        succ = spec.next_states(s)
        h.update(repr(stubborn(spec, s, succ, 0)).encode())
        for _label, t in succ:
            if t not in seen:
                seen.add(t)
                order.append(t)
        i += 1
    return i, h.hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cut", type=int, default=0, help="also bus1-3x2 cut at this many states")
    ap.add_argument("--whole", action="store_true", help="also the whole bus1-3x2")
    ap.add_argument("--choices", type=int, default=200_000, help="states per model for the choice digest")
    args = ap.parse_args()
    for path in MODELS:
        n, digest = choice_digest(path, args.choices)
        print(f"{path.stem:36} reduced {counts(path)}  choices over {n:,} states {digest}", flush=True)
    if args.cut:
        print(f"{BIG.stem} cut at {args.cut:,}: {counts(BIG, args.cut)}", flush=True)
        n, digest = choice_digest(BIG, args.choices)
        print(f"{BIG.stem} choices over {n:,} states {digest}", flush=True)
    if args.whole:
        print(f"{BIG.stem} whole: {counts(BIG)}", flush=True)


if __name__ == "__main__":
    main()

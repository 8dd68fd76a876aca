"""States and time to the same verdicts, reduced and unreduced, for the message-passing specs.

For each of BSS, SES, matrix clocks, the sequencer, Lamport, Skeen and synchronous
ordering (and, as ``synchronous_all``, a smaller synchronous configuration where every
peer may send to every other), a configuration in ``benchmarks/models/`` is checked
twice: with symmetry and partial-order reduction (as the model asks, the default) and
with neither. The
unreduced run may be cut at a time limit (``--limit``, seconds); its state count is then
a lower bound, marked ``>=``, and so is the ratio. Verdicts are compared where both runs
decided them.

    python benchmarks/reductions_all.py                 # every configuration, unreduced cut at 600 s
    python benchmarks/reductions_all.py --limit 120 bss ses
    python benchmarks/reductions_all.py --reduced-only
    python benchmarks/reductions_all.py --limit 360 path/to/candidate.toml   # any model file

Each line: model, reductions applied, distinct states, wall and CPU seconds, and the verdicts.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.engine.budget import parse_size
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model

MODELS = Path(__file__).resolve().parent / "models"
BENCHMARKS = {
    "bss": "bss-3x2.toml",
    "ses": "ses-3x3-rotation.toml",
    "matrix": "matrix-3x2-dup.toml",
    "sequencer": "sequencer-2x3.toml",
    "lamport_total": "lamport-3-a2-dup.toml",
    "skeen": "skeen-6-overlapping.toml",
    "synchronous": "synchronous-fanin-4.toml",
    "synchronous_all": "synchronous-3x2.toml",
}


def measure(
    path: Path, reduced: bool, limit: float | None, memory: int | None = None
) -> tuple[int, float, dict[str, str], bool, dict, float]:
    """``(states, seconds, verdicts, cut, reductions, cpu_seconds)`` of one run of the
    model at ``path`` (CPU seconds of this process: less sensitive to other jobs'
    load than wall seconds), the search holding at most ``memory`` bytes when given."""
    model = load_model(path)
    cpu = time.process_time()
    start = time.perf_counter()
    opts = Options(
        progress=False, symmetry=reduced, por=reduced, time_limit=None if reduced else limit, memory_limit=memory
    )
    result = check_model(model, opts)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    verdicts = {name: p.status for name, p in result.properties.items()}
    cut = any(v not in ("holds", "violated") for v in verdicts.values())
    return result.stats.distinct_states, seconds, verdicts, cut, result.reductions, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", help="which specs, or model files (*.toml) to run instead (default: all specs)")
    parser.add_argument("--limit", type=float, default=600.0, help="cut the unreduced runs after this many seconds")
    parser.add_argument("--reduced-only", action="store_true", help="skip the unreduced runs")
    parser.add_argument("--memory-limit", type=_size, help="memory each search may hold, e.g. 6G")
    args = parser.parse_args()
    paths = []
    for spec in args.specs or list(BENCHMARKS):
        if spec.endswith(".toml"):
            paths.append(Path(spec))
        elif spec in BENCHMARKS:
            paths.append(MODELS / BENCHMARKS[spec])
        else:
            parser.error(f"{spec!r} is neither a spec ({', '.join(BENCHMARKS)}) nor a model file (*.toml)")
    for path in paths:  # every file readable before the first long run
        try:
            load_model(path)
        except InputError as exc:
            print(exc.line(), file=sys.stderr)
            sys.exit(2)
    for path in paths:
        red = measure(path, True, None, args.memory_limit)
        on = "+".join(k for k, v in red[4].items() if v) or "none"
        print(f"{path.stem:22} {on:13} {red[0]:>11,} states {red[1]:8.1f} s {red[5]:8.1f} s cpu  {_short(red[2])}", flush=True)
        if args.reduced_only:
            continue
        full = measure(path, False, args.limit, args.memory_limit)
        bound = ">=" if full[3] else "  "
        print(
            f"{path.stem:22} {'unreduced':13} {bound}{full[0]:>9,} states {full[1]:8.1f} s {full[5]:8.1f} s cpu  {_short(full[2])}",
            flush=True,
        )
        same = all(full[2][k] == v for k, v in red[2].items() if full[2][k] in ("holds", "violated"))
        print(
            f"{'':22} {'ratio':13} {bound}{full[0] / red[0]:8.1f}x states {bound}{full[1] / red[1]:6.1f}x time"
            f"  verdicts {'agree' if same else 'DIFFER'}",
            flush=True,
        )


def _size(text: str) -> int:
    """Bytes from a size such as ``6G`` (:func:`ordercheck.checker.engine.budget.parse_size`), its
    error as argparse's."""
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _short(verdicts: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in verdicts.items())


if __name__ == "__main__":
    main()

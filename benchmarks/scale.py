"""Reductions, memory and TLC side by side: the figures of the README's "Scale" section.

For each model: distinct states, transitions, time to verdict (wall and CPU), distinct
states per CPU second, and peak memory per state, with reductions off and on. Each
run is a fresh process (so peak memory is its own). With ``TLA2TOOLS_JAR`` set and the
``tla`` exporter present, the model's TLA+ export (symmetry off) runs through TLC in
the same table, with the ratio of our unreduced states/s to TLC's and of TLC's time to
our reduced time to verdict.

    python benchmarks/scale.py [MODEL.toml ...] [--workers N] [--no-tlc]
    python benchmarks/scale.py benchmarks/models/bus1-3x2.toml --time-limit 600
    python benchmarks/scale.py --memory 10000000     # synthetic store: bytes per state
    python benchmarks/scale.py --memory-model MODEL.toml --max-states N

The machine is shared: wall-clock figures are noisy; CPU seconds are steadier.
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
sys.path.insert(0, str(ROOT))

DEFAULT = [
    "bus1-2.toml",
    "bus1-3.toml",
    "bus1-4-signal.toml",
    "bus1-mutant-no-block.toml",
    "bus1-mutant-no-sync-sender.toml",
    "fifo-3.toml",
    "fifo-4.toml",
]


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def one(path: str, reduced: bool, workers: int, time_limit: float | None) -> dict:
    """One check in this process (run as a child): the figures as a dict."""
    from checker.model import load_model
    from checker.run import Options, check_model

    model = load_model(path)
    cpu0 = cpu_seconds()
    t0 = time.monotonic()
    result = check_model(
        model,
        Options(symmetry=reduced, por=reduced, progress=False, workers=workers, time_limit=time_limit),
    )
    wall = time.monotonic() - t0
    cpu = cpu_seconds() - cpu0
    st = result.stats
    return {
        "states": st.distinct_states,
        "transitions": st.transitions,
        "wall": wall,
        "cpu": cpu,
        "rate_cpu": st.distinct_states / cpu if cpu else 0.0,
        "bytes": st.bytes_per_state,
        "reductions": result.reductions,
        "bound": st.bound,
        "as_expected": result.exit_code() == 0,
        "verdicts": {n: p.status for n, p in result.properties.items()},
    }


def child(args: list[str]) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout)


def tlc(path: str) -> dict:
    """The model's TLA+ export through TLC, or why not."""
    if not os.environ.get("TLA2TOOLS_JAR"):
        return {"skip": "TLA2TOOLS_JAR is not set"}
    try:
        from tla.export import export_model
        from tla.tlc import run_tlc
    except ImportError:
        return {"skip": "the TLA+ exporter (package tla) is not on this branch yet"}
    from checker.model import load_model

    model = load_model(path)
    try:
        export = export_model(model, symmetry=False)
    except Exception as exc:  # an exporter without a template for this spec
        return {"skip": f"no TLA+ export ({exc})"}
    with tempfile.TemporaryDirectory(prefix="ordercheck-bench-") as tmp:
        export.write(tmp)
        cfg = next(f for f in export.files if f.endswith(".cfg") and f.startswith(export.name))
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        run = run_tlc(tmp, export.name, cfg, workers=1)
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    distinct = run.distinct or 0
    return {"states": distinct, "wall": run.seconds, "cpu": cpu, "rate_cpu": distinct / cpu if cpu else 0.0,
            "violated": run.violated}


def table(paths: list[str], workers: int, with_tlc: bool, time_limit: float | None) -> None:
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores, workers={workers}")
    head = f"{'model':<34} {'reductions':<10} {'states':>11} {'to verdict s':>12} {'cpu s':>8} {'states/cpu-s':>12} {'bytes/state':>11}  ok"
    print(head)
    for path in paths:
        name = Path(path).name
        rows = {}
        for reduced in (False, True):
            args = [path, "1" if reduced else "0", str(workers), str(time_limit or 0)]
            r = child(args)
            rows[reduced] = r
            label = "on" if reduced else "off"
            if "error" in r:
                print(f"{name:<34} {label:<10} error: {r['error']}")
                continue
            applied = "+".join(k for k, v in r["reductions"].items() if v) or "none"
            cut = f" (cut: {r['bound']})" if r["bound"] else ""
            print(
                f"{name:<34} {label + ':' + applied:<10} {r['states']:>11,} {r['wall']:>12.2f} {r['cpu']:>8.2f} "
                f"{r['rate_cpu']:>12,.0f} {r['bytes']:>11,.0f}  {'yes' if r['as_expected'] else 'NO'}{cut}",
                flush=True,
            )
        if with_tlc:
            t = tlc(path)
            if "skip" in t:
                print(f"{name:<34} {'TLC':<10} skipped: {t['skip']}")
                continue
            off, on = rows[False], rows[True]
            speed = off.get("rate_cpu", 0) / t["rate_cpu"] if t["rate_cpu"] else 0.0
            faster = t["wall"] / on["wall"] if on.get("wall") else 0.0
            print(
                f"{name:<34} {'TLC':<10} {t['states']:>11,} {t['wall']:>12.2f} {t['cpu']:>8.2f} "
                f"{t['rate_cpu']:>12,.0f} {'':>11}  ours/TLC states/cpu-s {speed:.1f}x, "
                f"TLC time / ours reduced {faster:.1f}x",
                flush=True,
            )


def memory_synthetic(n: int) -> dict:
    """Peak RSS growth of a CompactStore holding ``n`` random fingerprints with parents."""
    import numpy as np

    from checker.memory import current_rss, peak_rss, reset_peak
    from checker.table import CompactStore

    reset_peak()
    base = current_rss()
    store = CompactStore(n)  # preallocated, as the engine does when --max-states gives a size
    rng = np.random.default_rng(1)
    batch = 1 << 20
    done = 0
    t0 = time.monotonic()
    while done < n:
        k = min(batch, n - done)
        fps = rng.integers(1, 1 << 63, size=k, dtype=np.uint64)
        parents = rng.integers(0, max(done, 1), size=k)
        actions = rng.integers(0, 20, size=k)
        store.add_batch(fps, parents, actions)
        done += k
    peak = peak_rss() - base
    return {"states": len(store), "peak_bytes": peak, "bytes_per_state": peak / n, "store_bytes": store.nbytes(),
            "seconds": time.monotonic() - t0}


def memory_real(path: str, max_states: int, spill_dir: str | None) -> None:
    """A real unreduced run of ``path`` cut at ``max_states``, every level's frontier in
    files: peak resident memory per distinct state, over the baseline and in total."""
    from checker.memory import current_rss, peak_rss
    from checker.model import load_model
    from checker.run import Options, check_model

    model = load_model(path)
    before = current_rss()  # interpreter, numpy, ordercheck and the model loaded
    cpu0 = cpu_seconds()
    with tempfile.TemporaryDirectory(prefix="ordercheck-spill-") as tmp:
        res = check_model(model, Options(symmetry=False, por=False, progress=True, max_states=max_states,
                                         stop_when_decided=False, spill_dir=spill_dir or tmp))
    cpu = cpu_seconds() - cpu0
    total = peak_rss()  # the peak since the search reset the mark: the whole process
    st = res.stats
    n = st.distinct_states
    print(f"{path}: {n:,} distinct states (cut by: {st.bound or 'nothing, complete'}), {st.transitions:,} "
          f"transitions, depth {st.depth}, {st.seconds:.1f}s wall, {cpu:.1f}s CPU, frontier spilled to disk")
    print(f"  peak RSS growth over the baseline: {st.peak_memory_bytes / 1e6:,.1f} MB = "
          f"{st.bytes_per_state:.1f} bytes/state")
    print(f"  baseline (Python, imports, model) {before / 1e6:,.1f} MB; whole-process peak RSS "
          f"{total / 1e6:,.1f} MB = {total / n:.1f} bytes/state")


def main(argv: list[str]) -> None:
    if argv[:1] == ["--child"]:
        path, reduced, workers, limit = argv[1:5]
        print(json.dumps(one(path, reduced == "1", int(workers), float(limit) or None)))
        return
    if argv[:1] == ["--child-memory"]:
        print(json.dumps(memory_synthetic(int(argv[1]))))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--no-tlc", action="store_true")
    ap.add_argument("--time-limit", type=float, default=None, help="per run, seconds")
    ap.add_argument("--memory", type=int, help="synthetic store benchmark with this many states")
    ap.add_argument("--memory-model", help="a real model explored up to --max-states")
    ap.add_argument("--max-states", type=int, default=10_000_000)
    ap.add_argument("--spill-dir", help="frontier files for --memory-model")
    a = ap.parse_args(argv)
    if a.memory:
        out = subprocess.run([sys.executable, __file__, "--child-memory", str(a.memory)], capture_output=True, text=True,
                             check=True)
        r = json.loads(out.stdout)
        print(f"synthetic store, {r['states']:,} states: peak RSS growth {r['peak_bytes'] / 1e6:,.1f} MB = "
              f"{r['bytes_per_state']:.1f} bytes/state (table + parent links {r['store_bytes'] / r['states']:.1f}), "
              f"{r['seconds']:.1f}s")
        return
    if a.memory_model:
        memory_real(a.memory_model, a.max_states, a.spill_dir)
        return
    paths = a.models or [str(ROOT / "models" / m) for m in DEFAULT if (ROOT / "models" / m).exists()]
    table(paths, a.workers, not a.no_tlc, a.time_limit)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Reductions, memory and TLC side by side: the figures of docs/explanation/performance.md.

For each model: distinct states, time to verdict (wall and CPU), distinct states per
CPU second and peak memory per state, with reductions off and on ("to verdict": the
model's properties, the search stopping once every verdict is known). Each run is a
fresh process (so peak memory is its own).

With ``TLA2TOOLS_JAR`` set (and ``java`` on PATH), each model's TLA+ export (package
``tla``, symmetry off) also runs through TLC, side by side with our engine, both
exploring the whole state space with reductions off and checking the same
properties, in two settings:

* ``invariants``: the model's ``always`` properties expected to hold (history
  properties such as fifo, causal, total, global_lock, and the spec's own state
  invariants); TLC checks exactly these (no ``TypeOK``, no temporal properties, no
  deadlock check), so it explores everything without stopping at a violation;
* ``none``: no property at all, the bare exploration rate of both engines.

Ours is one process; TLC runs with ``-workers 1`` and ``-workers 2``. Both are timed
from the outside of the search: wall seconds, and CPU seconds of every thread (TLC's
include the JVM's start-up, parsing, JIT and garbage-collector threads). The ratio
column is ours / TLC in distinct states per wall second and per CPU second.

    python benchmarks/scale.py [MODEL.toml ...] [--workers N] [--no-tlc]
    python benchmarks/scale.py benchmarks/models/bus1-3x2.toml --time-limit 600
    python benchmarks/scale.py --memory-model benchmarks/models/bus1-3x2.toml --max-states 10000000
    python benchmarks/scale.py --memory 10000000     # synthetic store: bytes per state

Our reduced search against TLC, to the same verdicts: ``benchmarks/reduced_vs_tlc.py``.

The machine is shared: wall-clock figures are noisy; CPU seconds are steadier.
"""

from __future__ import annotations

import argparse
import dataclasses
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
    "models/bus1-2.toml",
    "models/bus1-3.toml",
    "models/bus1-4-signal.toml",
    "models/bus1-mutant-no-block.toml",
    "models/bus1-mutant-no-sync-sender.toml",
    "models/fifo-3.toml",
    "models/fifo-4.toml",
    "benchmarks/models/fifo-4-three-multicasts.toml",
    "benchmarks/models/skeen-3-three-sends.toml",
    "benchmarks/models/lamport-2-two-sends.toml",
]

TLC_MIN_STATES = 50_000
"""Below this many states the TLC column is skipped: JVM start-up would dominate."""


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child_cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def chosen(model, which: str) -> list:
    """The properties a run checks: the model's, its invariants expected to hold, or none."""
    if which == "model":
        return list(model.properties)
    if which == "invariants":
        return [p for p in model.properties if p.kind == "always" and model.expect.get(p.name) == "holds"]
    return []


def one(path: str, reduced: bool, workers: int, time_limit: float | None, which: str = "model") -> dict:
    """One check in this process (run as a child): the figures as a dict."""
    from ordercheck.checker.engine.run import Options, check_model
    from ordercheck.checker.loading.modelfile import load_model

    model = load_model(path)
    model = dataclasses.replace(model, properties=chosen(model, which))
    cpu0 = cpu_seconds() + child_cpu_seconds()  # worker processes are joined before check_model returns
    t0 = time.monotonic()
    result = check_model(
        model,
        Options(symmetry=reduced, por=reduced, progress=False, workers=workers, time_limit=time_limit,
                stop_when_decided=which == "model"),
    )
    wall = time.monotonic() - t0
    cpu = cpu_seconds() + child_cpu_seconds() - cpu0
    st = result.stats
    return {
        "states": st.distinct_states,
        "transitions": st.transitions,
        "wall": wall,
        "cpu": cpu,
        "rate_cpu": st.distinct_states / cpu if cpu else 0.0,
        "rate_wall": st.distinct_states / wall if wall else 0.0,
        "bytes": st.bytes_per_state,
        "reductions": result.reductions,
        "bound": st.bound,
        "as_expected": all(p.status == model.expect.get(n, p.status) for n, p in result.properties.items()),
        "verdicts": {n: p.status for n, p in result.properties.items()},
        "properties": [p.name for p in model.properties],
    }


def child(args: list[str]) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout)


def tlc_config(export, model, props: list) -> str:
    """A TLC configuration checking exactly ``props`` (no TypeOK, no deadlock check)."""
    by_name = {p.name: p for p in export.adapter.exported_properties()}
    # A substitution (``<- MCPeers``) is written without ``=``, as tla/templates/model.cfg.j2 writes it.
    lines = ["CONSTANTS", *(f"    {n} {v}" if v.startswith("<-") else f"    {n} = {v}" for n, v in export.adapter.cfg_constants()),
             "SPECIFICATION Spec", "CHECK_DEADLOCK FALSE"]
    lines += [f"INVARIANT {by_name[p.name].checked}" for p in props]
    return "\n".join(lines) + "\n"


def tlc(path: str, which: str, workers: int) -> dict:
    """The model's TLA+ export through TLC, checking the ``which`` properties, or why not."""
    if not os.environ.get("TLA2TOOLS_JAR"):
        return {"skip": "TLA2TOOLS_JAR is not set"}
    from ordercheck.checker.loading.modelfile import load_model
    from ordercheck.tla.export import export_model
    from ordercheck.tla.tlc import TlcFailed, TlcUnavailable, run_tlc

    model = load_model(path)
    try:
        export = export_model(model, symmetry=False)
    except Exception as exc:  # an exporter without a template for this spec
        return {"skip": f"no TLA+ export ({exc})"}
    props = chosen(model, which)
    with tempfile.TemporaryDirectory(prefix="ordercheck-bench-") as tmp:
        export.write(tmp)
        cfg = f"{export.name}_bench.cfg"
        (Path(tmp) / cfg).write_text(tlc_config(export, model, props), encoding="utf-8")
        cpu0 = child_cpu_seconds()
        try:
            run = run_tlc(tmp, export.name, cfg, workers=workers)
        except (TlcFailed, TlcUnavailable) as exc:
            return {"skip": str(exc).splitlines()[0]}
        cpu = child_cpu_seconds() - cpu0
    distinct = run.distinct or 0
    return {"states": distinct, "wall": run.seconds, "cpu": cpu, "rate_cpu": distinct / cpu if cpu else 0.0,
            "rate_wall": distinct / run.seconds if run.seconds else 0.0, "violated": run.violated,
            "complete": run.complete}


def table(paths: list[str], workers: int, with_tlc: bool, time_limit: float | None) -> None:
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores, workers={workers}; "
          f"load average {os.getloadavg()[0]:.1f} at start")
    head = (f"{'model':<30} {'run':<16} {'states':>9} {'wall s':>8} {'CPU s':>7} {'states/wall-s':>13} "
            f"{'states/CPU-s':>12} {'bytes/state':>11}  note")
    print(head)
    for path in paths:
        name = Path(path).stem
        unreduced = 0
        for reduced in (False, True):
            r = child([path, "1" if reduced else "0", str(workers), str(time_limit or 0), "model"])
            unreduced = unreduced if reduced else r.get("states", 0)
            label = "to verdict, " + ("on" if reduced else "off")
            if "error" in r:
                print(f"{name:<30} {label:<16} error: {r['error']}")
                continue
            applied = "+".join(k for k, v in r["reductions"].items() if v) or "none applied"
            cut = f"; cut: {r['bound']}" if r["bound"] else ""
            print(
                f"{name:<30} {label:<16} {r['states']:>9,} {r['wall']:>8.2f} {r['cpu']:>7.2f} {r['rate_wall']:>13,.0f} "
                f"{r['rate_cpu']:>12,.0f} {r['bytes']:>11,.0f}  {applied}, as expected: "
                f"{'yes' if r['as_expected'] else 'NO'}{cut}",
                flush=True,
            )
        if with_tlc:
            side_by_side(path, name, unreduced, time_limit)


def side_by_side(path: str, name: str, states: int, time_limit: float | None) -> None:
    """Ours (one process) and TLC (1 and 2 workers), same properties, everything explored."""
    if not os.environ.get("TLA2TOOLS_JAR"):
        print(f"{name:<30} {'TLC':<16} skipped: TLA2TOOLS_JAR is not set")
        return
    if states < TLC_MIN_STATES:
        print(f"{name:<30} {'TLC':<16} skipped: {states:,} states, JVM start-up would dominate")
        return
    for which in ("invariants", "none"):
        ours = child([path, "0", "1", str(time_limit or 0), which])
        if "error" in ours:
            print(f"{name:<30} {'ours, ' + which:<16} error: {ours['error']}")
            continue
        props = ",".join(ours["properties"]) or "no properties"
        print(f"{name:<30} {'ours, ' + which:<16} {ours['states']:>9,} {ours['wall']:>8.2f} {ours['cpu']:>7.2f} "
              f"{ours['rate_wall']:>13,.0f} {ours['rate_cpu']:>12,.0f} {'':>11}  {props}", flush=True)
        for w in (1, 2):
            t = tlc(path, which, w)
            label = f"TLC -workers {w}"
            if "skip" in t:
                print(f"{name:<30} {label:<16} skipped: {t['skip']}")
                continue
            note = ""
            if not t["complete"] or t["states"] != ours["states"]:
                note = f"; NOT the same exploration (TLC: {t['violated'] or 'incomplete'})"
            ratio_w = ours["rate_wall"] / t["rate_wall"] if t["rate_wall"] else 0.0
            ratio_c = ours["rate_cpu"] / t["rate_cpu"] if t["rate_cpu"] else 0.0
            print(f"{name:<30} {label:<16} {t['states']:>9,} {t['wall']:>8.2f} {t['cpu']:>7.2f} "
                  f"{t['rate_wall']:>13,.0f} {t['rate_cpu']:>12,.0f} {'':>11}  ours/TLC: {ratio_w:.1f}x per wall s, "
                  f"{ratio_c:.1f}x per CPU s{note}", flush=True)


def memory_synthetic(n: int) -> dict:
    """Peak RSS growth of a CompactStore holding ``n`` random fingerprints with parents."""
    import numpy as np

    from ordercheck.checker.engine.memory import current_rss, peak_rss, reset_peak
    from ordercheck.checker.engine.table import CompactStore

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
    from ordercheck.checker.engine.memory import current_rss, peak_rss
    from ordercheck.checker.engine.run import Options, check_model
    from ordercheck.checker.loading.modelfile import load_model

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
        path, reduced, workers, limit, which = argv[1:6]
        print(json.dumps(one(path, reduced == "1", int(workers), float(limit) or None, which)))
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
    paths = a.models or [str(ROOT / m) for m in DEFAULT if (ROOT / m).exists()]
    table(paths, a.workers, not a.no_tlc, a.time_limit)


if __name__ == "__main__":
    main(sys.argv[1:])

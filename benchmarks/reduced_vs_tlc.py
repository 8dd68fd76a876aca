"""Our reduced search against TLC on the unreduced space, to the same verdicts.

``benchmarks/scale.py`` compares the two engines exploring the same unreduced space.
This one times what a user runs: ``ordercheck check MODEL`` with its default
reductions (partial-order reduction, and symmetry where it applies) to every verdict
of the model, against TLC on the model's TLA+ export (package ``tla``, symmetry off),
checking the model's ``always`` properties expected to hold (for bus1's ordering
models: fifo, causal, total, global_lock; no ``TypeOK``, no temporal property, no
deadlock check: the configuration of ``scale.py``'s ``invariants`` setting). Our run
checks the model's whole property list, a superset of TLC's.

For each model it prints, per run: distinct states, wall and CPU seconds (ours: this
process and its worker processes; TLC: every JVM thread, start-up, parsing and JIT
included), the verdicts, and the ratio of TLC's time to ours (wall and CPU). The
verdicts on the properties both sides check must agree; a row says ``DISAGREE`` if
they do not.

With ``--tlc-time-limit S`` TLC is stopped after ``S`` seconds if it has not finished:
the row then gives the distinct states of TLC's last progress line and its rate, and,
with ``--unreduced N`` (a count, or a lower bound, of the unreduced space from our own
``--no-por`` search), the time TLC would need for ``N`` states at that rate.

    python benchmarks/reduced_vs_tlc.py MODEL.toml ... [--workers N] [--tlc-workers 1,2] [--no-tlc]
    python benchmarks/reduced_vs_tlc.py benchmarks/models/bus1-3x2.toml --workers 2 \\
        --tlc-workers 2 --tlc-time-limit 600 --unreduced 40000000

TLC is found through ``TLA2TOOLS_JAR`` and ``java`` on ``PATH``. The machine is
shared: wall seconds are noisy; CPU seconds are steadier. The load average is printed
before every run.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale  # noqa: E402  (the sibling benchmark: child runs, TLC configuration)

PROGRESS_AT = re.compile(r"^Progress\(\d+\) at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d):.*?([\d,]+) distinct states found", re.M)


def load() -> str:
    """The three load averages, for the row about to run."""
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def parse_workers(text: str) -> list[int]:
    """``"1,2"`` -> ``[1, 2]``; each a positive integer."""
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text!r}") from None
    if not out or any(w < 1 for w in out):
        raise argparse.ArgumentTypeError(f"workers must be positive integers: {text!r}")
    return out


def tlc_properties(path: str) -> list:
    """The properties TLC checks for ``path``: its ``always`` properties expected to hold."""
    from ordercheck.checker.loading.modelfile import load_model

    return scale.chosen(load_model(path), "invariants")


def run_tlc_timed(path: str, workers: int, time_limit: float | None) -> dict:
    """The model's export through TLC, stopped after ``time_limit`` seconds if unfinished.

    Returns distinct states (TLC's final count, or its last progress line when stopped),
    wall and CPU seconds of the JVM, whether it finished, and what it reported violated.
    """
    from ordercheck.checker.loading.modelfile import load_model
    from ordercheck.tla.export import export_model
    from ordercheck.tla.tlc import TlcUnavailable, find_tlc, parse_output

    try:
        java, jar = find_tlc()
    except TlcUnavailable as exc:
        return {"skip": str(exc)}
    model = load_model(path)
    export = export_model(model, symmetry=False)
    props = scale.chosen(model, "invariants")
    with tempfile.TemporaryDirectory(prefix="ordercheck-bench-") as tmp:
        export.write(tmp)
        cfg = f"{export.name}_bench.cfg"
        (Path(tmp) / cfg).write_text(scale.tlc_config(export, model, props), encoding="utf-8")
        log = Path(tmp) / "tlc.out"
        cmd = [java, "-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC", "-workers", str(workers), "-deadlock",
               "-noGenerateSpecTE", "-metadir", str(Path(tmp) / "meta"), "-config", cfg, f"{export.name}.tla"]
        with log.open("w") as out:
            started = datetime.datetime.now()  # TLC stamps its progress lines in local time
            t0 = time.monotonic()
            proc = subprocess.Popen(cmd, cwd=tmp, stdout=out, stderr=subprocess.STDOUT)
            stopped = False
            while True:  # wait4, not wait: the JVM's own CPU seconds, all its threads
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time_limit is not None and not stopped and time.monotonic() - t0 > time_limit:
                    stopped = True
                    proc.send_signal(signal.SIGTERM)  # only the JVM this function started
                time.sleep(0.2)
            wall = time.monotonic() - t0
            proc.returncode = code = os.waitstatus_to_exitcode(status)
        text = log.read_text(errors="replace")
    cpu = usage.ru_utime + usage.ru_stime
    run = parse_output(text, code)
    progress = PROGRESS_AT.findall(text)
    at = wall
    if stopped:
        # The last progress line: its count and when it was printed (a rate from the
        # whole wall time would count the seconds after it, for no states).
        distinct = int(progress[-1][1].replace(",", "")) if progress else 0
        if progress:
            at = (datetime.datetime.fromisoformat(progress[-1][0]) - started).total_seconds()
    elif run.distinct is None or code not in (0, 12, 13):
        tail = " | ".join(line for line in text.splitlines()[-5:] if line.strip())
        return {"skip": f"TLC exited with {code}: {tail}"}
    else:
        distinct = run.distinct
    by_tla = {p.checked: p.name for p in export.adapter.exported_properties()}
    violated = by_tla.get(run.violated, run.violated) if run.violated else None
    return {"states": distinct, "wall": wall, "at": at, "cpu": cpu, "finished": not stopped, "violated": violated,
            "kind": run.kind, "properties": [p.name for p in props]}


def tlc_verdicts(run: dict) -> dict[str, str]:
    """TLC's verdicts: every checked property holds if it finished without a violation;
    TLC stops at its first violation, so then only that one is known."""
    if not run.get("finished"):
        return {}
    if run["violated"]:
        return {run["violated"]: "violated"}
    return {name: "holds" for name in run["properties"]}


def compare(path: str, workers: int, tlc_workers: list[int], tlc_limit: float | None,
            unreduced: int | None) -> None:
    name = Path(path).stem
    print(f"{name}: ours = ordercheck check (default reductions), --workers {workers}; "
          f"TLC checks {', '.join(p.name for p in tlc_properties(path))}", flush=True)
    print(f"  {load()}", flush=True)
    ours = scale.child([path, "1", str(workers), "0", "model"])
    if "error" in ours:
        print(f"  ours: error: {ours['error']}")
        return
    applied = "+".join(k for k, v in ours["reductions"].items() if v) or "no reduction applied"
    verdicts = ours["verdicts"]
    print(f"  {'ours, ' + applied:<24} {ours['states']:>12,} states {ours['wall']:>9.1f} s wall "
          f"{ours['cpu']:>9.1f} s CPU  " + ", ".join(f"{n} {s}" for n, s in verdicts.items())
          + f"; as expected: {'yes' if ours['as_expected'] else 'NO'}", flush=True)
    for w in tlc_workers:
        print(f"  {load()}", flush=True)
        t = run_tlc_timed(path, w, tlc_limit)
        label = f"TLC -workers {w}"
        if "skip" in t:
            print(f"  {label:<24} skipped: {t['skip']}", flush=True)
            continue
        rate = t["states"] / t["at"] if t["at"] > 0 else 0.0
        head = (f"  {label:<24} {t['states']:>12,} states {t['wall']:>9.1f} s wall {t['cpu']:>9.1f} s CPU  "
                f"({rate:,.0f} states/wall s)")
        if not t["finished"]:
            note = f"stopped at the time limit, not finished (count from its progress line at {t['at']:.0f} s)"
            if unreduced and rate:
                note += (f"; {unreduced:,} states at this rate: {unreduced / rate:,.0f} s wall, "
                         f"{unreduced / rate / ours['wall']:.0f}x ours")
            print(f"{head}  {note}", flush=True)
            continue
        theirs = tlc_verdicts(t)
        agree = all(verdicts.get(n) == s for n, s in theirs.items())
        print(f"{head}  " + ", ".join(f"{n} {s}" for n, s in theirs.items())
              + f"; {'agree' if agree else 'DISAGREE'}; TLC/ours: {t['wall'] / ours['wall']:.1f}x wall, "
              f"{t['cpu'] / ours['cpu']:.1f}x CPU", flush=True)


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+", help="model TOML files")
    ap.add_argument("--workers", type=int, default=1, help="our worker processes")
    ap.add_argument("--tlc-workers", type=parse_workers, default=[1, 2], help="TLC runs, e.g. 1,2")
    ap.add_argument("--no-tlc", action="store_true", help="our run only")
    ap.add_argument("--tlc-time-limit", type=float, default=None, help="stop TLC after this many seconds")
    ap.add_argument("--unreduced", type=int, default=None,
                    help="unreduced distinct states (or a lower bound), for a stopped TLC run's estimate")
    a = ap.parse_args(argv)
    if a.workers < 1:
        ap.error("--workers must be at least 1")
    for path in a.models:
        if not Path(path).is_file():
            ap.error(f"{path}: no such model file")
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores", flush=True)
    for path in a.models:
        compare(path, a.workers, [] if a.no_tlc else a.tlc_workers, a.tlc_time_limit, a.unreduced)


if __name__ == "__main__":
    main(sys.argv[1:])

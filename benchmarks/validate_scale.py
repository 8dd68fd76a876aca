"""Trace validation at scale: events/s on one core, and many logs on Spark against local.

Part 1: a generated log of about a million events (``synthetic_log``: 8 peers
multicasting to 3 others, sequencer-ordered, so every property holds and each check
reads the whole log) is written as JSON Lines, read back, and checked for fifo, causal
and total, in this process pinned to one CPU core. Printed: wall and CPU seconds and
events per CPU second for reading and for each property, and for all of it together;
then integrity, global_lock and synchronous on the same log (not part of the target).
Then the same log with a fault two thirds in (the first violation and its window).

Part 2: a thousand logs generated from random walks of built-in models (correct ones
and mutants) are validated by the local engine and by ``--engine spark`` on
``local[2]``; printed: seconds and logs/s of each, and whether the verdict tables
(every column but ``seconds``) are identical. Walks of these models are short (a few
events each), so this measures Spark's cost per task.

Part 3: the same comparison on a few large logs (``--big-logs`` synthetic logs of
``--big-events`` events each, some with faults), where each task has real work; then
once more with the logs split (above a quarter of ``--big-events`` lines): each read in
parts by parallel tasks and its properties shared out among tasks, each log's record
(first violation, sentence, window) compared with the local engine's.

Part 4 (``--issue33``, alone): issue 33's two workloads, 200 walk logs and one log of
2M events, on the local engine and on Spark with its session started (the session's
start and the first job, which starts the Python workers, timed apart), every record
compared; then the Spark job's tasks on the large log run here one after the other
without Spark, in CPU seconds, for the longest path two idle cores would take.

    python benchmarks/validate_scale.py [--events N] [--logs N] [--big-logs N] [--big-events N]
                                        [--master local[2]] [--no-spark]
    python benchmarks/validate_scale.py --issue33 [--issue-logs N] [--issue-events N] [--master local[2]]
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.validate.checks import CHECKS
from ordercheck.checker.validate.generate import synthetic_log, walk
from ordercheck.checker.validate.jsonl import write_jsonl
from ordercheck.checker.validate.readers import expand_logs, read_log
from ordercheck.checker.validate.verdicts import Job, validate_path

ROOT = Path(__file__).resolve().parent.parent
PROPS = ("fifo", "causal", "total")
OTHERS = ("integrity", "global_lock", "synchronous")
WALK_MODELS = ("bus1-3", "bus1-4-signal", "sequencer-3", "sequencer-mutant-no-hold-back", "skeen-4",
               "skeen-mutant-min", "lamport-mutant-no-wait", "bss-3", "bss-mutant-no-fifo-condition",
               "matrix-mutant-no-fifo-condition")


def _timed(fn, *args):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def one_log(events: int, tmp: Path) -> None:
    log = synthetic_log(events, 8, seed=1)
    path = tmp / "big.jsonl"
    with path.open("w") as fh:
        write_jsonl(log, fh)
    n = len(log)
    size = path.stat().st_size
    print(f"log: {n:,} events, {log.messages:,} messages, 8 peers, {size / 1e6:.1f} MB of JSON Lines")
    print(f"{'step':<14} {'wall s':>8} {'cpu s':>8} {'events/cpu-s':>14}  verdict")
    log, wall, cpu = _timed(read_log, path)
    total_wall, total_cpu = wall, cpu
    print(f"{'read':<14} {wall:>8.2f} {cpu:>8.2f} {n / cpu:>14,.0f}")
    for name in PROPS:
        found, wall, cpu = _timed(CHECKS[name], log)
        total_wall += wall
        total_cpu += cpu
        print(f"{name:<14} {wall:>8.2f} {cpu:>8.2f} {n / cpu:>14,.0f}  {'holds' if found is None else 'VIOLATED'}")
    print(f"{'all':<14} {total_wall:>8.2f} {total_cpu:>8.2f} {n / total_cpu:>14,.0f}  (read + fifo + causal + total)")
    for name in OTHERS:
        found, wall, cpu = _timed(CHECKS[name], log)
        verdict = "holds" if found is None else f"violated at event {found.at:,}, window of {len(found.events)} events"
        print(f"{name:<14} {wall:>8.2f} {cpu:>8.2f} {n / cpu:>14,.0f}  {verdict} (not in the target)")
    for fault in ("fifo", "total"):
        bad = synthetic_log(events, 8, seed=1, fault=fault)
        for name in PROPS:
            found, wall, cpu = _timed(CHECKS[name], bad)
            verdict = "holds" if found is None else f"violated at event {found.at:,}, window of {len(found.events)} events"
            print(f"fault {fault:<5} {name:<7} {wall:>6.2f} {cpu:>8.2f} {len(bad) / cpu:>14,.0f}  {verdict}")


def many_logs(count: int, master: str, spark: bool, tmp: Path) -> None:
    folder = tmp / "logs"
    folder.mkdir()
    models = [load_model(ROOT / "models" / f"{name}.toml") for name in WALK_MODELS]
    started = time.perf_counter()
    events = 0
    for i in range(count):
        model = models[i % len(models)]
        w = walk(model, i, 200)
        events += len(w.log)
        buf = io.StringIO()
        write_jsonl(w.log, buf)
        (folder / f"{model.name}-{i:04d}.jsonl").write_text(buf.getvalue())
    print(f"\n{count} logs from walks of {len(models)} models ({events:,} events), written in "
          f"{time.perf_counter() - started:.1f}s")
    compare(folder, count, master, spark)


def big_logs(count: int, events: int, master: str, spark: bool, tmp: Path) -> None:
    folder = tmp / "big"
    folder.mkdir()
    total = 0
    for i in range(count):
        log = synthetic_log(events, 8, seed=100 + i, fault=(None, "fifo", "total")[i % 3])
        total += len(log)
        with (folder / f"big-{i:03d}.jsonl").open("w") as fh:
            write_jsonl(log, fh)
    print(f"\n{count} synthetic logs ({total:,} events)")
    compare(folder, count, master, spark, split_above=events // 4)


def compare(folder: Path, count: int, master: str, spark: bool, split_above: int | None = None) -> None:
    job = Job(tuple(p for p in CHECKS if p != "eventual_delivery"))
    started = time.perf_counter()
    local = [validate_path(str(f), job) for f in expand_logs([str(folder)])]
    local_s = time.perf_counter() - started
    bad = sum(1 for v in local if v.violated)
    print(f"local engine (1 process) {local_s:7.2f}s  {count / local_s:8.1f} logs/s  ({bad} logs with violations)")
    if not spark:
        return
    from ordercheck.checker.spark.session import get_spark
    from ordercheck.checker.validate.spark_job import validate_spark

    get_spark(master, {"spark.ui.enabled": "false"})
    validate_spark([str(folder)], job, master=master)  # warm-up: start the Python workers
    started = time.perf_counter()
    remote = validate_spark([str(folder)], job, master=master)
    spark_s = time.perf_counter() - started

    def strip(vs):
        return [{k: v for k, v in row.items() if k != "seconds"} for x in vs for row in x.rows()]

    same = strip(remote) == strip(local)
    print(f"spark {master:<18} {spark_s:7.2f}s  {count / spark_s:8.1f} logs/s  (second run; verdict tables identical: {same})")
    _first_difference(strip(local), strip(remote))
    if split_above is None:
        return
    started = time.perf_counter()
    parts = validate_spark([str(folder)], job, master=master, split_above=split_above)
    split_s = time.perf_counter() - started

    def records(vs):
        return [{k: v for k, v in x.to_json().items() if k != "seconds"} for x in vs]

    same = records(parts) == records(local)
    _first_difference(records(local), records(parts))
    print(f"spark, split above {split_above:,} lines {split_s:7.2f}s  {count / split_s:8.1f} logs/s  "
          f"(read in parts, properties shared out; records identical to local: {same})")


def pays_for_itself(small: int, events: int, master: str, tmp: Path) -> None:
    """Issue 33's two workloads, ``validate``'s default properties: ``small`` walk logs (as
    :func:`many_logs` writes them) and one synthetic log of about ``events`` events with
    a fault two thirds in. Spark's session is started first and timed on its own; then
    one small job starts its Python workers; then each workload is timed on the local
    engine and on Spark, and every record (verdict, line, sentence, window) compared."""
    from ordercheck.checker.spark.session import get_spark
    from ordercheck.checker.validate.checks import DEFAULT
    from ordercheck.checker.validate.spark_job import validate_spark

    job = Job(DEFAULT)
    folder = tmp / "issue-small"
    folder.mkdir()
    models = [load_model(ROOT / "models" / f"{name}.toml") for name in WALK_MODELS]
    for i in range(small):
        model = models[i % len(models)]
        buf = io.StringIO()
        write_jsonl(walk(model, i, 200).log, buf)
        (folder / f"{model.name}-{i:04d}.jsonl").write_text(buf.getvalue())
    big = tmp / "issue-big.jsonl"
    log = synthetic_log(events, 8, seed=1, fault="total")
    with big.open("w") as fh:
        write_jsonl(log, fh)
    print(f"\nissue 33's workloads ({', '.join(job.props)}): {small} walk logs; one log of {len(log):,} events "
          f"({big.stat().st_size / 1e6:.1f} MB)")
    del log
    started = time.perf_counter()
    get_spark(master, {"spark.ui.enabled": "false"})
    print(f"spark session start (JVM, once per process)      {time.perf_counter() - started:7.2f}s")
    started = time.perf_counter()
    validate_spark([str(folder)], job, master=master, driver_bytes=0)
    print(f"first spark job on {small} logs (starts the Python workers) {time.perf_counter() - started:7.2f}s")
    [validate_path(str(f), job) for f in expand_logs([str(folder)])]  # this process's checks loaded, as Spark's are
    # The small logs twice on Spark: as the command runs them (under 4 MiB together:
    # on the driver, no job) and with every log in Spark's tasks (driver_bytes=0). Their
    # times are a few hundredths of a second, so each is the median of seven runs in
    # turn (local, Spark, local, ...); the large log's are of one run.
    for name, paths, driver_bytes, runs in ((f"{small} small logs", [str(folder)], None, 7),
                                            (f"{small} small logs, in tasks", [str(folder)], 0, 7),
                                            ("one large log", [str(big)], None, 1)):
        times: list[tuple[float, float, float, float]] = []
        for _ in range(runs):
            started, cpu = time.perf_counter(), _tree_cpu()
            local = [validate_path(str(f), job) for f in expand_logs(paths)]
            local_s, local_cpu = time.perf_counter() - started, _tree_cpu() - cpu
            started, cpu = time.perf_counter(), _tree_cpu()
            remote = validate_spark(paths, job, master=master, driver_bytes=driver_bytes)
            times.append((local_s, time.perf_counter() - started, local_cpu, _tree_cpu() - cpu))
        local_s, spark_s, local_cpu, spark_cpu = (sorted(column)[len(column) // 2] for column in zip(*times))

        def records(vs):
            return [{k: v for k, v in x.to_json().items() if k != "seconds"} for x in vs]

        same = records(remote) == records(local)
        bad = sum(1 for v in local if v.violated)
        print(f"{name:<16} local {local_s:7.2f}s  spark {master} {spark_s:7.2f}s  ratio {local_s / spark_s:4.2f}  "
              f"({bad} with violations; records identical: {same})")
        print(f"{'':<16} CPU seconds (this process, the JVM and the Python workers): local {local_cpu:.2f}, "
              f"spark {spark_cpu:.2f}")
        _first_difference(records(local), records(remote))
    critical_path(big, job)


def critical_path(path: Path, job: Job) -> None:
    """The Spark job's work on one large log with Spark left out: each task's function
    run here in turn on two parts and two groups, timed in CPU seconds, beside the
    local engine's (run twice, the second timed). The longest path (the driver's plan,
    the longer read, the longer check) is what two idle cores would take, plus Spark's
    own costs, which the comparison above includes."""
    from ordercheck.checker.validate.chunks import count_lines, plan
    from ordercheck.checker.validate.spark_job import _check_task, _task, property_groups

    validate_path(str(path), job)
    cpu = time.process_time()
    validate_path(str(path), job)
    local = time.process_time() - cpu
    cpu = time.process_time()
    count_lines(str(path), 0)
    parts = plan(str(path), 2)
    driver = time.process_time() - cpu
    reads, pickled = [], []
    for k, part in enumerate(parts):
        cpu = time.process_time()
        pickled.append(_task(job, False, ("part", str(path), k, part))[0][2])
        reads.append(time.process_time() - cpu)

    class Shared:  # what a Spark broadcast hands a task: the log's pickled parts
        value = pickled

    checks = []
    for g, group in enumerate(property_groups(job, 2)):
        cpu = time.process_time()
        _check_task(job, False, {str(path): Shared}, (str(path), g, group))
        checks.append(time.process_time() - cpu)
    path_s = driver + max(reads) + max(checks)
    print(f"without Spark, CPU s: local {local:.2f}; plan {driver:.2f}, reads {' + '.join(f'{r:.2f}' for r in reads)}, "
          f"checks {' + '.join(f'{c:.2f}' for c in checks)}: longest path {path_s:.2f} "
          f"(local / longest path {local / path_s:.2f}), all {driver + sum(reads) + sum(checks):.2f}")


def _tree_cpu() -> float:
    """CPU seconds used so far by this process and its children (Spark's JVM, and the
    Python workers it starts), the live ones and the ended ones."""
    import psutil

    me = psutil.Process()
    used = sum(me.cpu_times()[:4])
    for child in me.children(recursive=True):
        try:
            used += sum(child.cpu_times()[:2])
        except psutil.Error:
            continue
    return used


def _first_difference(local: list, remote: list) -> None:
    """Print the first record on which the two engines differ, if any."""
    for a, b in zip(local, remote):
        if a != b:
            print(f"  first difference:\n    local {a}\n    spark {b}")
            return
    if len(local) != len(remote):
        print(f"  {len(local)} local records, {len(remote)} from Spark")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--logs", type=int, default=1000)
    ap.add_argument("--big-logs", type=int, default=24)
    ap.add_argument("--big-events", type=int, default=50_000)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--issue33", action="store_true",
                    help="only issue 33's two workloads: --issue-logs walk logs, one log of --issue-events events")
    ap.add_argument("--issue-logs", type=int, default=200)
    ap.add_argument("--issue-events", type=int, default=2_000_000)
    args = ap.parse_args()
    print(f"python {platform.python_version()}, {platform.machine()}, load average {os.getloadavg()[0]:.2f}")
    tmp = Path(tempfile.mkdtemp(prefix="validate-scale-"))
    try:
        if args.issue33:
            pays_for_itself(args.issue_logs, args.issue_events, args.master, tmp)
            return
        if hasattr(os, "sched_setaffinity"):
            every = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {sorted(every)[0]})
            one_log(args.events, tmp)
            os.sched_setaffinity(0, every)
        else:
            one_log(args.events, tmp)
        many_logs(args.logs, args.master, not args.no_spark, tmp)
        if args.big_logs:
            big_logs(args.big_logs, args.big_events, args.master, not args.no_spark, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""``ordercheck run --seeds N``: many seeds of random schedules, one task each, results
in one table; ``--engine spark`` runs the tasks on Spark.

Seed ``S`` (``--seed`` .. ``--seed + N - 1``) is a task that runs exactly what
``ordercheck run --seed S --runs R`` runs alone: ``R`` random (or PCT) schedules from
that seed, stopping at the first failing one (:func:`seed_task`). On Spark each seed is one task
(one partition), and the node processes start on the executor that runs it, so the node
command must work there (true on ``local[...]`` masters; on a cluster, the command and
its files must exist on every executor). The driver gathers the tasks' results in seed
order: the same table from either engine, every column but the seconds.

A node that misbehaves in any task ends the command as it ends a run of one seed (one
line naming the node, exit 2; the first such seed's), a step bound as one (exit 3).
Otherwise the shortest failing schedule over all seeds (fewest steps, then lowest seed)
is shrunk on the driver (as ``run`` shrinks one), printed, written as the replay file
and drawn by ``--report``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from ordercheck.checker.api.errors import EngineError
from ordercheck.checker.harness.explore import pct_runs, random_runs
from ordercheck.checker.harness.network import Execution, Scenario, StepBound
from ordercheck.checker.harness.nodes import NodeFailed, Pool
from ordercheck.checker.validate.readers import read_text
from ordercheck.checker.validate.verdicts import Job, LogVerdict, judge

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class SeedResult:
    """One seed's task: how many schedules ran (``fair`` of them fair), and the failing
    execution (with its verdict) if one failed; ``error`` (a node's misbehaviour, as its one line) or
    ``bound`` (the step bound's sentence) when the task ended otherwise; ``undecided``:
    how many executions' conformance to ``run --model``'s spec a bound left unknown."""

    seed: int
    schedules: int
    seconds: float
    fair: int = 0
    failed: Execution | None = None
    verdict: LogVerdict | None = None
    last: Execution | None = None
    last_verdict: LogVerdict | None = None
    error: str | None = None
    bound: str | None = None
    undecided: int = 0

    @property
    def steps(self) -> int | None:
        """The failing schedule's length in steps, or ``None``."""
        return len(self.failed.picks) if self.failed is not None else None


def judging(job: Job, safety: Job, tally: Any, where: str) -> Callable[[Execution], bool]:
    """The test a task's executions pass (``True``: this one failed): each judged as
    ``run`` judges it (``job`` on a fair execution, ``safety`` on another, ``run --model``'s
    model built once), counted in ``tally``'s ``schedules``, ``fair`` and ``undecided``,
    and named ``WHERE, schedule N`` in what its log's reader says."""
    model = job.model()

    def failing(ex: Execution) -> bool:
        tally.schedules += 1
        tally.fair += ex.fair
        ex.verdict = judge(read_text(ex.log_text(), f"{where}, schedule {tally.schedules}", "jsonl", None),
                           job if ex.fair else safety, model=model)
        tally.undecided += ex.verdict.unknown and not ex.verdict.violated
        return bool(ex.verdict.violated)

    return failing


def seed_task(sc: Scenario, job: Job, safety: Job, kind: str, runs: int, depth: int, seed: int) -> SeedResult:
    """``runs`` random schedules from ``seed``
    (:func:`~ordercheck.checker.harness.explore.random_runs`; with ``kind`` ``pct``, PCT
    schedules of ``depth``), each judged as ``run`` judges it (``job`` on a fair
    execution, ``safety`` on another), stopping at the first failing one."""
    started = time.perf_counter()
    result = SeedResult(seed, 0, 0.0)
    failing = judging(job, safety, result, f"seed {seed}")

    try:
        with Pool(sc.nodes) as pool:
            gen = pct_runs(sc, seed, runs, depth, failing, spawn=pool.spawn) if kind == "pct" else \
                random_runs(sc, seed, runs, failing, spawn=pool.spawn)
            for ex in gen:
                result.last, result.last_verdict = ex, ex.verdict
                if result.last_verdict.violated:
                    result.failed, result.verdict = ex, result.last_verdict
    except NodeFailed as exc:
        result.error = exc.line() + f" (seed {seed}, schedule {result.schedules + 1})"
    except StepBound as exc:
        result.bound = f"{exc} (seed {seed})"
    result.seconds = round(time.perf_counter() - started, 3)
    return result


def run_seeds(sc: Scenario, job: Job, safety: Job, kind: str, runs: int, depth: int, seeds: list[int], engine: str,
              master: str) -> list[SeedResult]:
    """Every seed's :func:`seed_task`, in seed order, on the local engine (one after the
    other) or on Spark (one task per seed). Raises
    :class:`~ordercheck.checker.api.errors.EngineError` when Spark fails."""
    task = partial(seed_task, sc, job, safety, kind, runs, depth)
    if engine != "spark":
        return [task(s) for s in seeds]
    return sorted(spark_map(task, seeds, master), key=lambda r: r.seed)


def spark_map(task: Callable[[T], R], items: list[T], master: str) -> list[R]:
    """``task`` of each item on Spark (``master``), one task (partition) per item; the
    results in the items' order. Raises
    :class:`~ordercheck.checker.api.errors.EngineError` when Spark fails."""
    from ordercheck.checker.spark.session import SparkUnavailable, executor_python_problem, get_spark, spark_jobs

    try:
        spark = get_spark(master)
    except SparkUnavailable as exc:
        raise EngineError("spark", str(exc)) from None
    try:
        with spark_jobs():  # a signal cancels the job (exit 130/143)
            return list(spark.parallelize(items, len(items)).map(task).collect())
    except Exception as exc:  # a task that failed for good, or Spark itself
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        raise EngineError("spark", executor_python_problem(str(exc))
                          or f"the run's job failed: {(lines[0] if lines else type(exc).__name__)[:300]}") from None


def shortest(results: list[SeedResult]) -> SeedResult | None:
    """The seed whose failing schedule is shortest (then the lowest seed), or ``None``."""
    failed = [r for r in results if r.failed is not None]
    return min(failed, key=lambda r: (r.steps, r.seed)) if failed else None


def table(results: list[SeedResult]) -> list[str]:
    """The results as a text table, one row per seed."""
    rows = [("seed", "schedules", "verdict", "steps", "seconds")]
    for r in results:
        if r.verdict is not None:
            word = ", ".join(f"{name} VIOLATED" for name in r.verdict.violated)
        else:
            word = "error" if r.error else "bound" if r.bound else "every property holds"
        rows.append((str(r.seed), str(r.schedules), word, "" if r.steps is None else str(r.steps), f"{r.seconds:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    out = ["  ".join(c.ljust(w) if i == 2 else c.rjust(w) if i != 0 else c.ljust(w)
                     for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip() for row in rows]
    out.insert(1, "  ".join("-" * w for w in widths))
    return out


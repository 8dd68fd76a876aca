"""``ordercheck run --explore --prefix-depth K`` (or ``--explore --engine spark``):
systematic exploration split into schedule prefixes, one task each, results in one
table; ``--engine spark`` runs the tasks on Spark.

The driver lists every schedule prefix of ``K`` steps (and every whole execution
shorter than that) by running the nodes that far, once per prefix
(:func:`~ordercheck.checker.harness.explore.schedule_prefixes`). Each prefix is a task
that explores the schedules beginning with it (:func:`prefix_task`: the nodes
re-executed from the start for each, the prefix replayed, a divergence reported), as
``ordercheck run --explore`` explores the whole tree. The schedules below different
prefixes are disjoint and together they are all schedules, so:

- without DPOR (``--no-dpor``) the tasks run exactly the schedules plain exploration
  runs, and their counts add up to its count;
- with DPOR each task reduces the schedules below its own prefix (source sets and sleep
  sets start afresh at the prefix; a race whose earlier step lies in the prefix is left
  to the prefix that begins with the reversal). Every class of equivalent schedules is
  still run at least once, by the task of any prefix one of its schedules begins with,
  but a class whose schedules begin with different prefixes is run once per such
  prefix: the total is at least plain DPOR's count, at most plain exploration's.

Each task stops at its first failing schedule, or after ``--max-schedules`` judged (or
as many cut short) with schedules left, which is exit 3 as for one exploration (the
bound is per task). On Spark each prefix is one task (one partition), and the node
processes start on the executor that runs it, as for ``--seeds``
(:mod:`ordercheck.checker.cli.run_seeds`). A node that misbehaves in any task ends the
command as in one exploration (one line naming the node, exit 2), a step bound as one
(exit 3); otherwise the shortest failing schedule over all tasks (then the first
prefix) is shrunk, printed, written as the replay file and drawn by ``--report``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from functools import partial

from ordercheck.checker.cli.run_seeds import judging, spark_map
from ordercheck.checker.harness.explore import Exploration, explore, key_body
from ordercheck.checker.harness.network import Divergence, Execution, Scenario, StepBound
from ordercheck.checker.harness.nodes import NodeFailed, Pool
from ordercheck.checker.validate.verdicts import Job, LogVerdict


@dataclass
class PrefixResult:
    """One prefix's task: its number (1, 2, ... in the order listed) and actions, how many
    schedules it judged (``fair`` of them fair, ``undecided`` with conformance unknown)
    and cut short (``blocked``), whether ``max_schedules`` left some unexplored
    (``left``), the failing execution (with its verdict) if one failed, the last one
    judged; ``error`` (a node's misbehaviour or a divergence, as one line) or ``bound``
    (the step bound's sentence) when the task ended otherwise."""

    index: int
    prefix: list[str]
    schedules: int = 0
    seconds: float = 0.0
    blocked: int = 0
    left: bool = False
    fair: int = 0
    undecided: int = 0
    failed: Execution | None = None
    verdict: LogVerdict | None = None
    last: Execution | None = None
    error: str | None = None
    bound: str | None = None

    @property
    def steps(self) -> int | None:
        """The failing schedule's length in steps, or ``None``."""
        return len(self.failed.keys) if self.failed is not None else None


def prefix_task(sc: Scenario, job: Job, safety: Job, dpor: bool, max_schedules: int,
                item: tuple[int, list[str]]) -> PrefixResult:
    """Explore the schedules that begin with ``item``'s prefix
    (:func:`~ordercheck.checker.harness.explore.explore` with ``root``), each judged as
    ``run`` judges it (``job`` on a fair execution, ``safety`` on another), stopping at
    the first failing one or at ``max_schedules``."""
    index, prefix = item
    started = time.perf_counter()
    result = PrefixResult(index, list(prefix))
    stats = Exploration()
    failing = judging(job, safety, result, f"prefix {index}")

    try:
        with Pool(sc.nodes) as pool:
            for ex in explore(sc, max_schedules, failing, dpor=dpor, stats=stats, spawn=pool.spawn,
                              root=prefix):
                result.last = ex
                if ex.verdict.violated:
                    result.failed, result.verdict = ex, ex.verdict
    except NodeFailed as exc:
        result.error = exc.line() + f" (prefix {index}, schedule {result.schedules + 1})"
    except Divergence as exc:
        result.error = f"replay diverged at {exc} (prefix {index})"
    except StepBound as exc:
        result.bound = f"{exc} (prefix {index})"
    result.blocked, result.left = stats.blocked, stats.left
    result.seconds = round(time.perf_counter() - started, 3)
    return result


def run_prefixes(sc: Scenario, job: Job, safety: Job, dpor: bool, max_schedules: int, prefixes: list[list[str]],
                 engine: str, master: str) -> list[PrefixResult]:
    """Every prefix's :func:`prefix_task`, in the order listed, on the local engine (one
    after the other) or on Spark (one task per prefix). Raises
    :class:`~ordercheck.checker.api.errors.EngineError` when Spark fails."""
    task = partial(prefix_task, sc, job, safety, dpor, max_schedules)
    items = [(i + 1, p) for i, p in enumerate(prefixes)]
    if engine != "spark":
        return [task(it) for it in items]
    return sorted(spark_map(task, items, master), key=lambda r: r.index)


def shortest(results: list[PrefixResult]) -> PrefixResult | None:
    """The task whose failing schedule is shortest (then the first prefix), or ``None``."""
    failed = [r for r in results if r.failed is not None]
    return min(failed, key=lambda r: (r.steps, r.index)) if failed else None


def short_action(key: str) -> str:
    """An action's key with its body cut to its ``type`` and ``message``:
    ``c1->n1 broadcast 1``, ``n1->n2 cb 1``, ``crash n2``."""
    head, body = key_body(key)
    if body is None:
        return key
    text = f"{head} {body.get('type')}"
    return text + (f" {json.dumps(body['message'])}" if "message" in body else "")


def table(results: list[PrefixResult]) -> list[str]:
    """The results as a text table, one row per prefix, its actions last."""
    rows = [("prefix", "schedules", "verdict", "steps", "seconds", "actions")]
    for r in results:
        if r.verdict is not None:
            word = ", ".join(f"{name} VIOLATED" for name in r.verdict.violated)
        else:
            word = ("error" if r.error else "bound" if r.bound or r.left else
                    "undecided" if r.undecided else "every property holds")
        rows.append((str(r.index), str(r.schedules), word, "" if r.steps is None else str(r.steps),
                     f"{r.seconds:.1f}", "; ".join(short_action(k) for k in r.prefix) or "(none)"))
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    out = ["  ".join(c.ljust(w) if i in (0, 2, 5) else c.rjust(w)
                     for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip() for row in rows]
    out.insert(1, "  ".join("-" * w for w in widths))
    return out

"""``ordercheck run``: run a user's nodes with ordercheck as their network
(docs/howto/run-real-nodes.md).

Each execution's recorded log is read back as ``validate`` reads a JSON Lines log and
judged by the same code (:func:`ordercheck.checker.validate.verdicts.judge`), and a violation is
printed as ``validate`` prints it. The first failing schedule is written as a replay
file (``--replay-out``), which ``--replay`` runs again.

Exit codes: 0 every schedule run kept every property; 1 a property is violated; 2 bad
input: a bad option or replay file, or a node that misbehaved (printed non-JSON,
never answered, exited, flooded, or did something else on replay); 3 a bound stopped
the run before a verdict (``--max-schedules`` reached with schedules left to explore,
or ``--max-steps``); 4 ``--engine spark`` failed; 6 the replay, log or report file could
not be written.

``--seeds`` runs many seeds as tasks, here or on Spark (:mod:`ordercheck.checker.cli.run_seeds`);
``--report`` writes the shown execution's report (:mod:`ordercheck.checker.cli.run_report`).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.exits import exit_after_verdicts
from ordercheck.checker.api.inputs import DATA_LIMIT, parse_json, read_input
from ordercheck.checker.api.outputs import Outputs
from ordercheck.checker.api.result import EXIT_BOUND, EXIT_INPUT, EXIT_MISMATCH, EXIT_OK
from ordercheck.checker.harness.network import (
    BROADCAST,
    ORDERED,
    WORKLOADS,
    Divergence,
    Execution,
    Scenario,
    StepBound,
    execute,
    fixed_chooser,
    random_runs,
    replay_record,
    replay_schedule,
    replay_workload,
)
from ordercheck.checker.harness.network import explore as explore_schedules
from ordercheck.checker.harness.nodes import NodeFailed, argv_of
from ordercheck.checker.spark.session import engine_installed
from ordercheck.checker.validate.checks import UnknownProperty, parse_properties
from ordercheck.checker.validate.command import print_verdict
from ordercheck.checker.validate.readers import read_text
from ordercheck.checker.validate.verdicts import Job, LogVerdict, judge

DEFAULT_PROPERTIES = "fifo,causal,integrity,eventual_delivery"
"""What ``run`` checks without ``--properties`` (the ``broadcast`` workload)."""

ORDERED_PROPERTIES = "fifo,causal,integrity,total,total_global,total_prefix,eventual_delivery"
"""What ``run`` checks without ``--properties`` in the ``ordered`` workload."""


@click.command(name="run")
@click.option("--node-cmd", required=True, metavar="COMMAND",
              help='The command line of one node, split as a shell would (no shell runs it), e.g. '
                   '"python3 examples/nodes/causal_broadcast.py".')
@click.option("--nodes", type=click.IntRange(1, 64), default=3, show_default=True, help="Node processes to start.")
@click.option("--broadcasts", type=click.IntRange(0, 1000), default=2, show_default=True,
              help="Values 1..K broadcast by the clients, round-robin over n1, n2, ...")
@click.option("--workload", type=click.Choice(WORKLOADS), default=BROADCAST, show_default=True,
              help="broadcast: Maelstrom's (a node's own values are not its deliveries); ordered: the same "
                   "requests, each value also delivered at its broadcaster, as a total-order layer does.")
@click.option("--properties", "props", default=None,
              help=f"Properties checked on each execution's log (the names validate knows) [default: "
                   f"{DEFAULT_PROPERTIES}; with --workload ordered: {ORDERED_PROPERTIES}].")
@click.option("--explore", is_flag=True, help="Run every delivery order, depth first (no partial-order reduction).")
@click.option("--max-schedules", type=click.IntRange(min=1), default=10000, show_default=True,
              help="With --explore: stop (exit 3) after this many schedules with more left.")
@click.option("--runs", type=click.IntRange(min=1), default=20, show_default=True,
              help="Without --explore: random schedules to run.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random schedules.")
@click.option("--seeds", type=click.IntRange(1, 100000), default=1, show_default=True,
              help="Without --explore: run the seeds --seed .. --seed+N-1, --runs schedules each, one task per "
                   "seed, results in one table; the shortest failing schedule is the one kept.")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
              callback=engine_installed, help="Where --seeds' tasks run: here, one after the other, or on Spark.")
@click.option("--master", default="local[*]", show_default=True, help="Spark master for --engine spark.")
@click.option("--step-timeout", type=click.FloatRange(min=0.01), default=5.0, show_default=True,
              help="Seconds a node has to answer init, topology or a step's read.")
@click.option("--max-steps", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Most steps of one execution (exit 3 past it).")
@click.option("--replay", "replay_path", type=click.Path(dir_okay=False),
              help="Run the schedule of this replay file (written by --replay-out) instead.")
@click.option("--replay-out", type=click.Path(dir_okay=False), default="run-replay.json", show_default=True,
              help="Where the first failing schedule is written.")
@click.option("--log", "log_path", type=click.Path(dir_okay=False),
              help="Write the failing (else the last) execution's log here (JSON Lines, for validate).")
@click.option("--report", "report_dir", type=click.Path(file_okay=False),
              help="Write a report of the failing (else the last) execution here: index.html (its space-time "
                   "diagram with each node's lines beside its events), report.md, run.jsonl, run.shiviz.log, replay.json.")
def run_command(node_cmd: str, nodes: int, broadcasts: int, workload: str, props: str | None, explore: bool, max_schedules: int,
                runs: int, seed: int, seeds: int, engine: str, master: str, step_timeout: float, max_steps: int, replay_path: str | None,
                replay_out: str, log_path: str | None, report_dir: str | None) -> None:
    """Run real nodes (Maelstrom's JSON protocol) with ordercheck as their network."""
    try:
        argv = argv_of(node_cmd)
    except ValueError as exc:
        raise InputError("--node-cmd", "", f"cannot be split into a command line ({exc})") from None
    try:
        named = parse_properties(props) if props is not None else None
    except UnknownProperty as exc:
        raise InputError("--properties", "", str(exc)) from None
    picks: list[int] = []
    keys: list[str] = []
    by_seed = seeds > 1 or engine == "spark"
    if by_seed and (explore or replay_path is not None):
        raise InputError("--seeds" if seeds > 1 else "--engine", "",
                         "runs random schedules by seed; leave out --explore and --replay")
    if replay_path is not None:
        if explore:
            raise InputError("--replay", "", "runs one recorded schedule; leave out --explore")
        doc = parse_json(read_input(replay_path, "a replay file", DATA_LIMIT), replay_path, "a replay file", 64)
        try:
            nodes, broadcasts, picks, keys, recorded = replay_schedule(doc, replay_path)
            workload = replay_workload(doc)
        except ValueError as exc:
            raise InputError(replay_path, "", str(exc)) from None
        if recorded != node_cmd:
            click.echo(f"note: {replay_path} was recorded with --node-cmd {recorded!r}", err=True)
    if named is None:  # the default follows the workload, a replay file's included
        named = parse_properties(ORDERED_PROPERTIES if workload == ORDERED else DEFAULT_PROPERTIES)
    job = Job(props=tuple(named), fmt="jsonl")
    sc = Scenario(tuple(argv), nodes, broadcasts, step_timeout, max_steps, workload)
    verdicts: dict[int, LogVerdict] = {}
    count = 0
    started = time.perf_counter()
    last: Execution | None = None
    failed: Execution | None = None
    left = False

    def failing(ex: Execution) -> bool:
        nonlocal count
        count += 1
        v = judge(read_text(ex.log_text(), f"schedule {count}", "jsonl", None), job)
        verdicts[id(ex)] = v
        return bool(v.violated)

    try:
        if replay_path is not None:
            last = execute(sc, fixed_chooser(picks), keys)
            if len(last.picks) != len(picks):
                raise Divergence(f"the nodes ran out of actions after {len(last.picks)} of the schedule's "
                                 f"{len(picks)} steps: a node is not deterministic given its inputs")
            if failing(last):
                failed = last
        elif by_seed:
            from ordercheck.checker.cli.run_seeds import run_seeds, shortest, table

            results = run_seeds(sc, job, runs, list(range(seed, seed + seeds)), engine, master)
            count = sum(r.schedules for r in results)
            for r in results:  # a node's misbehaviour or a bound in any seed ends the run as in one seed
                if r.error is not None:
                    click.echo(f"ordercheck: error: {r.error}", err=True)
                    sys.exit(EXIT_INPUT)
            for r in results:
                if r.bound is not None:
                    click.echo(f"ordercheck: bound: {r.bound} (raise --max-steps)", err=True)
                    exit_after_verdicts(EXIT_BOUND)
            for line in table(results):
                click.echo(line)
            best = shortest(results)
            if best is not None:
                failed = best.failed
            for r in results:
                if r.last is not None:
                    last = r.last
                    verdicts[id(r.last)] = r.last_verdict
                if r.failed is not None:
                    verdicts[id(r.failed)] = r.verdict
        else:
            gen = explore_schedules(sc, max_schedules, failing) if explore else random_runs(sc, seed, runs, failing)
            for ex in gen:
                last = ex
                if verdicts[id(ex)].violated:
                    failed = ex
            if explore and failed is None and count >= max_schedules and last is not None:
                left = any(p + 1 < w for p, w in zip(last.picks, last.widths, strict=True))
    except NodeFailed as exc:
        click.echo(f"ordercheck: error: {exc.line()}" + (f" (schedule {count + 1})" if count else ""), err=True)
        sys.exit(EXIT_INPUT)
    except Divergence as exc:
        click.echo(f"ordercheck: error: replay diverged at {exc}", err=True)
        sys.exit(EXIT_INPUT)
    except StepBound as exc:
        click.echo(f"ordercheck: bound: {exc} (raise --max-steps)", err=True)
        exit_after_verdicts(EXIT_BOUND)
    seconds = time.perf_counter() - started
    shown = failed if failed is not None else last
    assert shown is not None
    verdict = verdicts[id(shown)]
    how = "replayed" if replay_path else "explored" if explore else \
        f"random (seeds {seed}..{seed + seeds - 1}, engine {engine})" if by_seed else f"random (seed {seed})"
    print_verdict(verdict)
    with Outputs() as staged:
        if failed is not None and replay_path is None:
            staged.write_text(replay_out, json.dumps(replay_record(sc, node_cmd, failed), indent=1) + "\n")
        if log_path:
            staged.write_text(log_path, shown.log_text())
        if report_dir:
            from ordercheck.checker.cli.run_report import report_files

            log = read_text(shown.log_text(), verdict.log, "jsonl", None)
            drawn = judge(log, job, diagrams=True)
            about = {"node command": node_cmd, "scenario": f"{nodes} nodes, {broadcasts} broadcasts, workload {workload}",
                     "schedules": f"{count} run ({how})",
                     "shown": f"{verdict.log}, " + ("the failing one" if failed is not None else "the last one run")}
            replay = replay_record(sc, node_cmd, shown) if failed is not None else None
            for path, text in report_files(report_dir, drawn, log, shown, about, replay).items():
                staged.write_text(path, text)
    click.echo(f"{count} schedule{'' if count == 1 else 's'} run ({how}, {nodes} nodes, {broadcasts} broadcasts) in {seconds:.1f} s")
    if failed is not None:
        if replay_path is None:
            which = "the shortest failing schedule" if by_seed else "the failing schedule"
            click.echo(f"{which} ({len(failed.picks)} steps) is in {replay_out}: "
                       f"ordercheck run --node-cmd {json.dumps(node_cmd)} --replay {Path(replay_out)}")
        if report_dir:
            click.echo(f"report in {Path(report_dir) / 'index.html'}")
        exit_after_verdicts(EXIT_MISMATCH)
    if report_dir:
        click.echo(f"report in {Path(report_dir) / 'index.html'}")
    if left:
        click.echo(f"bound: --max-schedules {max_schedules} reached with schedules left to explore; no verdict")
        exit_after_verdicts(EXIT_BOUND)
    exit_after_verdicts(EXIT_OK)

"""``ordercheck run``: run a user's nodes with ordercheck as their network
(docs/howto/run-real-nodes.md).

Each execution's recorded log is read back as ``validate`` reads a JSON Lines log and
judged by the same code (:func:`ordercheck.checker.validate.verdicts.judge`), and a violation is
printed as ``validate`` prints it; ``eventual_delivery`` is judged on fair executions
only (those that ran until nothing was enabled). The first failing schedule is shrunk
(unless ``--no-shrink``) and written as a replay file (``--replay-out``), which
``--replay`` runs again.

Exit codes: 0 every schedule run kept every property; 1 a property is violated; 2 bad
input: a bad option or replay file, or a node that misbehaved (printed non-JSON,
never answered, exited, flooded, or did something else on replay); 3 a bound stopped
the run before a verdict (``--max-schedules`` reached with schedules left to explore,
``--max-steps``, or ``eventual_delivery`` asked for and no execution fair); 4
``--engine spark`` failed; 6 the replay, log or report file could not be written.

``--seeds`` runs many seeds as tasks, here or on Spark (:mod:`ordercheck.checker.cli.run_seeds`),
``--explore --prefix-depth K`` (or ``--explore --engine spark``) the schedule prefixes of
``K`` steps (:mod:`ordercheck.checker.cli.run_prefixes`); ``--model`` adds conformance to a
model's spec to each execution's verdict (exit 1 when it does not conform, 3 when its
search is cut, 5 when the spec's code raises);
``--report`` writes the shown execution's report (:mod:`ordercheck.checker.cli.run_report`).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.exits import exit_after_verdicts
from ordercheck.checker.api.inputs import DATA_LIMIT, parse_json, read_input
from ordercheck.checker.api.outputs import Outputs
from ordercheck.checker.api.result import EXIT_BOUND, EXIT_INPUT, EXIT_MISMATCH, EXIT_OK
from ordercheck.checker.harness.explore import Exploration, pct_runs, random_runs, schedule_prefixes, shrink
from ordercheck.checker.harness.explore import explore as explore_schedules
from ordercheck.checker.harness.network import (
    BROADCAST,
    ORDERED,
    WORKLOADS,
    Divergence,
    Execution,
    Scenario,
    StepBound,
    execute,
    key_chooser,
    replay_record,
    replay_schedule,
)
from ordercheck.checker.harness.nodes import NodeFailed, Pool, argv_of
from ordercheck.checker.spark.session import engine_installed
from ordercheck.checker.validate.checks import UnknownProperty, parse_properties
from ordercheck.checker.validate.command import print_verdict, spec_code
from ordercheck.checker.validate.conformance import DEFAULT_BOUND, DEFAULT_MAX_STATES
from ordercheck.checker.validate.readers import read_text
from ordercheck.checker.validate.verdicts import Job, LogVerdict, judge

DEFAULT_PROPERTIES = "fifo,causal,integrity,eventual_delivery"
"""What ``run`` checks without ``--properties`` (the ``broadcast`` workload)."""

ORDERED_PROPERTIES = "fifo,causal,integrity,total,total_global,total_prefix,eventual_delivery"
"""What ``run`` checks without ``--properties`` in the ``ordered`` workload."""

DEFAULT_PREFIX_DEPTH = 3
"""The prefixes' length of ``--explore --engine spark`` without ``--prefix-depth``."""

LIVENESS = "eventual_delivery"
"""The property judged on fair executions only."""


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
@click.option("--model", "-m", "model_path", type=click.Path(dir_okay=False), metavar="MODEL.toml",
              help="Also check that each execution's log is a behaviour of this model's spec (validate --model's "
                   "conformance); the nodes n1, n2, ... are the spec's peers in order.")
@click.option("--bound", type=click.IntRange(min=0), default=DEFAULT_BOUND, show_default=True,
              help="With --model: most unrecorded spec steps searched between two recorded events.")
@click.option("--max-states", type=click.IntRange(min=1), default=DEFAULT_MAX_STATES, show_default=True,
              help="With --model: most spec states the conformance search visits per execution.")
@click.option("--schedule", "kind", type=click.Choice(["random", "pct", "explore"]), default="random",
              show_default=True, help="random: --runs uniform schedules; pct: --runs PCT schedules of --depth; "
                                      "explore: every schedule (with DPOR unless --no-dpor).")
@click.option("--explore", is_flag=True, help="The same as --schedule explore.")
@click.option("--no-dpor", is_flag=True, help="With explore: run every order of the enabled actions (no reduction).")
@click.option("--depth", type=click.IntRange(1, 100), default=3, show_default=True,
              help="With pct: the bug depth d (d - 1 priority change points).")
@click.option("--max-schedules", type=click.IntRange(min=1), default=10000, show_default=True,
              help="With explore: stop (exit 3) after this many schedules with more left (per prefix with "
                   "--prefix-depth).")
@click.option("--prefix-depth", type=click.IntRange(1, 1000), default=None, metavar="K",
              help=f"With explore: split it into the schedule prefixes of K steps, one task each (here, or with "
                   f"--engine spark on Spark, where K defaults to {DEFAULT_PREFIX_DEPTH}), results in one table.")
@click.option("--runs", type=click.IntRange(min=1), default=20, show_default=True,
              help="With random or pct: schedules to run.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random and PCT schedules.")
@click.option("--seeds", type=click.IntRange(1, 100000), default=1, show_default=True,
              help="With random or pct: run the seeds --seed .. --seed+N-1, --runs schedules each, one task per "
                   "seed, results in one table; the shortest failing schedule is the one kept.")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
              callback=engine_installed, help="Where the tasks of --seeds or of --explore's prefixes run: here, one "
                                              "after the other, or on Spark.")
@click.option("--master", default="local[*]", show_default=True, help="Spark master for --engine spark.")
@click.option("--drops", type=click.IntRange(0, 1000), default=0, show_default=True,
              help="Messages the network may drop per execution.")
@click.option("--duplicates", type=click.IntRange(0, 1000), default=0, show_default=True,
              help="Messages the network may duplicate per execution.")
@click.option("--crashes", type=click.IntRange(0, 1000), default=0, show_default=True,
              help="Node crashes per execution (each followed by a restart: a fresh process, init again).")
@click.option("--no-reorder", is_flag=True, help="Deliver the messages of one sender to one receiver in the order sent.")
@click.option("--timer-fires", type=click.IntRange(0, 1000), default=10, show_default=True,
              help="Timer fires per node and execution (virtual time); an execution left with timers "
                   "past it is unfair.")
@click.option("--step-timeout", type=click.FloatRange(min=0.01), default=5.0, show_default=True,
              help="Seconds a node has to answer init, topology or a step's read.")
@click.option("--max-steps", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Most steps of one execution (exit 3 past it).")
@click.option("--no-shrink", is_flag=True, help="Write the failing schedule as found, not shrunk.")
@click.option("--shrink-runs", type=click.IntRange(min=1), default=200, show_default=True,
              help="Most executions shrinking may run.")
@click.option("--replay", "replay_path", type=click.Path(dir_okay=False),
              help="Run the schedule of this replay file (written by --replay-out) instead.")
@click.option("--replay-out", type=click.Path(dir_okay=False), default="run-replay.json", show_default=True,
              help="Where the failing schedule is written.")
@click.option("--log", "log_path", type=click.Path(dir_okay=False),
              help="Write the failing (else the last) execution's log here (JSON Lines, for validate).")
@click.option("--report", "report_dir", type=click.Path(file_okay=False),
              help="Write a report of the failing (else the last) execution here: index.html (its space-time "
                   "diagram with each node's lines beside its events), report.md, run.jsonl, run.shiviz.log, "
                   "replay.json, verdicts.json.")
def run_command(node_cmd: str, nodes: int, broadcasts: int, workload: str, props: str | None, model_path: str | None,
                bound: int, max_states: int, kind: str, explore: bool, no_dpor: bool, depth: int, max_schedules: int,
                prefix_depth: int | None, runs: int, seed: int, seeds: int, engine: str, master: str, drops: int,
                duplicates: int, crashes: int, no_reorder: bool, timer_fires: int, step_timeout: float, max_steps: int,
                no_shrink: bool, shrink_runs: int, replay_path: str | None, replay_out: str, log_path: str | None,
                report_dir: str | None) -> None:
    """Run real nodes (Maelstrom's JSON protocol) with ordercheck as their network."""
    try:
        argv = argv_of(node_cmd)
    except ValueError as exc:
        raise InputError("--node-cmd", "", f"cannot be split into a command line ({exc})") from None
    try:
        named = tuple(parse_properties(props)) if props is not None else None
    except UnknownProperty as exc:
        raise InputError("--properties", "", str(exc)) from None
    if explore:
        if kind == "pct":
            raise InputError("--explore", "", "is --schedule explore; leave out --schedule pct")
        kind = "explore"
    if kind == "pct" and (drops or duplicates or crashes):
        raise InputError("--schedule pct", "", "schedules no faults: leave out --drops, --duplicates and --crashes "
                                                "(random and explore schedules them)")
    if prefix_depth is not None and kind != "explore":
        raise InputError("--prefix-depth", "", "splits systematic exploration into tasks: it needs --explore")
    by_prefix = kind == "explore" and (engine == "spark" or prefix_depth is not None) and seeds == 1
    by_seed = (seeds > 1 or engine == "spark") and not by_prefix
    if by_seed and (kind == "explore" or replay_path is not None):
        raise InputError("--seeds" if seeds > 1 else "--engine", "",
                         "runs random or PCT schedules by seed; leave out --explore and --replay")
    settings = {"drops": drops, "duplicates": duplicates, "crashes": crashes, "reorder": not no_reorder,
                "timer_fires": timer_fires, "workload": workload}
    keys: list[str] = []
    complete = True
    if replay_path is not None:
        if explore or kind != "random":
            raise InputError("--replay", "", "runs one recorded schedule; leave out --schedule and --explore")
        doc = parse_json(read_input(replay_path, "a replay file", DATA_LIMIT), replay_path, "a replay file", 64)
        try:
            rep = replay_schedule(doc)
        except ValueError as exc:
            raise InputError(replay_path, "", str(exc)) from None
        nodes, broadcasts, settings, keys, complete = rep.nodes, rep.broadcasts, rep.settings, rep.keys, rep.complete
        if rep.node_cmd != node_cmd:
            click.echo(f"note: {replay_path} was recorded with --node-cmd {rep.node_cmd!r}", err=True)
    workload = settings["workload"]  # a replay file's, when one is replayed
    names = named if named is not None else \
        tuple(parse_properties(ORDERED_PROPERTIES if workload == ORDERED else DEFAULT_PROPERTIES))
    conform, spec_peers = _conformance_to(model_path, nodes, bound, max_states) if model_path is not None else ({}, [])
    job = Job(props=names, fmt="jsonl", **conform)
    safety = Job(props=tuple(n for n in names if n != LIVENESS), fmt="jsonl", **conform)
    sc = Scenario(tuple(argv), nodes, broadcasts, step_timeout, max_steps, **settings)
    model = job.model()  # built once, not per execution (None without --model)
    count = 0
    fair = 0
    undecided = 0  # executions whose conformance a bound left unknown
    started = time.perf_counter()
    last: Execution | None = None
    failed: Execution | None = None
    stats = Exploration()
    shrunk_from: tuple[int, int, int] | None = None
    found: Execution | None = None

    def verdict_of(ex: Execution, name: str) -> LogVerdict:
        if ex.verdict is None:
            with spec_code(job):  # the spec's code leaving the conformance search: exit 5, as in validate
                ex.verdict = judge(read_text(ex.log_text(), name, "jsonl", None), job if ex.fair else safety,
                                   model=model)
        return ex.verdict

    def failing(ex: Execution) -> bool:
        nonlocal count, fair, undecided
        count += 1
        fair += ex.fair
        v = verdict_of(ex, f"schedule {count}")
        undecided += v.unknown and not v.violated
        return bool(v.violated)

    def violated(ex: Execution) -> frozenset[str]:
        if len(ex.log) < 2:  # no events: a shrinking step that left nothing violates nothing
            return frozenset()
        name = f"{found.verdict.log if found is not None else f'schedule {count}'}, shrunk"
        return frozenset(verdict_of(ex, name).violated)  # conformance too

    pool = Pool(nodes)
    try:
        if replay_path is not None:
            last = execute(sc, key_chooser(keys, complete=complete), keys, spawn=pool.spawn)
            if len(last.keys) != len(keys):
                raise Divergence(f"the nodes ran out of actions after {len(last.keys)} of the schedule's "
                                 f"{len(keys)} steps: a node is not deterministic given its inputs")
            if failing(last):
                failed = last
        elif by_seed or by_prefix:
            results: list[Any]
            if by_prefix:
                from ordercheck.checker.cli.run_prefixes import run_prefixes, shortest, table

                prefixes = schedule_prefixes(sc, prefix_depth or DEFAULT_PREFIX_DEPTH, spawn=pool.spawn)
                with spec_code(job):
                    results = run_prefixes(sc, job, safety, not no_dpor, max_schedules, prefixes, engine, master)
                stats.blocked = sum(r.blocked for r in results)
                stats.left = any(r.left for r in results)
            else:
                from ordercheck.checker.cli.run_seeds import run_seeds, shortest, table  # type: ignore[assignment]

                with spec_code(job):
                    results = run_seeds(sc, job, safety, kind, runs, depth, list(range(seed, seed + seeds)), engine,
                                        master)
            count = sum(r.schedules for r in results)
            fair = sum(r.fair for r in results)
            undecided = sum(r.undecided for r in results)
            for r in results:  # a node's misbehaviour or a bound in any task ends the run as in one
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
            failed = best.failed if best is not None else None
            last = next((r.last for r in reversed(results) if r.last is not None), None)
            if failed is not None and not no_shrink:
                found = failed
                result = shrink(sc, failed, violated, shrink_runs, spawn=pool.spawn)
                failed = result.run
                shrunk_from = (len(found.keys), len(failed.keys), result.tries)
        else:
            if kind == "explore":
                gen = explore_schedules(sc, max_schedules, failing, dpor=not no_dpor, stats=stats, spawn=pool.spawn)
            elif kind == "pct":
                gen = pct_runs(sc, seed, runs, depth, failing, spawn=pool.spawn)
            else:
                gen = random_runs(sc, seed, runs, failing, spawn=pool.spawn)
            for ex in gen:
                last = ex
                if ex.verdict.violated:
                    failed = ex
            if failed is not None and not no_shrink:
                found = failed
                result = shrink(sc, failed, violated, shrink_runs, spawn=pool.spawn)
                failed = result.run
                shrunk_from = (len(found.keys), len(failed.keys), result.tries)
    except NodeFailed as exc:
        click.echo(f"ordercheck: error: {exc.line()}" + (f" (schedule {count + 1})" if count else ""), err=True)
        sys.exit(EXIT_INPUT)
    except Divergence as exc:
        click.echo(f"ordercheck: error: replay diverged at {exc}", err=True)
        sys.exit(EXIT_INPUT)
    except StepBound as exc:
        click.echo(f"ordercheck: bound: {exc} (raise --max-steps)", err=True)
        exit_after_verdicts(EXIT_BOUND)
    finally:
        pool.close()
    seconds = time.perf_counter() - started
    shown = failed if failed is not None else last
    if shown is None:  # exploration whose every execution was cut short: cannot happen, the first never is
        raise InputError("run", "", "no execution ran")
    verdict: LogVerdict = shown.verdict
    if replay_path:
        how = "replayed"
    elif kind == "explore":
        how = "explored, no DPOR" if no_dpor else "explored with DPOR"
    elif kind == "pct":
        how = f"PCT depth {depth}, seed {seed}"
    else:
        how = f"random, seed {seed}"
    if by_seed:
        how = f"{'PCT depth ' + str(depth) if kind == 'pct' else 'random'}, seeds {seed}..{seed + seeds - 1}, " \
              f"engine {engine}"
    if by_prefix:
        k = prefix_depth or DEFAULT_PREFIX_DEPTH
        how += f", below each of {len(prefixes)} prefix{'' if len(prefixes) == 1 else 'es'} of {k} step" \
               f"{'' if k == 1 else 's'}, engine {engine}"
    if shrunk_from is not None:
        assert found is not None
        print_verdict(found.verdict)
        click.echo(f"shrunk from {shrunk_from[0]} to {shrunk_from[1]} steps in {shrunk_from[2]} executions:")
    print_verdict(verdict)
    with Outputs() as staged:
        if failed is not None and replay_path is None:
            staged.write_text(replay_out, json.dumps(replay_record(sc, node_cmd, failed), indent=1) + "\n")
        if log_path:
            staged.write_text(log_path, shown.log_text())
        if report_dir:
            from ordercheck.checker.cli.run_report import report_files

            log = read_text(shown.log_text(), verdict.log, "jsonl", None)
            drawn = judge(log, job if shown.fair else safety, model=model, diagrams=True)
            faults = ", ".join(f"{k} {v}" for k, v in settings.items() if k in ("drops", "duplicates", "crashes") and v)
            about = {"node command": node_cmd,
                     "scenario": f"{nodes} nodes, {broadcasts} broadcasts, workload {workload}"
                                 + (f", {faults}" if faults else "")
                                 + ("" if settings["reorder"] else ", no reordering on a link"),
                     "schedules": f"{count} run ({how})",
                     "shown": f"{verdict.log}, " + ("the failing one" if failed is not None else "the last one run")}
            if model_path is not None:
                about["model"] = f"{model_path}: the nodes {', '.join(sc.ids)} are its spec's peers {', '.join(spec_peers)}"
            replay = replay_record(sc, node_cmd, shown) if failed is not None else None
            for path, text in report_files(report_dir, drawn, log, shown, about, replay).items():
                staged.write_text(path, text)
    cut = f"; {stats.blocked} more cut short by sleep sets" if stats.blocked else ""
    click.echo(f"{count} schedule{'' if count == 1 else 's'} run ({how}, {nodes} nodes, {broadcasts} "
               f"broadcast{'' if broadcasts == 1 else 's'}{cut}) in {seconds:.1f} s")
    if model_path is not None:
        click.echo(f"conformance to {model_path}: the nodes {', '.join(sc.ids)} are the spec's peers "
                   f"{', '.join(spec_peers)}")
    if LIVENESS in names and replay_path and not complete:
        click.echo(f"{LIVENESS} not judged: the replayed schedule stops where the violation shows")
    elif LIVENESS in names and fair < count:
        click.echo(f"{LIVENESS} judged on the {fair} fair schedule{'' if fair == 1 else 's'} of {count} (the others "
                   "ended with timers left past --timer-fires)")
    if failed is not None:
        if replay_path is None:
            which = "the shortest failing schedule" if by_seed or by_prefix else "the failing schedule"
            click.echo(f"{which} ({len(failed.keys)} steps) is in {replay_out}: "
                       f"ordercheck run --node-cmd {json.dumps(node_cmd)} --replay {Path(replay_out)}")
        if report_dir:
            click.echo(f"report in {Path(report_dir) / 'index.html'}")
        exit_after_verdicts(EXIT_MISMATCH)
    if report_dir:
        click.echo(f"report in {Path(report_dir) / 'index.html'}")
    if stats.left:
        click.echo(f"bound: --max-schedules {max_schedules} reached with schedules left to explore; no verdict")
        exit_after_verdicts(EXIT_BOUND)
    if undecided:
        click.echo(f"bound: conformance undecided on {undecided} schedule{'' if undecided == 1 else 's'} (the search "
                   "was cut by its bound); no verdict")
        exit_after_verdicts(EXIT_BOUND)
    if LIVENESS in names and fair == 0:
        why = "the replayed schedule stops before the end" if replay_path else "no schedule was fair"
        click.echo(f"bound: {why}, so {LIVENESS} was not judged; no verdict")
        exit_after_verdicts(EXIT_BOUND)
    exit_after_verdicts(EXIT_OK)


def _conformance_to(path: str, nodes: int, bound: int, max_states: int) -> tuple[dict[str, Any], list[str]]:
    """The :class:`~ordercheck.checker.validate.verdicts.Job` fields that check conformance
    to the model at ``path`` (the search bounded by ``bound`` and ``max_states``), and its
    spec's peers: the spec must keep a history and have
    ``nodes`` peers (the nodes ``n1``, ``n2``, ... are its peers in order), else
    :class:`~ordercheck.checker.api.errors.InputError` naming the model."""
    from ordercheck.checker.loading.modelfile import load_model

    loaded = load_model(path)
    with spec_code(Job((), model_path=loaded.path, model_raw=loaded.raw)):
        try:
            peers = list(loaded.spec.history(loaded.spec.init_states()[0]).peers)
        except NotImplementedError:
            raise InputError(path, "spec", f"spec {loaded.spec_name!r} keeps no history, so no run can be matched "
                                           "to it") from None
    if len(peers) != nodes:
        raise InputError(path, "constants", f"spec {loaded.spec_name!r} has {len(peers)} peers ({', '.join(peers)}) "
                                            f"and the run {nodes} nodes: they are matched in order, n1 to "
                                            f"{peers[0]}, so their numbers must be the same (--nodes)")
    return {"model_path": loaded.path, "model_raw": loaded.raw, "peers_by_position": True, "bound": bound,
            "max_states": max_states}, peers

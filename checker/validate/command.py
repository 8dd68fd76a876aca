"""The ``ordercheck validate`` and ``ordercheck generate-logs`` commands.

:func:`add_commands` registers both on the CLI's group; the group turns
:class:`~ordercheck.checker.InputError` into one line and exit code 2, and
:class:`~ordercheck.checker.api.errors.EngineError` into exit code 4.

``validate`` exits 0 when every log satisfies every property asked (and conforms to
the model, if one is given), 1 when a log violates one (or does not conform), 3 when
a conformance search was cut by a bound before an answer (and nothing is violated), 2
for a log that cannot be read or has no events.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from ordercheck.checker.api.errors import EngineError, InputError
from ordercheck.checker.api.exits import exit_after_verdicts
from ordercheck.checker.api.output_paths import Input, check_outputs, outputs_of
from ordercheck.checker.api.outputs import Outputs
from ordercheck.checker.api.result import EXIT_BOUND, EXIT_MISMATCH, EXIT_OK
from ordercheck.checker.spark.session import engine_installed
from ordercheck.checker.validate.checks import DEFAULT, UnknownProperty, parse_properties
from ordercheck.checker.validate.conformance import DEFAULT_BOUND, DEFAULT_MAX_STATES, parse_unrecorded
from ordercheck.checker.validate.readers import FORMATS, expand_logs
from ordercheck.checker.validate.verdicts import Job, LogVerdict, validate_merged, validate_path


def _job(props: str | None, model: str | None, fmt: str, bound: int, max_states: int, unrecorded: str,
         spec: str | None = None) -> Job:
    from ordercheck.checker.loading.modelfile import load_model
    from ordercheck.checker.loading.specref import option_spec

    try:
        names = parse_properties(props) if props is not None else ([] if model else list(DEFAULT))
    except UnknownProperty as exc:
        raise InputError("--properties", "", str(exc)) from None
    try:
        kinds = parse_unrecorded(unrecorded)
    except ValueError as exc:
        raise InputError("--unrecorded", "", str(exc)) from None
    if model is None:
        return Job(tuple(names), fmt, spec_ref=option_spec(spec).canonical if spec is not None else None)
    if spec is not None:
        raise InputError("--spec", "", "replays ITF traces without a model; with --model they replay through "
                                        "the model's spec: leave one out")
    loaded = load_model(model)
    return Job(tuple(names), fmt, model_path=loaded.path, model_raw=loaded.raw, bound=bound,
               max_states=max_states, unrecorded=kinds)


@click.command(name="validate")
@click.argument("logs", nargs=-1, required=True, metavar="LOG|DIR|GLOB ...")
@click.option("--properties", "-p", "props", metavar="NAME,...",
              help=f"Properties to check (default {','.join(DEFAULT)}; none with --model). "
                   "Known: fifo, causal, integrity, total, total_global, total_prefix, global_lock, "
                   "synchronous, eventual_delivery.")
@click.option("--model", "-m", "model", type=click.Path(dir_okay=False), metavar="MODEL.toml",
              help="Check that each log is a behaviour of this model's spec (trace validation).")
@click.option("--spec", "spec", metavar="SPEC",
              help="Replay ITF traces through this spec (a built-in name, a spec file or pkg.mod:Class; it is "
                   "imported) instead of the one each names: a trace may name a built-in spec only.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="Log format (auto: by file name, then by content).")
@click.option("--bound", type=click.IntRange(min=0), default=DEFAULT_BOUND, show_default=True,
              help="With --model: most unrecorded spec steps searched between two recorded events.")
@click.option("--max-states", type=click.IntRange(min=1), default=DEFAULT_MAX_STATES, show_default=True,
              help="With --model: most spec states the search visits per log.")
@click.option("--unrecorded", default="", metavar="KIND,...",
              help="With --model: event kinds the logs do not record (e.g. signal), filled in by the search.")
@click.option("--merge", is_flag=True,
              help="The logs named are one execution's per-process logs: merge them into one (each peer's order, "
                   "sends before their deliveries) and validate that.")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
              callback=engine_installed,
              help="local: one log after the other here; spark: logs in batches, one per core, large logs read and "
                   "checked in parts.")
@click.option("--split-above", type=click.IntRange(min=1), default=None, metavar="LINES",
              help="With --engine spark: read JSON Lines logs of more lines than this in parts, one task per "
                   "core, and share their properties out among tasks [default: 200000].")
@click.option("--master", default="local[*]", show_default=True, help="Spark master for --engine spark.")
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False),
              help="Write verdicts.parquet, verdicts.json, report.md and index.html here.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write every log's record as JSON here.")
@click.option("--quiet", "-q", is_flag=True, help="Only the summary and the violations, not a line per clean log.")
def validate(logs: tuple[str, ...], props: str | None, model: str | None, fmt: str, bound: int, max_states: int,
             unrecorded: str, merge: bool, engine: str, split_above: int | None, master: str, out_dir: str | None,
             json_path: str | None, quiet: bool, spec: str | None = None) -> None:
    """Check recorded executions: ordering properties, and conformance to a model."""
    job = _job(props, model, fmt, bound, max_states, unrecorded, spec)
    if not job.props and job.model_path is None:
        raise InputError("--properties", "", "nothing to check: name properties or a --model")
    diagrams = out_dir is not None
    if merge and engine == "spark":
        raise InputError("--merge", "", "merging per-process logs runs on the local engine; leave out --engine spark")
    if split_above is not None and engine != "spark":
        raise InputError("--split-above", "", "splits logs across Spark tasks; it needs --engine spark")
    check_outputs(outputs_of(("-o", out_dir, True, VALIDATE_FILES), ("--json", json_path, False, ())),
                  _inputs(logs, job))  # before any log is read: nothing overwritten, both writable
    if merge:
        with _spec_code(job):
            verdicts = [validate_merged([str(f) for f in expand_logs(list(logs))], job, model=job.model(),
                                        diagrams=diagrams)]
    elif engine == "spark":
        from ordercheck.checker.spark.session import spark_jobs
        from ordercheck.checker.validate.spark_job import SPLIT_ABOVE, validate_spark

        with _spec_code(job), spark_jobs():  # a signal cancels the jobs (exit 130/143)
            verdicts = validate_spark(list(logs), job, master=master, diagrams=diagrams,
                                      split_above=SPLIT_ABOVE if split_above is None else split_above)
    else:
        files = expand_logs(list(logs))
        with _spec_code(job):
            loaded = job.model()
            verdicts = [validate_path(str(f), job, model=loaded, diagrams=diagrams) for f in files]
    for v in verdicts:
        print_verdict(v, quiet=quiet)
    paths: list[Path] = []
    with Outputs() as staged:  # -o's files and --json: all or none (ordercheck.checker.api.outputs)
        if out_dir:
            from ordercheck.checker.validate.report import stage_outputs

            paths = stage_outputs(staged, out_dir, verdicts, engine)
        if json_path:
            staged.write_json(json_path, [v.to_json() for v in verdicts])
    if paths:
        click.echo(f"verdicts and report in {', '.join(str(p) for p in paths)}")
    bad = [v for v in verdicts if v.violated]
    unknown = [v for v in verdicts if v.unknown and not v.violated]
    events = sum(v.events for v in verdicts)
    click.echo(f"{len(verdicts)} logs, {events:,} events: {len(verdicts) - len(bad) - len(unknown)} clean, "
               f"{len(bad)} with violations" + (f", {len(unknown)} undecided" if unknown else ""))
    exit_after_verdicts(EXIT_MISMATCH if bad else EXIT_BOUND if unknown else EXIT_OK)


VALIDATE_FILES = ("verdicts.parquet", "verdicts.json", "report.md", "index.html")
"""What ``validate -o DIR`` writes (:func:`ordercheck.checker.validate.report.stage_outputs`)."""


def _inputs(logs: tuple[str, ...], job: Job) -> list[Input]:
    """The local files ``validate`` reads: the logs (those of a directory or a glob
    pattern that exist here; a URI is read by Spark, not from this file system), the
    ``--model`` and its spec's source files."""
    from ordercheck.checker.api.output_paths import model_inputs

    found: list[Input] = []
    for raw in logs:
        if "://" in raw:
            continue
        try:
            found += [Input("a log", f) for f in expand_logs([raw])]
        except InputError:
            continue  # refused with its own line when the logs are read
    if job.model_path is not None:
        found += model_inputs([job.model()], "the --model file")
    return found


@contextmanager
def _spec_code(job: Job) -> Iterator[None]:
    """With ``--model``: the spec's code leaving the conformance search by an exception,
    ``sys.exit`` or the like (here, or in a Spark task, whose job then fails) is the
    spec's error (exit code 5, the state found by a search of the model:
    :func:`ordercheck.checker.engine.diagnose.diagnosed`), never a pass."""
    if job.model_path is None:
        yield
        return
    from ordercheck.checker.engine.diagnose import diagnosed, is_own_error

    try:
        yield
    except BaseException as exc:
        model = None if is_own_error(exc) and not isinstance(exc, EngineError) else job.model()
        if model is None:
            raise
        with diagnosed([model]):
            raise exc from None


spec_code = _spec_code
"""The same guard, for ``ordercheck run --model`` (:mod:`ordercheck.checker.cli.run`)."""


def print_verdict(v: LogVerdict, *, quiet: bool = False) -> None:
    """One line per log (unless ``quiet`` and clean), then each violation's sentence."""
    if quiet and not v.violated and not v.unknown:
        return
    unit = "state" if v.format == "itf" else "line"
    parts = []
    for name, p in v.properties.items():
        parts.append(f"{name} {'VIOLATED' if p['status'] == 'violated' else p['status']}"
                     + (f" ({unit} {p['line']})" if p.get("line") is not None else ""))
    if v.conformance is not None:
        c = v.conformance
        status = {"violated": "DOES NOT CONFORM", "unknown": "UNKNOWN"}.get(c["status"], c["status"])
        parts.append(f"conformance {status}" + (f" ({unit} {c['line']})" if c.get("line") is not None else ""))
    click.echo(f"{v.log}: {v.events:,} events, {v.peers} peers: {', '.join(parts)}")
    for name, p in v.properties.items():
        if p["status"] == "violated":
            click.echo(f"  {name}: {p['explanation']}")
    if v.conformance is not None and v.conformance["status"] != "conforms":
        c = v.conformance
        click.echo(f"  conformance: {c['explanation']}")
        if c.get("could"):
            click.echo(f"    the spec could record instead: {' | '.join(c['could'])}")


@click.command(name="generate-logs")
@click.argument("model", metavar="MODEL.toml")
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory to write the logs into (created if missing).")
@click.option("--runs", type=click.IntRange(min=0), default=100, show_default=True, help="Random walks to record.")
@click.option("--depth", type=click.IntRange(min=1), default=200, show_default=True, help="Most steps per walk.")
@click.option("--seed", type=int, default=0, show_default=True, help="Walk i uses seed SEED + i.")
@click.option("--faulty-only", is_flag=True,
              help="Keep only walks the model's own checks find a violation in (trying up to 20x --runs walks).")
@click.option("--counterexamples", is_flag=True,
              help="Also write `ordercheck simulate`'s shrunk counterexample of each violated property.")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "shiviz"]), default="jsonl", show_default=True)
def generate_logs(model: str, out_dir: str, runs: int, depth: int, seed: int, faulty_only: bool,
                  counterexamples: bool, fmt: str) -> None:
    """Record random walks of a model as logs, labelled with the model's verdicts."""
    from ordercheck.checker.loading.modelfile import load_model
    from ordercheck.checker.validate.generate import counterexample_logs, walk

    loaded = load_model(model)
    from ordercheck.checker.api.output_paths import check_outputs, model_inputs, outputs_of

    check_outputs(outputs_of(("-o", out_dir, True, ())), model_inputs([loaded]))
    try:
        loaded.spec.history(loaded.spec.init_states()[0])
    except NotImplementedError:
        raise InputError(model, "spec", f"spec {loaded.spec_name!r} keeps no history, so its walks have no events") from None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    tried = 0
    unfaithful = 0
    empty = 0
    budget = runs * 20 if faulty_only else runs
    while written < runs and tried < budget:
        w = walk(loaded, seed + tried, depth)
        tried += 1
        if not w.faithful:
            unfaithful += 1
            continue
        if not len(w.log):  # validate refuses a log with no events
            empty += 1
            continue
        if faulty_only and "violated" not in w.verdicts.values():
            continue
        _save(out / f"{loaded.name}-{seed + tried - 1}", w.log, fmt)
        written += 1
    cex = counterexample_logs(loaded, max(runs, 100), depth, seed) if counterexamples else []
    unfaithful += sum(1 for w in cex if not w.faithful)
    cex = [w for w in cex if w.faithful]
    for w in cex:
        _save(out / w.log.source, w.log, fmt)
    click.echo(f"{written} walk logs ({tried} walks tried) and {len(cex)} counterexample logs in {out}")
    if empty:
        click.echo(f"left out {empty} walks that recorded no event (too short: raise --depth)")
    if unfaithful:
        click.echo(f"left out {unfaithful} walks a log cannot record faithfully: a message gained destinations "
                   "after its send (a log fixes them at the send), or a causal past grew with no event to record it")


def _save(stem: Path, log: Any, fmt: str) -> None:
    import os

    if fmt == "shiviz":
        from ordercheck.checker.validate.diagram import timeline_of
        from ordercheck.reports.shiviz import shiviz_log

        path = stem.with_name(stem.name + ".shiviz.log")
        text = shiviz_log(timeline_of(log))
    else:
        import io

        from ordercheck.checker.validate.jsonl import write_jsonl

        path = stem.with_name(stem.name + ".jsonl")
        buf = io.StringIO()
        write_jsonl(log, buf)
        text = buf.getvalue()
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def add_commands(group: click.Group) -> None:
    """Register ``validate`` and ``generate-logs`` on the CLI's group."""
    group.add_command(validate)
    group.add_command(generate_logs)

"""The checking commands: ``check``, ``simulate`` and ``list``.

Exit codes: 0 every verdict as expected; 1 a verdict differs from ``[expect]`` (or a
property is violated where nothing is expected); 2 bad input, with one line naming the
file and field; 3 a bound stopped the search before a verdict; 4 the engine failed for
good (a Spark job that failed after its retries), with one line and nothing written;
5 a spec raised an exception, with one line naming the spec, the action and the shortest
trace to the state it was taken from (:mod:`ordercheck.checker.engine.diagnose`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.evidence import EvidenceCheck, evidence_exit_code
from ordercheck.checker.api.exits import exit_after_verdicts
from ordercheck.checker.api.output_paths import Input, check_outputs, model_inputs, outputs_of
from ordercheck.checker.api.result import EXIT_BOUND, EXIT_MISMATCH, EXIT_OK, combined_exit_code, write_json_atomic
from ordercheck.checker.cli.common import (
    check_one,
    engine_options,
    hold_checkpoint,
    load_models,
    options_from,
    print_hidden,
    print_result,
    print_summary,
    work_dir_outputs,
)
from ordercheck.checker.cli.reports import REPORT_ENTRIES, summary_asked, summary_of, summary_options
from ordercheck.checker.loading.modelfile import load_model


@click.command()
@click.argument("models", nargs=-1, required=True, metavar="MODEL.toml|DIR ...")
@engine_options
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write results as JSON here.")
@click.option("--verbose", "-v", is_flag=True, help="Print every trace, not only unexpected ones, the coverage and the time per level.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), help="Write an HTML report into this directory.")
@summary_options
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Write JUnit XML here.")
@click.option("--with-evidence", is_flag=True,
              help="Also check each model's [evidence] mutants (once each) and fail unless each violates "
                   "the property it backs.")
def check(models: tuple[str, ...], json_path: str | None, verbose: bool, report_dir: str | None = None,
          junit_path: str | None = None, with_evidence: bool = False, summary: bool = False,
          baseline: str | None = None, summary_url: str | None = None, **kw: Any) -> None:
    """Check models and compare every verdict with the model's [expect]."""
    asked = summary_asked(summary, baseline, summary_url)
    if asked and not report_dir:
        raise click.UsageError("--summary writes summary.md into the report directory: give --report DIR too")
    try:
        loaded = load_models(list(models))
        named = len(loaded)
        if with_evidence:  # the mutants not among the models named, each once, run after them
            from ordercheck.checker.loading.evidence import evidence_mutants

            have = {Path(m.path).resolve() for m in loaded}
            loaded += [load_model(p) for p in evidence_mutants(loaded) if p.resolve() not in have]
    except InputError as exc:  # a model error (exit 2): the CI's test tab names it too
        if junit_path:
            _error_junit(junit_path, models, exc)
        raise
    check_outputs([*outputs_of(("--json", json_path, False, ()), ("--report", report_dir, True, REPORT_ENTRIES),
                               ("--junit", junit_path, False, ())), *work_dir_outputs(kw, loaded)],
                  model_inputs(loaded) + ([Input("--diff", baseline)] if baseline else []))
    # before any search: nothing overwritten, every output writable, the --diff baseline read
    pr_summary = summary_of(baseline, summary_url) if asked else None
    options = options_from(kw)
    each = [options] * len(loaded)
    if options.engine == "local":
        from ordercheck.checker.engine.run import prepare_work_dirs, resume_where_saved

        # With --resume, models the interrupted run did not reach start afresh (the first must resume).
        each = [options, *(resume_where_saved(options, model.path) for model in loaded[1:])]
        for model, opts in zip(loaded, each):  # a missing checkpoint or an unwritable directory stops the run here
            hold_checkpoint(prepare_work_dirs(model, opts))  # its lock, held until the command ends
    if options.engine == "spark":  # one Spark search for every model, level by level
        from ordercheck.checker.engine.diagnose import diagnosed
        from ordercheck.checker.spark.bfs import check_models_spark
        from ordercheck.checker.spark.session import spark_jobs

        # a signal cancels the jobs (exit 130/143); a spec's exception on an executor is found again here
        with _junit_if_spec_raised(junit_path, []), diagnosed(loaded), spark_jobs():
            results = check_models_spark(loaded, options)
    seen: set[str] = set()  # reduction notes are printed once per run
    # --quiet, on one model as on a suite: one line per model, then only what is unexpected
    quiet = not options.progress
    hidden: list[str] = []  # the warnings --quiet leaves out, counted in one line
    if options.engine == "spark":
        for model, result in zip(loaded, results):
            print_result(model, result, verbose=verbose, seen=seen, quiet=quiet, hidden=hidden)
    else:  # each model's verdicts as soon as they are decided (a run killed later keeps them)
        results = []
        for model, opts in zip(loaded, each):
            results.append(_junit_on_spec_error(model, opts, results, junit_path))
            print_result(model, results[-1], verbose=verbose, seen=seen, quiet=quiet, hidden=hidden)
    evidence = None
    if with_evidence:
        from ordercheck.checker.loading.evidence import judge_evidence

        by_path = {Path(m.path).resolve(): r for m, r in zip(loaded, results)}
        evidence = judge_evidence(loaded[:named], by_path)
        print_evidence(evidence, quiet=quiet)
    payload: Any = None
    if json_path:  # the models named (the evidence mutants are in the report and the JUnit XML)
        payload = results[0].to_json() if named == 1 else [r.to_json() for r in results[:named]]
    from ordercheck.checker.cli.reports import emit_outputs

    emit_outputs(results, report_dir, junit_path, json_path, payload, evidence=evidence, quiet=quiet,
                 summary=pr_summary)
    if len(results) > 1:
        print_summary(results)
    print_hidden(hidden)
    codes = {combined_exit_code(results), evidence_exit_code(evidence or [])}
    exit_after_verdicts(EXIT_MISMATCH if EXIT_MISMATCH in codes else EXIT_BOUND if EXIT_BOUND in codes else EXIT_OK)


def _error_junit(junit_path: str, models: tuple[str, ...], exc: InputError) -> None:
    """The JUnit XML of a run stopped by ``exc`` while loading its models, unless
    ``junit_path`` is one of the files it reads (the arguments, the file at fault) or
    cannot be written: then one line says why it was not written."""
    from ordercheck.checker.api.output_paths import Input
    from ordercheck.checker.cli.reports import emit_error_junit
    from ordercheck.checker.loading.modelfile import expand_paths

    try:
        files = [str(f) for f in expand_paths(list(models))]
    except InputError:
        files = list(models)
    inputs = [Input("a model file", f) for f in [*files, exc.where] if Path(f).exists()]
    try:
        check_outputs(outputs_of(("--junit", junit_path, False, ())), inputs)
    except (InputError, OSError) as refused:
        click.echo(f"ordercheck: JUnit XML not written: {refused}", err=True)
        return
    emit_error_junit(junit_path, exc.where, exc.field, exc.message)


def _junit_on_spec_error(model: Any, options: Any, done: list[Any], junit_path: str | None) -> Any:
    """:func:`check_one`; when the spec raises (exit code 5) and ``--junit`` was given,
    the JUnit XML of the models checked so far and an error case for this one is
    written first."""
    with _junit_if_spec_raised(junit_path, done):
        return check_one(model, options)


@contextmanager
def _junit_if_spec_raised(junit_path: str | None, done: list[Any]) -> Iterator[None]:
    """On a :class:`~ordercheck.checker.api.spec_errors.SpecRaised` (exit code 5) with ``--junit``,
    write the JUnit XML of ``done`` and an error case for the model whose spec raised,
    then let the error go on."""
    from ordercheck.checker.api.spec_errors import SpecRaised

    try:
        yield
    except SpecRaised as exc:
        if junit_path:
            from ordercheck.checker.cli.reports import emit_error_junit

            emit_error_junit(junit_path, exc.model, "spec", exc.line(), "spec", done)
        raise


def print_evidence(checks: list[EvidenceCheck], quiet: bool = False) -> None:
    """One line per ``[evidence]`` entry run by ``--with-evidence`` (an
    :class:`ordercheck.checker.api.evidence.EvidenceCheck`); with ``quiet``, only the entries
    not shown, after the count."""
    if not checks:
        click.echo("\nevidence: the models name none")
        return
    shown = sum(c.ok for c in checks)
    click.echo(f"\nevidence: {shown} of {len(checks)} shown")
    for c in checks:
        if quiet and c.ok:
            continue
        flag = "ok" if c.ok else ("UNKNOWN" if c.status == "unknown" else "UNEXPECTED")
        click.echo(f"  {c.model}: {c.prop} <- {c.kind} {c.name}: {c.word}  {flag}")
        if not c.ok:
            click.echo(f"      {c.message()}")


@click.command()
@click.argument("model", metavar="MODEL.toml")
@click.option("--runs", type=click.IntRange(min=1), default=None, help="Random walks to try (default 1000).")
@click.option("--depth", type=click.IntRange(min=1), default=None, help="Steps per walk (default 200).")
@click.option("--seed", type=int, default=0, show_default=True, help="The same seed gives the same walks and traces.")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), help="Stop after this many seconds.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the result as JSON here.")
@click.option("--verbose", "-v", is_flag=True, help="Print every trace.")
def simulate(model: str, runs: int | None, depth: int | None, seed: int, time_limit: float | None,
             json_path: str | None, verbose: bool) -> None:
    """Random walks through a model too large to exhaust; violations are shrunk."""
    from ordercheck.checker.engine.diagnose import diagnosed
    from ordercheck.checker.simulate.run import DEFAULT_DEPTH, DEFAULT_RUNS, simulation_exit_code
    from ordercheck.checker.simulate.run import simulate as run_simulation

    loaded = load_model(model)
    check_outputs(outputs_of(("--json", json_path, False, ())), model_inputs([loaded]))
    with diagnosed([loaded]):  # a spec's exception (or sys.exit...) in a walk: its state, found by a search
        result = run_simulation(loaded, runs or DEFAULT_RUNS, depth or DEFAULT_DEPTH, seed, time_limit)
    print_result(loaded, result, verbose=True if verbose else None)
    if json_path:
        write_json_atomic(json_path, result.to_json())
    exit_after_verdicts(simulation_exit_code(result))


@click.command(name="list")
def list_cmd() -> None:
    """Built-in specs, specs installed packages register by name, and built-in models."""
    from ordercheck.checker.loading.registry import builtin_models, spec_class, spec_names
    from ordercheck.checker.loading.specref import BadSpecRef, registered_names, resolve

    click.echo("specs:")
    for name in spec_names():
        _list_spec(name, spec_class(name))
    builtin = set(spec_names())
    registered = [name for name in registered_names() if name not in builtin]
    if registered:
        click.echo("registered by installed packages (entry-point group ordercheck.specs):")
        for name in registered:
            try:
                _list_spec(name, resolve(name).cls)
            except BadSpecRef as exc:
                click.echo(f"  {name:<16} (cannot be loaded: {exc})")
    click.echo("models:")
    for path in builtin_models():
        try:
            model = load_model(path)
            click.echo(f"  {_rel(path):<40} {model.spec_name:<14} {model.description}")
        except InputError as exc:
            click.echo(f"  {_rel(path):<40} (invalid: {exc.line()})")


def _list_spec(name: str, cls: type) -> None:
    abl = cls.ablations()
    extra = f" (ablations: {', '.join(abl)})" if abl else ""
    summary = cls.summary or (cls.__doc__ or "").strip().partition("\n")[0]
    click.echo(f"  {name:<16} {summary}{extra}".rstrip())


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def add_commands(group: click.Group) -> None:
    """Add ``check``, ``simulate`` and ``list`` to the ``ordercheck`` group."""
    group.add_command(check)
    group.add_command(simulate)
    group.add_command(list_cmd)

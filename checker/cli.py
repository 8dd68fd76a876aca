"""The ``ordercheck`` command line (DESIGN.md, "Command line").

Exit codes: 0 every verdict as expected; 1 a verdict differs from ``[expect]`` (or a
property is violated where nothing is expected); 2 bad input, with one line naming the
file and field; 3 a bound stopped the search before a verdict; 4 the engine failed for
good (a Spark job that failed after its retries), with one line and nothing written;
5 a spec raised an exception: one line naming the spec, the action and the shortest
trace to the state it was taken from (:mod:`checker.spec_errors`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from checker.bfs import SpecError
from checker.errors import EngineError, InputError
from checker.model import Model, expand_paths, load_model
from checker.result import EXIT_ENGINE, EXIT_INPUT, EXIT_SPEC, Result, combined_exit_code, write_json_atomic
from checker.run_notes import first_time
from checker.spec_errors import SpecRaised

# Commands added by other modules register themselves here (see `register`).
_EXTRA: list[Callable[[click.Group], None]] = []


class OrdercheckGroup(click.Group):
    """Turns bad input (a spec that breaks the spec API included) into one line and exit
    code 2, and an engine that fails for good into one line and exit code 4, without a
    traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as exc:
            click.echo(f"ordercheck: error: {exc.line()}", err=True)
            sys.exit(EXIT_INPUT)
        except EngineError as exc:
            click.echo(f"ordercheck: error: {exc.line()}", err=True)
            sys.exit(EXIT_ENGINE)
        except SpecError as exc:
            # A spec module that breaks the spec API (e.g. a string inside a state).
            click.echo(f"ordercheck: error: spec {exc} (fix the spec module)", err=True)
            sys.exit(EXIT_INPUT)
        except SpecRaised as exc:
            # An exception inside a spec's code, located by checker.spec_errors.
            click.echo(f"ordercheck: spec error: {exc.line()}", err=True)
            sys.exit(EXIT_SPEC)


@click.group(cls=OrdercheckGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ordercheck")
def main() -> None:
    """Model-check message-ordering protocols: bus1 and the classic algorithms."""


def load_models(paths: list[str]) -> list[Model]:
    """Load every model first, so bad input stops the run before any search starts."""
    files = expand_paths(paths)
    return [load_model(f) for f in files]


def engine_options(fn: Callable) -> Callable:
    """The search options every checking command shares."""
    decorators = [
        click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
                     help="Search engine."),
        click.option("--master", default="local[*]", show_default=True,
                     help="Spark master for --engine spark (e.g. spark://host:7077)."),
        click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Worker processes (results are identical for any number)."),
        click.option("--no-symmetry", is_flag=True, help="Turn symmetry reduction off."),
        click.option("--no-por", is_flag=True, help="Turn partial-order reduction off."),
        click.option("--max-states", type=click.IntRange(min=1), help="Stop after this many distinct states."),
        click.option("--max-depth", type=click.IntRange(min=0), help="Explore at most this many steps deep."),
        click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), help="Stop after this many seconds."),
        click.option("--quiet", is_flag=True, help="No progress lines on stderr."),
        click.option("--checkpoint", type=click.Path(file_okay=False), help="Checkpoint directory (level boundaries)."),
        click.option("--resume", is_flag=True, help="Continue from the last checkpoint in --checkpoint."),
        click.option("--checkpoint-every", type=click.FloatRange(min=0), default=30.0, show_default=True,
                     help="Seconds between checkpoints."),
        click.option("--spill-dir", type=click.Path(file_okay=False),
                     help="Keep every level's frontier in files here (default: only levels over a million states, in a temporary directory)."),
    ]
    for deco in reversed(decorators):
        fn = deco(fn)
    return fn


def options_from(kw: dict[str, Any]):
    from checker.run import Options

    return Options(
        engine=kw["engine"],
        master=kw["master"],
        workers=kw["workers"],
        symmetry=False if kw["no_symmetry"] else None,
        por=False if kw["no_por"] else None,
        max_states=kw["max_states"],
        max_depth=kw["max_depth"],
        time_limit=kw["time_limit"],
        progress=not kw["quiet"],
        checkpoint=kw["checkpoint"],
        resume=kw["resume"],
        checkpoint_every=kw["checkpoint_every"],
        spill_dir=kw.get("spill_dir"),
    )


@main.command()
@click.argument("models", nargs=-1, required=True, metavar="MODEL.toml|DIR ...")
@engine_options
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write results as JSON here.")
@click.option("--verbose", "-v", is_flag=True, help="Print every trace, not only unexpected ones.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), help="Write an HTML report into this directory.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Write JUnit XML here.")
def check(models: tuple[str, ...], json_path: str | None, verbose: bool, report_dir: str | None = None,
          junit_path: str | None = None, **kw: Any) -> None:
    """Check models and compare every verdict with the model's [expect]."""
    from checker.run import check_model

    loaded = load_models(list(models))
    options = options_from(kw)
    if options.engine == "spark":  # one Spark search for every model, level by level
        from checker.spark_bfs import check_models_spark
        from checker.spec_errors import diagnosed

        with diagnosed(loaded):  # a spec's exception on an executor, found again here
            results = check_models_spark(loaded, options)
    else:
        results = [check_model(model, options) for model in loaded]
    seen: set[str] = set()  # reduction notes are printed once per run
    for model, result in zip(loaded, results):
        print_result(model, result, verbose=verbose, seen=seen)
    if json_path:
        payload: Any = results[0].to_json() if len(results) == 1 else [r.to_json() for r in results]
        write_json_atomic(json_path, payload)
    from checker.cli_reports import emit_outputs

    emit_outputs(results, report_dir, junit_path)
    if len(results) > 1:
        print_summary(results)
    sys.exit(combined_exit_code(results))


MARK = {True: "ok", False: "UNEXPECTED"}


def print_result(model: Model, result: Result, *, verbose: bool | None = False, seen: set[str] | None = None) -> None:
    """Statistics and one line per property; traces of unexpected verdicts (all traces
    with ``verbose``; with ``None``, the traces of every violation). ``seen`` collects
    the reduction notes printed so far in this run, which are not printed again."""
    st = result.stats
    cut = f", stopped by {st.bound}" if st.bound else ""
    click.echo(
        f"{model.path}: {model.spec.name}, {st.distinct_states:,} distinct states, {st.transitions:,} "
        f"transitions, depth {st.depth}, {st.seconds:.2f}s ({st.states_per_second:,.0f} states/s){cut}"
    )
    for warning in result.warnings:
        if first_time(warning, seen):
            click.echo(f"  warning: {warning}")
    width = max((len(n) for n in result.properties), default=0)
    for name, p in result.properties.items():
        expected = p.expected or "-"
        status = p.status
        flag = "ok" if p.as_expected else ("UNKNOWN" if status == "unknown" else "UNEXPECTED")
        if status == "unknown":
            flag = "UNKNOWN"
        click.echo(f"  {name:<{width}}  {status:<8}  expected {expected:<8}  {flag}")
        show = p.explanation and (status == "violated" or status == "unknown" or verbose or not p.as_expected)
        if p.kind == "sometimes" and status == "holds" and not verbose:
            show = False
        if show:
            click.echo(f"      {p.explanation}")
        show_trace = verbose or (not p.as_expected and status != "unknown")
        if verbose is None:
            show_trace = status == "violated"
        if p.trace and show_trace:
            click.echo(f"      trace ({len(p.trace) - 1} steps):")
            for i, step in enumerate(p.trace):
                click.echo(f"        {i:>3}. {step.action or 'initial state'}")
            if p.loop_start is not None:
                click.echo(f"             (back to the state after step {p.loop_start}, and round again for ever)")
    click.echo(f"  fingerprint collision probability: {st.collision_probability:.1e}")


def print_summary(results: list[Result]) -> None:
    bad = [r for r in results if r.exit_code() != 0]
    click.echo(f"\n{len(results)} models, {len(results) - len(bad)} as expected, {len(bad)} not")
    for r in bad:
        click.echo(f"  {r.model}")


@main.command()
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
    from checker.simulate import DEFAULT_DEPTH, DEFAULT_RUNS, simulation_exit_code
    from checker.simulate import simulate as run_simulation

    loaded = load_model(model)
    result = run_simulation(loaded, runs or DEFAULT_RUNS, depth or DEFAULT_DEPTH, seed, time_limit)
    print_result(loaded, result, verbose=True if verbose else None)
    if json_path:
        write_json_atomic(json_path, result.to_json())
    sys.exit(simulation_exit_code(result))


@main.command(name="list")
def list_cmd() -> None:
    """Built-in specs and models."""
    from checker.registry import builtin_models, spec_class, spec_names

    click.echo("specs:")
    for name in spec_names():
        cls = spec_class(name)
        abl = cls.ablations()
        extra = f" (ablations: {', '.join(abl)})" if abl else ""
        click.echo(f"  {name:<16} {cls.summary}{extra}")
    click.echo("models:")
    for path in builtin_models():
        try:
            model = load_model(path)
            click.echo(f"  {_rel(path):<40} {model.spec_name:<14} {model.description}")
        except InputError as exc:
            click.echo(f"  {_rel(path):<40} (invalid: {exc.line()})")


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def register(hook: Callable[[click.Group], None]) -> None:
    """Let another module add commands (used by later layers)."""
    _EXTRA.append(hook)
    hook(main)


from checker.cli_reports import add_commands  # noqa: E402  (report, ablate, graph)

register(add_commands)

from checker.matrix_cli import matrix_command  # noqa: E402

main.add_command(matrix_command)

from checker.prove_cli import prove as _prove  # noqa: E402  (Z3 queries: checker/prove.py)

main.add_command(_prove)


def _add_sweep(group: click.Group) -> None:
    from checker.sweep import add_commands as add_sweep

    add_sweep(group)


register(_add_sweep)


from tla.cli import add_commands as _tla_commands  # noqa: E402  (export-tla, tlc)

register(_tla_commands)

from checker.scaffold import add_commands as _new_command  # noqa: E402  (new)

register(_new_command)

if __name__ == "__main__":  # pragma: no cover  (after every command is registered)
    main()

"""What the command groups share: loading models, the engine options, running one check
on the chosen engine, and printing a result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.output_paths import Output, outputs_of
from ordercheck.checker.api.result import LevelTiming, Result
from ordercheck.checker.engine.notes import first_time
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import expand_paths, load_model
from ordercheck.checker.spark.session import engine_installed


def load_models(paths: list[str]) -> list[Model]:
    """Load every model first, so bad input stops the run before any search starts."""
    files = expand_paths(paths)
    return [load_model(f) for f in files]


class MemorySize(click.ParamType):
    """A size in bytes: ``800M``, ``4G``, ``1.5G`` (see :func:`ordercheck.checker.engine.budget.parse_size`)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        from ordercheck.checker.engine.budget import parse_size

        if isinstance(value, int):
            return value
        try:
            return parse_size(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def engine_options(fn: Callable) -> Callable:
    """The search options every checking command shares."""
    decorators = [
        click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
                     callback=engine_installed, help="Search engine."),
        click.option("--master", default="local[*]", show_default=True,
                     help="Spark master for --engine spark (e.g. spark://host:7077)."),
        click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Worker processes (results are identical for any number); no more than the cores: more are slower."),
        click.option("--no-symmetry", is_flag=True, help="Turn symmetry reduction off."),
        click.option("--no-por", is_flag=True, help="Turn partial-order reduction off."),
        click.option("--max-states", type=click.IntRange(min=1), help="Stop after this many distinct states."),
        click.option("--max-depth", type=click.IntRange(min=0), help="Explore at most this many steps deep."),
        click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), help="Stop after this many seconds."),
        click.option("--quiet", is_flag=True, help="No progress lines on stderr."),
        click.option("--checkpoint", type=click.Path(file_okay=False),
                     help="Checkpoint directory (level boundaries; local engine only, refused with --engine spark)."),
        click.option("--resume", is_flag=True, help="Continue from the last checkpoint in --checkpoint (local engine only)."),
        click.option("--resume-anyway", is_flag=True,
                     help="--resume even if the spec's sources, the model file or ordercheck changed since the "
                          "checkpoint (a warning names what); safe only for a change that alters no state, "
                          "transition or verdict."),
        click.option("--checkpoint-every", type=click.FloatRange(min=0), default=30.0, show_default=True,
                     help="Seconds between checkpoints."),
        click.option("--spill-dir", type=click.Path(file_okay=False),
                     help="Keep every level's frontier in files here (default: only levels over a million states, in a temporary directory)."),
        click.option("--memory-limit", type=MemorySize(), default=None,
                     help="Memory the search may hold, e.g. 800M or 4G; past it the search stops as at a bound "
                          "(default: three quarters of the machine's memory)."),
        click.option("--check-reductions", is_flag=True,
                     help="Check, on every state searched, the declarations the reductions rest on: steps taken "
                          "as independent commute, renamed states have the state's canonical fingerprint "
                          "(slower; a failed check exits 2)."),
    ]
    for deco in reversed(decorators):
        fn = deco(fn)
    return fn


LOCAL_ONLY = {
    "checkpoint": "keeps no checkpoint to resume from; drop it, or run with --engine local to checkpoint and resume",
    "resume": "keeps no checkpoint to resume from; drop it, or run with --engine local to checkpoint and resume",
    "resume_anyway": "keeps no checkpoint to resume from; drop it, or run with --engine local to checkpoint and resume",
    "spill_dir": "keeps its levels in Spark's own storage (spark.local.dir); drop it",
    "memory_limit": "takes its memory from Spark's settings (spark.driver.memory, spark.executor.memory); drop it",
    "workers": "runs as many tasks at once as its master gives cores (--master local[N], or the cluster's "
    "executors); drop it",
    "check_reductions": "applies no reductions, so has none to check; drop it, or run with --engine local",
}
"""Engine options the Spark engine has no use for, with what to do instead: they are
refused with it (``--workers`` above 1) rather than ignored."""


def options_from(kw: dict[str, Any]) -> Options:
    """The :class:`Options` the :func:`engine_options` flags in ``kw`` ask for (warning
    when ``--workers`` is above the number of cores).

    Raises :class:`InputError` (exit code 2) for an option of :data:`LOCAL_ONLY` with
    ``--engine spark`` (``--workers`` only above 1)."""
    from ordercheck.checker.cli.faults import warn_workers

    if kw["engine"] == "spark":
        for name, instead in LOCAL_ONLY.items():
            given = kw.get(name)
            if given and not (name == "workers" and given == 1):
                option = "--" + name.replace("_", "-")
                raise InputError(option, "", f"not supported by --engine spark, which {instead}")
    warn_workers(kw["workers"])
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
        resume=kw["resume"] or kw.get("resume_anyway", False),
        resume_anyway=kw.get("resume_anyway", False),
        checkpoint_every=kw["checkpoint_every"],
        spill_dir=kw.get("spill_dir"),
        memory_limit=kw.get("memory_limit"),
        check_reductions=bool(kw.get("check_reductions")),
    )


def check_one(model: Model, options: Options) -> Result:
    """Check ``model`` with the engine ``options.engine`` names (``local`` or ``spark``)."""
    if options.engine == "spark":
        from ordercheck.checker.spark.bfs import check_model_spark
        from ordercheck.checker.spark.session import spark_jobs

        with spark_jobs():  # a signal cancels the jobs (exit 130/143)
            return check_model_spark(model, options)
    return check_model(model, options)


MARK = {True: "ok", False: "UNEXPECTED"}


def print_result(model: Model, result: Result, *, verbose: bool | None = False, seen: set[str] | None = None,
                 quiet: bool = False, hidden: list[str] | None = None) -> None:
    """Statistics and one line per property; traces of unexpected verdicts (all traces
    with ``verbose``; with ``None``, the traces of every violation). ``seen`` collects
    the reduction notes printed so far in this run, which are not printed again.

    With ``quiet`` (``--quiet``, without ``verbose``): the statistics line ends with how
    many verdicts are as expected, and only the verdicts that are not (with their
    explanations and traces) follow; the warnings are not printed but added to
    ``hidden``, for one line at the end of the run (:func:`print_hidden`)."""
    st = result.stats
    cut = f", {result.bound_text()}" if st.bound else ""
    quiet = quiet and not verbose
    tally = ""
    if quiet:
        bad = sum(not p.as_expected for p in result.properties.values())
        n = len(result.properties)
        tally = (f": {n} verdict{'s' if n != 1 else ''} as expected" if not bad
                 else f": {bad} of {len(result.properties)} verdicts NOT as expected")
    click.echo(
        f"{model.path}: {model.spec.name}, {st.distinct_states:,} distinct states, {st.transitions:,} "
        f"transitions, depth {st.depth}, {st.seconds:.2f}s ({st.states_per_second:,.0f} states/s){cut}{tally}"
    )
    for warning in result.warnings:
        if quiet:
            if hidden is not None:
                hidden.append(warning)
        elif first_time(warning, seen):
            click.echo(f"  warning: {warning}")
    if verbose and result.coverage:
        click.echo("  coverage: " + ", ".join(f"{name} {n:,}" for name, n in sorted(result.coverage.items())))
    if verbose and st.levels:
        for line in level_table(st.levels):
            click.echo("  " + line)
    width = max((len(n) for n in result.properties), default=0)
    for name, p in result.properties.items():
        if quiet and p.as_expected:
            continue
        expected = p.expected_word or "-"
        status = p.status
        flag = "ok" if p.as_expected else ("UNKNOWN" if status == "unknown" else "UNEXPECTED")
        if status == "unknown":
            flag = "UNKNOWN"
        click.echo(f"  {name:<{width}}  {p.word:<8}  expected {expected:<8}  {flag}")
        show = p.explanation and (status == "violated" or status == "unknown" or verbose or not p.as_expected)
        if p.kind == "sometimes" and status == "holds" and not verbose:
            show = False
        if show:
            click.echo(f"      {p.explanation}")
        show_trace = verbose or (not p.as_expected and status != "unknown")
        if verbose is None:
            show_trace = status == "violated"
        if p.trace and show_trace:
            from ordercheck.reports.diff import step_lines

            click.echo(f"      trace ({len(p.trace) - 1} steps):")
            for line in step_lines(p.trace):
                click.echo(f"        {line}")
            if p.loop_start is not None:
                click.echo(f"             (back to the state after step {p.loop_start}, and round again for ever)")
    if not quiet:
        click.echo(f"  fingerprint collision probability: {st.collision_probability:.1e}")


def print_hidden(hidden: list[str]) -> None:
    """The one line ``--quiet`` prints for the warnings it did not show."""
    if hidden:
        distinct = len(set(hidden))
        click.echo(f"{len(hidden)} warning{'s' if len(hidden) != 1 else ''} ({distinct} distinct) not shown under "
                   "--quiet; run without --quiet to read them")


def level_table(levels: list[LevelTiming]) -> list[str]:
    """The per-level time split as a compact table: a header, one line per level (states,
    then seconds per phase, and with workers the busiest worker's seconds) and a line of
    totals."""
    workers = any(lv.busiest_s for lv in levels)
    head = f"{'depth':>5} {'frontier':>10} {'new':>10} {'expand':>8} {'exchange':>8} {'dedup':>8} {'check':>8} {'other':>8}"
    lines = ["time per level (seconds):", head + (f" {'busiest':>8}" if workers else "")]
    total = [0.0] * (6 if workers else 5)
    for lv in levels:
        times = (lv.expand_s, lv.exchange_s, lv.dedup_s, lv.check_s, lv.other_s) + ((lv.busiest_s,) if workers else ())
        total = [a + b for a, b in zip(total, times)]
        lines.append(f"{lv.depth:>5} {lv.frontier:>10,} {lv.new_states:>10,} " + " ".join(f"{t:>8.3f}" for t in times))
    lines.append(f"{'all':>5} {sum(lv.frontier for lv in levels):>10,} {sum(lv.new_states for lv in levels):>10,} "
                 + " ".join(f"{t:>8.3f}" for t in total))
    return lines


def print_summary(results: list[Result]) -> None:
    bad = [r for r in results if r.exit_code() != 0]
    click.echo(f"\n{len(results)} models, {len(results) - len(bad)} as expected, {len(bad)} not")
    for r in bad:
        click.echo(f"  {r.model}")


def work_dir_outputs(kw: dict[str, Any], models: list[Model], variants: tuple[str, ...] = ()) -> list[Output]:
    """The :func:`engine_options` work directories (``--checkpoint``, ``--spill-dir``) as
    outputs, the checkpoint directory's entries being the models' own directories (under
    ``variants``' directories when given: ``full``, ``without-FLAG``)."""
    from ordercheck.checker.engine.checkpoints import checkpoint_dir

    names = tuple(checkpoint_dir("", m.path).name for m in models)
    return outputs_of(("--checkpoint", kw.get("checkpoint"), True, variants or names),
                      ("--spill-dir", kw.get("spill_dir"), True, ()))


def hold_checkpoint(ckpt: str | None) -> None:
    """Hold the lock of the checkpoint directory ``ckpt`` (taken by
    :func:`ordercheck.checker.engine.run.prepare_work_dirs`) until the current command ends."""
    if ckpt is not None:
        from ordercheck.checker.engine.ckptlock import release

        click.get_current_context().call_on_close(lambda: release(ckpt))

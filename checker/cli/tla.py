"""The ``export-tla`` and ``tlc`` commands, and :func:`cross_check`, which runs our engine
and hands its result to :mod:`ordercheck.tla.crosscheck` (the ``tla`` package never runs the engine)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.exits import exit_after_verdicts
from ordercheck.checker.api.model import Model
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import expand_paths, load_model

if TYPE_CHECKING:
    from ordercheck.tla.crosscheck import CrossCheck

CROSS_CHECK_OPTIONS = Options(progress=False, stop_when_decided=False, symmetry=False, por=False)
"""How our side of a cross-check runs: everything explored, reductions off, as TLC does."""


def cross_check(
    model: Model,
    *,
    workers: int = 1,
    timeout: float | None = None,
    keep: Path | None = None,
    confirm: bool = True,
    happened_before: bool = True,
) -> CrossCheck:
    """Cross-check ``model``: our engine and TLC, reductions off, everything explored;
    with ``happened_before``, TLC also checks the export's happened-before configuration."""
    from ordercheck.tla.crosscheck import compare_with_tlc

    ours = check_model(model, CROSS_CHECK_OPTIONS)
    return compare_with_tlc(model, ours, workers=workers, timeout=timeout, keep=keep, confirm=confirm,
                            happened_before=happened_before)


def add_commands(group: click.Group) -> None:
    """Add ``export-tla`` and ``tlc`` to the ``ordercheck`` group."""
    group.add_command(export_tla)
    group.add_command(tlc)


@click.command(name="export-tla")
@click.argument("models", nargs=-1, required=True, metavar="MODEL.toml|DIR ...")
@click.option("-o", "--output", "output", required=True, type=click.Path(file_okay=False),
              help="Directory for Name.tla, Name.cfg and OrderingProperties.tla.")
@click.option("--no-symmetry", is_flag=True, help="Leave SYMMETRY out even where the model asks for it.")
@click.option("--counts", is_flag=True,
              help="Check each model with our engine (reductions off) first: the manifest then gives the state counts "
                   "and counterexample lengths, and the outcomes are its verdicts rather than the model file's [expect].")
def export_tla(models: tuple[str, ...], output: str, no_symmetry: bool, counts: bool) -> None:
    """Write each model as a TLA+ module, its TLC configurations and their manifest."""
    from ordercheck.tla.export import export_model

    loaded = [load_model(p) for p in expand_paths(list(models))]
    for model in loaded:
        from ordercheck.tla.export import adapter_of

        adapter_of(model)  # refuse specs without a template before any check runs
    ours = [check_model(m, CROSS_CHECK_OPTIONS) if counts else None for m in loaded]
    exports = [export_model(m, symmetry=False if no_symmetry else None, ours=r) for m, r in zip(loaded, ours)]
    from ordercheck.checker.api.output_paths import check_outputs, model_inputs, outputs_of
    from ordercheck.checker.api.outputs import Outputs

    names = tuple(name for export in exports for name in export.files)
    check_outputs(outputs_of(("-o", output, True, names)), model_inputs(loaded))

    with Outputs() as out:  # every model's files, or none
        written = [export.write(output, out) for export in exports]
    for model, export, _paths in zip(loaded, exports, written):
        configs = len(export.verdict_configs)
        main = [str(Path(output) / f"{export.name}.{ext}") for ext in ("tla", "cfg")]
        click.echo(f"{model.path}: {', '.join(main)} "
                   f"(+ {configs} violation/witness configuration{'s' if configs != 1 else ''}, {export.name}.manifest.json)")


@click.command()
@click.argument("models", nargs=-1, required=True, metavar="MODEL.toml|DIR ...")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="TLC workers (1 keeps TLC's counterexamples shortest, like ours).")
@click.option("--keep", type=click.Path(file_okay=False), help="Keep the export and TLC's inputs in this directory.")
@click.option("--timeout", type=click.FloatRange(min=1), help="Give up on one TLC run after this many seconds.")
@click.option("--show-traces", is_flag=True,
              help="Print TLC's traces, read back into our format; where one does not read back, TLC's state there "
                   "beside the Python states it could have been.")
@click.option("--no-happened-before", "no_happened_before", is_flag=True,
              help="Leave out the export's Name_happened_before.cfg (the library's Fifo, Causal and Total against "
                   "HappenedBefore.tla's in every state, and the stored causal past against the logs' happened-before): "
                   "TLC computes vector clocks in every state there (on bus1-3 about half the main configuration's time).")
def tlc(models: tuple[str, ...], workers: int, keep: str | None, timeout: float | None, show_traces: bool,
        no_happened_before: bool) -> None:
    """Export, run TLC, and compare with our engine (reductions off); TLC also checks the
    ordering library against the happened-before definitions, unless told not to."""
    from ordercheck.tla.tlc import TlcFailed, TlcUnavailable, find_tlc
    from ordercheck.tla.views import HiddenStep

    loaded = [load_model(p) for p in expand_paths(list(models))]
    from ordercheck.checker.api.output_paths import check_outputs, model_inputs, outputs_of

    check_outputs(outputs_of(("--keep", keep, True, tuple(Path(m.path).stem for m in loaded))), model_inputs(loaded))
    try:
        find_tlc()
    except TlcUnavailable as exc:
        raise InputError("TLC", "", str(exc)) from None
    from ordercheck.tla.export import adapter_of

    for model in loaded:
        adapter_of(model)  # refuse specs without a template before any run starts
    bad = 0
    for model in loaded:
        target = None
        if keep:
            target = Path(keep) / Path(model.path).stem
            target.mkdir(parents=True, exist_ok=True)
        try:
            cc = cross_check(model, workers=workers, timeout=timeout, keep=target, happened_before=not no_happened_before)
        except TlcFailed as exc:
            click.echo(f"{model.path}: TLC failed: {exc}")
            bad += 1
            continue
        except HiddenStep as exc:
            click.echo(f"{model.path}: MISMATCH: {exc}")
            bad += 1
            continue
        print_cross_check(cc, show_traces=show_traces, happened_before=not no_happened_before)
        bad += 0 if cc.agree else 1
    if len(loaded) > 1:
        click.echo(f"\n{len(loaded)} models, {len(loaded) - bad} agree with TLC, {bad} not")
    exit_after_verdicts(1 if bad else 0)


def print_cross_check(cc: CrossCheck, *, show_traces: bool = False, happened_before: bool = True) -> None:
    """Both sides, property by property, the happened-before configuration's result, and
    every mismatch (``happened_before`` false: the configuration was left out on purpose)."""
    ours, final = cc.ours, cc.final
    tlc_distinct = final.distinct if final is not None else None
    searched = ours.stats.distinct_states
    # Where the adapter's view leaves per-step checks out of the state, TLC counts views:
    # say so, with the search's own count beside it.
    what = "distinct states" if cc.ours_counts.distinct == searched else f"views of our {searched:,} states"
    click.echo(
        f"{cc.model.path}: ours {cc.ours_counts.distinct:,} {what} "
        f"({cc.ours_generated:,} generated, depth {cc.ours_counts.depth}); "
        f"TLC {tlc_distinct if tlc_distinct is None else f'{tlc_distinct:,}'} distinct states "
        f"({final.generated if final else '?':,} generated, depth {final.depth if final else '?'}); "
        f"{len(cc.runs)} TLC runs{' + the happened-before one' if cc.agreement else ''}, {cc.tlc_seconds:.1f}s"
    )
    width = max((len(n) for n in ours.properties), default=8)
    click.echo(f"  {'property':<{width}}  {'ours':<8}  {'TLC':<8}  {'steps ours/TLC':<14}  TLC replays ours")
    for name, mine in ours.properties.items():
        theirs = cc.tlc.get(name)
        status = theirs.status if theirs else "-"
        steps = ""
        if mine.trace or (theirs and theirs.raw_length):
            a = len(mine.trace) - 1 if mine.trace else "-"
            b = theirs.raw_length - 1 if theirs and theirs.raw_length else "-"
            steps = f"{a}/{b}"
        confirmed = {True: "yes", False: "NO"}.get(cc.confirmed.get(name), "") if name in cc.confirmed else ""
        click.echo(f"  {name:<{width}}  {mine.status:<8}  {status:<8}  {steps:<14}  {confirmed}")
        if show_traces and theirs and theirs.trace:
            click.echo("      TLC's trace:")
            for i, step in enumerate(theirs.trace):
                click.echo(f"        {i:>3}. {step.action or 'initial state'}")
        if show_traces and theirs and theirs.mismatch is not None:
            from ordercheck.tla.traces import mismatch_lines

            click.echo("      TLC's trace does not replay in the Python spec:")
            for line in mismatch_lines(theirs.mismatch):
                click.echo(f"        {line}")
    click.echo(f"  {happened_before_line(cc, asked=happened_before)}")
    if cc.agree:
        click.echo("  agree: same states, same verdicts, same counterexample lengths for invariants")
    for line in cc.mismatches:
        click.echo(f"  MISMATCH: {line}")
    if not show_traces and any(v.mismatch is not None for v in cc.tlc.values()):
        click.echo("  (--show-traces prints TLC's state where a trace stops replaying, beside the Python states it could be)")


def happened_before_line(cc: CrossCheck, *, asked: bool = True) -> str:
    """One line on the happened-before configuration: what it checks and how TLC's run ended."""
    config = cc.export.happened_before
    if config is None:
        return "happened-before: the export has no happened-before configuration"
    if cc.agreement is None:
        return f"happened-before: {config.file} not run" + (" (--no-happened-before)" if not asked else "")
    run, checks = cc.agreement, ", ".join(config.checks)
    if run.kind is None:
        return (f"happened-before: {checks} hold in all {run.distinct:,} states "
                f"({config.file}, {run.seconds:.1f}s)")
    return f"happened-before: TLC reports {run.violated or run.kind} violated on {config.file} ({run.seconds:.1f}s)"

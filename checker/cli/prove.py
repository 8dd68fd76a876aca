"""``ordercheck prove MODEL.toml``: Z3 invariant queries, printed and written as JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click


@click.command()
@click.argument("models", nargs=-1, required=True, metavar="MODEL.toml ...")
@click.option("--depth", type=click.IntRange(min=0), help="Bounded model checking to this many steps (0: off).")
@click.option("--drop", multiple=True, metavar="LEMMA", help="Leave a lemma out of the invariant (repeatable).")
@click.option("--queue-bound", type=click.IntRange(min=1), help="Most entries a queue may hold in the unbounded encoding.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), help="Seconds Z3 may spend on one query.")
@click.option("--bmc-only", is_flag=True, help="Only bounded model checking, no invariant queries.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the verdicts as JSON here.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False),
              help="Write an HTML report (index.html, report.md, results.json) of the verdicts into this directory.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False),
              help="Write JUnit XML here: one test case per query, a failure per unexpected verdict, an error per "
                   "unknown or undecided one.")
@click.option("--tla", "tla_dir", type=click.Path(file_okay=False),
              help="Where the invariant is proved inductive, write it as a TLA+ module NAME_inv.tla (TypeOK, Init, "
                   "Next, Inv, the targets) with NAME_inv.cfg into this directory, to re-check with TLC on a box of "
                   "values: TypeOK /\\ Inv as the initial predicate, Inv as the invariant.")
@click.option("--tla-box", "tla_box", metavar="LO..HI",
              help="With --tla: the integer values the TLC configuration covers (default 0..1, widened to the "
                   "initial state's values).")
@click.option("--property", "properties", multiple=True, metavar="NAME",
              help="Judge only this one of the model's checked properties (repeatable; replaces [prove] properties): "
                   "the others' expectations are printed as not judged and play no part in the exit code.")
@click.option("--verbose", "-v", is_flag=True, help="Print every trace and witness.")
@click.option("--infer", is_flag=True,
              help="Infer the invariant instead of using the encoding's lemmas: templates kept on the model's reachable "
                   "states, the largest inductive subset (Houdini), re-checked like hand-written lemmas.")
@click.option("--samples", type=click.IntRange(min=1), default=20_000, show_default=True,
              help="With --infer: at most this many reachable states of the explicit search.")
def prove(
    models: tuple[str, ...],
    depth: int | None,
    drop: tuple[str, ...],
    queue_bound: int | None,
    timeout: float | None,
    bmc_only: bool,
    json_path: str | None,
    verbose: bool,
    report_dir: str | None = None,
    infer: bool = False,
    samples: int = 20_000,
    junit_path: str | None = None,
    tla_dir: str | None = None,
    tla_box: str | None = None,
    properties: tuple[str, ...] = (),
) -> None:
    """Z3 queries on a model's symbolic encoding: is the spec's strengthened invariant
    inductive (for any number of sends), does it imply the targets, and bounded model
    checking of the model's properties to --depth steps. Every verdict is compared with
    the model's expectations; a bounded search never makes a property pass: with no
    counterexample within the depth, a property is unknown (exit 3) unless the
    invariant proves it."""
    from ordercheck.checker.api.errors import InputError
    from ordercheck.checker.api.exits import exit_after_verdicts
    from ordercheck.checker.api.output_paths import check_outputs, model_inputs, outputs_of
    from ordercheck.checker.api.outputs import Outputs
    from ordercheck.checker.api.result import EXIT_BOUND, EXIT_MISMATCH, EXIT_OK
    from ordercheck.checker.cli.reports import REPORT_ENTRIES
    from ordercheck.checker.loading.modelfile import expand_paths, load_model
    from ordercheck.checker.symbolic.prove import ProveOptions, prove_model
    from ordercheck.checker.symbolic.tla_inv import inv_module_name, parse_box

    if tla_box is not None and tla_dir is None:
        raise click.UsageError("--tla-box sets the box of the TLA+ configuration: give --tla DIR too")
    box = parse_box(tla_box) if tla_box is not None else None
    try:
        loaded = [load_model(f) for f in expand_paths(list(models))]
    except InputError as exc:  # a model error (exit 2): the CI's test tab names it, as for check --junit
        if junit_path:
            from ordercheck.checker.cli.check import _error_junit

            _error_junit(junit_path, models, exc)
        raise
    tla_files = [f"{inv_module_name(m.path)}.{ext}" for m in loaded for ext in ("tla", "cfg")]
    check_outputs(outputs_of(("--json", json_path, False, ()), ("--report", report_dir, True, REPORT_ENTRIES),
                             ("--junit", junit_path, False, ()), ("--tla", tla_dir, True, tla_files)),
                  model_inputs(loaded))
    judged = properties or None
    options = ProveOptions(depth=depth, drop=drop, queue_bound=queue_bound, timeout=timeout, bmc_only=bmc_only,
                           properties=judged)
    results = []
    inferred = []
    modules = []
    for model in loaded:
        if infer:
            from ordercheck.checker.symbolic.infer import infer_model

            found = infer_model(model, limit=samples, queue_bound=queue_bound, timeout=timeout, properties=judged)
            inferred.append(found)
            print_inferred(found, verbose=verbose)
            result = found.check
        else:
            try:
                result = prove_model(model, options)
            except InputError as exc:  # a [prove] table naming what the encoding lacks (exit 2)
                if junit_path:
                    from ordercheck.checker.cli.check import _error_junit

                    _error_junit(junit_path, models, exc)
                raise
        results.append(result)
        print_prove(result, verbose=verbose)
        if tla_dir is not None:
            modules += tla_of(model, result, found.invariant if infer else None, box)
    records = [f.to_json() for f in inferred] if infer else [r.to_json() for r in results]
    payload: Any = records[0] if len(records) == 1 else records
    index = junit = None
    with Outputs() as out:  # all or nothing, the JSON file last (ordercheck.checker.api.outputs)
        from ordercheck.reports.proofs import ProofRecord

        proofs = [ProofRecord.from_json(r.to_json()) for r in results]
        if junit_path:
            from ordercheck.reports.junit import junit_xml

            junit = out.write_text(junit_path, junit_xml([], proofs=proofs))
        if report_dir:
            from ordercheck.checker.cli.reports import stage_html

            index = stage_html(out, list(proofs), report_dir)
        written = [out.write_text(Path(tla_dir) / name, text) for module in modules
                   for name, text in module.files.items()] if tla_dir else []
        if json_path:
            out.write_json(json_path, payload)
    for path in written:
        click.echo(f"TLA+: {path}")
    if junit is not None:
        click.echo(f"JUnit XML: {junit}")
    if index is not None:
        click.echo(f"report: {index}")
    codes = [r.exit_code() for r in results]
    exit_after_verdicts(EXIT_MISMATCH if EXIT_MISMATCH in codes else EXIT_BOUND if EXIT_BOUND in codes else EXIT_OK)


def tla_of(model: Any, result: Any, invariant: Any, box: tuple[int, int] | None) -> list[Any]:
    """The TLA+ module of ``model``'s invariant when ``result`` shows it inductive (the
    encoding's lemmas, or ``invariant``: the inferred one), else none and a line saying
    why (:mod:`ordercheck.checker.symbolic.tla_inv`)."""
    from ordercheck.checker.symbolic.tla_inv import inv_module_name, invariant_module

    if not result.inductive:
        click.echo(f"  TLA+: {inv_module_name(model.path)} not written: the invariant is not shown inductive")
        return []
    return [invariant_module(model, result, invariant, box)]


def print_inferred(found: Any, *, verbose: bool = False) -> None:
    """What inference kept and dropped; the re-check is printed by :func:`print_prove`."""
    click.echo(f"{found.check.model}: inference from {found.samples} reachable states of the explicit search: "
               f"{found.on_samples} of {found.proposed} template instances hold on all of them (and the targets' clauses "
               f"that do), {len(found.kept)} form the largest inductive subset (Houdini, {found.seconds:.2f}s)")
    for text in found.kept:
        click.echo(f"  kept: {text}")
    for name in found.targets_kept:
        click.echo(f"  target {name}: every clause is in the inductive subset")
    for text in found.broken_on_samples:
        click.echo(f"  target clause {text}: false on a reachable state of the explicit search (the model breaks it)")
    for d in found.dropped:
        if d.target is not None:
            click.echo(f"  dropped target clause {d.text}: counterexample to induction")
            for line in render_trace(d.trace):
                click.echo(f"      {line}")
    if verbose:
        for d in found.dropped:
            if d.target is None:
                click.echo(f"  dropped: {d.text}")
    click.echo("  re-check of the inferred invariant (Z3, as for hand-written lemmas):")


def print_prove(result: Any, *, verbose: bool = False) -> None:
    """The verdicts of one model, with each unexpected counterexample drawn out."""
    dropped = f", dropped: {', '.join(result.dropped)}" if result.dropped else ""
    queues = ("no queue: any number of messages in flight" if getattr(result, "queue_free", False)
              else f"queues of at most {result.queue_bound} entries")
    click.echo(
        f"{result.model}: {result.spec}, Z3 on the symbolic encoding ({unbounded_words(result.signals)}, {queues}), "
        f"invariant of {len(result.lemmas)} lemma{'s' if len(result.lemmas) != 1 else ''}{dropped}"
    )
    width = max((len(q.name) for q in result.queries), default=0)
    status_width = max((len(q.shown_status) for q in result.queries), default=8)
    for q in result.queries:
        expected = q.expected_word or "-"
        click.echo(f"  {q.name:<{width}}  {q.shown_status:<{status_width}}  {q.seconds:7.2f}s  expected {expected:<8}  {q.flag}")
        if q.reason:
            click.echo(f"      Z3: {q.reason}")
        if q.note and q.outcome != "ok" and q.status != "unknown":
            click.echo(f"      {q.note}")
        if q.explanation and q.kind != "bmc" and (q.status != "proved" or verbose or q.kind == "proof" or q.conditional):
            click.echo(f"      {q.explanation}")
        if q.trace and (verbose or not q.as_expected or q.kind == "inductive"):
            for line in render_trace(q.trace):
                click.echo(f"      {line}")
    if result.bmc_encoding == "exact":
        click.echo("  bmc: on the step-exact encoding of this configuration (the spec's own steps and properties)")
    if result.skipped:
        click.echo(f"  bmc: no symbolic encoding of {', '.join(result.skipped)} (left to the explicit engine)")
    if result.uncovered:
        click.echo(f"  proof: the invariant implies {', '.join(result.uncovered)} only for runs whose queues hold at "
                   f"most {result.queue_bound} entries, fewer than this model's runs can: not a proof for the model")
    for name, expected in result.undecided.items():
        click.echo(f"  undecided: {name}, expected {expected}: no query here decides it (run check on this model)  UNKNOWN")
    if result.not_judged:
        from ordercheck.reports.proofs import not_judged_line

        click.echo("  " + not_judged_line(result.not_judged, result.judged or []))
    if not result.queries and not result.undecided:
        click.echo("  no query was asked (--bmc-only with --depth 0): nothing is shown  UNKNOWN")
    verdict = "inductive" if result.inductive else "NOT shown inductive"
    if any(q.kind in ("initiation", "inductive") for q in result.queries):
        bmc = f"; bounded model checking {result.bmc_seconds:.2f}s" if result.depth else ""
        click.echo(f"  invariant: {verdict}; Z3 time {result.invariant_seconds:.2f}s{bmc}")
    else:
        click.echo(f"  Z3 time {result.z3_seconds:.2f}s")


def unbounded_words(signals: bool) -> str:
    """What the unbounded encoding leaves unbounded, for the header line: sends, and
    side-channel signals where the encoding has them."""
    return "any number of sends and signals" if signals else "any number of sends"


def render_trace(steps: list[Any]) -> list[str]:
    """A trace as text: each state's peers one per line, actions between them
    (:func:`ordercheck.reports.proofs.trace_text`, as the JUnit XML shows it)."""
    from dataclasses import asdict

    from ordercheck.reports.proofs import trace_text

    return trace_text([asdict(step) for step in steps])

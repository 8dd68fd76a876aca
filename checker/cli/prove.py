"""``ordercheck prove MODEL.toml``: Z3 invariant queries, printed and written as JSON."""

from __future__ import annotations

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
) -> None:
    """Z3 queries on a model's symbolic encoding: is the spec's strengthened invariant
    inductive (for any number of sends), does it imply the targets, and bounded model
    checking of the model's properties to --depth steps. Every verdict is compared with
    the model's expectations; a bounded search never makes a property pass: with no
    counterexample within the depth, a property is unknown (exit 3) unless the
    invariant proves it."""
    from ordercheck.checker.api.exits import exit_after_verdicts
    from ordercheck.checker.api.output_paths import check_outputs, model_inputs, outputs_of
    from ordercheck.checker.api.outputs import Outputs
    from ordercheck.checker.api.result import EXIT_BOUND, EXIT_MISMATCH, EXIT_OK
    from ordercheck.checker.cli.reports import REPORT_ENTRIES
    from ordercheck.checker.loading.modelfile import expand_paths, load_model
    from ordercheck.checker.symbolic.prove import ProveOptions, prove_model

    loaded = [load_model(f) for f in expand_paths(list(models))]
    check_outputs(outputs_of(("--json", json_path, False, ()), ("--report", report_dir, True, REPORT_ENTRIES)),
                  model_inputs(loaded))
    options = ProveOptions(depth=depth, drop=drop, queue_bound=queue_bound, timeout=timeout, bmc_only=bmc_only)
    results = []
    inferred = []
    for model in loaded:
        if infer:
            from ordercheck.checker.symbolic.infer import infer_model

            found = infer_model(model, limit=samples, queue_bound=queue_bound, timeout=timeout)
            inferred.append(found)
            print_inferred(found, verbose=verbose)
            result = found.check
        else:
            result = prove_model(model, options)
        results.append(result)
        print_prove(result, verbose=verbose)
    records = [f.to_json() for f in inferred] if infer else [r.to_json() for r in results]
    payload: Any = records[0] if len(records) == 1 else records
    index = None
    with Outputs() as out:  # all or nothing, the JSON file last (ordercheck.checker.api.outputs)
        if report_dir:
            from ordercheck.checker.cli.reports import stage_html
            from ordercheck.reports.proofs import ProofRecord

            index = stage_html(out, [ProofRecord.from_json(r.to_json()) for r in results], report_dir)
        if json_path:
            out.write_json(json_path, payload)
    if index is not None:
        click.echo(f"report: {index}")
    codes = [r.exit_code() for r in results]
    exit_after_verdicts(EXIT_MISMATCH if EXIT_MISMATCH in codes else EXIT_BOUND if EXIT_BOUND in codes else EXIT_OK)


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
        f"{result.model}: {result.spec}, Z3 on the symbolic encoding (unbounded sends and signals, {queues}), "
        f"invariant of {len(result.lemmas)} lemmas{dropped}"
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
    if result.skipped:
        click.echo(f"  bmc: no symbolic encoding of {', '.join(result.skipped)} (left to the explicit engine)")
    if result.uncovered:
        click.echo(f"  proof: the invariant implies {', '.join(result.uncovered)} only for runs whose queues hold at "
                   f"most {result.queue_bound} entries, fewer than this model's runs can: not a proof for the model")
    for name, expected in result.undecided.items():
        click.echo(f"  undecided: {name}, expected {expected}: no query here decides it (run check on this model)  UNKNOWN")
    if not result.queries and not result.undecided:
        click.echo("  no query was asked (--bmc-only with --depth 0): nothing is shown  UNKNOWN")
    verdict = "inductive" if result.inductive else "NOT shown inductive"
    if any(q.kind in ("initiation", "inductive") for q in result.queries):
        bmc = f"; bounded model checking {result.bmc_seconds:.2f}s" if result.depth else ""
        click.echo(f"  invariant: {verdict}; Z3 time {result.invariant_seconds:.2f}s{bmc}")
    else:
        click.echo(f"  Z3 time {result.z3_seconds:.2f}s")


def render_trace(steps: list[Any]) -> list[str]:
    """A trace as text: each state's peers one per line, actions between them."""
    out = []
    for step in steps:
        if step.action is None:
            out.append("state 0:")
        else:
            out.append(f"--[ {step.action} ]-->")
            out.append(f"state {step.index}:")
        out += ["  " + line for line in render_state(step.state)]
    return out


def render_state(state: dict[str, Any]) -> list[str]:
    if "lines" in state:  # an encoding that draws its own states (one line per peer)
        return [str(line) for line in state["lines"]]
    if "peers" not in state:  # an encoding that draws its states its own way: one line per entry
        return [f"{k}: {v}" for key, part in state.items()
                for k, v in (part.items() if isinstance(part, dict) else [(key, part)])]
    lines = []
    for name, peer in state.get("peers", {}).items():
        parts = [f"clock {peer['clock']}", f"sent {peer['sent']}"]
        parts.append("queue [" + ", ".join(peer["queue"]) + "]")
        if peer.get("transaction"):
            parts.append(f"sending {peer['transaction']}")
        if peer.get("last_dequeued"):
            parts.append(f"last dequeued {peer['last_dequeued']}")
        if peer.get("knows_up_to"):
            parts.append("knows " + ", ".join(f"{d}:{ts}" for d, ts in peer["knows_up_to"].items()))
        lines.append(f"{name}: " + "; ".join(parts))
    if "signals_left" in state:
        lines.append(f"signals left: {state['signals_left']}")
    return lines

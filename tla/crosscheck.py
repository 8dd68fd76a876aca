"""The cross-check: TLC on the export against our engine, state for state.

Both sides explore the whole state space with reductions off. Ours is run by the caller
(the command line's :func:`ordercheck.checker.cli.tla.cross_check`: this package reads results and
never runs the engine) with ``stop_when_decided=False`` and symmetry and partial-order
reduction off, and handed in as a :class:`~ordercheck.checker.api.result.Result`. TLC runs on
the export's configurations as written (:mod:`ordercheck.tla.export`): the main one, which
checks every property our engine found to hold and runs to the end, so its distinct-state
count, generated states and depth are compared with ours; then one per other property,
which stops at its violation or witness (TLC's breadth-first search with one worker finds
a shortest one). Each violation TLC reports is read back into our trace format; each
counterexample and witness of ours is replayed by TLC on the export.

Each configuration's run is also judged against the outcome the export's manifest gives
it (:func:`judge`), and, unless the caller leaves it out, TLC runs the export's
``Name_happened_before.cfg``: the library's ``Fifo``, ``Causal`` and ``Total`` equal
``HappenedBefore.tla``'s in every reachable state, and the causal past stored with each
message is its happened-before past. A violation there, or a run that does not explore
the main configuration's states, is a mismatch like any other.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ordercheck.checker.api.model import Model
from ordercheck.checker.api.result import Result, Step
from ordercheck.tla.adapters import ExportedProperty
from ordercheck.tla.export import (
    ACTION_VIOLATED,
    INVARIANT_VIOLATED,
    NO_ERROR,
    TEMPORAL_VIOLATED,
    Export,
    TlcConfig,
    export_model,
    render_config,
)
from ordercheck.tla.tlc import TlcRun, run_tlc
from ordercheck.tla.traces import TraceMismatch, confirm_in_tlc, from_tlc, raw_states
from ordercheck.tla.views import Counts, result_counts


@dataclass
class TlcVerdict:
    """TLC's verdict on one property, with its trace read back (when there is one)."""

    status: str  # "holds" | "violated", as our engine words it
    trace: list[Step] | None = None
    raw_length: int | None = None  # states in TLC's trace
    problem: str | None = None  # the trace could not be read back
    mismatch: TraceMismatch | None = None  # why, with TLC's state and the Python states it could have been


@dataclass
class CrossCheck:
    """Both sides' figures and every disagreement."""

    model: Model
    ours: Result
    export: Export
    tlc: dict[str, TlcVerdict] = field(default_factory=dict)
    final: TlcRun | None = None
    runs: list[TlcRun] = field(default_factory=list)
    confirmed: dict[str, bool] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)
    agreement: TlcRun | None = None
    """TLC's run on ``Name_happened_before.cfg`` (``None``: the export has none, or it was
    left out). It is not in :attr:`runs`, which are the model's own configurations and the
    replay of our traces."""

    @property
    def agree(self) -> bool:
        return not self.mismatches

    @property
    def ours_counts(self) -> Counts:
        """Our distinct states, generated states and depth as TLC should find them on the
        main configuration (:func:`ordercheck.tla.views.our_counts`: where the adapter
        leaves per-step checks out of the state, those of the graph of views)."""
        return self.export.counts or result_counts(self.model.spec, self.ours)

    @property
    def ours_generated(self) -> int:
        """Our generated states counted as TLC counts them: transitions plus every initial state."""
        return self.ours_counts.generated

    @property
    def tlc_seconds(self) -> float:
        """TLC's time on every run, the happened-before configuration's included."""
        return sum(r.seconds for r in self.runs) + (self.agreement.seconds if self.agreement else 0.0)


def judge(config: TlcConfig, run: TlcRun) -> str | None:
    """How TLC's ``run`` on ``config`` ends otherwise than the manifest says (its
    ``expect``, and the distinct states, depth and steps it gives); ``None`` when it ends
    as said. A configuration whose outcome is not predicted is never wrong."""
    found = f"{run.violated or run.kind} violated" if run.kind is not None else "no error"
    if config.expect == NO_ERROR:
        if run.kind is not None:
            return f"{config.file}: expected no error, TLC reports {found} after {max(len(run.trace) - 1, 0)} steps"
        if config.distinct_states is not None and run.distinct != config.distinct_states:
            return f"{config.file}: expected {config.distinct_states} distinct states, TLC explored {run.distinct}"
        if config.depth is not None and run.depth != config.depth:
            return f"{config.file}: expected depth {config.depth}, TLC {run.depth}"
    elif config.expect in (INVARIANT_VIOLATED, ACTION_VIOLATED):
        wanted = config.checks[0]
        kind, what = ("invariant", wanted) if config.expect == INVARIANT_VIOLATED else ("action", f"action property {wanted}")
        if run.kind != kind or run.violated != wanted:
            return f"{config.file}: expected {what} violated, TLC reports {found}"
        if config.steps is not None and len(run.trace) - 1 != config.steps:
            return f"{config.file}: expected a {config.steps}-step counterexample, TLC's has {len(run.trace) - 1}"
    elif config.expect == TEMPORAL_VIOLATED and run.kind != "temporal":
        return f"{config.file}: expected {config.checks[0]} violated (a temporal property), TLC reports {found}"
    return None


def _verdict_on_violation(prop: ExportedProperty) -> str:
    # A violation of Never<P> is a witness: the "sometimes" property holds.
    return "holds" if prop.kind == "sometimes" else "violated"


def _verdict_on_completion(prop: ExportedProperty) -> str:
    return "violated" if prop.kind == "sometimes" else "holds"


def _read_violation(export: Export, prop: ExportedProperty, run: TlcRun) -> TlcVerdict:
    verdict = TlcVerdict(_verdict_on_violation(prop), raw_length=len(run.trace))
    try:
        verdict.trace = from_tlc(export.adapter, run.trace)
    except TraceMismatch as exc:
        verdict.problem, verdict.mismatch = str(exc), exc
    return verdict


def run_tlc_until_complete(
    model: Model, export: Export, directory: Path, *, workers: int = 1, timeout: float | None = None
) -> tuple[dict[str, TlcVerdict], TlcRun, list[TlcRun], list[str]]:
    """Run TLC on each of the export's configurations, as written.

    The main configuration must run to the end: a violation TLC reports there is recorded,
    the property dropped, and the rest rerun (``Name_rerun.cfg``) until a run completes,
    whose counts are the ones compared. Each other configuration checks one property: a
    violation there gives that property's verdict, a run to the end the opposite one (the
    manifest's outcomes are our engine's verdicts, so :func:`_compare` finds any outcome
    TLC does not reach)."""
    verdicts: dict[str, TlcVerdict] = {}
    runs: list[TlcRun] = []
    problems: list[str] = []
    main = export.main
    remaining = list(main.properties)
    cfg = main.file
    while True:
        run = run_tlc(directory, export.name, cfg, workers=workers, timeout=timeout)
        runs.append(run)
        if run.kind is None:
            for prop in remaining:
                verdicts[prop.name] = TlcVerdict(_verdict_on_completion(prop))
            final = run
            break
        prop = next((p for p in remaining if p.checked == run.violated), None)
        if prop is None and run.kind == "temporal":
            left = [p for p in remaining if p.temporal]  # TLC may not name it; with one left it is that one
            prop = left[0] if len(left) == 1 else None
        if prop is None:
            what = run.violated or run.kind
            problems.append(f"TLC reports {what} on {main.file}, which is none of the model's properties (a broken export?)")
            return verdicts, run, runs, problems
        verdicts[prop.name] = _read_violation(export, prop, run)
        remaining.remove(prop)
        cfg = f"{export.name}_rerun.cfg"
        text = render_config(export.name, model, export.adapter, remaining, export.symmetry,
                             purpose="is the main configuration without the properties TLC found violated")
        (directory / cfg).write_text(text, encoding="utf-8")
    for config in export.verdict_configs:
        (prop,) = config.properties
        run = run_tlc(directory, export.name, config.file, workers=workers, timeout=timeout)
        runs.append(run)
        if run.kind is None:
            verdicts[prop.name] = TlcVerdict(_verdict_on_completion(prop))
        elif run.violated == prop.checked or (run.kind == "temporal" and prop.temporal):
            verdicts[prop.name] = _read_violation(export, prop, run)
        else:
            problems.append(f"TLC reports {run.violated or run.kind} on {config.file}, which checks only {prop.checked}")
            continue
    return verdicts, final, runs, problems


def compare_with_tlc(
    model: Model,
    ours: Result,
    *,
    workers: int = 1,
    timeout: float | None = None,
    keep: Path | None = None,
    confirm: bool = True,
    happened_before: bool = True,
) -> CrossCheck:
    """Cross-check ``model``: TLC on its export against ``ours``, our engine's result with
    reductions off and everything explored (no stop once the verdicts are known). With
    ``happened_before`` (the default), TLC also runs the export's happened-before
    configuration, where it has one."""
    export = export_model(model, symmetry=False, ours=ours)
    with tempfile.TemporaryDirectory(prefix="ordercheck-export-") as tmp:
        directory = keep or Path(tmp)
        export.write(directory)
        verdicts, final, runs, problems = run_tlc_until_complete(
            model, export, directory, workers=workers, timeout=timeout
        )
        cc = CrossCheck(model, ours, export, verdicts, final, runs, mismatches=list(problems))
        _compare(cc)
        _judge_all(cc)
        agreement = export.happened_before
        if happened_before and agreement is not None:
            cc.agreement = run_tlc(directory, export.name, agreement.file, workers=workers, timeout=timeout)
            problem = judge(agreement, cc.agreement)
            if problem is not None:
                cc.mismatches.append(f"happened-before: {problem}")
        if confirm:
            props = {p.name: p for p in export.properties}
            ours_traces = {
                name: (props[name], raw_states(export.adapter, r.trace), r.loop_start)
                for name, r in ours.properties.items()
                if r.trace and name in props
            }
            confirmation = confirm_in_tlc(
                export.adapter, directory, export.name, Path(model.path).name, ours_traces, timeout=timeout
            )
            if confirmation.run is not None:
                cc.runs.append(confirmation.run)
            cc.confirmed = confirmation.confirmed
            for name, ok in confirmation.confirmed.items():
                if not ok:
                    cc.mismatches.append(f"{name}: TLC does not confirm our trace as a behaviour of the export")
    return cc


def _judge_all(cc: CrossCheck) -> None:
    """Each of the model's configurations was run, and its first run ends as the
    manifest says (a main configuration rerun without a violated property is judged by
    its first run, which reported the violation)."""
    first: dict[str, TlcRun] = {}
    for run in cc.runs:
        if run.config is not None:
            first.setdefault(run.config, run)
    for config in [cc.export.main, *cc.export.verdict_configs]:
        run = first.get(config.file)
        if run is None:
            cc.mismatches.append(f"{config.file}: listed in the manifest, not run")
            continue
        problem = judge(config, run)
        if problem is not None:
            cc.mismatches.append(problem)


def _compare(cc: CrossCheck) -> None:
    ours, final, out = cc.ours, cc.final, cc.mismatches
    counts = cc.ours_counts
    if final is not None and final.kind is None:
        if final.distinct != counts.distinct:
            out.append(f"distinct states: ours {counts.distinct}, TLC {final.distinct}")
        if final.generated is not None and final.generated != counts.generated:
            out.append(f"states generated: ours {counts.generated} (transitions + initial), TLC {final.generated}")
        if final.depth is not None and final.depth != counts.depth:
            out.append(f"depth: ours {counts.depth}, TLC {final.depth}")
    for name, mine in ours.properties.items():
        theirs = cc.tlc.get(name)
        if theirs is None:
            out.append(f"{name}: ours {mine.status}, TLC gave no verdict")
            continue
        if mine.status != theirs.status:
            out.append(f"{name}: ours {mine.status}, TLC {theirs.status}")
            continue
        if theirs.problem:
            out.append(f"{name}: TLC's trace does not replay in the Python spec: {theirs.problem}")
        prop = next(p for p in cc.export.properties if p.name == name)
        if mine.trace and theirs.raw_length is not None and not prop.temporal:
            if len(mine.trace) != theirs.raw_length:
                out.append(
                    f"{name}: trace lengths differ: ours {len(mine.trace) - 1} steps, TLC {theirs.raw_length - 1}"
                )

"""The cross-check: TLC on the export against our engine, state for state.

Both sides explore the whole state space with reductions off. Ours is run by the caller
(the command line's :func:`ordercheck.checker.cli.tla.cross_check`: this package reads results and
never runs the engine) with ``stop_when_decided=False`` and symmetry and partial-order
reduction off, and handed in as a :class:`~ordercheck.checker.api.result.Result`. TLC stops at the first violated invariant, so the runner
repeats it: each run reports one violation (TLC's breadth-first search with one worker
finds a shortest one), that property is dropped from the configuration, and the next
run goes on, until a run completes with nothing reported. The completing run explored
everything, so its distinct-state count, generated states and depth are compared with
ours; the properties it still checked hold ("sometimes" ones: never reached). Each
violation TLC reports is read back into our trace format; each counterexample and
witness of ours is replayed by TLC on the export.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ordercheck.checker.api.model import Model
from ordercheck.checker.api.result import Result, Step
from ordercheck.tla.adapters import ExportedProperty
from ordercheck.tla.export import Export, export_model, render_config
from ordercheck.tla.tlc import TlcRun, run_tlc
from ordercheck.tla.traces import TraceMismatch, confirm_in_tlc, from_tlc, raw_states


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

    @property
    def agree(self) -> bool:
        return not self.mismatches

    @property
    def ours_generated(self) -> int:
        """Our generated states counted as TLC counts them: transitions plus every initial state."""
        return self.ours.stats.transitions + len(set(self.model.spec.init_states()))

    @property
    def tlc_seconds(self) -> float:
        return sum(r.seconds for r in self.runs)


def _verdict_on_violation(prop: ExportedProperty) -> str:
    # A violation of Never<P> is a witness: the "sometimes" property holds.
    return "holds" if prop.kind == "sometimes" else "violated"


def _verdict_on_completion(prop: ExportedProperty) -> str:
    return "violated" if prop.kind == "sometimes" else "holds"


def run_tlc_until_complete(
    model: Model, export: Export, directory: Path, *, workers: int = 1, timeout: float | None = None
) -> tuple[dict[str, TlcVerdict], TlcRun, list[TlcRun], list[str]]:
    """Run TLC, dropping each reported property, until a run completes."""
    remaining = list(export.properties)
    by_checked = {p.checked: p for p in remaining}
    verdicts: dict[str, TlcVerdict] = {}
    runs: list[TlcRun] = []
    problems: list[str] = []
    cfg = f"{export.name}_run.cfg"
    while True:
        text = render_config(export.name, model, export.adapter, remaining, export.symmetry)
        (directory / cfg).write_text(text, encoding="utf-8")
        run = run_tlc(directory, export.name, cfg, workers=workers, timeout=timeout)
        runs.append(run)
        if run.kind is None:
            for prop in remaining:
                verdicts[prop.name] = TlcVerdict(_verdict_on_completion(prop))
            return verdicts, run, runs, problems
        prop = by_checked.get(run.violated or "")
        if prop is None and run.kind == "temporal":
            # TLC may not name the temporal property; with one left it is that one.
            left = [p for p in remaining if p.temporal]
            prop = left[0] if len(left) == 1 else None
        if prop is None or prop not in remaining:
            what = run.violated or run.kind
            problems.append(f"TLC reports {what}, which is none of the model's properties (a broken export?)")
            return verdicts, run, runs, problems
        verdict = TlcVerdict(_verdict_on_violation(prop), raw_length=len(run.trace))
        try:
            verdict.trace = from_tlc(export.adapter, run.trace)
        except TraceMismatch as exc:
            verdict.problem, verdict.mismatch = str(exc), exc
        verdicts[prop.name] = verdict
        remaining.remove(prop)


def compare_with_tlc(
    model: Model,
    ours: Result,
    *,
    workers: int = 1,
    timeout: float | None = None,
    keep: Path | None = None,
    confirm: bool = True,
) -> CrossCheck:
    """Cross-check ``model``: TLC on its export against ``ours``, our engine's result with
    reductions off and everything explored (no stop once the verdicts are known)."""
    export = export_model(model, symmetry=False)
    with tempfile.TemporaryDirectory(prefix="ordercheck-export-") as tmp:
        directory = keep or Path(tmp)
        export.write(directory)
        verdicts, final, runs, problems = run_tlc_until_complete(
            model, export, directory, workers=workers, timeout=timeout
        )
        cc = CrossCheck(model, ours, export, verdicts, final, runs, mismatches=list(problems))
        _compare(cc)
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


def _compare(cc: CrossCheck) -> None:
    ours, final, out = cc.ours, cc.final, cc.mismatches
    stats = ours.stats
    if final is not None and final.kind is None:
        if final.distinct != stats.distinct_states:
            out.append(f"distinct states: ours {stats.distinct_states}, TLC {final.distinct}")
        ours_generated = cc.ours_generated
        if final.generated is not None and final.generated != ours_generated:
            out.append(f"states generated: ours {ours_generated} (transitions + initial), TLC {final.generated}")
        if final.depth is not None and final.depth != stats.depth:
            out.append(f"depth: ours {stats.depth}, TLC {final.depth}")
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

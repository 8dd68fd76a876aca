"""Checking a model end to end: search, verdicts, traces, statistics."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.outputs import writable_dir
from ordercheck.checker.api.reductions import partial_order_of
from ordercheck.checker.api.result import PropertyResult, Result, Stats
from ordercheck.checker.api.trace import replay, to_steps
from ordercheck.checker.engine.bfs import Bounds, Decision, Progress, SearchOutcome, history_length, search
from ordercheck.checker.engine.budget import MemoryBudget, advice, default_limit
from ordercheck.checker.engine.checkpoints import (
    SOURCES,
    checkpoint_dir,
    current,
    describe,
    prepare,
    recorded_sources,
    require,
    source_changes,
)
from ordercheck.checker.engine.ckptlock import release
from ordercheck.checker.engine.declarations import (
    DeclarationBroken,
    check_acyclic,
    declaration_error,
    undecided_verdicts,
)
from ordercheck.checker.engine.fairness_note import fairness_warning
from ordercheck.checker.engine.notes import with_guide
from ordercheck.checker.engine.reduce import Reductions, plan
from ordercheck.checker.engine.resumable import warn


@dataclass(frozen=True)
class Options:
    """How to run a check; command-line flags override the model's own settings."""

    engine: str = "local"
    workers: int = 1
    symmetry: bool | None = None  # None: as the model says
    por: bool | None = None
    max_states: int | None = None
    max_depth: int | None = None
    time_limit: float | None = None
    progress: bool = True
    stop_when_decided: bool = True
    checkpoint: str | None = None  # directory for level-boundary checkpoints
    resume: bool = False  # continue from the last checkpoint in `checkpoint`
    resume_anyway: bool = False  # with resume: resume even when the sources changed since the checkpoint (warning)
    checkpoint_every: float = 30.0  # seconds between checkpoints
    spill_dir: str | None = None  # put every level's frontier in files here (see ordercheck.checker.engine.frontier)
    master: str = "local[*]"  # Spark master for engine="spark"
    memory_limit: int | None = None  # bytes the search may hold (None: ordercheck.checker.engine.budget's default)
    check_reductions: bool = False  # check the reductions' declarations on every state (ordercheck.checker.engine.declarations)


def variant_options(options: Options, variant: str | None) -> Options:
    """``options`` for one variant of a model among several checked by one command (an
    ablation mutant or a sweep's: ``variant`` names the flag switched off, ``None`` or
    ``""`` the model itself), with checkpoints of its own: ``--checkpoint DIR`` becomes
    ``DIR/full`` or ``DIR/without-FLAG``, under which each model file has its own
    directory as always (:func:`ordercheck.checker.engine.checkpoints.checkpoint_dir`). So no two
    checks of one command share a checkpoint, and each resumes from its own."""
    if not options.checkpoint:
        return options
    sub = f"without-{variant}" if variant else "full"
    return replace(options, checkpoint=str(Path(options.checkpoint) / sub))


def resume_where_saved(options: Options, model_path: str) -> Options:
    """``options`` for a check that comes after the first of a command resumed with
    ``--resume`` (a later model, an ablation mutant, a sweep's later task): the
    interrupted run may not have reached it, so where it has no checkpoint it is searched
    from the start, with a note on stderr, instead of refused. The command's first check
    must still have one (:func:`prepare_work_dirs`): a ``--resume`` with nothing to
    resume from is an error."""
    if not (options.resume and options.checkpoint):
        return options
    if current(checkpoint_dir(options.checkpoint, model_path)) is not None:
        return options
    warn(f"{model_path}: no checkpoint under {options.checkpoint} (the interrupted run did not reach it); "
         "searched from the start")
    return replace(options, resume=False)


def bounds_for(model: Model, options: Options) -> Bounds:
    return Bounds(
        max_states=options.max_states if options.max_states is not None else model.max_states,
        max_depth=options.max_depth if options.max_depth is not None else model.max_depth,
        time_limit=options.time_limit if options.time_limit is not None else model.time_limit,
    )


def check_model(model: Model, options: Options = Options()) -> Result:
    """Run the local engine on ``model`` and build its :class:`Result`.

    An exception raised by the spec's code ends the check as a
    :class:`~ordercheck.checker.api.spec_errors.SpecRaised` naming the state (see
    :func:`ordercheck.checker.engine.diagnose.diagnose`), and so does any other way out of it
    (``sys.exit``, a :class:`KeyboardInterrupt` of its own, ``os._exit`` in a worker
    process or, under the command line's guard, in this one); ``options.engine`` must be ``"local"``
    (see :func:`_check_model`).
    """
    if options.engine != "local":
        return _check_model(model, options)  # refused there, before any search
    try:
        return _check_model(model, options)
    except DeclarationBroken as exc:  # a failed --check-reductions, in this process or a worker
        raise declaration_error(model, exc) from None
    except BaseException as exc:  # sys.exit, os._exit (guarded) and the like included; signals are let through
        from ordercheck.checker.engine.diagnose import diagnose

        found = diagnose(model, exc, symmetry=_wanted(model.symmetry, options.symmetry), por=_wanted(model.por, options.por))
        if found is exc:
            raise
        raise found from None


def _wanted(model_says: bool, option: bool | None) -> bool:
    return model_says if option is None else option


def _check_model(model: Model, options: Options) -> Result:
    """The check itself.

    ``options.engine`` must be ``"local"``: the Spark engine sits in a layer above this
    one (:func:`ordercheck.checker.spark.bfs.check_model_spark`; the command line picks between the
    two), so asking this function for it raises :class:`ValueError`.
    """
    if options.engine != "local":
        raise ValueError(
            f"engine {options.engine!r}: ordercheck.checker.engine.run runs the local engine only; "
            "use ordercheck.checker.spark.bfs.check_model_spark for Spark"
        )
    bounds = bounds_for(model, options)
    unbounded = bounds.max_states is None and bounds.max_depth is None and bounds.time_limit is None
    progress = Progress(sys.stderr if options.progress else None, label=model.name, unbounded=unbounded,
                        history=history_length(model.spec))
    want_sym = model.symmetry if options.symmetry is None else options.symmetry
    want_por = model.por if options.por is None else options.por
    requested = {"symmetry": want_sym, "por": want_por}
    depth_note = []
    if want_por and bounds.max_depth is not None:
        # Reduced paths can be longer than the shortest ones: what lies within a depth
        # bound is not preserved, so a depth-bounded search runs unreduced by POR.
        want_por = False
        depth_note = ["partial-order reduction: not applied under a depth bound (reduced paths can be longer)"]
    reductions, notes = plan(model.spec, model.properties, want_sym, want_por)
    if options.check_reductions:
        reductions = replace(reductions, check=True)
    notes = [with_guide(n) for n in depth_note + notes]
    budget = MemoryBudget(options.memory_limit if options.memory_limit is not None else default_limit())
    checkpoint = prepare_work_dirs(model, options)  # its lock, held for the search
    with release_after(checkpoint):
        outcome = search(
            model.spec,
            model.properties,
            bounds,
            progress=progress,
            stop_when_decided=options.stop_when_decided,
            reductions=reductions,
            workers=options.workers,
            checkpoint=checkpoint,
            resume=options.resume,
            checkpoint_every=options.checkpoint_every,
            identity={"spec": model.spec_name, "constants": model.constants, SOURCES: model.sources},
            spill_dir=options.spill_dir,
            budget=budget,
        )
    acyclic_note = check_acyclic(model, outcome, reductions.group, bounds, budget)
    if acyclic_note is not None:
        notes.append(acyclic_note)
    if outcome.bound == "memory":
        notes.append(advice(outcome.memory, describe(Path(checkpoint)) if checkpoint else None))
    if reductions.por and outcome.decisions:
        shortest_traces(model, outcome, reductions, options.workers, budget, options.spill_dir)
    lassos, liveness_cut = check_cycles(model, outcome, bounds)
    if (lassos or liveness_cut) and want_sym:
        notes.append("liveness was checked on the unreduced graph: symmetry reduction is unsound for it")
    result = build_result(model, outcome, "local", reductions.as_dict(model.spec), notes, lassos, liveness_cut, bounds,
                          requested)
    if acyclic_note is not None:
        undecided_verdicts(result)
    note = fairness_warning(model.spec, model.properties, outcome.maybe_cyclic, result, bounds)
    if note is not None:
        result.warnings.append(note)
    return result


def prepare_work_dirs(model: Model, options: Options) -> str | None:
    """Check the checkpoint and spill directories before a search starts: an
    :class:`OSError` naming the path when one cannot be written (exit code 6), an
    :class:`InputError` for ``--resume`` without a checkpoint, or with a checkpoint
    written from other sources (:func:`check_sources`), a
    :class:`~ordercheck.checker.engine.ckptlock.CheckpointBusy` (exit code 2) when another run holds
    the checkpoint directory. Returns the model's own checkpoint directory
    (:func:`ordercheck.checker.engine.checkpoints.checkpoint_dir`), if any, whose lock this process
    then holds (re-entrantly) until :func:`ordercheck.checker.engine.ckptlock.release` is called
    on it once (:func:`release_after`) or the process ends."""
    if options.resume and not options.checkpoint:
        raise InputError(model.path, "--resume", "needs --checkpoint DIR, the directory to resume from")
    if options.spill_dir:
        writable_dir(options.spill_dir)
    if not options.checkpoint:
        return None
    ckpt = checkpoint_dir(options.checkpoint, model.path)
    if options.resume:
        require(ckpt)
    prepare(ckpt)  # takes the directory's lock
    if options.resume:
        try:
            check_sources(model, ckpt, options.resume_anyway)
        except BaseException:
            release(ckpt)
            raise
    return str(ckpt)


@contextmanager
def release_after(checkpoint: str | None) -> Iterator[None]:
    """Let go of the lock :func:`prepare_work_dirs` took on ``checkpoint`` (if any) when
    the block ends, however it ends."""
    try:
        yield
    finally:
        if checkpoint is not None:
            release(checkpoint)


_WARNED: set[str] = set()  # the --resume-anyway warnings given in this process


def check_sources(model: Model, ckpt: Path, anyway: bool = False) -> None:
    """Before a resume from ``ckpt``: the sources the checkpoint was written from
    (ordercheck's version, the model file, the spec's source files; see
    :mod:`ordercheck.checker.engine.checkpoints`) must be ``model.sources``. A change is refused
    with :class:`InputError` naming what changed (exit code 2); with ``anyway``
    (``--resume-anyway``) the resume goes on with a warning naming it, once per process."""
    recorded = recorded_sources(ckpt)
    if recorded is None:
        return  # no readable manifest: the load refuses the checkpoint as damaged
    changes = source_changes(recorded, model.sources)
    if not changes:
        return
    what = "; ".join(changes)
    if not anyway:
        raise InputError(
            str(ckpt), "--resume",
            f"the checkpoint was written from other sources ({what}), so resuming would mix two models; run "
            "again without --resume to start afresh, or with --resume-anyway if the change alters no state, "
            "transition or verdict",
        )
    line = (f"{ckpt}: resumed with --resume-anyway although the sources changed since the checkpoint ({what}); "
            "the verdicts are right only if the change alters no state, transition or verdict")
    if line not in _WARNED:
        _WARNED.add(line)
        warn(line)


def shortest_traces(model: Model, outcome: SearchOutcome, reductions: Reductions, workers: int,
                    budget: MemoryBudget | None = None, spill_dir: str | None = None) -> None:
    """Replace the traces a partial-order-reduced search found by shortest ones.

    A reduced graph keeps every verdict but not every shortest path. The decided
    properties are searched again without partial-order reduction (symmetry keeps
    distances, so it stays), only as deep as the longest trace found, which bounds the
    extra work by the states within that depth. It runs under the same ``budget`` and
    keeps its frontier in the same ``spill_dir`` (when given) as the search it follows.
    """
    decided = [p for p in model.properties if p.name in outcome.decisions]
    depth = max(len(outcome.store.path(d.index)[1]) for d in outcome.decisions.values())
    again = search(
        model.spec,
        decided,
        Bounds(max_depth=depth),
        reductions=Reductions(group=reductions.group),
        workers=workers,
        spill_dir=spill_dir,
        budget=budget,
    )
    for name, d in again.decisions.items():
        outcome.decisions[name] = Decision(d.index, d.explanation, again.store)


def check_cycles(model: Model, outcome: SearchOutcome, bounds: Bounds) -> tuple[dict, bool]:
    """Fair cycles for the ``eventually`` properties a search left undecided.

    Runs only when the search saw an edge that can close a cycle; an acyclic graph's
    runs all end in terminal states, which the search already checked. Returns the
    lassos found and whether a bound cut the graph short. Not for a spec that declares
    ``acyclic``: :func:`~ordercheck.checker.engine.declarations.check_acyclic` has then either
    confirmed the declaration, refused it, or left it undecided, which makes these
    properties unknown (:func:`~ordercheck.checker.engine.declarations.undecided_verdicts`).
    """
    from ordercheck.checker.engine.liveness import find_lassos

    open_props = [p for p in model.properties if p.kind == "eventually" and p.name not in outcome.decisions]
    if not open_props or not outcome.maybe_cyclic or outcome.bound is not None or model.spec.acyclic:
        return {}, False
    lassos, graph = find_lassos(model.spec, open_props, bounds)
    return lassos, not graph.complete


def build_result(
    model: Model,
    outcome: SearchOutcome,
    engine: str,
    reductions: dict[str, bool],
    warnings: list[str] | None = None,
    lassos: dict | None = None,
    liveness_cut: bool = False,
    bounds: Bounds | None = None,
    requested: dict[str, bool] | None = None,
) -> Result:
    """Verdicts from a search outcome, with each decision's shortest trace rebuilt;
    ``bounds`` (the search's limits) are recorded in the result and named in the
    explanation of a verdict a bound left unknown, with how far the search got. The
    result describes its model (:meth:`ordercheck.checker.api.model.Model.describe`), with the
    reductions ``requested`` (by default the model file's)."""
    spec = model.spec
    cut = outcome.bound is not None
    lassos = lassos or {}
    props: dict[str, PropertyResult] = {}
    for prop in model.properties:
        decision = outcome.decisions.get(prop.name)
        expected = model.expect.get(prop.name)
        lasso = lassos.get(prop.name)
        if lasso is not None and decision is None:
            steps = to_steps(spec, replay(spec, lasso.init, lasso.prefix + lasso.loop))
            props[prop.name] = PropertyResult(
                prop.name, prop.kind, "violated", expected, lasso.explanation, steps, loop_start=len(lasso.prefix)
            )
        elif prop.kind == "eventually" and liveness_cut and decision is None:
            props[prop.name] = PropertyResult(
                prop.name, prop.kind, "unknown", expected, "the state graph for the cycle check was cut by max_states"
            )
        elif decision is not None:
            status = "holds" if prop.kind == "sometimes" else "violated"
            init, path = (decision.store or outcome.store).path(decision.index)
            steps = to_steps(spec, replay(spec, init, path))
            props[prop.name] = PropertyResult(prop.name, prop.kind, status, expected, decision.explanation, steps)
        elif cut:
            props[prop.name] = PropertyResult(
                prop.name, prop.kind, "unknown", expected,
                f"the search stopped at its {outcome.bound} bound first{_limit(bounds, outcome.bound)}, after "
                f"{outcome.distinct_states:,} distinct states to depth {outcome.depth}, before deciding it",
            )
        elif prop.kind == "sometimes":
            props[prop.name] = PropertyResult(
                prop.name, prop.kind, "violated", expected, "no reachable state satisfies it"
            )
        else:
            props[prop.name] = PropertyResult(prop.name, prop.kind, "holds", expected)
    n = outcome.distinct_states
    stats = Stats(
        distinct_states=n,
        transitions=outcome.transitions,
        depth=outcome.depth,
        seconds=round(outcome.seconds, 4),
        states_per_second=round(n / outcome.seconds, 1) if outcome.seconds > 0 else 0.0,
        peak_memory_bytes=outcome.peak_memory_bytes,
        bytes_per_state=round(outcome.peak_memory_bytes / n, 1) if n else 0.0,
        collision_probability=outcome.collision_probability,
        bound=outcome.bound,
        levels=list(getattr(outcome, "levels", [])),
    )
    coverage, unfired = coverage_of(spec, outcome, bool(reductions.get("por")))
    return model.describe(Result(
        model=model.path,
        spec=model.spec_name,
        constants=model.constants,
        engine=engine,
        reductions=reductions,
        properties=props,
        stats=stats,
        warnings=list(warnings or []) + unfired,
        coverage=coverage,
        bounds=asdict(bounds) if bounds is not None else {},
    ), requested)


def _limit(bounds: Bounds | None, which: str | None) -> str:
    """`` (max_states = 1000)`` for the bound that stopped a search, when known."""
    value = getattr(bounds, which, None) if bounds is not None and which else None
    return f" ({which} = {value})" if value is not None else ""


def coverage_of(spec: Any, outcome: SearchOutcome, por: bool = False) -> tuple[dict[str, int] | None, list[str]]:
    """The search's transitions per action name, the spec's listed action kinds first (with
    their zeros), and a warning for each listed kind that never fired in a search that
    explored every reachable state (a search stopped early proves nothing by a zero; with
    partial-order reduction the counts are the reduced graph's, and a spec that defers
    steps gets no warning)."""
    fired = getattr(outcome, "fired", None)
    if fired is None:
        return None, []
    kinds = list(dict.fromkeys(spec.action_kinds()))
    coverage = {k: fired.get(k, 0) for k in kinds}
    coverage.update(sorted((k, n) for k, n in fired.items() if k not in coverage))
    warnings = []
    # With deferred steps (PartialOrder.defers) the reduced graph takes a deferrable step only
    # where nothing else is enabled, so those kinds and the steps they lead to (a
    # hold-back buffer and its later delivery) may rightly never fire: no warning then;
    # `--no-por` shows the full graph's coverage.
    if outcome.complete and not (por and partial_order_of(spec).defers()):
        never = [k for k in kinds if not fired.get(k)]
        if never:
            where = " in the graph reduced by partial-order reduction" if por else ""
            warnings.append(f"coverage: {', '.join(never)} never fired{where} (listed by {spec.name}.action_kinds)")
    return coverage, warnings

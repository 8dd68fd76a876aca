"""Checking a model end to end: search, verdicts, traces, statistics."""

from __future__ import annotations

from dataclasses import dataclass

from checker.bfs import Bounds, Progress, SearchOutcome, search
from checker.model import Model
from checker.result import PropertyResult, Result, Stats
from checker.trace import replay, to_steps


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
    master: str = "local[*]"  # Spark master for engine="spark"


def bounds_for(model: Model, options: Options) -> Bounds:
    return Bounds(
        max_states=options.max_states if options.max_states is not None else model.max_states,
        max_depth=options.max_depth if options.max_depth is not None else model.max_depth,
        time_limit=options.time_limit if options.time_limit is not None else model.time_limit,
    )


def check_model(model: Model, options: Options = Options()) -> Result:
    """Run the chosen engine on ``model`` and build its :class:`Result`."""
    if options.engine == "spark":
        from checker.spark_bfs import check_model_spark

        return check_model_spark(model, options)
    bounds = bounds_for(model, options)
    progress = Progress(label=model.name) if options.progress else None
    outcome = search(
        model.spec,
        model.properties,
        bounds,
        progress=progress,
        stop_when_decided=options.stop_when_decided,
    )
    warnings = []
    want_sym = model.symmetry if options.symmetry is None else options.symmetry
    want_por = model.por if options.por is None else options.por
    if want_sym or want_por:
        warnings.append(
            "symmetry and partial-order reduction are not implemented in this engine yet; "
            "the search ran unreduced"
        )
    lassos, liveness_cut = check_cycles(model, outcome, bounds)
    if lassos or liveness_cut:
        if want_sym:
            warnings.append("liveness was checked on the unreduced graph: symmetry reduction is unsound for it")
    return build_result(model, outcome, "local", {"symmetry": False, "por": False}, warnings, lassos, liveness_cut)


def check_cycles(model: Model, outcome: SearchOutcome, bounds: Bounds) -> tuple[dict, bool]:
    """Fair cycles for the ``eventually`` properties a search left undecided.

    Runs only when the search saw an edge that can close a cycle; an acyclic graph's
    runs all end in terminal states, which the search already checked. Returns the
    lassos found and whether a bound cut the graph short.
    """
    from checker.liveness import find_lassos

    open_props = [p for p in model.properties if p.kind == "eventually" and p.name not in outcome.decisions]
    if not open_props or not outcome.maybe_cyclic or outcome.bound is not None:
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
) -> Result:
    """Verdicts from a search outcome, with each decision's shortest trace rebuilt."""
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
            init, path = outcome.store.path(decision.index)
            steps = to_steps(spec, replay(spec, init, path))
            props[prop.name] = PropertyResult(prop.name, prop.kind, status, expected, decision.explanation, steps)
        elif cut:
            props[prop.name] = PropertyResult(
                prop.name, prop.kind, "unknown", expected, f"the search stopped at its {outcome.bound} bound first"
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
    )
    return Result(
        model=model.path,
        spec=model.spec_name,
        constants=model.constants,
        engine=engine,
        reductions=reductions,
        properties=props,
        stats=stats,
        warnings=list(warnings or []),
    )

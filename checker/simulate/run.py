"""A simulation run: random walks (:mod:`ordercheck.checker.simulate.walk`) until every property is
decided or the budget is spent, each violation shrunk (:mod:`ordercheck.checker.simulate.shrink`),
the outcome reported as a :class:`~ordercheck.checker.api.result.Result` like a search's."""

from __future__ import annotations

import random
import time

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample

from ordercheck.checker.api.model import Model
from ordercheck.checker.api.result import EXIT_BOUND, EXIT_MISMATCH, EXIT_OK, PropertyResult, Result, Stats
from ordercheck.checker.api.trace import to_steps
from ordercheck.checker.engine.reduce import Reductions
from ordercheck.checker.simulate.shrink import shrink
from ordercheck.checker.simulate.walk import Found, Simulator, Walk, path_of

DEFAULT_RUNS = 1000
DEFAULT_DEPTH = 200


def simulate(
    model: Model,
    runs: int = DEFAULT_RUNS,
    depth: int = DEFAULT_DEPTH,
    seed: int = 0,
    time_limit: float | None = None,
) -> Result:
    """Search ``model`` with up to ``runs`` random walks of up to ``depth`` steps."""
    started = time.monotonic()
    spec = model.spec
    sim = Simulator(spec, model.properties, depth)
    rng = random.Random(seed)
    open_props = {p.name for p in model.properties}
    decided: dict[str, Found] = {}
    first: dict[str, int] = {}  # property: the walk that first broke it
    budget = runs
    while open_props and budget > 0:
        if time_limit is not None and time.monotonic() - started > time_limit:
            break
        before = sim.stats.walks

        def breaks(walk: Walk) -> bool:
            found = sim.run(walk, open_props)
            if found is not None:
                first.setdefault(found.prop, sim.stats.walks)
            return found is not None

        try:
            walk = find(
                sim.strategy(),
                breaks,
                settings=settings(
                    max_examples=budget,
                    database=None,
                    deadline=None,
                    phases=[Phase.generate],
                    suppress_health_check=list(HealthCheck),
                ),
                random=rng,
            )
        except NoSuchExample:
            break
        budget -= max(sim.stats.walks - before, 1)
        hit = sim.run(walk, open_props)
        if hit is None:  # pragma: no cover - find only returns walks that decide something
            break
        best = shrink(sim, hit)
        decided[best.prop] = best
        open_props.discard(best.prop)
        sim.evaluator.decide(best.prop)

    seconds = time.monotonic() - started
    props: dict[str, PropertyResult] = {}
    for prop in model.properties:
        expected = model.expect.get(prop.name)
        found = decided.get(prop.name)
        if found is not None:
            status = "holds" if prop.kind == "sometimes" else "violated"
            steps = to_steps(spec, path_of(spec, found))
            why = f"{found.explanation} (walk {first.get(prop.name, sim.stats.walks)} of seed {seed})"
            props[prop.name] = PropertyResult(prop.name, prop.kind, status, expected, why, steps)
        else:
            props[prop.name] = PropertyResult(
                prop.name,
                prop.kind,
                "unknown",
                expected,
                f"not decided by {sim.stats.walks} random walks of up to {depth} steps (seed {seed})",
            )
    stats = Stats(
        distinct_states=len(sim.stats.seen),
        transitions=sim.stats.steps,
        depth=sim.stats.longest,
        seconds=round(seconds, 4),
        states_per_second=round(sim.stats.steps / seconds, 1) if seconds > 0 else 0.0,
        bound="simulation",
    )
    return model.describe(Result(
        model=model.path,
        spec=model.spec_name,
        constants=model.constants,
        engine="simulate",
        reductions=Reductions().as_dict(spec),  # random walks take every enabled step: none applied
        properties=props,
        stats=stats,
        warnings=[f"{sim.stats.walks} walks, seed {seed}: simulation can find violations, never prove a property"],
    ), {})


def simulation_exit_code(result: Result) -> int:
    """0 unless a found verdict contradicts ``[expect]`` (1) or an expected violation was
    not found within the budget (3). Not finding a violation proves nothing, so an
    ``unknown`` where ``holds`` is expected is fine."""
    code = EXIT_OK
    for p in result.properties.values():
        if p.status != "unknown" and not p.as_expected:
            return EXIT_MISMATCH
        if p.status == "unknown" and p.expected == "violated" and p.kind != "sometimes":
            code = EXIT_BOUND
        if p.status == "unknown" and p.expected == "holds" and p.kind == "sometimes":
            code = EXIT_BOUND
    return code

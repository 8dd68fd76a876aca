"""Helpers for the seed-protocol tests: walking a spec along chosen actions."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from ordercheck.checker.api.result import Result
from ordercheck.checker.api.spec import Property, Spec
from ordercheck.checker.engine.bfs import search
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model

MODELS = Path(__file__).resolve().parent.parent / "models"


def walk(spec: Spec, labels: Iterable[tuple]) -> list[tuple]:
    """The states along ``labels`` from the initial state; each label must be enabled."""
    state = spec.init_states()[0]
    states = [state]
    for label in labels:
        enabled = dict(spec.next_states(state))
        assert label in enabled, f"{label} is not enabled; enabled: {sorted(enabled, key=str)}"
        state = enabled[label]
        states.append(state)
    return states


def reachable(spec: Spec, condition: Callable[[tuple], bool]) -> tuple | None:
    """A shortest path's final state satisfying ``condition``, or ``None`` if none is reachable."""
    prop = Property.sometimes("target", lambda s: "found" if condition(s) else None)
    outcome = search(spec, [prop])
    decision = outcome.decisions.get("target")
    if decision is None:
        return None
    from ordercheck.checker.api.trace import replay

    init, path = outcome.store.path(decision.index)
    return replay(spec, init, path)[-1][2]


def run_model(name: str) -> Result:
    """Check a built-in model quietly."""
    return check_model(load_model(MODELS / f"{name}.toml"), Options(progress=False))

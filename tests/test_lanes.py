"""Parallel workers that keep their share of the frontier (checker.engine.lanes).

With ``--workers N`` and no cycle proviso, states stay in the worker processes and the
merging process sees fingerprints only. Results must be those of one process: counts,
depth, bound, verdicts, explanations and traces.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import checker.engine.levels as levels
from checker.api.spec import Spec
from checker.engine.bfs import Bounds, SpecError, search
from checker.engine.lanes import Lanes
from checker.engine.reduce import plan
from checker.engine.run import Options, check_model
from checker.loading.modelfile import load_model, model_from_dict
from tests.toyspecs import Grid

ROOT = Path(__file__).resolve().parent.parent


def summary(result) -> tuple:
    props = {n: (p.status, p.explanation, [s.label for s in (p.trace or [])]) for n, p in result.properties.items()}
    st_ = result.stats
    return st_.distinct_states, st_.transitions, st_.depth, st_.bound, props


class Recording(Lanes):
    """Lanes that count the units each worker expanded and the segments moved."""

    units: list[int] = []
    moved = 0

    def run(self, level, open_names):
        for res in super().run(level, open_names):
            Recording.units[res[0]] += 1
            yield res

    def _read(self, w):
        msg = super()._read(w)
        if msg is None:
            Recording.moved += 1
        return msg


@pytest.fixture
def recording(monkeypatch):
    monkeypatch.setattr(levels, "Lanes", Recording)
    Recording.units = [0] * 3
    Recording.moved = 0
    return Recording


# Models whose runs stop early, at a bound, on a liveness verdict, with or without
# partial-order reduction (none of these needs the cycle proviso).
CASES = [
    ("fifo-3.toml", {}),
    ("restart-per-node.toml", {}),
    ("bus1-impl-refines-destroy.toml", {}),
    ("bus1-impl-mutant-no-staging.toml", {}),
    ("bus1-impl-synthetic-causality.toml", {}),
    ("fifo-4.toml", {"max_states": 700}),
    ("fifo-4.toml", {"max_depth": 6}),
    ("fifo-4.toml", {"por": False, "stop_when_decided": False}),
]


@pytest.mark.parametrize(("name", "opts"), CASES)
def test_lanes_give_the_results_of_one_process(name: str, opts: dict, recording) -> None:
    model = load_model(ROOT / "models" / name)
    one = check_model(model, Options(progress=False, workers=1, **opts))
    three = check_model(model, Options(progress=False, workers=3, **opts))
    assert summary(one) == summary(three)
    assert sum(recording.units) > 0, "the lanes were not used"


def test_lanes_share_the_work(recording, monkeypatch) -> None:
    """From one initial state, every worker gets units: segments move to balance shares."""
    monkeypatch.setattr(levels, "CHUNK", 256)
    model = load_model(ROOT / "models" / "bus1-2.toml")
    one = check_model(model, Options(progress=False, workers=1, por=False, stop_when_decided=False))
    three = check_model(model, Options(progress=False, workers=3, por=False, stop_when_decided=False))
    assert summary(one) == summary(three)
    assert one.stats.distinct_states > 50 * levels.CHUNK
    assert min(recording.units) > 0 and recording.moved > 0
    # No worker did more than half of the units with three of them.
    assert max(recording.units) <= sum(recording.units) // 2


def outcome_summary(outcome) -> tuple:
    decisions = {n: (d.index, d.explanation) for n, d in outcome.decisions.items()}
    return outcome.distinct_states, outcome.transitions, outcome.depth, outcome.bound, decisions


def test_proviso_and_spill_dir_keep_the_chunk_pool(recording, tmp_path: Path) -> None:
    """The cycle proviso needs the states in the merging process, and an explicit spill
    directory asks for the frontier on disk: both keep the pool of chunk workers."""
    model = load_model(ROOT / "models" / "bus1-2.toml")
    reductions, _notes = plan(model.spec, model.properties, model.symmetry, model.por)
    assert reductions.proviso  # its state invariants need the proviso
    one = search(model.spec, model.properties, reductions=reductions, workers=1)
    two = search(model.spec, model.properties, reductions=reductions, workers=2)
    assert outcome_summary(one) == outcome_summary(two)
    assert one.decisions  # the witness fifo_race, whose trace check_model searches again
    assert sum(recording.units) == 0
    # check_model searches the decided properties again without partial-order reduction
    # for shortest traces: no proviso there, so that search has lanes ...
    whole = check_model(model, Options(progress=False, workers=1))
    assert summary(check_model(model, Options(progress=False, workers=2))) == summary(whole)
    assert sum(recording.units) > 0
    # ... unless a spill directory is given: then it, too, keeps its frontier there.
    Recording.units = [0] * 3
    spilled = check_model(model, Options(progress=False, workers=2, spill_dir=str(tmp_path / "bus1")))
    assert summary(spilled) == summary(whole)
    fifo = model_from_dict({"spec": "fifo", "constants": {"peers": 3, "sends": 1, "destinations": "unicast"}})
    spilled = check_model(fifo, Options(progress=False, workers=2, spill_dir=str(tmp_path / "fifo")))
    assert summary(spilled) == summary(check_model(fifo, Options(progress=False, workers=1)))
    assert sum(recording.units) == 0


class Fragile(Grid):
    """A grid whose successors of (2, 2) cannot be computed."""

    name = "fragile"

    def next_states(self, state):
        if state == (2, 2):
            raise ValueError("no successors for (2, 2)")
        return super().next_states(state)


class Odd(Exception):
    """An exception that pickles but cannot be rebuilt from its pickle."""

    def __init__(self, what: str, where: int) -> None:
        super().__init__(what)
        self.where = where


class Awkward(Grid):
    """A grid whose successors of (1, 3) raise :class:`Odd`."""

    name = "awkward"

    def next_states(self, state):
        if state == (1, 3):
            raise Odd("odd", 3)
        return super().next_states(state)


class Wordy(Grid):
    """A grid that puts a string into a state three steps in."""

    name = "wordy"

    def next_states(self, state):
        out = super().next_states(state)
        return [(a, ("x", *t) if sum(t) == 3 else t) for a, t in out]


def test_a_worker_failure_is_raised_here() -> None:
    spec: Spec = Fragile(n=4)
    with pytest.raises(ValueError, match=r"no successors for \(2, 2\)"):
        search(spec, spec.properties(), Bounds(), workers=2, stop_when_decided=False)
    spec = Awkward(n=4)
    with pytest.raises(RuntimeError, match="worker failed: Odd"):
        search(spec, spec.properties(), Bounds(), workers=2, stop_when_decided=False)
    spec = Wordy(n=4)
    with pytest.raises(SpecError, match="str"):
        search(spec, spec.properties(), Bounds(), workers=2, stop_when_decided=False)

"""Workers that own shards of the visited set (ordercheck.checker.engine.shards, ordercheck.checker.engine.sharded).

With ``--workers N`` each worker owns the fingerprints hashed to it and the main process
sees order keys only (partial-order reduction's cycle proviso is decided in rounds). Results must be those of one process for
every worker count: counts, depth, bound, verdicts, explanations, traces and coverage;
and a checkpoint written with one worker count resumes with another.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ordercheck.checker.api.spec import Spec
from ordercheck.checker.engine import bfs, levels, loop, sharded
from ordercheck.checker.engine import shards as shards_module
from ordercheck.checker.engine.bfs import NO_BOUNDS, Bounds, SpecError, search
from ordercheck.checker.engine.budget import MemoryBoundReached
from ordercheck.checker.engine.frontier import RankedFrontier
from ordercheck.checker.engine.messages import Failed, Peak, PeakReport, Round, Stop
from ordercheck.checker.engine.reduce import Expander, Reductions, plan
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.engine.sharded import ShardedPaths, balance
from ordercheck.checker.engine.shards import owner_of
from ordercheck.checker.loading.modelfile import load_model, model_from_dict
from tests.conftest import proviso_search
from tests.faults_helpers import invoke
from tests.toyspecs import Grid

ROOT = Path(__file__).resolve().parent.parent


def summary(result) -> tuple:
    props = {n: (p.status, p.explanation, [s.label for s in (p.trace or [])]) for n, p in result.properties.items()}
    st_ = result.stats
    return st_.distinct_states, st_.transitions, st_.depth, st_.bound, props, result.coverage


# Violating and holding models, with reductions on and off, stopped early, at a bound,
# on a liveness verdict, or run to the end (the cycle proviso: see below).
CASES = [
    ("fifo-3.toml", {}),
    ("fifo-3.toml", {"por": False, "symmetry": False}),
    ("restart-per-node.toml", {}),
    ("bus1-impl-refines-destroy.toml", {}),
    ("bus1-impl-mutant-no-staging.toml", {}),
    ("bus1-impl-mutant-no-staging.toml", {"por": False}),
    ("bus1-mutant-tiebreak-by-arrival.toml", {"por": False}),
    ("fifo-4.toml", {"max_states": 700}),
    ("fifo-4.toml", {"max_depth": 6}),
    ("fifo-4.toml", {"por": False, "stop_when_decided": False}),
]


@pytest.mark.parametrize(("name", "opts"), CASES)
def test_one_two_and_three_workers_give_the_same_results(name: str, opts: dict) -> None:
    model = load_model(ROOT / "models" / name)
    one = check_model(model, Options(progress=False, workers=1, **opts))
    for workers in (2, 3):
        assert summary(check_model(model, Options(progress=False, workers=workers, **opts))) == summary(one), workers


def test_violations_and_holds_are_both_covered() -> None:
    """The cases above hold a violation with a trace, a verdict that holds, a bound."""
    statuses = set()
    for name, opts in CASES:
        result = check_model(load_model(ROOT / "models" / name), Options(progress=False, workers=2, **opts))
        statuses |= {p.status for p in result.properties.values()}
        if any(p.status == "violated" and p.trace for p in result.properties.values()):
            statuses.add("trace")
    assert {"violated", "holds", "trace", "unknown"} <= statuses


def test_bounds_cut_every_worker_count_at_the_same_state() -> None:
    model = model_from_dict({"spec": "fifo", "constants": {"peers": 3, "sends": 1, "destinations": "unicast"}})
    for cut in (1, 2, 7, 300, 301, 1000):
        runs = [check_model(model, Options(progress=False, workers=w, symmetry=False, por=False, max_states=cut))
                for w in (1, 2, 3)]
        assert summary(runs[1]) == summary(runs[0]) == summary(runs[2]), cut
    for depth in (0, 1, 4):
        runs = [check_model(model, Options(progress=False, workers=w, max_depth=depth)) for w in (1, 3)]
        assert summary(runs[1]) == summary(runs[0]), depth


def test_the_tie_break_picks_the_parent_one_process_picks() -> None:
    """In a grid every inner state has two parents: the trace to the far corner (and the
    state numbers) must be the one a single process finds, whichever worker owns what."""
    spec: Spec = Grid(n=6)
    props = [p for p in spec.properties() if p.name == "not_corner"]
    one = search(spec, props, workers=1)
    assert one.decisions["not_corner"].index == one.distinct_states - 1
    for workers in (2, 3, 4):
        many = search(spec, props, workers=workers)
        assert isinstance(many.store, ShardedPaths)
        d1, dn = one.decisions["not_corner"], many.decisions["not_corner"]
        assert (dn.index, dn.explanation) == (d1.index, d1.explanation)
        assert many.store.path(dn.index) == one.store.path(d1.index)
        assert (many.distinct_states, many.transitions, many.depth) == (one.distinct_states, one.transitions, one.depth)


def test_fingerprints_are_spread_over_the_workers() -> None:
    fps = np.random.default_rng(7).integers(0, 2**63, size=30_000, dtype=np.uint64) * np.uint64(2)
    for workers in (2, 3, 16):
        share = np.bincount(owner_of(fps, workers), minlength=workers)
        assert len(share) == workers
        assert share.min() > 0.9 * len(fps) / workers


@pytest.mark.parametrize(("first", "then"), [(2, 3), (3, 1), (1, 2)])
def test_a_checkpoint_resumes_with_another_worker_count(tmp_path: Path, first: int, then: int) -> None:
    """A run stopped at a depth bound leaves the checkpoint of its last level; resumed with
    another worker count (and no bound) it ends exactly as an uninterrupted run, with
    the same traces (their first steps come from links restored from the checkpoint)."""
    model = load_model(ROOT / "models" / "bus1-mutant-tiebreak-by-arrival.toml")
    whole = check_model(model, Options(progress=False, workers=1, por=False))
    assert any(p.status == "violated" and p.trace for p in whole.properties.values())
    ckpt = str(tmp_path / "ckpt")
    part = check_model(model, Options(progress=False, workers=first, por=False, max_depth=whole.stats.depth - 3,
                                      checkpoint=ckpt, checkpoint_every=0))
    assert part.stats.bound == "max_depth"
    resumed = check_model(model, Options(progress=False, workers=then, por=False, checkpoint=ckpt, resume=True))
    assert summary(resumed) == summary(whole)


def test_timings_are_filled_per_level() -> None:
    """Every level has a time split; its phases are not negative and together stay within
    the run's time; the levels' states add up to the run's counts."""
    model = load_model(ROOT / "models" / "bus1-2.toml")
    for workers in (1, 2):
        result = check_model(model, Options(progress=False, workers=workers, por=False, stop_when_decided=False))
        levels = result.stats.levels
        assert [lv.depth for lv in levels] == list(range(len(levels)))
        assert len(levels) in (result.stats.depth, result.stats.depth - 1)
        for a, b in zip(levels, levels[1:]):
            assert b.frontier == a.new_states
        assert levels[0].frontier + sum(lv.new_states for lv in levels) == result.stats.distinct_states
        phases = [(lv.expand_s, lv.exchange_s, lv.dedup_s, lv.check_s, lv.other_s) for lv in levels]
        assert all(t >= 0 for p in phases for t in p)
        assert sum(map(sum, phases)) <= result.stats.seconds + 1e-3
        assert sum(p[0] for p in phases) > 0 and sum(p[2] for p in phases) > 0
        if workers > 1:
            assert sum(p[1] for p in phases) > 0  # successors crossed between workers
        else:
            assert sum(p[1] for p in phases) == 0


# -- the cycle proviso of partial-order reduction ------------------------------------------


def outcome_summary(outcome) -> tuple:
    """What must not depend on the worker count: counts, bound, coverage, and each
    decided property's state number, explanation and path (check_model would replace a
    reduced search's traces by an unreduced search's)."""
    return (outcome.distinct_states, outcome.transitions, outcome.depth, outcome.bound, outcome.complete,
            outcome.fired, {n: (d.index, d.explanation, outcome.store.path(d.index))
                            for n, d in outcome.decisions.items()})


def no_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make sure the merging loop of ordercheck.checker.engine.levels never runs with workers."""
    original = bfs.search_levels

    def one_process(*args, **kw):
        assert kw["workers"] == 1
        return original(*args, **kw)

    monkeypatch.setattr(bfs, "search_levels", one_process)


# Models whose full expansions under the proviso chain over several rounds (skeen-2,
# lamport-2-duplicating, synchronous-4: up to 3 or 4), where a reduced successor was
# visited at an earlier level (bss-3-two-sends), a violation (skeen-2's `synchronous`), a `max_states` cut in the middle of a level, a depth bound (where
# the rule looks within a chunk only), and bus1-2, which needs the proviso but whose
# expansions are never reduced.
PROVISO_CASES = [
    ("skeen-2.toml", Bounds(), True),
    ("skeen-2.toml", Bounds(), False),
    ("lamport-2-duplicating.toml", Bounds(), False),
    ("bss-3-two-sends.toml", Bounds(), True),  # reduced successors visited at earlier levels (safety_only)
    ("synchronous-4.toml", Bounds(max_states=1000), False),
    ("skeen-mutant-first.toml", Bounds(max_states=1300), False),
    ("bus1-2.toml", Bounds(), True),
]


@pytest.mark.parametrize(("name", "bounds", "stop"), PROVISO_CASES)
def test_the_cycle_proviso_in_the_shards_gives_the_results_of_one_process(
        monkeypatch, name: str, bounds: Bounds, stop: bool) -> None:
    """Shard workers decide the cycle proviso in rounds (ordercheck.checker.engine.shards): the
    states, transitions, depth, bound, coverage, decisions and paths are those of one
    process, which decides it parent by parent."""
    no_pool(monkeypatch)
    deferring = name == "bss-3-two-sends.toml"  # its arrivals deferred too: no `eventually` property
    one = proviso_search(name, 1, bounds, stop, safety_only=deferring)
    for workers in (2, 3):
        many = proviso_search(name, workers, bounds, stop, safety_only=deferring)
        assert isinstance(many.store, ShardedPaths) and many.store.rounds
        assert outcome_summary(many) == outcome_summary(one), workers
    if bounds.max_states is not None:  # the cut is inside a level
        whole = proviso_search(name, 1, stop=False)
        ends = np.cumsum([whole.levels[0].frontier] + [lv.new_states for lv in whole.levels])
        assert one.bound == "max_states" and bounds.max_states not in ends
    if name == "skeen-2.toml" and stop:
        assert one.decisions["synchronous"].explanation  # a violation, with its path compared


def test_the_cycle_proviso_takes_rounds_that_chain() -> None:
    """In skeen-2 a parent expanded fully in one round gives successors that make
    another parent need a full expansion in the next: levels of three rounds. The
    full expansions matter: without them (every parent as the reducer left it) the
    search finds fewer states and transitions."""
    one = proviso_search("skeen-2.toml", 1, stop=False)
    two = proviso_search("skeen-2.toml", 2, stop=False)
    assert outcome_summary(two) == outcome_summary(one)
    assert max(two.store.rounds) >= 3 and min(two.store.rounds) == 1
    # The rule itself (rules.must_expand_fully, which both apply), pinned: the figures
    # one process reached when it still decided parent by parent.
    assert (one.distinct_states, one.transitions, one.depth) == (8094, 15254, 21)
    assert len(two.store.rounds) == len(two.levels)
    assert sum(one.fired.values()) == one.transitions  # each successor counted once


@pytest.mark.parametrize("name", ["synchronous-4.toml", "skeen-mutant-first.toml"])
def test_the_cycle_proviso_with_small_chunks(monkeypatch, name: str) -> None:
    """Chunks of 16 states: one process merges many chunks per level, and `max_states`
    cuts come in the middle of chunks."""
    no_pool(monkeypatch)
    monkeypatch.setattr(levels, "CHUNK", 16)
    monkeypatch.setattr(sharded, "CHUNK", 16)
    cases = [Bounds(max_states=n) for n in (101, 301, 555, 1001)]
    for bounds in cases:
        one = proviso_search(name, 1, bounds, stop=False)
        assert outcome_summary(proviso_search(name, 2, bounds, stop=False)) == outcome_summary(one), bounds


@pytest.mark.parametrize(("first", "then"), [(2, 3), (3, 1), (1, 2)])
def test_a_proviso_checkpoint_resumes_with_another_worker_count(tmp_path: Path, first: int, then: int) -> None:
    """A reduced search with the cycle proviso, cut by a state bound with checkpoints,
    resumes with another worker count to the results of an uncut run."""
    whole = proviso_search("skeen-2.toml", 1, stop=False)
    ckpt = tmp_path / "ckpt"
    part = proviso_search("skeen-2.toml", first, Bounds(max_states=whole.distinct_states * 2 // 3), stop=False,
                          checkpoint=ckpt, checkpoint_every=0)
    assert part.bound == "max_states"
    resumed = proviso_search("skeen-2.toml", then, stop=False, checkpoint=ckpt, resume=True)
    assert outcome_summary(resumed) == outcome_summary(whole)


@pytest.mark.parametrize("then", [1, 3])
def test_a_stop_between_proviso_rounds_gives_the_level_up(monkeypatch, tmp_path: Path, then: int) -> None:
    """A stop while the workers wait between two rounds of the proviso (here the memory
    budget's, when the first round has named parents to expand fully) gives the level
    up in every worker and checkpoints its start; the run resumes, with another worker
    count, to the results of an uninterrupted one."""
    whole = proviso_search("skeen-2.toml", 1, stop=False)
    original = shards_module.Shards.gather
    stopped = []

    def gather(self, kind, wait_hook=None, timeout=shards_module.ANSWER_SECONDS):
        got = original(self, kind, wait_hook, timeout)
        if kind is Round and not stopped and any(len(msg.parents) for msg in got):
            stopped.append(len(got))
            raise MemoryBoundReached(2, 1)
        return got

    monkeypatch.setattr(shards_module.Shards, "gather", gather)
    ckpt = tmp_path / "ckpt"
    part = proviso_search("skeen-2.toml", 2, stop=False, checkpoint=ckpt, checkpoint_every=1000)
    assert stopped and part.bound == "memory" and part.distinct_states < whole.distinct_states
    monkeypatch.setattr(shards_module.Shards, "gather", original)
    resumed = proviso_search("skeen-2.toml", then, stop=False, checkpoint=ckpt, resume=True)
    assert outcome_summary(resumed) == outcome_summary(whole)


def test_a_spill_directory_keeps_the_shards(tmp_path: Path) -> None:
    """With a spill directory or without, with the cycle proviso or without, workers
    are shard workers."""
    one = proviso_search("skeen-2.toml", 1)
    for spill_dir in (None, tmp_path / "skeen"):
        two = proviso_search("skeen-2.toml", 2, spill_dir=spill_dir)
        assert isinstance(two.store, ShardedPaths)
        assert outcome_summary(two) == outcome_summary(one)
    fifo = model_from_dict({"spec": "fifo", "constants": {"peers": 3, "sends": 1, "destinations": "unicast"}})
    spilled = search(fifo.spec, fifo.properties, reductions=Reductions(), workers=2, spill_dir=tmp_path / "fifo")
    assert isinstance(spilled.store, ShardedPaths) and spilled.store.rounds == []
    assert spilled.distinct_states == search(fifo.spec, fifo.properties, reductions=Reductions()).distinct_states


# -- shares of a level spilled to files (``spill_dir``) -------------------------------------


def spill_log(monkeypatch: pytest.MonkeyPatch, log: Path) -> Callable[[], list[tuple[int, str, int]]]:
    """Record every chunk a worker adds to its share of a level (the forked workers
    inherit the patch): ``(process id, the share's file or "", states)``. Returns a
    reader of the records. Asserts that a worker never has more than two files (the
    level it searches and the next): a level's file goes when the level is done."""
    original = RankedFrontier.append

    def append(self, chunk) -> None:
        original(self, chunk)
        held = len(list(self.spill_dir.glob(f"{self.prefix}*"))) if self.spill_dir is not None else 0
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()} {self.path or ''} {self.size(chunk)} {held}\n")

    monkeypatch.setattr(RankedFrontier, "append", append)

    def read() -> list[tuple[int, str, int]]:
        if not log.exists():
            return []
        rows = [line.split(" ") for line in log.read_text().splitlines()]
        assert all(int(held) <= 2 for *_row, held in rows), max(int(r[3]) for r in rows)
        return [(int(pid), path, int(n)) for pid, path, n, _held in rows]

    return read


SPILL_CASES = [
    ("bus1-impl-mutant-no-staging.toml", {}),  # a violation with a trace
    ("bus1-mutant-tiebreak-by-arrival.toml", {"por": False}),
    ("fifo-3.toml", {}),  # reduced
    ("fifo-4.toml", {"max_states": 700}),  # stops in the middle of a level
    ("fifo-4.toml", {"por": False, "stop_when_decided": False}),
]


@pytest.mark.parametrize(("name", "opts"), SPILL_CASES)
def test_spilled_shares_give_the_results_of_one_process(monkeypatch, tmp_path: Path, name: str, opts: dict) -> None:
    """With a spill directory every worker keeps its whole share of each level in files
    of its own there (every state of the search passes through one), and the results
    are those of one process; no file is left behind."""
    model = load_model(ROOT / "models" / name)
    one = check_model(model, Options(progress=False, workers=1, **opts))
    spill = tmp_path / "spill"
    for workers in (2, 3):
        read = spill_log(monkeypatch, tmp_path / f"log-{workers}")
        many = check_model(model, Options(progress=False, workers=workers, spill_dir=str(spill), **opts))
        assert summary(many) == summary(one), workers
        rows = read()
        assert rows and all(Path(path).parent == spill for _pid, path, _n in rows)  # never kept in memory
        # A file's name says the search and the worker it is of: one process each.
        names = [re.fullmatch(r"share-(\d+-[0-9a-f]+)-(w\d+)-\w+\.bin", Path(path).name) for _p, path, _n in rows]
        named = {(pid, m[1], m[2]) for (pid, _path, _n), m in zip(rows, names)}
        assert len(named) == len({pid for pid, _s, _w in named}) == len({(s, w) for _pid, s, w in named})
        # Each state the search stored entered one worker's share once (a shipped one
        # where it went); a search again for shortest traces (reduced runs) follows.
        first = names[0][1]
        assert sum(n for (_pid, _path, n), m in zip(rows, names) if m[1] == first) == many.stats.distinct_states
        assert list(spill.iterdir()) == []
    if name == "bus1-impl-mutant-no-staging.toml":
        assert any(p.status == "violated" and p.trace for p in one.properties.values())


def test_shares_spill_past_the_threshold_into_an_own_directory(monkeypatch, tmp_path: Path) -> None:
    """Without a spill directory the workers spill as one process does: a share past
    its part of SPILL_AFTER goes to a file in a temporary directory of the search's
    own, which is gone at the end."""
    model = model_from_dict({"spec": "fifo", "constants": {"peers": 3, "sends": 1, "destinations": "subsets"}})
    opts = dict(progress=False, symmetry=False, por=False, stop_when_decided=False)
    one = check_model(model, Options(**opts))
    monkeypatch.setattr(loop, "SPILL_AFTER", 50)
    read = spill_log(monkeypatch, tmp_path / "log")
    two = check_model(model, Options(**opts, workers=2))
    assert summary(two) == summary(one)
    rows = read()
    spilled = {path for _pid, path, _n in rows if path}
    assert spilled and any(not path for _pid, path, _n in rows)  # some shares past 25 states, others not
    dirs = {Path(path).parent for path in spilled}
    assert len(dirs) == 1 and not next(iter(dirs)).exists()  # the own directory is removed


@pytest.mark.parametrize(("first", "then"), [(2, 3), (3, 1), (1, 2)])
def test_a_spilled_checkpoint_resumes_with_another_worker_count(monkeypatch, tmp_path: Path, first: int,
                                                                then: int) -> None:
    """A run with a spill directory cut at a depth bound resumes, with another worker
    count and the spill directory, to the results of an uncut run; the workers of the
    resumed run spill their shares, and the spill directory is left empty each time."""
    model = load_model(ROOT / "models" / "bus1-mutant-tiebreak-by-arrival.toml")
    whole = check_model(model, Options(progress=False, workers=1, por=False))
    ckpt, spill = str(tmp_path / "ckpt"), tmp_path / "spill"
    opts = dict(progress=False, por=False, checkpoint=ckpt, spill_dir=str(spill))
    part = check_model(model, Options(**opts, workers=first, max_depth=whole.stats.depth - 3, checkpoint_every=0))
    assert part.stats.bound == "max_depth"
    assert list(spill.iterdir()) == []
    read = spill_log(monkeypatch, tmp_path / "log")
    resumed = check_model(model, Options(**opts, workers=then, resume=True))
    assert summary(resumed) == summary(whole)
    assert list(spill.iterdir()) == []
    rows = read()
    if then > 1:  # the checkpoint's level handed out, then every new state
        assert rows and all(Path(path).parent == spill for _pid, path, _n in rows)
        restored = part.stats.levels[-1].frontier
        assert sum(n for _pid, _path, n in rows) == restored + whole.stats.distinct_states - part.stats.distinct_states
    else:
        assert rows == []  # one process: no shares


def test_a_time_limit_leaves_the_spill_directory_empty(monkeypatch, tmp_path: Path) -> None:
    """Stopped by its time limit (inside a level, which the workers give up, or at its
    end), a spilled search leaves no file in the spill directory."""
    model = load_model(ROOT / "benchmarks" / "models" / "bus1-3x2.toml")  # millions of states
    spill = tmp_path / "spill"
    read = spill_log(monkeypatch, tmp_path / "log")
    result = check_model(model, Options(progress=False, workers=2, time_limit=1.0, spill_dir=str(spill)))
    assert result.stats.bound == "time_limit" and result.stats.distinct_states > 0
    assert read() and all(Path(path).parent == spill for _pid, path, _n in read())
    assert spill.is_dir() and list(spill.iterdir()) == []


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


@pytest.mark.parametrize("workers", [2, 3])
def test_a_worker_failure_is_raised_here(workers: int) -> None:
    spec: Spec = Fragile(n=4)
    with pytest.raises(ValueError, match=r"no successors for \(2, 2\)"):
        search(spec, spec.properties(), Bounds(), workers=workers, stop_when_decided=False)
    spec = Awkward(n=4)
    with pytest.raises(RuntimeError, match="worker failed: Odd"):
        search(spec, spec.properties(), Bounds(), workers=workers, stop_when_decided=False)
    spec = Wordy(n=4)
    with pytest.raises(SpecError, match="str"):
        search(spec, spec.properties(), Bounds(), workers=workers, stop_when_decided=False)


def test_balance_moves_only_the_excess() -> None:
    ship, expect = balance(np.array([1000, 0]), 10)
    assert ship == [[(1, 500)], []] and expect == [0, 500]
    ship, expect = balance(np.array([700, 200, 100]), 10)
    assert ship == [[(1, 133), (2, 233)], [], []] and expect == [0, 133, 233]  # shares 334, 333, 333
    # Within the slack over the mean, or within a 32nd of the mean, nothing moves.
    assert balance(np.array([510, 500]), 10) == ([[], []], [0, 0])
    assert balance(np.array([540, 500]), 10) == ([[(1, 20)], []], [0, 20])
    assert balance(np.array([10_400, 10_000]), 10) == ([[], []], [0, 0])
    assert balance(np.array([10_800, 10_000]), 10) == ([[(1, 400)], []], [0, 400])
    assert balance(np.array([100, 0, 0, 0])) == ([[(1, 25), (2, 25), (3, 25)], [], [], []], [0, 25, 25, 25])
    assert balance(np.array([130, 100, 100, 100])) == ([[], [], [], []], [0, 0, 0, 0])  # 22.5 over: within 64


def test_verbose_check_prints_the_time_per_level_and_json_keeps_it(tmp_path: Path) -> None:
    out = invoke("check", ROOT / "models" / "fifo-3.toml", "--quiet", "--workers", "2", "-v",
                 "--json", tmp_path / "out.json")
    lines = out.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if "time per level (seconds):" in line)
    assert lines[head + 1].split() == ["depth", "frontier", "new", "expand", "exchange", "dedup", "check", "other",
                                       "busiest"]
    record = json.loads((tmp_path / "out.json").read_text())
    levels = record["stats"]["levels"]
    assert levels and set(levels[0]) == {"depth", "frontier", "new_states", "expand_s", "exchange_s", "dedup_s",
                                         "check_s", "other_s", "busiest_s"}
    # the busiest worker's work is at least the mean over the workers
    assert all(lv["busiest_s"] >= lv["expand_s"] + lv["dedup_s"] + lv["check_s"] - 1e-9 for lv in levels)
    assert all(lv["busiest_s"] > 0 for lv in levels if lv["frontier"])
    one = invoke("check", ROOT / "models" / "fifo-3.toml", "--quiet", "-v", "--json", tmp_path / "one.json")
    assert next(line for line in one.stdout.splitlines() if line.lstrip().startswith("depth")).split()[-1] == "other"
    assert all(lv["busiest_s"] == 0 for lv in json.loads((tmp_path / "one.json").read_text())["stats"]["levels"])
    rows = lines[head + 2 : head + 2 + len(levels)]
    assert [int(r.split()[0]) for r in rows] == [lv["depth"] for lv in levels]
    assert lines[head + 2 + len(levels)].split()[0] == "all"


def test_the_one_process_loop_refuses_workers_rather_than_ignoring_them():
    """``search`` gives every run with workers to the shard workers; the one-process
    loop called directly with workers says where they belong instead of running alone."""
    with pytest.raises(ValueError, match="search_sharded"):
        levels.search_levels(Grid(), [], NO_BOUNDS,
                             progress=bfs.Progress(None), stop_when_decided=True, reductions=Reductions(), workers=2)


@pytest.mark.timeout(60)
def test_a_worker_that_does_not_answer_is_killed_and_the_wait_ends() -> None:
    """An abort waits for every worker's answer only so long: a worker that does not
    answer (stopped here by SIGSTOP) is killed and the wait ends with WorkerLost (the
    engine error, exit code 4), never a hang."""
    fifo = model_from_dict({"spec": "fifo", "constants": {"peers": 2, "sends": 1, "destinations": "unicast"}})
    shards = shards_module.Shards(2, Expander(fifo.spec, Reductions()), fifo.properties)
    try:
        shards.abort(timeout=5)  # both answer
        os.kill(shards.procs[1].pid, signal.SIGSTOP)
        began = time.monotonic()
        with pytest.raises(shards_module.WorkerLost, match="worker process 1 .*did not stop within 0.5 s"):
            shards.abort(timeout=0.5)
        assert time.monotonic() - began < 10
        assert not shards.procs[1].is_alive()
    finally:
        shards.close()


@pytest.mark.timeout(60)
def test_the_worker_that_died_is_named_not_the_peer_that_left_after_it() -> None:
    """A worker whose peer was killed exits cleanly (status 0) when its next write to
    the peer fails, and its end of file can reach the main process first: the error
    names the killed worker and its signal, not the one that left after it."""
    fifo = model_from_dict({"spec": "fifo", "constants": {"peers": 2, "sends": 1, "destinations": "unicast"}})
    shards = shards_module.Shards(2, Expander(fifo.spec, Reductions()), fifo.properties)
    try:
        shards.send(0, Stop())  # worker 0 ends cleanly: its end of file is the first news
        shards.procs[0].join(10)
        assert shards.procs[0].exitcode == 0
        os.kill(shards.procs[1].pid, signal.SIGKILL)
        with pytest.raises(shards_module.WorkerLost, match=r"worker process 1 .*\(killed by SIGKILL\)"):
            shards.abort(timeout=5)
    finally:
        shards.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_the_cycle_proviso_is_refused_under_a_depth_bound(workers: int) -> None:
    """No engine path runs the proviso at a depth bound (the command line searches
    unreduced there): a search asked for it is refused, not run half-reduced."""
    with pytest.raises(ValueError, match="depth bound"):
        proviso_search("skeen-2.toml", workers, Bounds(max_depth=5))


@pytest.mark.parametrize("workers", [1, 2])
def test_partial_order_reduction_is_refused_under_a_depth_bound_without_the_proviso(workers: int) -> None:
    """skeen-2 declares acyclic, so its reduced search has no proviso; under a depth bound a
    reduced path can still be longer than the shortest one and leave a state within the
    bound unseen, so ``search`` refuses the reduction there too (the command line searches
    unreduced under a depth bound)."""
    model = load_model(ROOT / "models" / "skeen-2.toml")
    reductions, _notes = plan(model.spec, model.properties, model.symmetry, model.por)
    assert reductions.por and not reductions.proviso
    with pytest.raises(ValueError, match="depth bound"):
        search(model.spec, model.properties, Bounds(max_depth=5), reductions=reductions, workers=workers)


def test_the_cycle_proviso_expands_fully_a_parent_whose_reduced_successor_was_visited_before() -> None:
    """bss-3-two-sends (its arrivals deferred: no `eventually` property): reduced
    successors visited at an earlier level make their parents expand fully
    (rules.must_expand_fully's ``visited``); pinned to the figures one process reached
    when it still decided parent by parent, for one and two workers, and more than the
    same search without the proviso."""
    for workers in (1, 2):
        out = proviso_search("bss-3-two-sends.toml", workers, stop=False, safety_only=True)
        assert (out.distinct_states, out.transitions, out.depth) == (339, 739, 11), workers
    model = load_model(ROOT / "models" / "bss-3-two-sends.toml")
    props = [p for p in model.properties if p.kind != "eventually"]
    reductions, _notes = plan(model.spec, props, model.symmetry, model.por)
    assert reductions.defer and not reductions.proviso
    assert search(model.spec, props, reductions=reductions, stop_when_decided=False).distinct_states == 177


def test_a_reply_that_comes_before_the_others_replies_is_kept_for_the_next_gather() -> None:
    """The main process does not wait for a commit's answers: a worker's next message
    (the next level's report) can come before another worker has answered the commit.
    The gather keeps it for the next gather instead of taking it for a wrong reply."""
    fifo = model_from_dict({"spec": "fifo", "constants": {"peers": 2, "sends": 1, "destinations": "unicast"}})
    shards = shards_module.Shards(2, Expander(fifo.spec, Reductions()), fifo.properties)
    try:
        shards.send(0, Peak())
        shards.send(0, Peak())  # worker 0's second answer comes before worker 1's first
        deadline = time.monotonic() + 10
        while shards.inbox.qsize() < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        shards.send(1, Peak())
        assert [type(r) for r in shards.gather(PeakReport)] == [PeakReport, PeakReport]
        assert len(shards.early) == 1 and shards.early[0][0] == 0
        shards.send(1, Peak())
        assert [type(r) for r in shards.gather(PeakReport)] == [PeakReport, PeakReport]
        assert not shards.early
    finally:
        shards.close()


@pytest.mark.parametrize("workers", [2, 3])
def test_a_level_that_comes_while_a_commit_waits_for_shipped_states_waits_for_it(monkeypatch, workers: int) -> None:
    """A worker whose commit waits for states shipped to it can already be sent the next
    level (the main process does not wait for commits): it holds the command until the
    commit is done. Shipping is slowed here, and every imbalance shipped, so that the
    next level always comes first; the results stay those of one process."""
    import marshal as real

    class SlowShip:
        loads = staticmethod(real.loads)

        @staticmethod
        def dumps(value, version=4):
            time.sleep(0.05)
            return real.dumps(value, version)

    shipped = []

    def every_imbalance(held, slack=0):
        ship, expect = balance(held, 0)
        shipped.append(sum(expect))
        return ship, expect

    monkeypatch.setattr(shards_module, "marshal", SlowShip)
    monkeypatch.setattr(sharded, "balance", every_imbalance)
    model = load_model(ROOT / "models" / "fifo-3.toml")
    one = check_model(model, Options(progress=False, workers=1, por=False, symmetry=False))
    assert summary(check_model(model, Options(progress=False, workers=workers, por=False, symmetry=False))) \
        == summary(one)
    assert sum(1 for n in shipped if n) >= 3  # several levels shipped states


def test_the_new_keys_are_ranked_as_one_binary_search_would() -> None:
    """sharded.ranked merges the workers' ascending keys and gives each worker the ranks
    of its keys in the merge: those a binary search of each key finds."""
    rng = np.random.default_rng(7)
    for workers, n in ((1, 0), (2, 10), (3, 1000), (16, 20_000)):
        keys = np.sort(rng.choice(1 << 40, n, replace=False)).astype(np.int64)
        owner = rng.integers(0, workers, n)
        keys_w = [keys[owner == w] for w in range(workers)]
        merged, ranks = sharded.ranked(keys_w)
        assert (merged == keys).all()
        for k, r in zip(keys_w, ranks):
            assert r.dtype == np.int32 and (r == np.searchsorted(keys, k)).all()


def test_more_workers_than_cores_is_warned_about(monkeypatch) -> None:
    """--workers above the cores this process may run on gets a warning (the search is
    slower: the workers wait for the slowest at every level); up to the cores, none."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    model = ROOT / "models" / "fifo-3.toml"
    over = invoke("check", model, "--quiet", "--workers", "3")
    assert over.returncode == 0
    assert "warning: --workers 3 is more than the 2 cores available" in over.stderr
    assert "slow the search down" in over.stderr
    fits = invoke("check", model, "--quiet", "--workers", "2")
    assert fits.returncode == 0 and "cores available" not in fits.stderr


def test_a_message_that_could_not_be_read_between_gathers_raises_its_error() -> None:
    """The main process's reader can fail on a worker's message while no gather waits
    (a commit's answer, which is read later): the next gather raises that failure (a
    MemoryError stops the search at its memory bound, exit code 3), as it would have
    inside a gather, not a lost worker (exit code 4); the one after it, a lost worker."""
    fifo = model_from_dict({"spec": "fifo", "constants": {"peers": 2, "sends": 1, "destinations": "unicast"}})
    shards = shards_module.Shards(2, Expander(fifo.spec, Reductions()), fifo.properties)
    try:
        shards.inbox.put((1, Failed(MemoryError())))  # as the reader queues it
        shards.unread.add(1)
        with pytest.raises(MemoryError):
            shards.gather(PeakReport)
        with pytest.raises(shards_module.WorkerLost, match="could not be read"):
            shards.gather(PeakReport)
    finally:
        shards.close()

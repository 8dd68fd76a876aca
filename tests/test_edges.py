"""The search's edge log decides an ``acyclic`` declaration on the graph it explored
(``ordercheck.checker.engine.edges``), in one process and with shard workers (whose
logs are gathered into one).

* ``has_cycle`` agrees with networkx on random directed graphs (self-loops, joins of
  runs of different lengths, long chains), and refuses an edge to a state not logged;
  logs joined from parts holding their states in any order decide as one, and states
  numbered twice or not at all decide nothing.
* The shard workers' gathered log is the graph one process logs (same states by
  number, same edges), reduced, unreduced and after the cycle proviso's full
  expansions; it is gathered only where the check of the declaration reads it.
* A search whose edges include one that can close a cycle but close none is confirmed
  without the depth-first cycle search, with one process or workers; a wrong
  declaration is still refused, naming its cycle; where the log cannot decide
  (dropped by the memory budget, a resumed search) the cycle search runs as before.
"""

from __future__ import annotations

import random
import re
from dataclasses import replace
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.engine import checkpoints, declarations
from ordercheck.checker.engine import messages as msg
from ordercheck.checker.engine import shards as shards_module
from ordercheck.checker.engine.bfs import Bounds, search
from ordercheck.checker.engine.budget import MemoryBoundReached
from ordercheck.checker.engine.edges import EdgeLog, by_number, has_cycle, log_room
from ordercheck.checker.engine.reduce import plan
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from tests.faults_helpers import checkpoint_of, reseal
from tests.test_declarations import Ring, toy, verdicts
from tests.toyspecs import Shortcut, SpinAlarm

ROOT = Path(__file__).resolve().parent.parent
QUIET = Options(progress=False)


def logged(n: int, edges: list[tuple[int, int]], seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A graph of ``n`` states as the log holds it: distinct random fingerprints by
    state number, edges as (source number, target fingerprint)."""
    rng = np.random.default_rng(seed)
    fps = np.unique(rng.integers(1, 2**63, size=3 * n + 8, dtype=np.uint64))[:n]
    rng.shuffle(fps)
    sources = np.asarray([a for a, _b in edges], dtype=np.int32)
    targets = fps[np.asarray([b for _a, b in edges], dtype=np.int64)] if edges else np.zeros(0, dtype=np.uint64)
    return fps, sources, targets


def test_has_cycle_agrees_with_networkx_on_random_graphs():
    rng = random.Random(7)
    cyclic = acyclic = 0
    for case in range(600):
        n = rng.randint(1, 40)
        if case % 2:  # mostly forward edges, as a breadth-first search numbers states, a few back
            edges = [(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < 3 / n]
            edges += [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.choice([0, 0, 1, 2]))]
        else:
            edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 3 * n))]
        graph = nx.DiGraph()
        graph.add_nodes_from(range(n))
        graph.add_edges_from(edges)
        expected = not nx.is_directed_acyclic_graph(graph)
        assert has_cycle(*logged(n, edges, case)) is expected, (n, edges)
        cyclic += expected
        acyclic += not expected
    assert cyclic > 150 and acyclic > 150  # both answers were asked for often


def test_has_cycle_on_long_chains_and_repeated_edges():
    n = 5000
    chain = [(i, i + 1) for i in range(n - 1)]
    assert has_cycle(*logged(n, chain + chain[::7], 1)) is False  # an edge taken twice is no cycle
    assert has_cycle(*logged(n, [*chain, (n - 1, 0)], 2)) is True
    assert has_cycle(*logged(n, [*chain, (n // 2, n // 2)], 3)) is True  # a step back to its own state
    assert has_cycle(*logged(3, [], 4)) is False


def test_has_cycle_refuses_an_edge_to_a_state_not_logged():
    fps, sources, targets = logged(4, [(0, 1), (1, 2)], 5)
    stranger = np.asarray([fps.max() + 1], dtype=np.uint64)
    assert has_cycle(fps, np.append(sources, np.int32(2)), np.append(targets, stranger)) is None


def test_the_log_is_dropped_where_the_budget_refuses_it():
    def refuse(extra: int) -> None:
        if extra > 1 << 16:
            raise MemoryBoundReached(extra, 1 << 16)

    log = EdgeLog(refuse)
    log.add_states(np.arange(1, 11, dtype=np.uint64))
    log.add_edges(np.arange(9, dtype=np.int32), np.arange(2, 11, dtype=np.uint64))
    assert log.kept and log.acyclic(10) is True
    assert log.acyclic(11) is None  # not the store's number of states
    log.add_edges(np.zeros(100_000, dtype=np.int32), np.full(100_000, 2, dtype=np.uint64))
    assert not log.kept and log.acyclic(10) is None and log.nbytes() == 0


def test_joined_parts_decide_as_one_log():
    """Parts holding their states (number, fingerprint) in any order, and any share of
    the edges, decide as the log of the whole graph."""
    rng = random.Random(11)
    for case in range(200):
        n = rng.randint(1, 30)
        edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 2 * n))]
        fps, sources, targets = logged(n, edges, case)
        numbers = np.arange(n, dtype=np.int64)
        states_of = np.asarray([rng.randrange(3) for _ in range(n)])
        edges_of = np.asarray([rng.randrange(3) for _ in range(len(edges))], dtype=np.int64)
        parts = []
        for w in range(3):
            mine = np.flatnonzero(states_of == w)
            rng.shuffle(mine)
            took = edges_of == w
            parts.append((numbers[mine], fps[mine], sources[took], targets[took]))
        expected = has_cycle(fps, sources, targets)
        assert EdgeLog.joined(parts).acyclic(n) is (not expected)
        assert EdgeLog.joined(parts).acyclic(n + 1) is None


def test_states_numbered_twice_or_not_at_all_decide_nothing():
    fps = np.asarray([5, 7, 9], dtype=np.uint64)
    assert list(by_number(np.asarray([2, 0, 1]), fps)) == [7, 9, 5]
    assert by_number(np.asarray([0, 0, 1]), fps) is None  # state 2 missing, state 0 twice
    assert by_number(np.asarray([0, 1, 3]), fps) is None
    assert by_number(np.asarray([-1, 0, 1]), fps) is None
    edges = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint64))
    assert EdgeLog.joined([(np.asarray([0, 0, 1]), fps, *edges)]).acyclic(3) is None


def graph_logged(log: EdgeLog) -> tuple[list[int], list[tuple[int, int]]]:
    """A log's states' fingerprints by number and its edges as (source, target) numbers,
    sorted (each edge as often as it was logged)."""
    nodes = log.nodes.view() if log.numbers is None else by_number(log.numbers.view(), log.nodes.view())
    assert nodes is not None
    order = np.argsort(nodes)
    targets = order[np.searchsorted(nodes[order], log.targets.view())]
    return nodes.tolist(), sorted(zip(log.sources.view().tolist(), targets.tolist()))


def proviso_spin():
    """SpinAlarm (a wrong declaration: a tick returns to its own state) searched with
    the cycle proviso, which expands the tick's state fully."""
    model = toy(SpinAlarm)
    reductions, _notes = plan(model.spec, model.properties, symmetry=False, por=True)
    return model, {"reductions": replace(reductions, proviso=True)}


def reduced_bss():
    model = load_model(ROOT / "models" / "bss-2.toml")
    reductions, _notes = plan(model.spec, model.properties, model.symmetry, model.por)
    return model, {"reductions": reductions}


def unreduced_bss():
    model = load_model(ROOT / "models" / "bss-2.toml")
    reductions, _notes = plan(model.spec, model.properties, symmetry=False, por=False)
    return model, {"reductions": reductions}


def shortcut():
    model = toy(Shortcut)
    return model, {"reductions": plan(model.spec, model.properties, symmetry=False, por=False)[0]}


@pytest.mark.parametrize("case", [shortcut, reduced_bss, unreduced_bss, proviso_spin])
def test_the_workers_gather_the_graph_one_process_logs(case):
    model, kw = case()
    one, two = (search(model.spec, model.properties, workers=w, stop_when_decided=False, **kw) for w in (1, 2))
    assert one.maybe_cyclic and one.complete and two.maybe_cyclic and two.complete
    assert (two.distinct_states, two.transitions) == (one.distinct_states, one.transitions)
    assert isinstance(two.edges, EdgeLog) and two.edges.numbers is not None  # gathered from the workers
    assert graph_logged(two.edges) == graph_logged(one.edges)
    assert two.edges.acyclic(two.distinct_states) is one.edges.acyclic(one.distinct_states)
    if case is proviso_spin:
        assert max(two.store.rounds) > 1  # the proviso expanded a parent fully: its edges are logged too


def log_requests(monkeypatch) -> list[int]:
    """Count the requests for the workers' edge logs."""
    asked: list[int] = []
    original = shards_module.Shards.broadcast

    def broadcast(self, message):
        if type(message) is msg.Log:
            asked.append(1)
        return original(self, message)

    monkeypatch.setattr(shards_module.Shards, "broadcast", broadcast)
    return asked


def test_the_workers_logs_are_gathered_only_where_the_check_reads_them(monkeypatch):
    asked = log_requests(monkeypatch)
    model = load_model(ROOT / "models" / "skeen-2.toml")  # declares acyclic, meets no edge that can close a cycle
    out = search(model.spec, model.properties, workers=2)
    assert out.complete and not out.maybe_cyclic and out.edges is None and asked == []
    bss = load_model(ROOT / "models" / "bss-2.toml")
    cut = search(bss.spec, bss.properties, Bounds(max_states=1500), workers=2, stop_when_decided=False)
    assert not cut.complete and cut.maybe_cyclic and cut.edges is None and asked == []
    whole = search(bss.spec, bss.properties, workers=2, stop_when_decided=False)
    assert whole.complete and whole.edges is not None and asked == [1]


def cycle_searches(monkeypatch) -> list[int]:
    """Count the depth-first cycle searches of the check of ``acyclic``."""
    calls: list[int] = []
    original = declarations.find_cycle

    def counted(*args, **kw):
        calls.append(1)
        return original(*args, **kw)

    monkeypatch.setattr(declarations, "find_cycle", counted)
    return calls


def summary(result) -> tuple:
    """What a run decided and counted: verdicts, states, transitions, depth, traces."""
    traces = {name: [str(step) for step in p.trace] if p.trace else None for name, p in result.properties.items()}
    return verdicts(result), result.stats.distinct_states, result.stats.transitions, result.stats.depth, traces


@pytest.mark.parametrize("workers", [1, 2])
def test_a_join_of_runs_is_confirmed_without_the_cycle_search(monkeypatch, workers):
    calls = cycle_searches(monkeypatch)
    result = check_model(toy(Shortcut), replace(QUIET, workers=workers))
    assert verdicts(result) == {"ends": "holds"} and result.exit_code() == 0
    assert not [w for w in result.warnings if w.startswith("acyclic")]
    assert calls == []


@pytest.mark.parametrize("workers", [1, 2])
def test_a_built_in_model_with_joins_is_confirmed_from_its_log(monkeypatch, workers):
    """bss-2's reduced search meets edges that can close a cycle (a message delivered at
    once or after waiting in the hold-back queue) and closes none: confirmed from the
    log, to the counts, verdicts and traces of the run that walks the graph."""
    model = load_model(ROOT / "models" / "bss-2.toml")
    calls = cycle_searches(monkeypatch)
    logged_run = check_model(model, replace(QUIET, workers=workers))
    assert calls == [] and logged_run.exit_code() == 0
    monkeypatch.setattr(EdgeLog, "acyclic", lambda self, states: None)  # as where the budget dropped it
    walked = check_model(model, replace(QUIET, workers=workers))
    assert calls == [1] and summary(walked) == summary(logged_run)


def test_a_worker_log_the_budget_refuses_is_dropped(monkeypatch):
    """The main process asks the memory budget for the growth of the workers' logs
    before each commit; refused, the workers drop their logs, the search goes on to
    the same results, and the graph is walked."""
    model = load_model(ROOT / "models" / "bss-2.toml")
    logged_run = check_model(model, replace(QUIET, workers=2))
    asked = log_requests(monkeypatch)
    calls = cycle_searches(monkeypatch)
    monkeypatch.setattr(EdgeLog, "growth", lambda self, states, edges: 1 << 60)  # no budget holds that
    dropped = check_model(model, replace(QUIET, workers=2))
    assert calls == [1] and asked == [] and summary(dropped) == summary(logged_run)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("por", [True, False])
def test_a_wrong_declaration_is_still_refused_with_its_cycle(monkeypatch, por, workers):
    calls = cycle_searches(monkeypatch)
    with pytest.raises(InputError, match=r"spec ring declares acyclic = True but a run returns to a state"):
        check_model(toy(Ring, {"n": 3}), replace(QUIET, por=por, workers=workers))
    assert calls == [1]  # the log found a cycle; the cycle search named it


@pytest.mark.parametrize("written, resumed", [(1, 1), (1, 2), (2, 1), (2, 2)])
def test_a_resumed_search_keeps_the_log_its_checkpoint_carries(monkeypatch, tmp_path, written, resumed):
    """A checkpoint carries the edge log, written by one process or gathered from the
    shard workers, and a resume goes on with it, in one process or spread over the
    workers: no walk of the graph after it. The results are an uninterrupted run's."""
    model = load_model(ROOT / "models" / "bss-2.toml")
    opts = Options(progress=False, checkpoint=str(tmp_path / "ck"), checkpoint_every=0.0, stop_when_decided=False)
    whole = check_model(model, replace(opts, checkpoint=None))
    cut = check_model(model, replace(opts, max_depth=4, workers=written))
    assert cut.stats.distinct_states < whole.stats.distinct_states
    level = in_force(tmp_path / "ck")
    assert all((level / f).is_file() for f in checkpoints.LOG_FILES)
    calls = cycle_searches(monkeypatch)
    asked = log_requests(monkeypatch)
    again = check_model(model, replace(opts, resume=True, workers=resumed))
    assert calls == []
    assert bool(asked) == (resumed > 1)  # the workers' logs gathered: for the checkpoints and the check
    assert summary(again) == summary(whole)


@pytest.mark.parametrize("workers", [2, 3])
def test_a_workers_checkpoint_carries_the_log_one_process_writes(tmp_path, workers):
    """The log gathered from the shard workers for a checkpoint is the one process's:
    the same states by number and the same edges (in another order)."""
    model = load_model(ROOT / "models" / "bss-2.toml")
    opts = Options(progress=False, checkpoint_every=0.0, stop_when_decided=False, max_depth=5)
    check_model(model, replace(opts, checkpoint=str(tmp_path / "one")))
    check_model(model, replace(opts, checkpoint=str(tmp_path / "many"), workers=workers))
    one, many = in_force(tmp_path / "one"), in_force(tmp_path / "many")
    states, sources, targets = (np.load(one / f) for f in checkpoints.LOG_FILES)
    states_w, sources_w, targets_w = (np.load(many / f) for f in checkpoints.LOG_FILES)
    assert (states_w == states).all() and len(sources) > len(states)
    assert sorted(zip(sources.tolist(), targets.tolist())) == sorted(zip(sources_w.tolist(), targets_w.tolist()))


@pytest.mark.parametrize("written, resumed", [(1, 1), (1, 2), (2, 1), (2, 2)])
def test_a_cycle_before_the_checkpoint_is_still_found_after_the_resume(tmp_path, written, resumed):
    """The ring's cycle closes after the checkpoint through edges taken before it: the
    log carried across the resume (by one process or the workers) holds them, so the
    wrong declaration is refused."""
    model = toy(Ring, {"n": 3})
    opts = Options(progress=False, checkpoint=str(tmp_path / "ck"), checkpoint_every=0.0, por=False)
    check_model(model, replace(opts, max_depth=1, workers=written))  # meets no edge back: cut, not refused
    with pytest.raises(InputError, match=r"spec ring declares acyclic = True but a run returns to a state"):
        check_model(model, replace(opts, resume=True, workers=resumed))


def in_force(root: Path) -> Path:
    """The checkpoint ``CURRENT`` names, of the one model checkpointed under ``root``."""
    model_dir = checkpoint_of(root)
    return model_dir / (model_dir / "CURRENT").read_text(encoding="utf-8").strip()


@pytest.mark.parametrize("name, change, words", [
    ("edges-states.npy", lambda a: a[:-1], "does not hold the checkpoint's states"),
    ("edges-sources.npy", lambda a: a[:-1], "sources for"),
    ("edges-sources.npy", lambda a: a + 10**6, "not a state before the level"),
])
def test_a_damaged_log_in_a_checkpoint_is_refused_naming_its_file(tmp_path, name, change, words):
    model = load_model(ROOT / "models" / "bss-2.toml")
    opts = Options(progress=False, checkpoint=str(tmp_path / "ck"), checkpoint_every=0.0)
    check_model(model, replace(opts, max_depth=4))
    level = in_force(tmp_path / "ck")
    np.save(level / name, change(np.load(level / name)))
    reseal(level)
    with pytest.raises(InputError, match=re.escape(name) + ".*" + re.escape(words)):
        check_model(model, replace(opts, resume=True))


def test_has_cycle_refuses_a_source_not_among_the_states():
    fps, sources, targets = logged(4, [(0, 1), (1, 2)], 6)
    assert has_cycle(fps, np.asarray([0, 4], dtype=np.int32), targets) is None
    assert has_cycle(fps, np.asarray([0, -1], dtype=np.int32), targets) is None


def test_a_source_past_int32_drops_the_log():
    log = EdgeLog()
    log.add_states(np.arange(1, 3, dtype=np.uint64))
    log.add_edges(np.asarray([1 << 31], dtype=np.int64), np.asarray([2], dtype=np.uint64))
    assert not log.kept and log.acyclic(2) is None


class _Budget:
    """A memory budget that records what it is asked for and refuses past ``room``."""

    def __init__(self, limit: int, room: int) -> None:
        self.limit, self.room, self.asked = limit, room, []

    def reserve(self, extra: int) -> None:
        self.asked.append(extra)
        if extra > self.room:
            raise MemoryBoundReached(extra, self.room)


def test_the_log_keeps_within_its_share_and_leaves_the_search_room():
    budget = _Budget(limit=1000, room=10_000)
    log_room(budget, 100, 100, 500)
    assert budget.asked == [600]  # the growth, and room for the store to grow as well
    with pytest.raises(MemoryBoundReached, match="edge log"):
        log_room(budget, 200, 100, 0)  # past a quarter of the limit: refused before the budget is asked
    assert budget.asked == [600]
    with pytest.raises(MemoryBoundReached):
        log_room(_Budget(limit=10**9, room=1000), 0, 100, 1000)  # no room left for the store after it


@pytest.mark.parametrize("workers", [1, 2])
def test_a_log_past_its_share_is_dropped_and_the_search_completes(monkeypatch, workers):
    """A log that would pass its share of the budget is dropped, not the search stopped:
    the run ends complete, with the results of a run that kept its log, and the graph
    is walked instead."""
    from ordercheck.checker.engine import edges

    model = load_model(ROOT / "models" / "bss-2.toml")
    kept = check_model(model, replace(QUIET, workers=workers))
    calls = cycle_searches(monkeypatch)
    monkeypatch.setattr(edges, "LOG_SHARE", 1e-12)
    monkeypatch.setattr(EdgeLog, "growth", lambda self, states, edges: 1)  # the workers' logs grow every level
    dropped = check_model(model, replace(QUIET, workers=workers))
    assert calls == [1] and summary(dropped) == summary(kept) and dropped.exit_code() == 0


def test_a_workers_checkpoint_without_the_log_resumes_by_walking(monkeypatch, tmp_path):
    """Workers whose logs the budget refused write a checkpoint without one, and its
    resume walks the graph, to the results of an uninterrupted run."""
    model = load_model(ROOT / "models" / "bss-2.toml")
    opts = Options(progress=False, checkpoint=str(tmp_path / "ck"), checkpoint_every=0.0, stop_when_decided=False)
    whole = check_model(model, replace(opts, checkpoint=None))
    with monkeypatch.context() as m:
        m.setattr(EdgeLog, "growth", lambda self, states, edges: 1 << 60)  # no budget holds that
        check_model(model, replace(opts, max_depth=4, workers=2))
    level = in_force(tmp_path / "ck")
    assert not any((level / f).exists() for f in checkpoints.LOG_FILES)
    calls = cycle_searches(monkeypatch)
    again = check_model(model, replace(opts, resume=True, workers=2))
    assert calls == [1] and summary(again) == summary(whole)

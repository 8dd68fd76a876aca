"""The one-process search's edge log decides an ``acyclic`` declaration on the graph it
explored (``ordercheck.checker.engine.edges``).

* ``has_cycle`` agrees with networkx on random directed graphs (self-loops, joins of
  runs of different lengths, long chains), and refuses an edge to a state not logged.
* A search whose edges include one that can close a cycle but close none is confirmed
  without the depth-first cycle search; a wrong declaration is still refused, naming
  its cycle; where the log cannot decide (dropped by the memory budget, a resumed
  search, shard workers) the cycle search runs as before.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.engine import declarations
from ordercheck.checker.engine.budget import MemoryBoundReached
from ordercheck.checker.engine.edges import EdgeLog, has_cycle
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from tests.test_declarations import Ring, toy, verdicts
from tests.toyspecs import Shortcut

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


def cycle_searches(monkeypatch) -> list[int]:
    """Count the depth-first cycle searches of the check of ``acyclic``."""
    calls: list[int] = []
    original = declarations.find_cycle

    def counted(*args, **kw):
        calls.append(1)
        return original(*args, **kw)

    monkeypatch.setattr(declarations, "find_cycle", counted)
    return calls


def test_a_join_of_runs_is_confirmed_without_the_cycle_search(monkeypatch):
    calls = cycle_searches(monkeypatch)
    result = check_model(toy(Shortcut), QUIET)
    assert verdicts(result) == {"ends": "holds"} and result.exit_code() == 0
    assert not [w for w in result.warnings if w.startswith("acyclic")]
    assert calls == []
    # Shard workers keep no log: their run searches the graph again, to the same verdict.
    assert verdicts(check_model(toy(Shortcut), replace(QUIET, workers=2))) == {"ends": "holds"}
    assert calls == [1]


def test_a_built_in_model_with_joins_is_confirmed_from_its_log(monkeypatch):
    """bss-2's reduced search meets edges that can close a cycle (a message delivered at
    once or after waiting in the hold-back queue) and closes none."""
    model = load_model(ROOT / "models" / "bss-2.toml")
    calls = cycle_searches(monkeypatch)
    logged_run = check_model(model, QUIET)
    assert calls == [] and logged_run.exit_code() == 0
    monkeypatch.setattr(EdgeLog, "acyclic", lambda self, states: None)  # as where the budget dropped it
    walked = check_model(model, QUIET)
    assert calls == [1] and verdicts(walked) == verdicts(logged_run)


@pytest.mark.parametrize("por", [True, False])
def test_a_wrong_declaration_is_still_refused_with_its_cycle(monkeypatch, por):
    calls = cycle_searches(monkeypatch)
    with pytest.raises(InputError, match=r"spec ring declares acyclic = True but a run returns to a state"):
        check_model(toy(Ring, {"n": 3}), replace(QUIET, por=por))
    assert calls == [1]  # the log found a cycle; the cycle search named it


def test_a_resumed_search_has_no_log_and_searches_for_cycles(monkeypatch, tmp_path):
    model = load_model(ROOT / "models" / "bss-2.toml")
    opts = Options(progress=False, checkpoint=str(tmp_path / "ck"), checkpoint_every=0.0, stop_when_decided=False)
    whole = check_model(model, replace(opts, checkpoint=None))
    cut = check_model(model, replace(opts, max_depth=4))
    assert cut.stats.distinct_states < whole.stats.distinct_states
    calls = cycle_searches(monkeypatch)
    again = check_model(model, replace(opts, resume=True))
    assert calls == [1]  # the levels before the checkpoint are not in any log
    assert verdicts(again) == verdicts(whole) and again.stats.distinct_states == whole.stats.distinct_states


def test_has_cycle_refuses_a_source_not_among_the_states():
    fps, sources, targets = logged(4, [(0, 1), (1, 2)], 6)
    assert has_cycle(fps, np.asarray([0, 4], dtype=np.int32), targets) is None
    assert has_cycle(fps, np.asarray([0, -1], dtype=np.int32), targets) is None

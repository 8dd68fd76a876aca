"""The local engine's search loop: level-synchronous breadth-first search.

Each level's frontier (:class:`~checker.frontier.Frontier`) is kept as chunks of
:data:`CHUNK` states; past the first :data:`RAW_FRONTIER` states of a level each chunk
is one ``pickle`` byte string (pickle shares repeated sub-tuples within a chunk: about
80 bytes per bus1 state, and it loads ten times faster than ``marshal`` version 2).
A level of more than ``spill_after`` states is spilled to a file in ``spill_dir`` (a
temporary directory unless one is given) and read back sequentially when its turn
comes, so memory holds the visited store, not the frontier. A chunk is expanded (by this process, or by one of
``workers`` processes) into its successors with their fingerprints, and this process
then merges the chunks *in order*: it inserts the fingerprints into the
:class:`~checker.table.CompactStore` in batch order, numbers the new states, checks
properties on them and appends them to the next frontier. The merge order does not
depend on the worker count, so counts, numbering and counterexamples are identical
for any number of workers.

With a checkpoint directory, the store, the frontier and the statistics are written at
level boundaries (at most every ``checkpoint_every`` seconds), atomically: a new
checkpoint is written beside the old one and a small ``CURRENT`` file is then replaced
to point at it. A run resumed from a checkpoint ends with exactly the counts of an
uninterrupted run.
"""

from __future__ import annotations

import multiprocessing
import pickle
import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from checker import interrupts
from checker.budget import MemoryBoundReached
from checker.checkpoints import load, restore
from checker.evaluate import Evaluator
from checker.fingerprint import check_vocabulary
from checker.frontier import Frontier, decode, own_spill_dir
from checker.interrupts import worker_signals
from checker.lanes import LaneLevel, Lanes
from checker.memory import current_rss, peak_rss, reset_peak
from checker.reduce import Expander, Reductions
from checker.resumable import LevelMark, warn
from checker.spec import Property, Spec
from checker.table import CompactStore, FingerprintTable

CHUNK = 2048
"""States per frontier chunk: the unit of work for a worker and of the merge."""

RAW_FRONTIER = 100_000
"""Up to this many states of a level's next frontier stay Python objects; beyond it
chunks are pickled (compact, but encoding costs a few microseconds per state)."""

SPILL_AFTER = 1_000_000
"""A level of more states than this goes to disk (without an explicit ``spill_dir``)."""

VOCABULARY_CHECKS = 1000

RAW_LANE = 250_000
"""States a worker keeps as objects; past this it encodes its segments (see
:mod:`checker.lanes`)."""


_WORKER: Expander | None = None


def _init_worker(expander: Expander) -> None:
    global _WORKER
    worker_signals()
    _WORKER = expander


_states = decode


def _expand_remote(chunk: bytes | list) -> tuple:
    assert _WORKER is not None
    states = _states(chunk)
    owner, pos, succ, counts, reduced = _WORKER.expand(states)
    fps = _WORKER.fingerprints(succ)
    return owner, pos, pickle.dumps(succ, pickle.HIGHEST_PROTOCOL), counts, reduced, fps


def _expand_local(expander: Expander, chunk: bytes | list) -> tuple:
    states = _states(chunk)
    owner, pos, succ, counts, reduced = expander.expand(states)
    return owner, pos, succ, counts, reduced, expander.fingerprints(succ), states


def search_levels(
    spec: Spec,
    props: Sequence[Property],
    bounds: Any,
    outcome_cls: Any,
    decision_cls: Any,
    spec_error: type[Exception],
    *,
    progress: Any,
    stop_when_decided: bool,
    reductions: Reductions,
    workers: int = 1,
    checkpoint: str | Path | None = None,
    resume: bool = False,
    checkpoint_every: float = 30.0,
    identity: dict[str, Any] | None = None,
    spill_dir: str | Path | None = None,
    spill_after: int | None = None,
    budget: Any = None,
) -> Any:
    """The search behind :func:`checker.bfs.search` (see the module docstring).

    ``spill_dir``: where a level's frontier goes once it holds more than
    ``spill_after`` states (default: a temporary directory, :data:`SPILL_AFTER`
    states; with a ``spill_dir`` and no ``spill_after``, every level is spilled).
    """
    started = time.monotonic()
    reset_peak()
    baseline = current_rss()
    evaluator = Evaluator(spec, props)
    store = CompactStore(min(bounds.max_states or 1 << 16, 1 << 16))  # grows as the search needs
    if budget is not None:
        store.guard(budget.reserve)
    outcome = outcome_cls(store)
    decisions = outcome.decisions
    expander = Expander(spec, reductions)
    history_key = spec.history_key if evaluator.uses_history else None
    max_states = bounds.max_states
    max_depth = bounds.max_depth
    ident = dict(identity or {})
    ident.setdefault("spec", spec.name)
    ident["reductions"] = reductions.as_dict()
    ident["properties"] = [p.name for p in props]
    ckpt = Path(checkpoint) if checkpoint is not None else None
    # Cycles matter only to `eventually` properties (checker.liveness): an edge into a
    # state discovered before the current level is the one kind that can close a cycle.
    # A spec that declares itself acyclic (as partial-order reduction trusts) has none.
    track_cycles = any(p.kind == "eventually" for p in props) and not spec.acyclic
    level_new = FingerprintTable(1 << 10) if track_cycles else None
    own_spill = spill_dir is None
    if own_spill:
        spill_dir = own_spill_dir()
        if spill_after is None:
            spill_after = SPILL_AFTER
    elif spill_after is None:
        spill_after = 0

    # With workers, each keeps its share of every level (checker.lanes) and this process
    # merges fingerprints only. The cycle proviso needs the states here, and an explicit
    # spill directory asks for the frontier on disk: those keep a pool of workers that
    # expand chunks of a frontier held here.
    lanes = None
    pool = None
    worker_peak = 0  # the workers' own peak memory (lanes)
    searched = False  # the search loop ended without an exception
    if workers > 1 and not reductions.proviso and own_spill:
        lanes = Lanes(workers, expander, props, CHUNK, RAW_LANE, keep_level=ckpt is not None)
        if budget is not None:
            budget.workers = lanes.pids
    mark = LevelMark(ckpt, ident)

    def new_frontier() -> Frontier | LaneLevel:
        if lanes is not None:
            return LaneLevel(lanes)
        return Frontier(spill_dir, raw=RAW_FRONTIER, spill_after=spill_after)

    def record(found: list[tuple[str, str]], index: int) -> None:
        for name, sentence in found:
            if name not in decisions:
                decisions[name] = decision_cls(index, sentence)
                evaluator.decide(name)

    try:
        frontier = new_frontier()
        level_start = 0
        depth = 0
        transitions = 0
        elapsed_before = 0.0
        loaded = load(ckpt, ident, spill_dir, spill_after) if (ckpt is not None and resume) else None
        if loaded is not None:
            meta, fps, parents, actions, frontier = loaded
            outcome.maybe_cyclic = meta.get("maybe_cyclic", False)
            restore(store, fps, parents, actions, ckpt)
            level_start, depth, transitions = meta["level_start"], meta["depth"], meta["transitions"]
            outcome.initial_states = meta["initial_states"]
            elapsed_before = meta["seconds"]
            for name, (index, sentence) in meta["decisions"].items():
                record([(name, sentence)], index)
            if lanes is not None:
                held = new_frontier()
                for chunk in frontier:
                    held.append(decode(chunk))
                frontier.discard()
                frontier = held.seal()
        else:
            inits = list(spec.init_states())
            for s in inits:
                problem = check_vocabulary(s)
                if problem:
                    raise spec_error(f"{spec.name}: initial {problem}")
            fps = expander.fingerprints(inits)
            level: list = []
            for i, s in enumerate(inits):
                idx = store.add(int(fps[i]), -1, i)
                if idx < 0:
                    continue
                key = history_key(s) if history_key else None
                record(evaluator.on_state(s, key, None), idx)
                level.append(s)
            outcome.initial_states = len(level)
            for i in range(0, len(level), CHUNK):
                frontier.append(level[i : i + CHUNK])
            frontier.seal()
    except BaseException:
        if lanes is not None:
            lanes.close()
        if own_spill:
            shutil.rmtree(spill_dir, ignore_errors=True)
        raise

    deadline = None if bounds.time_limit is None else started + bounds.time_limit
    vocabulary_checks = VOCABULARY_CHECKS
    stop = stop_when_decided and evaluator.done
    frontier_len = len(frontier)
    next_frontier = frontier
    at_depth_bound = False
    interrupts.defer()  # a signal stops the search where its state is consistent (checker.interrupts)
    try:
        if workers > 1 and lanes is None:
            pool = multiprocessing.get_context("fork").Pool(workers, initializer=_init_worker, initargs=(expander,))
            if budget is not None:
                budget.workers = lambda: [p.pid for p in pool._pool]
        next_frontier = new_frontier()
        while frontier and not stop:
            mark.begin({
                "level_start": level_start,
                "depth": depth,
                "transitions": transitions,
                "initial_states": outcome.initial_states,
                "seconds": elapsed_before + time.monotonic() - started,
                "decisions": {n: [d.index, d.explanation] for n, d in decisions.items()},
                "maybe_cyclic": outcome.maybe_cyclic,
            }, len(store))
            if mark.due(checkpoint_every):
                mark.save(store, frontier)
            at_depth_bound = max_depth is not None and depth >= max_depth
            next_frontier = new_frontier()
            next_len = 0
            pending: list = []
            base = level_start
            results: Iterator[tuple]
            if lanes is not None:
                assert isinstance(frontier, LaneLevel)
                results = ((None, r) for r in lanes.run(frontier, frozenset(evaluator.open)))
            elif pool is not None:
                # Two sequential readers of the level: one feeds the workers, one the merge.
                results = zip(frontier, pool.imap(_expand_remote, frontier))
            else:
                results = ((c, _expand_local(expander, c)) for c in frontier)
            done_parents = 0
            for chunk, res in results:
                if lanes is not None:
                    # Worker w's unit: the states stay there; findings come with it.
                    w, unit, pos_a, counts_a, fps, on_succ, on_terminal, problem = res
                    if problem:
                        raise spec_error(f"{spec.name}: {problem}")
                    owner_a = np.repeat(np.arange(len(counts_a), dtype=np.int64), counts_a)
                    counts = counts_a  # a list only if the loop below runs
                    states = None
                else:
                    owner, pos, succ, counts, reduced, fps = res[:6]
                    states = res[6] if len(res) > 6 else None
                    if isinstance(succ, bytes):
                        succ = pickle.loads(succ)
                    if states is None and (0 in counts or reductions.proviso or history_key is not None):
                        states = _states(chunk)
                    if reductions.proviso:
                        owner, pos, succ, counts, fps = _proviso(
                            expander, store, states, owner, pos, succ, counts, reduced, fps
                        )
                    owner_a = np.asarray(owner, dtype=np.int64)
                    pos_a = np.asarray(pos, dtype=np.int64)
                if pos_a.size and pos_a.max() > 0xFFFF:
                    raise spec_error(f"{spec.name}: more than 65535 enabled actions in one state")
                first = len(store)
                if at_depth_bound:
                    if len(fps) and not store.table.contains(fps).all():
                        outcome.bound = "max_depth"
                    transitions += len(fps)
                    new = np.zeros(0, dtype=np.int64)
                else:
                    mark.reserve(len(fps))
                    new = store.add_batch(fps, owner_a + base, pos_a)
                    mark.add(fps[new])
                    if level_new is not None and not outcome.maybe_cyclic:
                        fresh = np.zeros(len(fps), dtype=bool)
                        fresh[new] = True
                        level_new.insert(fps[new])
                        if not level_new.contains(fps[~fresh]).all():
                            outcome.maybe_cyclic = True
                j = 0
                offset = 0
                new_a = new
                nnew = len(new_a)
                limit = nnew if max_states is None else min(nnew, max_states - first)
                nparents = len(counts)
                if lanes is not None and nnew <= limit and not _matters(on_succ, on_terminal, decisions):
                    # Nothing in this unit decides a property or meets a bound: merge it
                    # whole (what the loop below does state by state).
                    if not at_depth_bound:
                        transitions += int(counts_a.sum())
                    j = nnew
                    counts = new = []
                else:
                    new = new_a.tolist()
                    if lanes is not None:
                        counts = counts_a.tolist()
                checks = bool(evaluator.state_checks or evaluator.history_checks)
                on_state = evaluator.on_state
                append = pending.append
                for k, n in enumerate(counts):
                    idx = base + k
                    s = states[k] if states is not None else None
                    if n == 0:
                        if lanes is not None:
                            if k in on_terminal:
                                record(on_terminal[k], idx)
                        elif evaluator.terminal_state or evaluator.terminal_history:
                            key = history_key(s) if history_key else None
                            record(evaluator.on_terminal(s, key), idx)
                        # A terminal state does not end the level by itself: as the
                        # reference engine always has, the check for "every property
                        # decided" follows the next state that has successors.
                        continue
                    if not at_depth_bound:
                        transitions += n
                    end = offset + n
                    parent_key = history_key(s) if history_key and s is not None else None
                    while j < nnew and new[j] < end:
                        if j >= limit:
                            outcome.bound = "max_states"
                            # Count transitions up to the successor that hit the bound.
                            transitions -= end - new[j] - 1
                            stop = True
                            break
                        if lanes is not None:
                            if new[j] in on_succ:
                                record(on_succ[new[j]], first + j)
                            j += 1
                            continue
                        t = succ[new[j]]
                        if vocabulary_checks:
                            vocabulary_checks -= 1
                            problem = check_vocabulary(t)
                            if problem:
                                raise spec_error(f"{spec.name}: {problem}")
                        if checks:
                            found = on_state(t, history_key(t) if history_key else None, parent_key)
                            if found:
                                record(found, first + j)
                                checks = bool(evaluator.state_checks or evaluator.history_checks)
                        append(t)
                        if len(pending) == CHUNK:
                            next_frontier.append(pending)
                            next_len += CHUNK
                            pending = []
                            append = pending.append
                        j += 1
                    offset = end
                    if stop or (stop_when_decided and evaluator.done):
                        stop = True
                        break
                if lanes is not None:
                    next_len += j  # the next level's states so far (held by the workers)
                if stop:
                    store.parents.truncate(first + j if not at_depth_bound else len(store))
                    store.actions.truncate(len(store.parents))
                    break
                if lanes is not None:
                    assert isinstance(next_frontier, LaneLevel)
                    next_frontier.keep(w, unit, new_a[:j])
                base += nparents
                done_parents += nparents
                if deadline is not None and time.monotonic() > deadline:
                    outcome.bound = "time_limit"
                    stop = True
                    break
                if budget is not None:
                    budget.check()
                interrupts.poll()
                if progress is not None:
                    progress.tick(len(store), depth + 1, frontier_len - done_parents + next_len + len(pending))
            if pending:
                next_frontier.append(pending)
                next_len += len(pending)
            next_frontier.seal()
            if stop:
                if next_len and not at_depth_bound:
                    depth += 1  # the next level's states found so far count towards the depth
                break
            level_start += frontier_len
            if level_new is not None:
                level_new = FingerprintTable(1 << 10)
            frontier.discard()
            if at_depth_bound:
                next_frontier.discard()
            frontier = next_frontier
            frontier_len = len(frontier)
            if frontier:
                depth += 1
            if deadline is not None and frontier and time.monotonic() > deadline:
                outcome.bound = "time_limit"
                stop = True
        searched = True
    except MemoryError as exc:  # the budget's bound (checker.budget), or an allocation that failed
        outcome.bound = "memory"
        outcome.memory = exc if isinstance(exc, MemoryBoundReached) else None
        stop = True
        if mark.meta is not None and len(store) > mark.states and not at_depth_bound:
            depth += 1  # the next level's states found so far count towards the depth
        # Only a stop by the budget comes where the store is consistent: its level's
        # checkpoint can be written then.
        searched = _save_level_start(mark, store, frontier, lanes, write=outcome.memory is not None)
    except interrupts.Interrupted as exc:
        _save_level_start(mark, store, frontier, lanes, write=exc.safe)
        exc.checkpoint = mark.saved()
        raise
    finally:
        interrupts.undefer()
        if pool is not None:
            pool.terminate()
            pool.join()
        if lanes is not None:
            if searched:
                worker_peak = lanes.peak_bytes()
            lanes.close()
        remaining = bool(frontier)
        frontier.discard()
        next_frontier.discard()
        if own_spill:
            shutil.rmtree(spill_dir, ignore_errors=True)

    outcome.transitions = transitions
    outcome.depth = depth + 1 if len(store) else 0
    outcome.complete = outcome.bound is None and not (stop and remaining)
    outcome.seconds = elapsed_before + time.monotonic() - started
    outcome.peak_memory_bytes = max(peak_rss() - baseline, 0) + worker_peak
    outcome.store_bytes = store.nbytes()
    return outcome


def _matters(on_succ: dict, on_terminal: dict, decisions: dict) -> bool:
    """Whether a worker's findings include a property not decided yet."""
    for found in (*on_succ.values(), *on_terminal.values()):
        if any(name not in decisions for name, _sentence in found):
            return True
    return False


def _proviso(expander: Expander, store: CompactStore, states, owner, pos, succ, counts, reduced, fps):
    """The cycle proviso: a reduced state with an ample successor discovered before
    (earlier levels, or earlier in this chunk) is expanded fully instead."""
    seen_here: set[int] = set()
    o2: list[int] = []
    p2: list[int] = []
    s2: list = []
    c2: list[int] = []
    f2: list[np.ndarray] = []
    offset = 0
    for k, n in enumerate(counts):
        seg = fps[offset : offset + n]
        seg_owner, seg_pos, seg_succ = owner[offset : offset + n], pos[offset : offset + n], succ[offset : offset + n]
        offset += n
        if reduced[k]:
            values = [int(x) for x in seg]
            if (
                len(set(values)) < len(values)
                or any(v in seen_here for v in values)
                or bool(store.table.contains(seg).any())
            ):
                _o, seg_pos, seg_succ, _c, _r = expander.expand([states[k]], full=True)
                seg_owner = [k] * len(seg_succ)
                seg = expander.fingerprints(seg_succ)
                n = len(seg_succ)
        seen_here.update(int(x) for x in seg)
        o2.extend(seg_owner)
        p2.extend(seg_pos)
        s2.extend(seg_succ)
        c2.append(n)
        f2.append(np.asarray(seg, dtype=np.uint64))
    return o2, p2, s2, c2, (np.concatenate(f2) if f2 else np.zeros(0, dtype=np.uint64))


# -- checkpoints ------------------------------------------------------------------------


def _save_level_start(mark: LevelMark, store: CompactStore, frontier: Any, lanes: Lanes | None, write: bool) -> bool:
    """When the search stops inside a level: stop the workers' part of it and, with
    ``write``, write the checkpoint of the level's start (see :mod:`checker.resumable`);
    a failure warns and keeps the last checkpoint. Whether the workers are still in
    step (their peak memory can be asked for)."""
    if lanes is not None:
        try:
            lanes.abort()  # the workers drop the rest of the level and answer what follows
        except Exception as exc:  # a worker that died: its share of the level is gone
            if mark.ckpt is not None:
                warn(f"no checkpoint of the stopped level ({exc}); the last one, {mark.saved() or 'none'}, is kept")
            return False
    if write and mark.ckpt is not None:
        try:
            mark.save(store, frontier)
        except MemoryError:
            warn(f"no checkpoint of the stopped level (out of memory); the last one, {mark.saved() or 'none'}, is kept")
    return True

"""The reduction memo: a spec's reduction key must decide its footprints and the owners
of its successors, and the successors generated for the chosen processes alone must be
exactly those the full list holds at the chosen positions."""

from __future__ import annotations

import random

import pytest

from ordercheck.checker.engine import reduce as red
from ordercheck.checker.engine.reduce import Expander, plan
from ordercheck.checker.loading.modelfile import model_from_dict
from tests.test_reductions import reachable

# Configurations that exercise every footprint refinement: multicasts (blocks, syncs
# behind and ahead of the timestamp, queueing behind a block), unicast and subset
# destinations, scripts, signals, and every mutant.
CONFIGS = [
    {"peers": 3, "sends": 2},
    {"peers": 3, "sends": 1, "signals": 1},
    {"peers": 3, "sends": 1, "destinations": "unicast", "signals": 2},
    {"peers": 3, "sends": 1, "destinations": "subsets"},
    {"peers": 2, "sends": 2, "signals": 1},
    {"peers": 4, "sends": 1, "signals": 1},
    {"peers": 3, "script": {"a": ["bc", "c"], "b": ["a"], "c": ["ab"]}},
    {"peers": 3, "sends": 2, "block_destinations": False},
    {"peers": 3, "sends": 2, "sync_sender": False},
    {"peers": 3, "sends": 2, "sync_receivers_before_queueing": False},
    {"peers": 3, "sends": 2, "tiebreak_by_sender": False},
]


def spec_of(constants: dict):
    return model_from_dict({"spec": "bus1", "constants": constants}).spec


def sample_states(spec, seed: int, bfs: int = 1500, walks: int = 150) -> list:
    """The first ``bfs`` states breadth-first, and every state of ``walks`` random runs
    (which reach the deep states a short breadth-first prefix never does)."""
    order = reachable(spec, bfs)
    seen = set(order)
    rnd = random.Random(seed)
    for _ in range(walks):
        s = spec.init_states()[0]
        while True:
            out = spec.next_states(s)
            if not out:
                break
            s = rnd.choice(out)[1]
            if s not in seen:
                seen.add(s)
                order.append(s)
    return order


@pytest.mark.parametrize("constants", CONFIGS, ids=[str(c) for c in CONFIGS])
def test_reduction_key_decides_footprints_and_owners(constants: dict) -> None:
    """States with equal reduction keys have equal freshly computed footprints and the
    same owner for every successor, so a choice memoised by the key is never stale; and
    the keys do tell states apart (a key that ignored the refinements would fail)."""
    spec = spec_of(constants)
    first: dict = {}
    shared = 0
    for s in sample_states(spec, seed=1):
        key = spec.reduction_key(s)
        got = (list(spec.footprints(s)), [spec.actor(label) for label, _t in spec.next_states(s)])
        if key in first:
            assert first[key][1] == got, (key, first[key][0], s)
            shared += 1
        else:
            first[key] = (s, got)
    assert shared and len(first) > 10


LIBRARY = ["fifo", "causal", "total", "global_lock", "eventual_delivery", "deadlock_free"]
CHECKS = [(c, LIBRARY) for c in CONFIGS] + [(c, None) for c in CONFIGS[:2]]


@pytest.mark.parametrize(
    "constants,props", CHECKS, ids=[f"{c}-{'library' if p else 'all'}" for c, p in CHECKS]
)
def test_memoised_expansion_is_the_cold_one(constants: dict, props: list | None) -> None:
    """Expanding with a warm memo (only the chosen processes' successors generated)
    gives, state by state, the positions and successors of the full list that a cold
    stubborn-set computation on fresh footprints picks: with the library properties
    (no visibility condition), and with every property (bus1's own invariants read
    queues and clocks, so the visible mask rules many sets out)."""
    data = {"spec": "bus1", "constants": constants}
    if props:
        data["check"] = {"properties": props}
    model = model_from_dict(data)
    spec = model.spec
    reductions, _notes = plan(spec, model.properties, False, True)
    assert reductions.por
    states = sample_states(spec, seed=7)
    expander = Expander(spec, reductions)
    red._memo_for(spec, reductions.visible).clear()
    expander.expand(states)  # warms the memo
    owner, pos, succ, counts, reduced = expander.expand(states)
    at = 0
    proper = 0
    for k, s in enumerate(states):
        out = spec.next_states(s)
        actors = tuple(spec.actor(label) for label, _t in out)
        cold = None
        if len(set(actors)) > 1:
            cold = red._stubborn(list(spec.footprints(s)), actors, reductions.visible)
        want = list(range(len(out))) if cold is None else list(cold[0])
        n = counts[k]
        assert owner[at : at + n] == [k] * n
        assert pos[at : at + n] == want
        assert succ[at : at + n] == [out[i][1] for i in want]
        assert reduced[k] == (cold is not None)
        proper += cold is not None
        at += n
    assert at == len(succ)
    assert proper or not props


@pytest.mark.parametrize("constants", CONFIGS[:3] + CONFIGS[6:7], ids=[str(c) for c in CONFIGS[:3] + CONFIGS[6:7]])
def test_next_states_of_is_the_filtered_list(constants: dict) -> None:
    """For every set of processes, the successors generated for those processes alone
    are the full list's entries they own, in order."""
    spec = spec_of(constants)
    for s in sample_states(spec, seed=3, bfs=400, walks=40):
        out = spec.next_states(s)
        for members in range(1 << spec.peers):
            want = [(label, t) for label, t in out if members >> spec.actor(label) & 1]
            assert spec.next_states_of(s, members) == want


def test_expand_has_no_unreduced_switch():
    """A search's expansion reduces as its reductions say, with no switch to turn them
    off per call: the cycle proviso completes a reduced expansion with
    ``Expander.complete``, and an unreduced search has reductions that reduce nothing."""
    import inspect

    assert list(inspect.signature(Expander.expand).parameters) == ["self", "states"]


DEFERRING = [{"peers": 2, "sends": 3}, {"peers": 3, "sends": 1}, {"peers": 2, "sends": 2, "signals": 1}]


@pytest.mark.parametrize("constants", DEFERRING, ids=[str(c) for c in DEFERRING])
def test_memoised_deferring_choice_is_the_cold_one(constants: dict) -> None:
    """With deferred arrivals (BSS), the memoised choice, cold and warm (where one
    process owns every step not deferred, keyed without the footprints), is state by
    state what the stubborn-set computation on fresh footprints picks."""
    model = model_from_dict({"spec": "bss", "constants": constants, "check": {"properties": ["causal"]}})
    spec = model.spec
    reductions, _notes = plan(spec, model.properties, False, True)
    assert reductions.defer
    states = reachable(spec, 3000)
    memo = red._memo_for(spec, reductions.visible)
    memo.clear()
    one_process = 0
    for _round in range(2):  # cold, then warm
        for s in states:
            out = spec.next_states(s)
            skip = frozenset(i for i, (label, _t) in enumerate(out) if spec.deferrable(label))
            if not out or len(skip) == len(out):
                continue
            actors = tuple(spec.actor(label) for label, _t in out)
            cold = None
            if skip or len(set(actors)) > 1:
                cold = red._stubborn(list(spec.footprints(s)), actors, reductions.visible, skip)
            assert red._choose(spec, memo, s, out, reductions.visible, red._DEFER) == cold
            one_process += bool(skip) and len({a for i, a in enumerate(actors) if i not in skip}) == 1
    assert one_process

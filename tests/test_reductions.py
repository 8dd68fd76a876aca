"""Symmetry and partial-order reduction give the verdicts of the unreduced search."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ordercheck.checker.api.trace import replay
from ordercheck.checker.engine.reduce import plan, stubborn
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model, model_from_dict

MODELS = sorted((Path(__file__).resolve().parent.parent / "models").glob("*.toml"))
LIBRARY_PROPS = [
    "fifo", "causal", "integrity", "total", "total_global", "total_prefix", "global_lock", "eventual_delivery",
    "deadlock_free",
]


def verdicts(result) -> dict[str, str]:
    return {name: p.status for name, p in result.properties.items()}


def run(model, **kw):
    return check_model(model, Options(progress=False, **kw))


def assert_real_traces(model, result) -> None:
    """Every counterexample or witness replays through the unreduced spec and ends in a
    state on which the property's check gives the reported sentence."""
    spec = model.spec
    props = spec.property_map()
    for name, p in result.properties.items():
        if not p.trace:
            continue
        positions = [s.index for s in p.trace]
        path = replay(spec, positions[0], positions[1:])
        assert [list(label) if label else None for label, _i, _s in path] == [s.label for s in p.trace]
        prop = props[name]
        last = path[-1][2]
        arg = spec.history(last) if prop.over == "history" else last
        out = prop.check(arg)
        assert out is not None and out is not False, f"{name}: trace end does not show it"


@pytest.mark.parametrize(
    "path", [pytest.param(p, marks=pytest.mark.slow) if p.stem == "bus1-3" else p for p in MODELS],
    ids=[p.stem for p in MODELS],
)
def test_builtin_models_same_verdicts_reduced(path: Path) -> None:
    model = load_model(path)
    red, notes = plan(model.spec, model.properties, True, True)
    if not (red.symmetry or red.por):
        # The spec declares no reduction: the "reduced" search is the full one, and the
        # run says why each reduction the model asked for was not applied.
        assert len(notes) == 2
        return
    reduced = run(model, symmetry=True, por=True)
    if path.stem == "bus1-3":
        # The unreduced search of this model is pinned by tests/test_bus1.py to meet
        # every [expect]; equal verdicts means the reduced search meets them too.
        assert reduced.exit_code() == 0 and set(verdicts(reduced)) == set(model.expect)
        assert all(verdicts(reduced)[n] == v for n, v in model.expect.items())
        return
    full = run(model, symmetry=False, por=False)
    assert verdicts(reduced) == verdicts(full)
    if "violated" not in verdicts(full).values():  # else a search may stop once decided
        assert reduced.stats.distinct_states <= full.stats.distinct_states
    assert_real_traces(model, reduced)


def test_por_reduces_bus1_and_keeps_every_verdict() -> None:
    model = model_from_dict({"spec": "bus1", "constants": {"peers": 3, "sends": 1}, "check": {"properties": LIBRARY_PROPS}})
    full = run(model, por=False)
    reduced = run(model, por=True)
    assert reduced.reductions["por"] and not full.reductions["por"]
    assert verdicts(reduced) == verdicts(full)
    assert reduced.stats.distinct_states < 0.75 * full.stats.distinct_states


def test_symmetry_reduces_unicast_fifo() -> None:
    model = model_from_dict(
        {"spec": "fifo", "constants": {"peers": 3, "sends": 1, "destinations": "unicast"}, "check": {"properties": LIBRARY_PROPS}}
    )
    full = run(model, symmetry=False, por=False)
    sym = run(model, symmetry=True, por=False)
    assert sym.reductions == {"symmetry": True, "por": False, "deferred_arrivals": False, "solo_steps": False,
                              "cycle_proviso": False}
    assert verdicts(sym) == verdicts(full)
    assert sym.stats.distinct_states * 3 < full.stats.distinct_states


def test_symmetry_counterexample_is_a_real_run() -> None:
    constants = {"peers": 3, "sends": 1, "destinations": "unicast", "signals": 1, "tiebreak_by_sender": False,
                 "sync_sender": False}
    model = model_from_dict({"spec": "bus1", "constants": constants, "check": {"properties": ["causal"]}})
    full = run(model, symmetry=False, por=False)
    sym = run(model, symmetry=True, por=False)
    assert sym.reductions["symmetry"]
    assert verdicts(sym) == verdicts(full) == {"causal": "violated"}
    assert len(sym.properties["causal"].trace) == len(full.properties["causal"].trace)
    assert_real_traces(model, sym)


def test_tiebreak_by_sender_rules_out_symmetry() -> None:
    on = model_from_dict({"spec": "bus1", "constants": {"peers": 2, "sends": 1}})
    off = model_from_dict({"spec": "bus1", "constants": {"peers": 2, "sends": 1, "tiebreak_by_sender": False}})
    assert not plan(on.spec, on.properties, True, False)[0].symmetry
    assert plan(off.spec, off.properties, True, False)[0].symmetry


def reachable(spec, limit: int = 400) -> list:
    """Up to ``limit`` reachable states, breadth-first."""
    seen = set(spec.init_states())
    order = list(seen)
    i = 0
    while i < len(order) and len(order) < limit:
        for _label, t in spec.next_states(order[i]):
            if t not in seen:
                seen.add(t)
                order.append(t)
        i += 1
    return order


configs = st.fixed_dictionaries(
    {
        "spec": st.sampled_from(["bus1", "fifo"]),
        "peers": st.integers(2, 3),
        "sends": st.integers(0, 2),
        "destinations": st.sampled_from(["others", "unicast", "subsets"]),
        "signals": st.integers(0, 1),
        "ablation": st.sampled_from(
            [None, "block_destinations", "sync_sender", "sync_receivers_before_queueing", "tiebreak_by_sender"]
        ),
    }
)


def build(cfg: dict):
    constants = {k: cfg[k] for k in ("peers", "sends", "destinations", "signals")}
    if cfg["peers"] == 3:  # keep each example small: a few thousand states
        constants.update(sends=min(constants["sends"], 1), destinations="unicast", signals=0)
    props = list(LIBRARY_PROPS)
    if cfg["spec"] == "bus1":
        if cfg["ablation"]:
            constants[cfg["ablation"]] = False
        props += ["message_after_block", "ready_is_final", "entries_behind_clock", "waits_behind_block"]
    return model_from_dict({"spec": cfg["spec"], "constants": constants, "check": {"properties": props}})


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs)
def test_random_configurations_same_verdicts(cfg: dict) -> None:
    model = build(cfg)
    full = run(model, symmetry=False, por=False)
    for sym, por in ((False, True), (True, False), (True, True)):
        reduced = run(model, symmetry=sym, por=por)
        assert verdicts(reduced) == verdicts(full), (sym, por)
        assert_real_traces(model, reduced)
    # Only the library properties: the stable/terminal case, where POR needs no visibility.
    lib = model_from_dict({"spec": cfg["spec"], "constants": model.constants, "check": {"properties": LIBRARY_PROPS}})
    assert verdicts(run(lib, por=True)) == verdicts(run(lib, por=False))


@settings(max_examples=10, deadline=None)
@given(configs, st.randoms(use_true_random=False))
def test_permute_commutes_with_next_states(cfg: dict, rnd) -> None:
    """For a symmetric configuration, renaming peers maps successors to successors."""
    cfg = dict(cfg, destinations="unicast", ablation="tiebreak_by_sender")
    spec = build(cfg).spec
    group = spec.symmetries()
    assert group
    for s in rnd.sample(reachable(spec), k=min(40, len(reachable(spec)))):
        g = rnd.choice(group)
        image = {spec.permute(t, g) for _l, t in spec.next_states(s)}
        assert image == {t for _l, t in spec.next_states(spec.permute(s, g))}
        assert spec.permute(spec.permute(s, g), tuple(g.index(i) for i in range(len(g)))) == s


def step(spec, s, label: tuple):
    """The successor of ``s`` by the action ``label``, or ``None`` if it is not enabled."""
    return dict(spec.next_states(s)).get(label)


def commutation_failure(spec, s, rnd, walks: int = 3, steps: int = 8):
    """Check the stubborn-set condition at ``s``: for each action ``t`` of the chosen
    set and random runs ``w`` of the processes outside it, ``t`` is still enabled after
    ``w`` and ``w`` then ``t`` reaches the state ``t`` then ``w`` does. Returns the
    first failure ``(t, w)``, or ``None``, and how many non-empty runs were tried."""
    out = list(spec.next_states(s))
    found = stubborn(spec, s, out, 0)
    if found is None:
        return None, 0
    chosen, members = found
    checked = 0
    for i in chosen:
        t = out[i][0]
        for _walk in range(walks):
            u, labels = s, []
            for _k in range(rnd.randint(1, steps)):
                options = [lab for lab, _x in spec.next_states(u) if not members >> spec.actor(lab) & 1]
                if not options:
                    break
                lab = rnd.choice(options)
                labels.append(lab)
                u = step(spec, u, lab)
            after = step(spec, u, t)
            v = step(spec, s, t)
            for lab in labels:
                v = step(spec, v, lab) if v is not None else None
            if after is None or v is None or v != after:
                return (t, labels), checked
            checked += bool(labels)
    return None, checked


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs, st.randoms(use_true_random=False))
def test_stubborn_actions_commute_with_outside_runs(cfg: dict, rnd) -> None:
    """The stubborn-set condition itself, on sampled states (:func:`commutation_failure`).
    This checks every footprint a spec declares (now and later, updates included)
    against its next-state function."""
    spec = build(cfg).spec
    states = reachable(spec, 600)
    checked = 0
    for s in rnd.sample(states, k=min(100, len(states))):
        failure, n = commutation_failure(spec, s, rnd)
        assert failure is None, (s, failure)
        checked += n
    if cfg["spec"] == "bus1" and cfg["sends"] and cfg["peers"] == 2:
        assert checked  # a two-peer bus1 configuration always gives some reduced state


def absorbing_states(spec, limit: int) -> list:
    """Reachable states where some peer's footprint has a sync absorbed by its
    destination's pending tick (it updates ``seen``, not ``clock``)."""
    seen = 0
    for m in spec.var["seen"]:
        seen |= m
    return [s for s in reachable(spec, limit) if any((fp[4] | fp[5]) & seen for fp in spec.footprints(s))]


MULTICAST3 = {"peers": 3, "script": {"a": ["bc", "bc"], "b": ["ac"], "c": ["ab"]}}


def test_syncs_absorbed_by_a_pending_tick_commute() -> None:
    """Three peers multicasting: at states where a sync is declared absorbed by its
    destination's own pending tick, the chosen stubborn set still commutes with every
    sampled run of the other peers (the destination included when it is outside)."""
    import random

    rnd = random.Random(5)
    spec = model_from_dict({"spec": "bus1", "constants": MULTICAST3}).spec
    states = absorbing_states(spec, 6000)
    assert len(states) > 100
    checked = 0
    for s in rnd.sample(states, 300):
        failure, n = commutation_failure(spec, s, rnd, walks=4, steps=12)
        assert failure is None, (s, failure)
        checked += n
    assert checked > 300


def test_absorbing_every_sync_is_caught(monkeypatch) -> None:
    """The check above has teeth: off by one, a sync to exactly the timestamp the
    destination's tick will take (``ts = max(clock, acc) + 1``) is not absorbed (synced
    first, the tick takes ``ts + 1``), and the same check finds a run that does not
    commute when such syncs are declared absorbed."""
    import random

    from ordercheck.specs.bus1 import TICK, Bus1

    def off_by_one(self, clock: int, tx, ts: int) -> bool:
        return bool(tx) and tx[1] <= TICK and ts <= max(clock, tx[3]) + 1

    monkeypatch.setattr(Bus1, "_absorbed", off_by_one)
    rnd = random.Random(5)
    spec = model_from_dict({"spec": "bus1", "constants": MULTICAST3}).spec
    states = absorbing_states(spec, 6000)
    failures = sum(commutation_failure(spec, s, rnd, walks=4, steps=12)[0] is not None for s in rnd.sample(states, 300))
    assert failures


def test_syncs_of_one_clock_are_commuting_updates() -> None:
    """bus1 declares its clock syncs as updates; a no-op sync touches no clock at all."""
    model = model_from_dict({"spec": "bus1", "constants": {"peers": 3, "sends": 1}})
    spec = model.spec
    seen = 0
    for s in reachable(spec, 5000):
        for p, tx in enumerate(s[2]):
            if tx and tx[1] == 2:  # SYNCING
                fp = spec.footprints(s)[p]
                d = spec.dest_table[s[3][0][p][tx[0] % spec.stride][0]][tx[2]]
                clock = spec.var["clock"][d] | spec.var["seen"][d]
                assert not (fp[0] | fp[1]) & clock  # neither read nor written
                assert bool(fp[4] & clock) == (s[0][d] < tx[3])  # updated unless already there
                seen += 1
    assert seen


def test_stubborn_choices_are_memoised() -> None:
    """The memo keyed by the spec's reduction key returns what a cold computation
    does, and a caller changing the returned list does not change the memo."""
    from ordercheck.checker.engine import reduce as red

    model = model_from_dict({"spec": "bus1", "constants": {"peers": 3, "sends": 1}, "check": {"properties": LIBRARY_PROPS}})
    spec = model.spec
    state = spec.init_states()[0]
    for _ in range(6):  # a few steps in, so that transactions are under way
        state = spec.next_states(state)[0][1]
    succ = spec.next_states(state)
    memo = red._memo_for(spec, 0)
    memo.clear()
    cold = red.stubborn(spec, state, succ, 0)
    assert cold is not None and len(memo) == 1
    cold[0].append(999)
    warm = red.stubborn(spec, state, succ, 0)
    assert warm is not None and 999 not in warm[0]
    memo.clear()
    assert red.stubborn(spec, state, succ, 0) == warm


@pytest.mark.parametrize("constants", [MULTICAST3, {"peers": 2, "sends": 2}])
def test_visible_masks_cover_every_clock_and_queue_change(constants: dict) -> None:
    """A property reading ``clock`` or ``queue`` must see every action that changes a
    clock or a queue: the acting peer's next-step writes or updates meet the visible
    mask of that kind for the peer changed (a stable head's delivery writes ``pop``, an
    absorbed sync updates ``seen``; both are visible)."""
    spec = model_from_dict({"spec": "bus1", "constants": constants}).spec
    n = spec.peers
    masks = {kind: spec.visible_mask((kind,)) for kind in ("clock", "queue")}
    changed = 0
    for s in reachable(spec, 3000):
        fps = spec.footprints(s)
        for label, t in spec.next_states(s):
            fp = fps[spec.actor(label)]
            for at, kind in ((0, "clock"), (1, "queue")):
                for q in range(n):
                    if s[at][q] != t[at][q]:
                        changed += 1
                        peer = sum(1 << (k * n + q) for k in range(len(spec.var)))
                        assert (fp[1] | fp[4]) & masks[kind] & peer, (kind, q, label, s)
    assert changed


def test_choice_rule_prefers_fewest_actions_then_least_left_to_do() -> None:
    """The tie-breaks of :func:`ordercheck.checker.engine.reduce._stubborn`, on hand-made footprints of
    three independent processes (no conflicts: each closes to itself): fewest enabled
    actions first, then the fewest variables in the later footprint, then the lowest
    process; and the answer is the same on every call."""
    from ordercheck.checker.engine.reduce import _stubborn

    def fp(own: int, later: int) -> tuple[int, int, int, int, int, int]:
        return (own, own, own | later, own | later, 0, 0)

    # Process 0 has two enabled actions; 1 and 2 one each, 2 with less left to do.
    fps = [fp(1 << 0, 0b111 << 8), fp(1 << 1, 0b111 << 12), fp(1 << 2, 0b1 << 16)]
    actors = (0, 0, 1, 2)
    assert _stubborn(fps, actors, 0) == ((3,), 1 << 2)
    # Equal later footprints: the lowest process with one action.
    fps[2] = fp(1 << 2, 0b111 << 16)
    assert _stubborn(fps, actors, 0) == ((2,), 1 << 1)
    assert all(_stubborn(fps, actors, 0) == ((2,), 1 << 1) for _ in range(3))
    # A conflict pulls process 1 into 2's set (2's next write meets 1's later read):
    # {1, 2} has two actions, so 1 alone wins even with more left to do.
    fps = [fp(1 << 0, 0b111 << 8), fp(1 << 1, (0b111 << 12) | (1 << 2)), fp(1 << 2, 0b1 << 16)]
    assert _stubborn(fps, actors, 0) == ((2,), 1 << 1)


def closed(spec, fps, members: int) -> bool:
    """Whether no process outside ``members`` may later touch what a member's next
    actions read or write (the closure condition restated independently)."""
    n = len(fps)
    for x in range(n):
        if not members >> x & 1:
            continue
        nr, nw, _lr, _lw, nu, _lu = fps[x]
        for q in range(n):
            if members >> q & 1:
                continue
            _r, _w, lr, lw, _u, lu = fps[q]
            if nw & (lr | lw | lu) or nr & (lw | lu) or nu & (lr | lw):
                return False
    return True


@pytest.mark.parametrize("constants", [MULTICAST3, {"peers": 2, "sends": 2, "destinations": "subsets", "signals": 1}])
def test_chosen_sets_are_closed_and_deterministic(constants: dict) -> None:
    """Whatever the tie-breaks prefer, the chosen set must be closed under conflicts,
    hold every enabled action of its members and leave one out; and the choice is a
    function of the state: a second spec instance, with the memo cleared, chooses the
    same set for every state, and the reduced search gives the same counts twice."""
    from ordercheck.checker.engine import reduce as red

    model = model_from_dict({"spec": "bus1", "constants": constants, "check": {"properties": LIBRARY_PROPS}})
    spec = model.spec
    other = model_from_dict({"spec": "bus1", "constants": constants}).spec
    states = reachable(spec, 3000)
    choices = []
    for s in states:
        out = spec.next_states(s)
        found = red.stubborn(spec, s, out, 0)
        choices.append(found)
        if found is None:
            continue
        chosen, members = found
        assert closed(spec, spec.footprints(s), members)
        assert chosen == [i for i, (label, _t) in enumerate(out) if members >> spec.actor(label) & 1]
        assert 0 < len(chosen) < len(out)
    assert any(choices)
    red._MEMOS.clear()
    assert [red.stubborn(other, s, other.next_states(s), 0) for s in reversed(states)] == choices[::-1]
    first = run(model, por=True)
    red._MEMOS.clear()
    again = run(model, por=True)
    assert (first.stats.distinct_states, first.stats.transitions) == (again.stats.distinct_states, again.stats.transitions)


def terminal_states(spec, por: bool) -> set:
    """The terminal states reachable from the initial ones, exploring every enabled
    action, or only those the engine's expansion takes under partial-order reduction
    (:meth:`ordercheck.checker.engine.reduce.Expander.expand`: stubborn sets, memoised by the
    spec's reduction key, with only the chosen processes' steps generated)."""
    from ordercheck.checker.engine.reduce import Expander, Reductions

    expand = Expander(spec, Reductions(por=por)).expand
    seen = set(spec.init_states())
    todo = list(seen)
    ends = set()
    reduced_somewhere = False
    while todo:
        s = todo.pop()
        _owner, _pos, succ, _counts, reduced = expand([s])
        reduced_somewhere |= reduced[0]
        if not succ:
            ends.add(s)
            continue
        for t in succ:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    assert reduced_somewhere == por  # the reduced search did take proper subsets
    return ends


@pytest.mark.parametrize(
    "ablation", [None, "block_destinations", "sync_sender", "sync_receivers_before_queueing", "tiebreak_by_sender"]
)
def test_reduced_search_keeps_every_terminal_state(ablation: str | None) -> None:
    """What the stubborn sets guarantee, checked directly: bus1 with three peers
    multicasting once each reaches exactly the same terminal states reduced and
    unreduced (the library's stable properties and deadlock freedom rest on that), for
    the algorithm and each of its ablations. (Absorbing syncs off by one loses 11 of
    the 56 terminal states here, with every verdict unchanged.)"""
    constants: dict = {"peers": 3, "sends": 1}
    if ablation:
        constants[ablation] = False
    spec = model_from_dict({"spec": "bus1", "constants": constants}).spec
    full = terminal_states(spec, False)
    assert full and terminal_states(spec, True) == full


@pytest.mark.parametrize(
    ("spec", "constants", "applied"),
    [
        ("bss", {"peers": 3, "sends": 1}, "deferred_arrivals"),
        ("lamport_total", {"peers": 2, "sends": 1}, "solo_steps"),
        ("skeen", {"peers": 2, "sends": 1}, "solo_steps"),
    ],
)
def test_results_say_which_refinement_of_por_was_applied(spec: str, constants: dict, applied: str) -> None:
    """A result's ``reductions`` names deferred arrivals and solo steps where the search
    took them, and neither with partial-order reduction off; with an ``eventually``
    property checked, nothing is deferred (its verdict rests on ``acyclic``)."""
    props = ["fifo", "causal", "integrity", "total", "eventual_delivery"]
    if applied == "deferred_arrivals":
        awaiting = model_from_dict({"spec": spec, "constants": constants, "check": {"properties": props}}, "m.toml")
        assert not run(awaiting).reductions["deferred_arrivals"]
        props = props[:-1]
    model = model_from_dict({"spec": spec, "constants": constants, "check": {"properties": props}}, "m.toml")
    reduced = run(model)
    assert reduced.reductions["por"] and reduced.reductions[applied], reduced.reductions
    other = ({"deferred_arrivals", "solo_steps"} - {applied}).pop()
    assert not reduced.reductions[other]
    full = run(model, por=False)
    assert not full.reductions["deferred_arrivals"] and not full.reductions["solo_steps"]
    assert verdicts(full) == verdicts(reduced)

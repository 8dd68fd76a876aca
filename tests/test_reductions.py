"""Symmetry and partial-order reduction give the verdicts of the unreduced search."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.model import load_model, model_from_dict
from checker.reduce import plan, stubborn
from checker.run import Options, check_model
from checker.trace import replay

MODELS = sorted((Path(__file__).resolve().parent.parent / "models").glob("*.toml"))
LIBRARY_PROPS = ["fifo", "causal", "total", "global_lock", "eventual_delivery", "deadlock_free"]


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
    assert sym.reductions == {"symmetry": True, "por": False}
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


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs, st.randoms(use_true_random=False))
def test_stubborn_actions_commute_with_outside_runs(cfg: dict, rnd) -> None:
    """The stubborn-set condition itself, on sampled states: for an action ``t`` of the
    chosen set and a random run ``w`` of the processes outside it, ``t`` is still enabled
    after ``w``, and ``w`` then ``t`` reaches the state ``t`` then ``w`` does. This checks
    every footprint a spec declares (now and later, updates included) against its
    next-state function."""
    spec = build(cfg).spec
    states = reachable(spec, 600)
    checked = 0
    for s in rnd.sample(states, k=min(100, len(states))):
        out = list(spec.next_states(s))
        found = stubborn(spec, s, out, 0)
        if found is None:
            continue
        chosen, members = found
        for i in chosen:
            t = out[i][0]
            for _walk in range(3):
                u, labels = s, []
                for _k in range(rnd.randint(1, 8)):
                    options = [lab for lab, _x in spec.next_states(u) if not members >> spec.actor(lab) & 1]
                    if not options:
                        break
                    lab = rnd.choice(options)
                    labels.append(lab)
                    u = step(spec, u, lab)
                after = step(spec, u, t)
                assert after is not None, (s, t, labels)
                v = step(spec, s, t)
                for lab in labels:
                    v = step(spec, v, lab)
                    assert v is not None, (s, t, labels)
                assert v == after, (s, t, labels)
                checked += bool(labels)
    if cfg["spec"] == "bus1" and cfg["sends"] and cfg["peers"] == 2:
        assert checked  # a two-peer bus1 configuration always gives some reduced state


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
                clock = spec.var["clock"][d]
                assert not (fp[0] | fp[1]) & clock  # neither read nor written
                assert bool(fp[4] & clock) == (s[0][d] < tx[3])  # updated unless already there
                seen += 1
    assert seen


def test_stubborn_choices_are_memoised() -> None:
    """The memo keyed by the spec's reduction key returns what a cold computation
    does, and a caller changing the returned list does not change the memo."""
    from checker import reduce as red

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

"""bus1 findings without modelling artifacts, and the candidate fixes as switches (issue 35).

Late joiners are not destinations of a destruction, so a failed join breaks only the
handle properties; a send to a released anchor fails with ESHUTDOWN as in the C; each
finding has a model that shows it and a fix model, differing only in the fix's switches,
where it is gone (docs/explanation/bus1-implementation.md, "Fixes").
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections import deque

import pytest

from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model, model_from_dict
from ordercheck.specs import bus1_locks
from ordercheck.specs.bus1_impl import F_RELEASED, NODES, PCS, Bus1Impl
from tests.conftest import MODELS

HANDLE = {"handle_valid_iff_before_destroy", "valid_handle_notified"}
"""What a failed late join really breaks: the handle arrives valid although its message is
ordered after the destruction, and its holder is never notified."""

FAILED_JOIN = {
    "bus1-impl-late-join-failed": HANDLE,
    "bus1-impl-handle-race": HANDLE,
    "bus1-impl-life-acquire-each": HANDLE,
    "bus1-impl-life-addresses-descending": HANDLE,
    "bus1-impl-synthetic-front": HANDLE | {"no_insert_before_front"},  # and finding D
    "bus1-impl-synthetic-front-flipped": HANDLE,
    "bus1-impl-synthetic-causality": {"causal"},  # finding G at c (the only property it checks)
    "bus1-impl-lock-owner-gone": {"lockdep_held", "map_one_writer", "no_leaked_pin"},  # finding H
    "bus1-impl-lock-disconnect": {"lockdep_held", "map_one_writer", "no_leaked_pin", "no_use_after_free",
                                  "queue_drained", "eventual_delivery", "no_warn"},  # finding H
    "bus1-impl-life-transfer-window": {"valid_handle_notified"},  # F through a transfer (J)
    "bus1-impl-life-stale-handle": HANDLE,  # finding K (F's fix on: the failed join reads INVALID)
}
"""Every model where a late join fails (its ``late_join`` witness is reached), and the only
properties it may break: the handle's, and those of the other finding the model shows."""

RUN = ("bus1-impl-late-join-failed", "bus1-impl-handle-race", "bus1-impl-life-addresses-descending",
       "bus1-impl-life-transfer-window")
"""The cheapest of them, checked here (the others' verdicts are checked against their
``[expect]`` by tests/test_bus1_impl.py, synthetic-causality by ``ordercheck check models/``)."""


def violated(name: str) -> set[str]:
    expect = tomllib.loads((MODELS / f"{name}.toml").read_text())["expect"]
    kinds = {p.name: p.kind for p in load_model(MODELS / f"{name}.toml").properties}
    return {k for k, v in expect.items() if v == "violated" and kinds[k] != "sometimes"}


@pytest.mark.parametrize("name", sorted(FAILED_JOIN))
def test_a_failed_join_model_expects_only_what_the_failed_join_breaks(name):
    assert violated(name) == FAILED_JOIN[name]


@pytest.mark.parametrize("name", RUN)
def test_a_failed_join_breaks_the_handle_properties_and_nothing_in_the_history(name):
    result = check_model(load_model(MODELS / f"{name}.toml"), Options(progress=False))
    broken = {k for k, v in result.properties.items() if v.status == "violated"
              and k not in ("late_join", "causal_race")}
    assert broken == FAILED_JOIN[name]


def test_every_model_with_a_failed_join_is_listed():
    """A model that checks the late_join witness and expects it reached is in FAILED_JOIN."""
    for path in MODELS.glob("bus1-impl-*.toml"):
        data = tomllib.loads(path.read_text())
        if data.get("expect", {}).get("late_join") == "holds":
            assert path.stem in FAILED_JOIN or path.stem.endswith("-fixed"), path.stem


def test_a_send_to_a_released_anchor_fails_with_eshutdown():
    """bus1-impl-reset-race: once a's reset has released node 0's anchor (n_weak 0), b's send to
    it fails in bus1_peer_new_message (peer.c:749-752) and stages nothing; before, it starts."""
    spec = load_model(MODELS / "bus1-impl-reset-race.toml").spec
    assert isinstance(spec, Bus1Impl)
    b = spec.names.index("b")
    seen, todo = set(), deque(spec.init_states())
    outcomes = set()
    while todo:
        s = todo.popleft()
        if s in seen:
            continue
        seen.add(s)
        for label, nxt in spec.next_states(s):
            if label[0] == "bus1_peer_ioctl_send" and label[1] == b:
                released = bool(s[NODES][0] & F_RELEASED)
                outcomes.add((released, label[-1] == "ESHUTDOWN"))
                assert label[-1] == "ESHUTDOWN" if released else label[3] == 1 << spec.names.index("a"), label
                if released:
                    assert nxt[PCS][b] == 1  # the send is over: nothing staged
            todo.append(nxt)
    assert outcomes == {(False, False), (True, True)}


FIXES = {
    # finding: (the model showing it, its fix model, the properties the fix repairs, the fix's constants)
    "C, destination": ("bus1-impl-destroy-race", "bus1-impl-destroy-race-fixed",
                       {"delivered_iff_before_destroy", "owner_no_message_after_destroy"}, {"liveness": "key"}),
    "C, passed handle": ("bus1-impl-handle-tie", "bus1-impl-handle-tie-fixed",
                         {"handle_valid_iff_before_destroy"}, {"liveness": "key"}),
    "C, refinement": ("bus1-impl-refines-destroy", "bus1-impl-refines-destroy-fixed",
                      {"refines_bus1"}, {"liveness": "key"}),
    "F": ("bus1-impl-late-join-failed", "bus1-impl-late-join-failed-fixed", HANDLE, {"join_failure": "invalid"}),
    "F with C": ("bus1-impl-handle-race", "bus1-impl-handle-race-fixed", HANDLE,
                 {"join_failure": "invalid", "liveness": "key"}),
    "D": ("bus1-impl-synthetic-front", "bus1-impl-synthetic-front-fixed", HANDLE | {"no_insert_before_front"},
          {"synthetic_tie": "flipped", "join_failure": "invalid", "liveness": "key"}),
    "E": ("bus1-impl-reset-race", "bus1-impl-reset-race-fixed",
          {"front_consistent", "queue_drained", "eventual_delivery"}, {"flush_front": True}),
    "E, later traffic": ("bus1-impl-life-reset-then-traffic", "bus1-impl-life-reset-then-traffic-fixed",
                         {"front_consistent", "queue_drained", "eventual_delivery"}, {"flush_front": True}),
    "B": ("bus1-impl-lock-install", "bus1-impl-lock-install-fixed", {"lockdep_held"}, {"install_lock": True}),
    "A": ("bus1-impl-lock-stage-race", "bus1-impl-lock-stage-fixed",
          {"one_writer", "lockdep_held", "clock_monotonic", "no_insert_before_front", "front_linked",
           "dequeue_increasing", "eventual_delivery", "queue_drained", "staging_bounds", "no_warn",
           "front_consistent"},
          {"stage_lock": True}),
    "G": ("bus1-impl-synthetic-causality", "bus1-impl-synthetic-causality-fixed", {"causal"},
          {"join_sealed": "wait"}),
    "H, reset": ("bus1-impl-lock-owner-gone", "bus1-impl-lock-owner-gone-fixed",
                 {"lockdep_held", "map_one_writer", "no_leaked_pin"}, {"acquire_owner": "pinned"}),
    "H, disconnect": ("bus1-impl-lock-disconnect", "bus1-impl-lock-disconnect-fixed",
                      {"lockdep_held", "map_one_writer", "no_leaked_pin", "no_use_after_free", "queue_drained",
                       "eventual_delivery", "no_warn"}, {"acquire_owner": "pinned"}),
    "I": ("bus1-impl-life-transfer-invalid", "bus1-impl-life-transfer-invalid-fixed", {"causal"},
          {"transfer_check": "join"}),
    "J": ("bus1-impl-life-transfer-window", "bus1-impl-life-transfer-window-fixed", {"valid_handle_notified"},
          {"transfer_check": "join"}),
    "K": ("bus1-impl-life-stale-handle", "bus1-impl-life-stale-handle-fixed", HANDLE,
          {"stale_handle": "invalid"}),
}


@pytest.mark.parametrize("finding", sorted(FIXES))
def test_each_finding_has_a_model_violated_and_a_fix_model_holding(finding):
    """The suite's [expect] tables (checked by ordercheck check models/ and test_bus1_impl.py)
    show the finding and its fix: the fix model differs from the finding's model only in the
    fix's constants, checks the same properties, holds every property the finding breaks, and
    every other verdict is unchanged."""
    shown, fixed, repaired, switches = FIXES[finding]
    a = tomllib.loads((MODELS / f"{shown}.toml").read_text())
    b = tomllib.loads((MODELS / f"{fixed}.toml").read_text())
    assert {k: v for k, v in b["constants"].items() if a["constants"].get(k) != v} == switches
    assert set(a["constants"]) <= set(b["constants"])
    assert a.get("check") == b.get("check")
    assert {k for k, v in a["expect"].items() if v == "violated"} >= repaired
    for prop in repaired:
        assert b["expect"][prop] == "holds", prop
    for prop, verdict in a["expect"].items():
        if prop not in repaired and prop != "late_join":
            assert b["expect"][prop] == verdict, prop


def test_flipping_the_synthetic_tie_alone_turns_d_into_f():
    """The review's remark: the flipped tie test removes D's WARN and leaves a failed join."""
    a = tomllib.loads((MODELS / "bus1-impl-synthetic-front-flipped.toml").read_text())["expect"]
    assert a["no_insert_before_front"] == "holds"
    assert all(a[p] == "violated" for p in HANDLE)


def test_a_transfer_in_steps_lets_a_destruction_in_between_and_its_join_fail():
    """transfer = "steps": the liveness check (peer.c:472) and the acquire (peer.c:518) are two
    steps; the destruction commits between them, the target's handle joins late and fails, and
    the target's user holds a valid handle never notified. One step closes the window."""
    result = check_model(load_model(MODELS / "bus1-impl-life-transfer-window.toml"), Options(progress=False))
    v = result.properties["valid_handle_notified"]
    assert v.status == "violated"
    labels = [s.label for s in v.trace[1:]]
    check = next(i for i, lab in enumerate(labels) if lab[0] == "bus1_handle_is_live")
    acquire = next(i for i, lab in enumerate(labels) if lab[0] == "bus1_peer_transfer")
    assert any(lab[0] == "bus1_queue_commit_staged" for lab in labels[check:acquire])
    assert labels[acquire][-1] == "J3 failed"
    data = tomllib.loads((MODELS / "bus1-impl-life-transfer-window.toml").read_text())
    atomic = model_from_dict({"spec": "bus1_impl", "constants": {**data["constants"], "transfer": "atomic"}}, "m")
    props = [p for p in atomic.spec.properties() if p.name in ("valid_handle_notified", "late_join")]
    closed = check_model(dataclasses.replace(atomic, properties=props, expect={}), Options(progress=False))
    assert closed.properties["valid_handle_notified"].status == "holds"
    assert closed.properties["late_join"].status == "violated"  # unreachable: no join fails


def walk(spec) -> dict[tuple, tuple]:
    """Every reachable state of ``spec``, each with the label of a step into it."""
    seen: dict[tuple, tuple] = {s: () for s in spec.init_states()}
    todo = deque(seen)
    while todo:
        s = todo.popleft()
        for label, t in spec.next_states(s):
            if t not in seen:
                seen[t] = label
                todo.append(t)
    return seen


def spec_with(name: str, **constants):
    data = tomllib.loads((MODELS / f"{name}.toml").read_text())
    return model_from_dict({"spec": "bus1_impl", "constants": {**data["constants"], **constants}}, "m").spec


def test_a_transfer_deciding_from_its_acquire_answers_invalid_only_for_a_failed_join():
    """transfer_check = "join" (I, J): in the window model the destruction commits between the two
    steps, c's join fails and the transfer answers INVALID (releasing c's handle); no transfer
    answers INVALID before its acquire, and none hands out a handle whose join failed."""
    answers = {lab[-1] for lab in walk(spec_with("bus1-impl-life-transfer-window-fixed")).values()
               if lab and lab[0] == "bus1_peer_transfer"}
    assert "J3 failed: INVALID" in answers
    assert not any(a == "INVALID" or a.endswith("failed") for a in answers), answers
    code = {lab[-1] for lab in walk(spec_with("bus1-impl-life-transfer-window")).values()
            if lab and lab[0] == "bus1_peer_transfer"}
    assert "J3 failed" in code  # the code hands c's user the handle whose join failed


def test_a_join_of_a_sealed_destruction_waits_for_its_commit():
    """join_sealed = "wait" (G): on D's configuration, whose shortest trace is a J2 join, no
    acquire joins a sealed destruction (no J2), some acquire is held back while the destruction
    is sealed, and the joins happen as J3 after the commit."""
    spec = spec_with("bus1-impl-synthetic-front", join_sealed="wait")
    states = walk(spec)
    cases = {lab[-1] for lab in states.values() if lab and lab[0] == "bus1_handle_acquire"}
    assert not any("J2" in c for c in cases) and any("J3" in c for c in cases), cases
    assert any(s[PCS] and any(s[3]) and spec.waits_for_commit(s, p) for s in states
               for p in range(spec.peers) if s[3][p])
    code = {lab[-1] for lab in walk(spec_with("bus1-impl-synthetic-front")).values()
            if lab and lab[0] == "bus1_handle_acquire"}
    assert any("J2" in c for c in code)


def test_a_stale_handle_of_a_destroyed_node_reads_invalid_with_the_fix():
    """Finding K: c's handle passed after a's reset released node 0 is stale; with the code it is
    installed valid (ts 0), with stale_handle = "invalid" b receives it INVALID."""
    def installs(spec):
        return {lab[-1] for lab in walk(spec).values() if lab and lab[0] == "bus1_peer_ioctl_recv"}
    acquired = {lab[-1] for lab in walk(spec_with("bus1-impl-life-stale-handle-fixed")).values()
                if lab and lab[0] == "bus1_handle_acquire"}
    assert "stale: INVALID" in acquired
    assert "n0:INVALID" in installs(spec_with("bus1-impl-life-stale-handle-fixed"))
    # C's and F's fixes alone (the finding model) leave K: the stale handle is installed valid
    model = load_model(MODELS / "bus1-impl-life-stale-handle.toml")
    props = [p for p in model.spec.properties() if p.name == "handle_valid_iff_before_destroy"]
    v = check_model(dataclasses.replace(model, properties=props, expect={}), Options(progress=False)).properties[
        "handle_valid_iff_before_destroy"]
    labels = [s.label for s in v.trace[1:]]
    assert v.status == "violated" and labels[-1][-1] == "n0"
    assert any(lab[0] == "bus1_handle_acquire" and lab[-1] == "stale" for lab in labels)


def test_h_followed_past_the_assertion_reaches_the_map_races_and_the_dead_transaction():
    """owner_gone_steps on bus1-impl-lock-disconnect: b's splice lands inside a's walk of node 0's
    map and after its reset to empty; the join that tested SEALED unlocked pushes after
    bus1_peer_flush returned (no_use_after_free) and b's queue is left with a staging entry
    nobody commits (queue_drained). With acquire_owner = "pinned" the acquire locks a, and none
    of it happens."""
    result = check_model(load_model(MODELS / "bus1-impl-lock-disconnect.toml"), Options(progress=False))
    uaf = result.properties["no_use_after_free"]
    labels = [s.label for s in uaf.trace[1:]]
    tested = next(i for i, lab in enumerate(labels) if lab[0] == "bus1_handle_acquire" and "SEALED clear" in lab[-1])
    assert labels[-1][0] == "bus1_tx_join" and "(freed)" in labels[-1][-1]
    assert any(lab[0] == "bus1_queue_flush" for lab in labels[tested:])  # a's cleanup returned in between
    drained = result.properties["queue_drained"]
    assert drained.status == "violated"
    assert "notify(b,n0)@1" in drained.explanation  # an odd timestamp: staging, never committed
    race = [s.label for s in result.properties["map_one_writer"].trace[1:]]
    walk_at = next(i for i, lab in enumerate(race) if lab[0] == "bus1_peer_flush" and lab[-1].endswith("walk the map"))
    assert race[-1][0] == "bus1_handle_acquire" and walk_at < len(race) - 1


# -- G's fix at lock level ---------------------------------------------------------------

SEALED_LOCK = {"peers": 3, "locks": True, "stage_lock": True, "install_lock": True}
"""Lock-level configurations where a destination's acquire races c's destruction of node 0:
c is the owner, at the highest address, so lock2(b, c) takes b's lock first and the
destruction can seal between the two locks (the acquire then finds it sealed under them)."""
SEALED_SEND = {**SEALED_LOCK, "nodes": "cb", "handles": ["a", "a"],
               "script": {"c": ["destroy 0"], "a": ["send 1 +0"]}}
"""a sends b a message carrying its handle to node 0 (4,346 states with the fix)."""
SEALED_TRANSFER = {**SEALED_LOCK, "nodes": "c", "handles": ["a"], "transfer_check": "join",
                   "script": {"c": ["destroy 0"], "a": ["transfer 0 b"]}}
"""a transfers its handle to node 0 to b (191 states with the fix)."""


def lock_spec(constants: dict, join_sealed: str):
    return model_from_dict({"spec": "bus1_impl", "constants": {**constants, "join_sealed": join_sealed}}, "m").spec


def first_sealed(code, fixed) -> tuple[tuple, int]:
    """The first state (breadth first, ``code``'s steps) where a peer with no section open would
    start an acquire section that joins a sealed, uncommitted destruction, and that peer."""
    seen = set(code.init_states())
    todo = deque(seen)
    while todo:
        s = todo.popleft()
        for p in range(code.peers):
            if not s[bus1_locks.THREADS][p] and bus1_locks.sealed_acquire(fixed, s, p):
                return s, p
        for _label, t in code.next_states(s):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    raise AssertionError("no acquire races a sealed destruction")


@pytest.mark.parametrize("constants, section", [(SEALED_SEND, "bus1_handle_acquire"),
                                                (SEALED_TRANSFER, "bus1_peer_transfer")], ids=["send", "transfer"])
def test_at_lock_level_an_acquire_joining_a_sealed_destruction_waits(constants, section):
    """join_sealed = "wait" at lock level (G): where the code's acquire section (a payload
    handle's, a transfer's) takes its first lock and goes on to join the sealed destruction
    (J2), the fix takes no lock; and where the code's thread holds the section's locks and
    joins J2, the fix drops them, changing nothing else, and waits."""
    code, fixed = lock_spec(constants, "synthetic"), lock_spec(constants, "wait")
    s, p = first_sealed(code, fixed)
    steps = [(lab, t) for lab, t in code.next_states(s) if lab[1] == p]
    assert [lab[0] for lab, _t in steps] == ["mutex_lock"] and steps[0][0][-1] == section
    assert not [lab for lab, _t in fixed.next_states(s) if lab[1] == p]
    while True:  # the code's thread takes the section's locks, then joins
        (label, s2), = [(lab, t) for lab, t in code.next_states(s) if lab[1] == p]
        if label[0] != "mutex_lock":
            break
        s = s2
    assert label[0] == section and "J2" in label[-1], label
    (label, t), = [(lab, t) for lab, t in fixed.next_states(s) if lab[1] == p]
    assert label[0] == section and label[-1].endswith("sealed: unlock, wait"), label
    assert p + 1 in s[bus1_locks.LOCKS] and not t[bus1_locks.THREADS][p]
    assert t[bus1_locks.LOCKS] == tuple(0 if v == p + 1 else v for v in s[bus1_locks.LOCKS])
    assert [t[i] for i in range(len(t)) if i not in (bus1_locks.LOCKS, bus1_locks.THREADS)] == \
        [s[i] for i in range(len(s)) if i not in (bus1_locks.LOCKS, bus1_locks.THREADS)]
    cases = {lab[-1] for lab in walk(fixed).values() if lab and lab[0] == section}
    assert not any("J2" in c for c in cases) and any("J3" in c for c in cases), cases


def test_join_sealed_is_a_lock_level_switch_and_a_bit_checked_transfer_never_waits():
    """join_sealed = "wait" loads at lock level (it was refused there), on every lock-level
    model file; a transfer that transfer_check = "bit" answers INVALID (the node is destroyed)
    acquires nothing, so with the fix it never waits, at lock level or outside it: the same
    states as the code's (outside it the Python model waited, TLC did not: 47 states, 48)."""
    for path in sorted(MODELS.glob("bus1-impl-lock-*.toml")):
        data = tomllib.loads(path.read_text())
        model_from_dict({"spec": data["spec"], "constants": {**data["constants"], "join_sealed": "wait"}}, path.name)
    bit = {**SEALED_TRANSFER, "transfer_check": "bit"}
    assert set(walk(lock_spec(bit, "wait"))) == set(walk(lock_spec(bit, "synthetic")))
    atomic = {k: v for k, v in bit.items() if k not in SEALED_LOCK or k == "peers"}  # the same outside it
    assert set(walk(lock_spec(atomic, "wait"))) == set(walk(lock_spec(atomic, "synthetic")))

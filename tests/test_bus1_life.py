"""bus1_impl's object lifecycle: node creation, handles passed and used, resets mid-script,
address and group tie orders. Model expectations are checked by ``tests/test_bus1_impl.py::
test_model_meets_its_expectations``; these tests look at what the runs show."""

from __future__ import annotations

import dataclasses
import tomllib

import pytest

from ordercheck.checker import Property
from ordercheck.checker.api.errors import InputError
from ordercheck.checker.engine.bfs import search
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model, model_from_dict
from ordercheck.specs.bus1_impl import F_ABSENT, GHOST, NODES, RANKS, Q
from ordercheck.specs.history import DELIVER
from tests.conftest import MODELS


def spec_of(name: str, **override):
    data = tomllib.loads((MODELS / f"{name}.toml").read_text())
    return model_from_dict({"spec": data["spec"], "constants": {**data["constants"], **override}}, name).spec


def verdict(name: str, prop: str):
    return check_model(load_model(MODELS / f"{name}.toml"), Options(progress=False)).properties[prop]


def delivered(spec, peer: str, message: str):
    """A witness: ``peer`` has delivered ``message`` (named like ``a2``)."""
    q = spec.names.index(peer)
    mid = spec.names.index(message[0]) * spec.stride + int(message[1:]) - 1
    code = mid << 3 | DELIVER
    return Property.sometimes(f"{peer} delivers {message}", lambda s: "yes" if code in s[GHOST][1][q] else None)


def test_a_stuck_queue_after_a_reset_holds_back_traffic_sent_after_it():
    """E's damage beyond the reset: a's own message to a node created after the reset (a2) is
    never delivered in the stuck runs, and is delivered in the others."""
    v = verdict("bus1-impl-life-reset-then-traffic", "eventual_delivery")
    assert v.status == "violated" and "a2 to a" in v.explanation
    labels = [s.label for s in v.trace[1:]]
    flush = max(i for i, lab in enumerate(labels) if lab[0] == "bus1_queue_flush")
    assert any(lab[0] == "bus1_peer_ioctl_send" and lab[2] == 1 for lab in labels[flush:])  # a2 starts after it
    spec = spec_of("bus1-impl-life-reset-then-traffic")
    witness = delivered(spec, "a", "a2")
    assert witness.name in search(spec, [witness]).decisions


def test_a_node_is_created_by_the_send_that_first_names_it():
    spec = spec_of("bus1-impl-life-create-pass")
    (init,) = {s[NODES] for s in spec.init_states()}
    assert init[0] & F_ABSENT
    created = Property.sometimes("created", lambda s: None if s[NODES][0] & F_ABSENT else "created")
    before_send = Property.sometimes(
        "used before created", lambda s: "yes" if s[NODES][0] & F_ABSENT and any(s[GHOST][0][1]) else None
    )
    found = search(spec, [created, before_send], stop_when_decided=False).decisions
    assert "created" in found and "used before created" not in found  # b waits for the handle
    assert found["created"].index > 0


def test_a_created_and_passed_node_is_used_and_still_shows_finding_c():
    v = verdict("bus1-impl-life-create-pass", "owner_no_message_after_destroy")
    assert v.status == "violated" and v.trace[-1].label[0] == "bus1_peer_ioctl_recv"
    fixed = spec_of("bus1-impl-life-create-pass", liveness="key")
    props = [p for p in fixed.properties() if p.name == "owner_no_message_after_destroy"] + [delivered(fixed, "a", "b1")]
    found = search(fixed, props, stop_when_decided=False).decisions
    assert "owner_no_message_after_destroy" not in found and "a delivers b1" in found


def test_the_other_address_order_turns_finding_d_into_a_failed_join():
    """Replay finding D's run (ascending addresses: b's synthetic entry ties with its
    notification for node 1 and, its address lower, becomes front) with the addresses
    descending: at the same step the join fails instead (J2 failed), and the model shows where
    that leads (valid_handle_notified broken, as in finding F)."""
    d = verdict("bus1-impl-synthetic-front", "no_insert_before_front")
    assert d.status == "violated" and d.trace[-1].label[-1] == "J2"
    spec = spec_of("bus1-impl-life-addresses-descending")
    ranks = tuple(d.trace[0].state["group_ranks"])
    (state,) = [s for s in spec.init_states() if s[RANKS] == ranks]
    for step in d.trace[1:-1]:
        (state,) = [t for lab, t in spec.next_states(state) if list(lab) == list(step.label)]
    last = [lab for lab, _t in spec.next_states(state) if list(lab[:-1]) == list(d.trace[-1].label[:-1])]
    assert last and last[0][-1] == "J2 failed"
    assert verdict("bus1-impl-life-addresses-descending", "no_insert_before_front").status == "holds"
    assert verdict("bus1-impl-life-addresses-descending", "valid_handle_notified").status == "violated"


def release_before_message_at_equal_ts(spec):
    """A witness: a queue holds a release notification and a data message at one timestamp,
    the notification ordered first (its group ranks lower)."""

    def check(s):
        for q in s[Q]:
            entries = q[4]
            for x, y in zip(entries, entries[1:], strict=False):
                if x[0] == y[0] and x[2] < spec.mbase <= y[2] and not s[NODES][spec.hsplit(x[2])[1]] & 1:
                    return f"release notification {x} before {y}"
        return None

    return Property.sometimes("release first", check)


@pytest.mark.parametrize("ties, found", [("with_release", True), ("all", False)])
def test_release_notifications_rank_among_transactions_only_with_release_ties(ties, found):
    spec = spec_of("bus1-impl-life-release-ties", ties=ties)
    witness = release_before_message_at_equal_ts(spec)
    assert (witness.name in search(spec, [witness]).decisions) == found


def test_scripts_may_go_on_after_a_reset_but_not_with_what_it_released():
    base = {"peers": 2, "nodes": "aa", "fresh": [1], "handles": ["b", ""]}
    model_from_dict({"spec": "bus1_impl", "constants": {**base, "script": {"a": ["reset", "send 1"]}}}, "m.toml")
    with pytest.raises(InputError) as info:
        model_from_dict({"spec": "bus1_impl", "constants": {**base, "script": {"a": ["reset", "send 0"]}}}, "m.toml")
    assert info.value.field == "constants.script.a[1]" and "released node 0" in str(info.value)
    # The refinement takes such scripts too (test_the_refinement_orders_traffic_after_a_reset).
    model_from_dict({"spec": "bus1_refinement", "constants": {**base, "script": {"a": ["reset", "send 1"]}}}, "m.toml")


def release_deliveries(spec) -> tuple[int, int]:
    """Over every transition of ``spec``: how many deliver a release notification while the
    node is still referenced (a user handle, or a message carrying it on its way), and how many
    while it is not."""
    from ordercheck.specs.bus1_impl import World

    seen = set(spec.init_states())
    todo = list(seen)
    referenced = unreferenced = 0
    while todo:
        s = todo.pop()
        for label, t in spec.next_states(s):
            if label[0] == "bus1_peer_peek" and str(label[2]).startswith("release notification"):
                node = int(label[2].rsplit("n", 1)[1])
                if World(spec, s).referenced(node):
                    referenced += 1
                else:
                    unreferenced += 1
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return referenced, unreferenced


def test_counted_references_notify_the_owner_only_when_nothing_references_the_node():
    """With the code's counts the owner's release notifications all come when the node is
    unreferenced, and some do come; with the holder approximation some come while c's message
    still carries node 0 to b (b's user release dropped b's handle although the message held it)."""
    counted = release_deliveries(spec_of("bus1-impl-life-refs"))
    assert counted[0] == 0 and counted[1] > 0
    holder = release_deliveries(spec_of("bus1-impl-life-refs", refs="holder"))
    assert holder[0] > 0


def test_a_transfer_answered_invalid_before_the_destruction_commits_breaks_causality():
    v = verdict("bus1-impl-life-transfer-invalid", "causal")
    assert v.status == "violated"
    labels = [s.label for s in v.trace[1:]]
    transfer = next(i for i, lab in enumerate(labels) if lab[0] == "bus1_peer_transfer")
    assert labels[transfer][-1] == "INVALID"
    seal = next(i for i, lab in enumerate(labels) if lab[0] == "bus1_queue_tick" and lab[1] == 0)
    assert transfer < seal  # answered before the destruction even has its commit timestamp
    spec = spec_of("bus1-impl-life-transfer-invalid")
    from ordercheck.specs.bus1_impl import PUBLIC, H

    given = Property.sometimes("c holds n0", lambda s: "yes" if s[H][spec.hidx(2, 0)][0] == PUBLIC else None)
    assert given.name in search(spec, [given]).decisions  # a transfer before the destruction succeeds
    locked = spec_of("bus1-impl-life-transfer-invalid", locks=True, stage_lock=True, install_lock=True)
    causal = [p for p in locked.properties() if p.name == "causal"]
    assert "causal" in search(locked, causal).decisions  # and at lock level too


def test_a_disconnect_fails_later_sends_and_drains_the_earlier_ones(monkeypatch):
    """From the deactivation on a send to the peer fails (ESHUTDOWN); a send that pinned it
    before holds the cleanup back, so nothing is left on its queue. Without the drain, the
    reset's finding E appears: the model's queue_drained is not vacuous there."""
    spec = spec_of("bus1-impl-life-disconnect")
    labels = set()
    seen = set(spec.init_states())
    todo = list(seen)
    while todo:
        s = todo.pop()
        for label, t in spec.next_states(s):
            labels.add(tuple(label[:1]) + tuple(label[3:]))
            if t not in seen:
                seen.add(t)
                todo.append(t)
    assert ("bus1_peer_ioctl_send", 0, "ESHUTDOWN") in labels
    assert ("bus1_peer_disconnect", "deactivated") in labels
    drained = [p for p in spec.properties() if p.name == "queue_drained"]
    assert not search(spec, drained, stop_when_decided=False).decisions
    undrained = spec_of("bus1-impl-life-disconnect")
    monkeypatch.setattr(undrained, "drained", lambda state, p: True)
    assert "queue_drained" in search(undrained, drained).decisions


def test_acquiring_a_handle_of_a_disconnecting_owner_asserts_locks_it_does_not_hold():
    from ordercheck.specs.bus1_impl import BAD, LOCKDEP_SITES

    spec = spec_of("bus1-impl-lock-disconnect")
    sites = {bit: Property.sometimes(text, (lambda b: lambda s: "yes" if s[BAD][1] & b else None)(bit))
             for bit, text in LOCKDEP_SITES.items()}
    found = search(spec, list(sites.values()), stop_when_decided=False).decisions
    assert sorted(k.split()[0] for k in found) == ["handle.c:346", "tx.c:236"]


def test_a_handle_received_twice_stays_the_users_after_one_release():
    """n_user as the code keeps it: b receives node 0 in two messages (two user references),
    releases one and still holds the handle; the owner is notified of the release only once
    b has released both and nothing carries node 0 any more, and it is notified. The
    one_user_ref mutant (a release lets go of the handle whatever n_user says) notifies the
    owner while b's user still holds a reference, on the same configuration."""
    from ordercheck.specs.bus1_impl import PCS, PUBLIC, USERS, H

    spec = spec_of("bus1-impl-life-refs-multi")
    b0 = spec.hidx(1, 0)
    twice = Property.sometimes("b's user holds two references to n0",
                               lambda s: "yes" if s[USERS][b0] == 2 and s[H][b0][0] == PUBLIC else None)
    kept = Property.sometimes("b released one of two and still holds n0",
                              lambda s: "yes" if s[PCS][1] == 1 and s[USERS][b0] == 1 and s[H][b0][0] == PUBLIC
                              else None)
    assert {twice.name, kept.name} <= set(search(spec, [twice, kept]).decisions)
    counted = release_deliveries(spec)
    assert counted[0] == 0 and counted[1] > 0
    mutant = release_deliveries(spec_of("bus1-impl-life-refs-multi", mutant="one_user_ref"))
    assert mutant[0] > 0


def test_a_script_may_release_a_received_handle_more_than_once():
    spec = spec_of("bus1-impl-life-refs-multi")
    releases = [op for op in spec.ops[1] if op.kind == "release"]
    assert [op.waits for op in releases] == [(0,), (0,)]  # both wait until b's user holds it
    with pytest.raises(InputError) as info:
        model_from_dict({"spec": "bus1_impl", "constants": {
            "peers": 3, "nodes": "ab", "handles": ["c", "c"], "script": {"b": ["release 0"]}}}, "m.toml")
    assert info.value.field == "constants.script.b[0]"  # nobody passes b a handle to node 0


def test_payload_handles_acquired_one_by_one_let_a_destruction_start_between_them():
    """acquire = "each": one step per payload handle, so a's destruction of both payload nodes
    can start between them (acquire_split, reached); the verdicts are those of one step for
    all on the same configuration, whose graph has no such state."""
    each = load_model(MODELS / "bus1-impl-life-acquire-each.toml")
    quiet = Options(progress=False, stop_when_decided=False)
    got = check_model(each, quiet)
    assert got.properties["acquire_split"].status == "holds"
    data = tomllib.loads((MODELS / "bus1-impl-life-acquire-each.toml").read_text())
    props = [p for p in data["check"]["properties"] if p != "acquire_split"]
    together = check_model(model_from_dict({"spec": "bus1_impl", "constants": {**data["constants"], "acquire": "together"},
                                            "check": {"properties": props}}, "m.toml"), quiet)
    assert {k: v.status for k, v in together.properties.items()} == \
        {k: v.status for k, v in got.properties.items() if k != "acquire_split"}
    assert together.stats.distinct_states < got.stats.distinct_states
    labels = [s.label[0] for s in got.properties["acquire_split"].trace[1:]]
    assert labels[-1] == "bus1_handle_destroy_locked"  # reached as a starts its destruction
    assert labels.count("bus1_handle_acquire") == 1  # c has acquired one of its two handles at b
    with pytest.raises(InputError) as info:
        model_from_dict({"spec": "bus1_impl", "constants": {**data["constants"], "locks": True}}, "m.toml")
    assert info.value.field == "constants.acquire"


def test_the_refinement_orders_traffic_after_a_reset():
    """A reset with later traffic refines the wiki algorithm, with a message sent after the
    reset delivered (the witness); the earlier abstract rule, under which a reset peer
    delivers nothing, refuses that run, so the later delivery is what the check decides."""
    from ordercheck.specs.bus1_refinement import Bus1Refinement

    model = load_model(MODELS / "bus1-impl-refines-reset-then-traffic.toml")
    quiet = Options(progress=False, stop_when_decided=False)
    got = check_model(model, quiet)
    assert {k: v.status for k, v in got.properties.items()} == {"refines_bus1": "holds",
                                                                 "delivered_after_reset": "holds"}

    class EverythingAfterResetDiscarded(Bus1Refinement):
        def apply(self, a, event):
            b, gone, reset, wiped = a
            if event[0] == "reset":
                event = (*event[:2], (1 << self.impl.n_nodes) - 1)  # every node, later ones too
            return super().apply((b, gone, reset, wiped), event)

    old = dataclasses.replace(model, spec=EverythingAfterResetDiscarded(**model.spec.values))
    refused = check_model(old, quiet).properties["refines_bus1"]
    assert refused.status == "violated"
    assert "a receives a2" in refused.explanation

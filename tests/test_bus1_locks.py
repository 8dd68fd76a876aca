"""bus1_impl at lock level (specs/bus1_locks.py): the unlocked places of the code and lock order.

Each lock model's expectations are checked by ``tests/test_bus1_impl.py::
test_model_meets_its_expectations``; these tests look at what the traces show.
"""

from __future__ import annotations

import pytest

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.engine.bfs import search
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model, model_from_dict
from tests.conftest import MODELS, model_checking


def verdict(name: str, prop: str, **override):
    """The verdict of ``prop`` on model ``name``, with constants overridden."""
    if override:
        model = model_checking(name, [prop], **override)
    else:
        model = load_model(MODELS / f"{name}.toml")
    return check_model(model, Options(progress=False)).properties[prop]


def labels(v) -> list[tuple]:
    return [s.label for s in v.trace[1:]]


def test_a_queue_is_written_while_another_thread_is_inside_its_unlocked_stage():
    """note A: the last step modifies c's queue while another thread has loaded c's clock in an
    unlocked bus1_queue_stage and not yet inserted its entry."""
    v = verdict("bus1-impl-lock-stage-race", "one_writer")
    assert v.status == "violated"
    steps = labels(v)
    inside = set()
    for lab in steps[:-1]:
        if lab[0] == "bus1_queue_stage" and "load" in lab[-1]:
            inside.add(lab[1])
        elif lab[0] == "bus1_message_stage":
            inside.discard(lab[1])
    assert inside - {steps[-1][1]}, steps
    assert "tx.c:139" in verdict("bus1-impl-lock-stage-race", "lockdep_held").explanation


def test_the_stale_stage_leaves_front_pointing_at_a_removed_entry():
    v = verdict("bus1-impl-lock-stage-race", "front_linked")
    assert v.status == "violated" and "no longer in its tree" in v.explanation
    names = [lab[0] for lab in labels(v)]
    assert names[-1] == "bus1_peer_ioctl_recv"  # the front was received and removed ...
    assert "bus1_queue_stage" in names  # ... after an unlocked stage put an entry before it


def test_staging_under_the_destination_lock_removes_every_stage_failure():
    for prop in ("one_writer", "lockdep_held", "front_linked", "clock_monotonic", "dequeue_increasing"):
        assert verdict("bus1-impl-lock-stage-race", prop, stage_lock=True).status == "holds", prop


def test_the_unlocked_liveness_check_is_reached_and_harmless():
    """note B: only handle.c:626 fails; the destruction changes the handle's entry inside the
    window (witness) and the handle property holds; the same configuration with the code's
    liveness rule breaks it (finding C), so the property is not vacuous there."""
    v = verdict("bus1-impl-lock-install", "lockdep_held")
    assert v.status == "violated"
    assert v.explanation == ("reached without the lock: handle.c:626 bus1_handle_is_live_at: "
                             "lockdep_assert_held(&h->holder->data.lock)")
    w = verdict("bus1-impl-lock-install", "install_window")
    assert w.status == "holds"
    steps = labels(w)
    found = max(i for i, lab in enumerate(steps) if lab[0] == "bus1_peer_peek" and lab[2] == "found")
    assert steps[-1][1] != steps[found][1]  # another peer's step, after the receiver's peek
    assert verdict("bus1-impl-lock-install", "handle_valid_iff_before_destroy").status == "holds"
    assert verdict("bus1-impl-lock-install", "handle_valid_iff_before_destroy", liveness="code").status == "violated"
    assert verdict("bus1-impl-lock-install", "lockdep_held", install_lock=True).status == "holds"


def test_an_acquire_racing_the_anchor_release_asserts_the_owner_lock_it_does_not_hold():
    v = verdict("bus1-impl-lock-owner-gone", "lockdep_held")
    assert v.status == "violated" and "handle.c:346" in v.explanation
    steps = labels(v)
    release = next(i for i, lab in enumerate(steps) if lab[0] == "bus1_peer_flush" and "n_weak 0" in lab[-1])
    owner = steps[release][1]
    acquirer = steps[-1][1]
    assert steps[-1][0] == "bus1_handle_acquire" and acquirer != owner
    taken = [lab[2] for lab in steps[release:] if lab[0] == "mutex_lock" and lab[1] == acquirer]
    assert "a" not in taken  # the acquirer never took the owner's lock


def test_lock2_by_address_cannot_deadlock_and_in_argument_order_does():
    assert verdict("bus1-impl-lock-lock2", "deadlock_free").status == "holds"
    v = verdict("bus1-impl-lock-mutant-lock2-unordered", "deadlock_free")
    assert v.status == "violated"
    assert "a->data.lock held by b" in v.explanation and "b->data.lock held by a" in v.explanation
    assert v.trace[-1].label[0] == "mutex_lock"


def test_lock_constants_need_the_lock_level_mode():
    data = {"spec": "bus1_impl", "constants": {"nodes": "ab", "stage_lock": True}}
    with pytest.raises(InputError) as info:
        model_from_dict(data, "m.toml")
    assert info.value.field == "constants.stage_lock"


def test_the_tla_export_refuses_a_lock_model_in_one_line(run_cli, tmp_path):
    """A lock-level setting the template does not mirror (payload handles and releases
    without stage_lock): one line naming constants.locks, nothing written."""
    text = (MODELS / "bus1-impl-lock-refs.toml").read_text(encoding="utf-8")
    (tmp_path / "m").mkdir()
    model = tmp_path / "m" / "lock-refs-unstaged.toml"
    model.write_text(text.replace("stage_lock = true", "stage_lock = false"), encoding="utf-8")
    out = run_cli("export-tla", model, "-o", tmp_path / "out")
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and "constants.locks" in lines[0] and "Traceback" not in out.output
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_every_lock_level_step_keeps_the_lock_table_consistent():
    """No two threads hold one lock; a thread holds only the locks of its current section."""
    from ordercheck.specs.bus1_impl import LOCKS, THREADS

    model = load_model(MODELS / "bus1-impl-lock-owner-gone.toml")
    spec = model.spec
    seen = set(spec.init_states())
    todo = list(seen)
    while todo:
        s = todo.pop()
        for p, th in enumerate(s[THREADS]):
            mine = {lk for lk, v in enumerate(s[LOCKS]) if v == p + 1}
            assert mine == (set(th[2][: th[1]]) if th else set()), (p, th, s[LOCKS])
        for _label, t in spec.next_states(s):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    assert len(seen) == len(search(spec, [], stop_when_decided=False).store)


def test_counted_references_at_lock_level_give_the_atomic_verdicts():
    """refs = "counted" with locks: the verdicts of the atomic model on the same scripts
    (bus1-impl-life-refs), a dropped message's handles released in their own lock2 section
    after the peek's lock is dropped, and releases that leave references taking no lock."""
    quiet = Options(progress=False, stop_when_decided=False)
    locked = check_model(load_model(MODELS / "bus1-impl-lock-refs.toml"), quiet)
    atomic = check_model(load_model(MODELS / "bus1-impl-life-refs.toml"), quiet)
    shared = set(atomic.properties) & set(locked.properties)
    assert {p: locked.properties[p].status for p in shared} == {p: atomic.properties[p].status for p in shared}
    assert locked.properties["lockdep_held"].status == "holds"
    spec = load_model(MODELS / "bus1-impl-lock-refs.toml").spec
    seen = set(spec.init_states())
    todo = list(seen)
    unref = unlocked = 0
    while todo:
        s = todo.pop()
        for label, t in spec.next_states(s):
            if label[0] == "bus1_handle_release" and label[-1] == "unref":
                unref += 1
            if label[0] == "bus1_handle_release" and len(label) == 3 and not any(t[13]) and not any(s[13]):
                unlocked += 1  # a user release started and finished with no data lock held
            if t not in seen:
                seen.add(t)
                todo.append(t)
    assert unref > 0 and unlocked > 0


def test_releasing_a_dropped_messages_handles_inside_the_peek_breaks_lockdep(monkeypatch):
    """The release of a dropped message's payload handles needs the owner's lock
    (handle.c:171): done inside the peek section, which holds only the receiver's, the
    lockdep check fails; so lockdep_held holding in bus1-impl-lock-refs is not vacuous."""
    from ordercheck.specs.bus1_impl import World

    def inline(self, p, mid):
        for h in self.spec.op_of(mid).payload:
            if self.spec.owners[h] != p and self.drop_ref(p, h):
                self.release_handle(p, h)

    monkeypatch.setattr(World, "drop_payload", inline)
    v = check_model(model_checking("bus1-impl-lock-refs", ["lockdep_held"]), Options(progress=False))
    assert v.properties["lockdep_held"].status == "violated"
    assert "handle.c:171" in v.properties["lockdep_held"].explanation

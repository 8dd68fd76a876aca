"""Packed monitors and logs: the model checker keeps the entries of states met once its
table of entries is full packed (``Monitor.pack``, ``HistoryLog.pack``, marshalled) and
restores them when the state is expanded. A restored monitor must be the monitor that
was packed: the same state, and the same verdicts on whatever events follow."""

from __future__ import annotations

import marshal

import pytest

import ordercheck.checker.engine.evaluate as evaluate
from ordercheck.checker.engine.bfs import search
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.monitors import MONITORS
from ordercheck.checker.monitors.spec_past import CausalPast
from tests.test_monitors import _at, _log, _logs, _state

PACKABLE = ["fifo", "causal", "integrity", "total", "global_lock", "eventual_delivery"]


@pytest.mark.parametrize("name", PACKABLE)
def test_a_monitor_unpacked_at_any_event_goes_on_as_the_packed_one(name: str) -> None:
    """Step a monitor over a random log, pack it at each event (through marshal, as the
    evaluator keeps it), unpack it on the same log and step both to the end: the same
    state at the cut and at the end, the same violation."""
    cls = MONITORS[name]
    packed_some = 0
    for seed, text in _logs(12):
        log = _log(text)
        for cut in range(0, len(log) + 1, 3):
            original = cls(log)
            found = original.run(0, cut) if cut else None
            state = original.pack()
            if state is None:  # a violation held back on an open line (integrity)
                assert name == "integrity"
                continue
            packed_some += 1
            copy = cls.unpack(log, marshal.loads(marshal.dumps(state)))
            assert _state(copy) == _state(original), f"seed {seed}, cut {cut}"
            rest_a = original.run(cut, len(log))
            rest_b = copy.run(cut, len(log))
            assert _at(found or rest_a) == _at(found or rest_b), f"seed {seed}, cut {cut}"
            assert _state(copy) == _state(original), f"seed {seed}, cut {cut}: after the rest"
            assert _at(copy.end()) == _at(original.end())
    assert packed_some


def test_monitors_without_packing_say_so() -> None:
    """A monitor that does not pack returns None (the evaluator then drops the entry)."""
    for name, cls in MONITORS.items():
        if name not in PACKABLE:
            log = _log(next(_logs(1))[1])
            assert cls(log).pack() is None, name


def _packs(monkeypatch) -> dict[str, int]:
    calls = {"pack": 0, "unpack": 0}
    real_pack, real_unpack = evaluate.Evaluator._pack, evaluate.Evaluator._unpack

    def pack(self, entry):
        done = real_pack(self, entry)
        calls["pack"] += done
        return done

    def unpack(self, entry):
        calls["unpack"] += 1
        real_unpack(self, entry)

    monkeypatch.setattr(evaluate.Evaluator, "_pack", pack)
    monkeypatch.setattr(evaluate.Evaluator, "_unpack", unpack)
    return calls


@pytest.mark.parametrize("name", ["bss-3", "fifo-3"])
def test_packed_entries_reach_the_decisions_of_entries_kept_whole(name: str, monkeypatch) -> None:
    """With a table of one entry, the search packs the others and unpacks them for their
    successors: the same states, decisions and sentences as with the full table, and
    fewer histories read whole than with packing off."""
    model = load_model(f"models/{name}.toml")
    props = model.properties

    def run():
        out = search(model.spec, props, stop_when_decided=False)
        return out.distinct_states, {n: (d.index, d.explanation) for n, d in out.decisions.items()}

    whole = {"n": 0}
    real_afresh = evaluate.Evaluator._afresh

    def afresh(self, state, to_fork=False):
        whole["n"] += 1
        return real_afresh(self, state, to_fork)

    monkeypatch.setattr(evaluate.Evaluator, "_afresh", afresh)
    wanted = run()
    monkeypatch.setattr(evaluate, "ENTRY_LIMIT", 1)
    monkeypatch.setattr(evaluate, "PACKED_LIMIT", 0)
    whole["n"] = 0
    assert run() == wanted
    unpacked_reads = whole["n"]
    monkeypatch.setattr(evaluate, "PACKED_LIMIT", 1 << 30)
    calls = _packs(monkeypatch)
    whole["n"] = 0
    assert run() == wanted
    assert calls["pack"] > 0 and calls["unpack"] > 0
    assert whole["n"] < unpacked_reads


def test_a_history_log_unpacked_equals_the_packed_one_and_shares_nothing_it_writes() -> None:
    model = load_model("models/bss-3-signal.toml")
    spec = model.spec
    states = list(spec.init_states())
    logs = []
    for _ in range(10):  # a few steps in, some states at each depth
        states = [t for s in states[:30] for _, t in spec.next_states(s)] or states
        logs += [spec.history(s).as_log() for s in states[:30:3]]
    assert any(log.outs for log in logs) and any(log.msg_name for log in logs)  # signals and messages laid out
    for log in logs:
        shared, plain = log.pack()
        copy = type(log).unpack(shared, marshal.loads(marshal.dumps(plain)))
        assert copy.__dict__ == log.__dict__
        assert list(copy.__dict__) == list(log.__dict__)
        for field in ("peer", "kind", "arg", "line", "seen", "msg_name", "msg_sender", "msg_seq", "msg_dests",
                      "msg_send", "msg_past", "ids", "outs", "ins"):
            assert getattr(copy, field) is not getattr(log, field), field


def test_causal_with_spec_pasts_packs_only_what_it_forks() -> None:
    model = load_model("models/bss-3.toml")
    spec = model.spec
    s = next(iter(spec.init_states()))
    for _ in range(5):
        nxt = list(spec.next_states(s))
        if not nxt:
            break
        s = nxt[-1][1]
    log = spec.history(s).as_log()
    m = CausalPast(log)
    m.run(0, len(log))
    state = m.pack()
    assert state is not None and state[0] is True
    copy = CausalPast.unpack(log, marshal.loads(marshal.dumps(state)))
    assert _state(copy) == _state(m.fork(log))  # what a fork keeps (the pasts are the log's)

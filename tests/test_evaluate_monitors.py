"""The evaluator decides the library's properties through their monitors, incrementally.

A successor's log and monitors are its parent's extended by the events its history adds
(lazily when they cannot change an open verdict; in place, handed on, for the parent's
last new successor when no other state with the parent's history waits); without the parent's entry (evicted,
another process) the parent's history is laid out whole and extended when the caller
hands over the parent state, else the successor's. Every way must reach the same
decisions as the properties' ``check`` on the whole history (the monitors on a fresh
layout), at the same states, with the sentence read on the whole history.
"""

from __future__ import annotations

import dataclasses

import pytest

import ordercheck.checker.engine.evaluate as evaluate
from ordercheck.checker.engine.bfs import search
from ordercheck.checker.loading.modelfile import load_model

MODELS = ["fifo-3", "bss-3", "bss-3-signal", "bus1-impl-life-transfer-invalid", "skeen-3-fifo", "lamport-mutant-no-wait", "matrix-3-signal"]


def _decisions(model, props, **kw) -> tuple[int, dict[str, tuple[int, str]]]:
    out = search(model.spec, props, stop_when_decided=False, **kw)
    return out.distinct_states, {n: (d.index, d.explanation) for n, d in out.decisions.items()}


def _plain(props):
    """The same properties decided by ``check`` on the whole history (no monitor)."""
    return [dataclasses.replace(p, monitor=None) for p in props]


@pytest.mark.parametrize("name", MODELS)
def test_incremental_fallback_and_whole_history_agree(name, monkeypatch) -> None:
    model = load_model(f"models/{name}.toml")
    props = model.properties
    assert any(p.monitor is not None for p in props)
    calls = {"extend": 0, "hand_on": 0}
    real_extend, real_whole = evaluate.Evaluator._extend, evaluate.Evaluator._entry
    real_hand_on = evaluate.Evaluator._hand_on

    def counting_extend(self, parent, state):
        calls["extend"] += 1
        return real_extend(self, parent, state)

    def counting_hand_on(self, parent, parent_key, state):
        made = real_hand_on(self, parent, parent_key, state)
        calls["hand_on"] += made is not None
        return made

    monkeypatch.setattr(evaluate.Evaluator, "_extend", counting_extend)
    monkeypatch.setattr(evaluate.Evaluator, "_hand_on", counting_hand_on)
    incremental = _decisions(model, props)
    # successors were extended from their parents, copied or in place (bus1_impl builds
    # its histories its own way, so no growth is known and each is laid out whole)
    assert (calls["extend"] > 0) == (not name.startswith("bus1-impl"))
    # and some took their parent's over (lamport-mutant-no-wait's parents all share
    # their histories with other states still to expand)
    assert (calls["hand_on"] > 0) == (not name.startswith(("bus1-impl", "lamport")))
    limit = evaluate.ENTRY_LIMIT
    monkeypatch.setattr(evaluate, "ENTRY_LIMIT", 1)  # parents evicted: laid out whole
    monkeypatch.setattr(evaluate, "PACKED_LIMIT", 0)  # (none kept packed: tests/test_packed_entries.py)
    calls["extend"] = 0
    fallback = _decisions(model, props)
    # a parent without its entry is read whole once (the search hands the evaluator the
    # parent state) and extended for its successors
    assert (calls["extend"] > 0) == (not name.startswith("bus1-impl"))
    monkeypatch.setattr(evaluate, "ENTRY_LIMIT", limit)
    plain = _decisions(model, _plain(props))
    assert incremental == fallback
    # Same states and same decisions (state, and the whole history's sentence) as the
    # check functions on the whole history, which are the monitors on a fresh layout.
    assert incremental == plain
    assert real_whole is evaluate.Evaluator._entry


@pytest.mark.parametrize("name", ["bss-3", "fifo-3", "matrix-3-signal"])
def test_history_keys_with_one_hash_keep_their_own_entries(name, monkeypatch) -> None:
    """The entry tables are keyed by the hash of the history key: with every key given
    the same hash, a lookup finds only the entry of an equal key (another key's entry is
    a miss, and storing overwrites it), so the decisions stay those of the checks on the
    whole history."""
    model = load_model(f"models/{name}.toml")
    props = model.properties
    found = {"other": 0}
    real_get = evaluate._get

    def counting_get(table, h, key):
        entry = table.get(h)
        found["other"] += entry is not None and entry.key != key
        return real_get(table, h, key)

    monkeypatch.setattr(evaluate, "hash", lambda key: 0, raising=False)  # the module's, not the builtin
    monkeypatch.setattr(evaluate, "_get", counting_get)
    colliding = _decisions(model, props)
    assert found["other"] > 0  # another key's entry was met under the hash, and passed over
    monkeypatch.undo()
    assert colliding == _decisions(model, _plain(props))


def test_a_violation_found_is_reported_at_its_state_and_inherited() -> None:
    """fifo-3 breaks causal: the first state whose history breaks it is decided, and its
    successors keep the violation in their entries (a prefix's violation stays)."""
    model = load_model("models/fifo-3.toml")
    spec = model.spec
    causal = [p for p in model.properties if p.name == "causal"]
    ev = evaluate.Evaluator(spec, causal)
    frontier = [(s, None) for s in spec.init_states()]
    seen = set()
    found_at = None
    while frontier and found_at is None:
        nxt = []
        for s, parent_key in frontier:
            if s in seen:
                continue
            seen.add(s)
            key = ev.history_key(s)
            hits = ev.on_state(s, key, parent_key)
            if hits:
                found_at = (s, key, hits)
                break
            nxt.extend((t, key) for _label, t in spec.next_states(s))
        frontier = nxt
    assert found_at is not None
    s, key, hits = found_at
    assert hits[0][0] == "causal" and "which happened before it, had not been delivered" in hits[0][1]
    assert causal[0].check(spec.history(s)) == hits[0][1]
    for _label, t in spec.next_states(s):
        tk = ev.history_key(t)
        if tk is not key:
            assert [n for n, _ in ev.on_state(t, tk, key)] == ["causal"]

"""A spec's history laid out as a log (ordercheck.specs.history), whole and step by step.

The layout must be a linearization of the history: each peer's events in its program
order, a send before the deliveries and drops of its message, the k-th signal from p to
q before q's k-th receipt from p; messages named, sent, numbered and addressed as in the
history. Extending a parent's log by a successor's new events must give a log the
monitors judge as they judge the successor's history laid out whole.
"""

from __future__ import annotations

import random

import pytest
from histories import history

from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.loading.registry import builtin_models
from ordercheck.specs.history import (
    DELIVER,
    DROP,
    SEND,
    SIGNAL_IN,
    SIGNAL_OUT,
    Event,
    History,
    Message,
    extend_log,
    extend_log_in_place,
    history_log,
    spec_past,
)
from ordercheck.specs.properties import LIBRARY, MONITORS


def assert_linearizes(log, h) -> None:
    """``log`` lays out ``h``: per-peer projections, happened-before, message facts."""
    name_of = {mid: log.msg_name[m] for mid, m in log.ids.items()}
    for p, events in enumerate(h.logs):
        mine = [i for i in range(len(log)) if log.peer[i] == p]
        assert [log.kind[i] for i in mine] == [e.kind for e in events], p
        for i, e in zip(mine, events):
            if e.kind in (SEND, DELIVER, DROP):
                assert log.msg_name[log.arg[i]] == name_of[e.arg]
            elif e.kind in (SIGNAL_OUT, SIGNAL_IN):
                assert log.arg[i] == e.arg
    outs: dict = {}
    ins: dict = {}
    for i in range(len(log)):
        k, p, a = log.kind[i], log.peer[i], log.arg[i]
        if k in (DELIVER, DROP) and log.msg_send[a] >= 0:
            assert log.msg_send[a] < i, log.describe(i)
        elif k == SIGNAL_OUT:
            outs.setdefault((p, a), []).append(i)
        elif k == SIGNAL_IN:
            ins.setdefault((a, p), []).append(i)
    for pair, receipts in ins.items():
        for r, s in zip(receipts, outs.get(pair, [])):
            assert s < r, pair
    for mid, msg in h.messages.items():
        m = log.ids[mid]
        assert (log.msg_name[m], log.msg_sender[m], log.msg_seq[m]) == (msg.name, msg.sender, msg.seq)
        assert log.msg_dests[m] == tuple(sorted(msg.dests))
        assert {log.msg_name[x] for x in spec_past(log, m)} == {h.messages[x].name for x in msg.past}


def verdicts(log) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for name, cls in MONITORS.items():
        monitor = cls(log)
        out[name] = next((i for i in range(len(log)) if monitor.step(i) is not None), None)
        if out[name] is None and monitor.end() is not None:
            out[name] = -1
    return out


def test_a_signal_and_a_relay_are_laid_out_after_their_causes() -> None:
    """c's receipt of b1 waits for b's send, which waits for b's signal from a; the
    peers are laid out lowest first, so c's events come last although c is listed."""
    h = history("abc", {"c": ["recv b1"], "a": ["sig b", "send a1"], "b": ["got a", "send b1"]},
                {"a1": "c", "b1": "c"})
    log = history_log(h)
    assert [log.describe(i) for i in range(len(log))] == [
        "a signalled b", "a sent a1 to c", "b got a signal from a", "b sent b1 to c", "c received b1",
    ]
    assert log.at(0) == "" and log.where(4) == "c received b1"
    assert_linearizes(log, h)


def test_a_delivery_before_its_own_send_is_laid_out_anyway() -> None:
    """A happened-before cycle (b delivers a1, a sends a1 after receiving b1, which b
    sent after delivering a1) cannot be linearized: the lowest peer's waiting event is
    laid out first, and integrity is broken."""
    a1 = Message(0, "a1", 0, 0, frozenset({1}), frozenset())
    b1 = Message(4, "b1", 1, 0, frozenset({0}), frozenset())
    h = History(("a", "b"), {0: a1, 4: b1}, ((Event(DELIVER, 4), Event(SEND, 0)), (Event(DELIVER, 0), Event(SEND, 4))))
    log = history_log(h)
    assert len(log) == 4
    assert verdicts(log)["integrity"] is not None


def _walk_histories(path, seed: int, depth: int = 40):
    spec = load_model(path).spec
    rng = random.Random(seed)
    state = spec.init_states()[0]
    keys, hs = [spec.history_key(state)], [spec.history(state)]
    for _ in range(depth):
        succ = spec.next_states(state)
        if not succ:
            break
        state = rng.choice(succ)[1]
        keys.append(spec.history_key(state))
        hs.append(spec.history(state))
    return spec, keys, hs


MODELS = [p for p in builtin_models() if any(q.monitor is not None for q in load_model(p).properties)]


def _columns(log) -> dict:
    """A log's fields as plain data, each list and dict copied (to compare later)."""
    return {k: v.copy() if isinstance(v, (list, dict)) else v for k, v in vars(log).items()}


@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_walks_extend_as_they_lay_out_whole(path) -> None:
    for seed in range(3):
        spec, keys, hs = _walk_histories(path, seed)
        log = history_log(hs[0])
        for k in range(1, len(hs)):
            if spec.history_growth(keys[k - 1], keys[k]) is None:
                log = history_log(hs[k])
            else:
                before = _columns(log)
                shared = log.copy(messages=False, signals=False)  # shares the parent's message columns and signal counts
                grown = extend_log(log, hs[k])
                assert _columns(log) == before  # the parent's log is left as it was
                # extended in place: the same log as the copy's, and what it shared left as it was
                assert extend_log_in_place(shared, hs[k]) == (not hs[k].failed)
                if not hs[k].failed:
                    assert _columns(shared) == _columns(grown)
                assert _columns(log) == before
                log = grown
            assert_linearizes(log, hs[k])
            whole = history_log(hs[k])
            assert_linearizes(whole, hs[k])
            got, want = verdicts(log), verdicts(whole)
            assert {n: v is None for n, v in got.items()} == {n: v is None for n, v in want.items()}, (seed, k)


def test_the_library_names_a_monitor_for_every_ordering_property() -> None:
    """Every library property is decided by the monitor of its name (the one rule)."""
    for prop in LIBRARY:
        if prop.name in MONITORS:
            assert prop.monitor is MONITORS[prop.name]


@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_a_spec_extends_a_log_from_its_states_as_from_their_histories(path) -> None:
    """``extend_history_log`` (a plain ghost read raw, no history built) gives the log
    ``extend_log`` gives on the state's history: a new one, or with ``in_place`` the
    log itself extended; the parent's log is left as it was either way."""
    spec = load_model(path).spec
    extend = getattr(spec, "extend_history_log", None)
    if extend is None:
        pytest.skip("the spec extends no log itself")
    compared = 0
    for seed in range(3):
        rng = random.Random(seed)
        state = spec.init_states()[0]
        log = history_log(spec.history(state))
        for _ in range(40):
            succ = spec.next_states(state)
            if not succ:
                break
            nxt = rng.choice(succ)[1]
            h = spec.history(nxt)
            if spec.history_growth(spec.history_key(state), spec.history_key(nxt)) is None or h.failed:
                log = history_log(h)
            else:
                before = _columns(log)
                want = extend_log(log, h)
                got = extend(nxt, log)
                assert got is not log and _columns(got) == _columns(want)
                assert _columns(log) == before
                shared = log.copy(messages=False, signals=False)
                assert extend(nxt, shared, True) is shared
                assert _columns(shared) == _columns(want)
                assert _columns(log) == before
                log = want
                compared += 1
            state = nxt
    key = spec.history_key(spec.init_states()[0])
    assert compared or spec.history_growth(key, key) is None  # nothing compared only where growth is unknown

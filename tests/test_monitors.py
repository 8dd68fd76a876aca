"""The monitor contract (:mod:`ordercheck.checker.monitors.base`), checked for every monitor on random logs.

- **Decisions read the past only**: stepping a log event by event, the verdict after
  each prefix (the violation stepped so far, else a fork's ``end()``) is the verdict of a
  fresh monitor run on that prefix cut out as a log of its own. Prefixes end at the end
  of a line: a line's events (a one-line signal, an ITF step) come together.
- **First violation, once**: after a violation, ``step`` returns ``None``; ``end()``
  leaves the monitor as it was (a model checker asks at every state, then goes on).
- **Forkable**: a fork followed on one continuation and the original on another, stepped
  in turns, each reach the verdict of a fresh run on its own log.
- **Order-independent**: two orders of one log's records that keep each peer's order and
  every cross-peer edge (a send before the consumptions that followed it, a signal and
  its receipt as they were) reach the same verdict.
- ``eventual_delivery`` decides at ``end()`` only, and down peers are excused.
- A monitor reads a log that grows under it (messages entering the tables as events
  name them), as the model checker and a harness lay runs out.

The logs are the differential test's random recordings (tests/test_validate_differential.py)
and the same with crashes and restarts mixed in. The helpers under the monitors (the
dynamic topological order, the pairing of signals) are checked against plain versions.
"""

from __future__ import annotations

import json
import random
from collections import deque

import pytest

from ordercheck.checker.monitors import MONITORS, check
from ordercheck.checker.monitors.events import DELIVER, DROP, FAIL, KIND_NAMES, SEND, SIGNAL_IN, SIGNAL_OUT
from ordercheck.checker.monitors.graph import DynamicOrder
from ordercheck.checker.monitors.log import SignalPairs, signal_sources
from ordercheck.checker.validate.jsonl import read_jsonl
from ordercheck.checker.validate.log import Log, LogBuilder, sub_log
from tests.test_validate_differential import random_log

NAMES = list(MONITORS)


def fault_log(seed: int) -> str:
    """``random_log(seed)`` with ``fail`` and ``restart`` records mixed in."""
    rng = random.Random(-seed - 1)
    lines = random_log(seed).splitlines()
    peers = json.loads(lines[0])["peers"]
    out = [lines[0]]
    down: set[str] = set()
    for line in lines[1:]:
        if rng.random() < 0.15:
            p = rng.choice(peers)
            out.append(json.dumps({"peer": p, "kind": "restart" if p in down else "fail"}))
            down ^= {p}
        out.append(line)
    return "\n".join(out) + "\n"


def _log(text: str, name: str = "t.jsonl") -> Log:
    return read_jsonl(text.splitlines(), name)


def _logs(count: int, start: int = 0):
    for seed in range(start, start + count):
        yield seed, random_log(seed)
        yield -seed - 1, fault_log(seed)


def _at(v) -> int | None:
    return None if v is None else v.at


def test_the_registry_lists_every_property_once_in_report_order() -> None:
    assert NAMES == ["fifo", "causal", "integrity", "total", "total_global", "total_prefix", "global_lock",
                     "synchronous", "eventual_delivery"]
    for name, cls in MONITORS.items():
        assert cls.name == name
        assert cls.kind == ("eventually" if name == "eventual_delivery" else "always")


def test_a_violation_is_found_at_an_event_of_a_kind_its_monitor_names_in_changed_by() -> None:
    found = dict.fromkeys(NAMES, 0)
    for _seed, text in _logs(200):
        log = _log(text)
        for name, cls in MONITORS.items():
            v = check(log, name)
            if v is None or cls.changed_by is None or cls.kind == "eventually":
                continue
            assert KIND_NAMES[log.kind[v.at]] in cls.changed_by, (name, v)
            found[name] += 1
    assert all(found[n] for n, cls in MONITORS.items() if cls.changed_by is not None and cls.kind == "always")


@pytest.mark.parametrize("name", NAMES)
def test_each_prefix_verdict_is_a_fresh_run_on_that_prefix(name: str) -> None:
    """Step by step, then at every prefix: the violation so far (or end()) against a
    fresh monitor on the prefix cut out as a log."""
    seen = set()
    for seed, text in _logs(60):
        log = _log(text)
        monitor = MONITORS[name](log)
        found = None
        for i in range(len(log)):
            v = monitor.step(i)
            if found is not None:
                assert v is None, f"seed {seed}: a second violation at event {i}"
                continue
            found = v
            if i + 1 < len(log) and log.line[i + 1] == log.line[i]:
                continue  # a line's events (a one-line signal) arrive together: no prefix ends inside one
            before = _state(monitor)
            now = found if found is not None else monitor.end()
            assert _state(monitor) == before, f"seed {seed}: end() changed the monitor"
            prefix, _ = sub_log(log, range(i + 1), all_peers=True)
            fresh = check(prefix, name)
            assert _at(now) == _at(fresh), f"seed {seed}, prefix of {i + 1} events: {now} != {fresh}"
            seen.add(now is None)
    assert seen == {True, False}, "the logs show both verdicts"


@pytest.mark.parametrize("name", NAMES)
def test_a_fork_and_its_original_follow_their_own_continuations(name: str) -> None:
    """Cut a log just before its first violation (or in the middle), fork there onto
    another log with the same prefix and another continuation, then follow one to its
    end before the other moves (both ways round): each reaches the verdict of a fresh
    run on its own log, so neither's steps touched the other's state."""
    differ = 0
    for seed in range(100):
        lines = random_log(seed).splitlines()
        peers = set(json.loads(lines[0])["peers"])
        first = check(_log("\n".join(lines) + "\n"), name)
        cut = _log("\n".join(lines) + "\n").line[first.at] - 1 if first is not None else len(lines) // 2
        other = [_renamed(r) for r in random_log(seed + 1000).splitlines()[1:] if _peers_of(r) <= peers]
        log_a = _log("\n".join(lines) + "\n")
        log_b = _log("\n".join(lines[:cut] + other) + "\n")
        shared = sum(1 for i in range(len(log_a)) if log_a.line[i] <= cut)
        want_a, want_b = _at(check(log_a, name)), _at(check(log_b, name))
        differ += want_a != want_b
        for fork_first in (True, False):
            original = MONITORS[name](log_a)
            before = None
            for i in range(shared):
                before = before or original.step(i)
            fork = original.fork(log_b)
            runs = [(fork, log_b), (original, log_a)] if fork_first else [(original, log_a), (fork, log_b)]
            got = {}
            for monitor, log in runs:
                found = before
                for i in range(shared, len(log)):
                    found = found or monitor.step(i)
                got[id(log)] = _at(found)
            assert got[id(log_a)] == _at(_stepped(name, log_a)[1]), f"seed {seed}: the original, fork_first={fork_first}"
            assert got[id(log_b)] == _at(_stepped(name, log_b)[1]), f"seed {seed}: the fork, fork_first={fork_first}"
            # and each holds exactly the state of a monitor that only ever saw its own log
            assert _state(original) == _state(_stepped(name, log_a)[0]), f"seed {seed}: the original's state"
            assert _state(fork) == _state(_stepped(name, log_b)[0]), f"seed {seed}: the fork's state"
            assert _at(original.end() if got[id(log_a)] is None else None) == (want_a if got[id(log_a)] is None else None)
            assert _at(fork.end() if got[id(log_b)] is None else None) == (want_b if got[id(log_b)] is None else None)
    assert differ, "some continuations change the verdict"


def _stepped(name: str, log: Log):
    """A fresh monitor stepped over the whole of ``log``, and the violation it returned."""
    monitor = MONITORS[name](log)
    found = None
    for i in range(len(log)):
        found = found or monitor.step(i)
    return monitor, found


def _state(value: object) -> object:
    """A monitor's state as plain data (the log it reads left out, the flag saying
    whether a part is shared with a fork until written left out, and per-message lists
    without their trailing zeros), to compare two."""
    if isinstance(value, (int, float, str, bool, type(None))):
        return value
    if isinstance(value, dict):
        return {k: _state(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, deque)):
        out = [_state(v) for v in value]
        while out and out[-1] in (0, None, False):  # per-message lists are sized by the log they started on
            out.pop()
        return out
    if isinstance(value, Log):
        return "log"
    if hasattr(value, "__dict__") or hasattr(value, "__slots__"):
        names = sorted({*getattr(value, "__dict__", {}), *getattr(type(value), "__slots__", ())})
        return {n: _state(getattr(value, n)) for n in names if n not in ("log", "shared")}
    return repr(value)


def _peers_of(record: str) -> set[str]:
    rec = json.loads(record)
    to = rec.get("to")
    return ({rec["peer"], rec.get("from")} | set(to if isinstance(to, list) else [to])) - {None}


def _renamed(record: str) -> str:
    """A record of another log, its message renamed apart from this log's."""
    rec = json.loads(record)
    if "msg" in rec:
        rec["msg"] = "z" + str(rec["msg"])
    return json.dumps(rec)


def _reorder(text: str, rng: random.Random) -> str:
    """The records of ``text`` in another order that keeps each peer's order (a signal
    record counts at both its peers), each send before the consumptions of its message
    that followed it (and after those that came first), and each signal paired with its
    receipt on the same side of it."""
    lines = text.splitlines()
    header, records = lines[0], [json.loads(r) for r in lines[1:]]
    log = _log(text)
    before: list[set[int]] = [set() for _ in records]  # record -> records that must come first
    last: dict[str, int] = {}
    for j, rec in enumerate(records):
        for p in {rec["peer"], rec.get("to") if rec["kind"] == "signal" else None} - {None}:
            if p in last:
                before[j].add(last[p])
            last[p] = j
    rec_of = [log.line[i] - 2 for i in range(len(log))]  # header on line 1
    for i in range(len(log)):
        if log.kind[i] in (DELIVER, DROP):  # on the same side of the send as before
            s = log.msg_send[log.arg[i]]
            if s >= 0 and rec_of[s] != rec_of[i]:
                a, b = sorted((rec_of[s], rec_of[i]))
                before[b].add(a)
    for r, s in signal_sources(log).items():
        if rec_of[r] != rec_of[s]:
            a, b = sorted((rec_of[r], rec_of[s]))
            before[b].add(a)
    order: list[int] = []
    placed: set[int] = set()
    while len(order) < len(records):
        ready = [j for j in range(len(records)) if j not in placed and before[j] <= placed]
        j = rng.choice(ready)
        order.append(j)
        placed.add(j)
    return "\n".join([header] + [json.dumps(records[j]) for j in order]) + "\n"


def test_orders_consistent_with_happened_before_reach_the_same_verdicts() -> None:
    rng = random.Random(7)
    moved = 0
    for seed, text in _logs(150):
        again = _reorder(text, rng)
        moved += again != text
        log, other = _log(text), _log(again)
        for name in NAMES:
            assert (check(log, name) is None) == (check(other, name) is None), f"seed {seed}, {name}\n{text}\n{again}"
    assert moved > 200


def _jsonl(*records: dict) -> str:
    head = {"format": "ordercheck-log", "version": 1, "peers": ["a", "b", "c"]}
    return "\n".join(json.dumps(r) for r in (head, *records)) + "\n"


def test_eventual_delivery_is_decided_at_the_end_and_excuses_down_peers() -> None:
    send = {"peer": "a", "kind": "send", "msg": "m", "to": ["b", "c"]}
    got_b = {"peer": "b", "kind": "deliver", "msg": "m"}
    got_c = {"peer": "c", "kind": "drop", "msg": "m"}
    fail_c = {"peer": "c", "kind": "fail"}
    back_c = {"peer": "c", "kind": "restart"}
    cases = [((send,), {"b", "c"}), ((send, got_b), {"c"}), ((send, got_b, got_c), set()),
             ((send, got_b, fail_c), set()), ((send, got_b, fail_c, back_c), {"c"}),
             ((send, fail_c, got_b, back_c, got_c), set())]
    for records, waiting in cases:
        log = _log(_jsonl(*records))
        monitor = MONITORS["eventual_delivery"](log)
        assert all(monitor.step(i) is None for i in range(len(log)))
        v = monitor.end()
        assert {log.peers[q] for _m, q in (v.missing if v else ())} == waiting, records
        if v is not None:
            assert v.at == len(log) - 1 and v.events == (0,)
            assert ("m to b and m to c are never delivered" if len(waiting) == 2 else "m to c is never delivered") \
                in v.sentence
            # On a run that goes on (a fair loop) the same pairs, the same window, and no end claimed.
            w = monitor.outstanding()
            assert w is not None and (w.missing, w.events, w.at) == (v.missing, v.events, v.at)
            assert "ends" in v.sentence and "ends" not in w.sentence, w.sentence
            assert w.sentence.split(": ")[0] == v.sentence.split(": ")[0]
        else:
            assert monitor.outstanding() is None


def test_a_monitor_is_done_after_its_violation() -> None:
    log = _log(_jsonl({"peer": "a", "kind": "deliver", "msg": "x"}, {"peer": "b", "kind": "deliver", "msg": "y"}))
    monitor = MONITORS["integrity"](log)
    assert monitor.step(0) is not None
    assert monitor.step(1) is None and monitor.end() is None


def test_the_dynamic_order_refuses_exactly_the_edges_that_close_a_cycle() -> None:
    rng = random.Random(3)
    for _ in range(300):
        graph = DynamicOrder()
        edges: set[tuple[int, int]] = set()
        for _ in range(rng.randint(1, 40)):
            x, y = rng.randrange(12), rng.randrange(12)
            if edges and rng.random() < 0.2:
                a, b = rng.choice(sorted(edges))
                graph.remove(a, b)
                edges.discard((a, b))
                continue
            closes = x == y or _reaches(edges, y, x)
            assert graph.add(x, y) == (not closes)
            if not closes:
                edges.add((x, y)) if (x, y) not in edges else graph.remove(x, y)
            pos = graph.pos
            assert all(pos[a] < pos[b] for a, b in edges)
            copy = graph.copy()
            copy.add(100, 101)
            assert 100 not in graph.pos


def _reaches(edges: set[tuple[int, int]], x: int, y: int) -> bool:
    seen, todo = {x}, [x]
    while todo:
        u = todo.pop()
        if u == y:
            return True
        for a, b in edges:
            if a == u and b not in seen:
                seen.add(b)
                todo.append(b)
    return False


def test_signal_pairs_online_pair_a_receipt_when_it_comes_and_a_late_signal_when_its_line_ends() -> None:
    # b's receipt before any signal; a one-line signal then pairs with its own receipt,
    # and a later split signal is the early receipt's (a late pair, known at the next line)
    text = _jsonl({"peer": "b", "kind": "signal_in", "from": "a"}, {"peer": "a", "kind": "signal", "to": "b"},
                  {"peer": "a", "kind": "signal_out", "to": "b"}, {"peer": "c", "kind": "send", "msg": "m", "to": ["a"]})
    log = _log(text)
    pairs = SignalPairs(log)
    got = [pairs.step(i) for i in range(len(log))]
    assert got == [[], [], [(2, 1)], [], [(0, 3)]]
    assert signal_sources(log) == {2: 1, 0: 3}
    copy = pairs.copy(log)
    assert copy.flush() == [] and pairs.flush() == []


def test_a_late_signal_on_a_line_is_found_before_a_later_violation_on_that_line() -> None:
    """One line (an ITF step) holds a signal whose receipt came before it and, after it,
    a delivery of a message never sent: the signal, the earlier event, is the violation,
    though it is known only when the line ends."""
    b = LogBuilder("t.itf.json", ["p", "q"])
    b.add(1, SIGNAL_IN, 0, 1)  # q got a signal from p, before p sent any
    b.add(0, SIGNAL_OUT, 1, 2)  # p signals q: late, but a receipt later on line 2 would be its own
    b.add(1, DELIVER, b.message_id("ghost"), 2)
    b.add(0, FAIL, 0, 3)
    log = b.log
    monitor = MONITORS["integrity"](log)
    assert monitor.step(0) is None and monitor.step(1) is None and monitor.step(2) is None
    found = monitor.step(3)
    assert found is not None and found.at == 1 and "before it was sent" in found.sentence
    assert check(log, "integrity") == found
    cut, _ = sub_log(log, range(3), all_peers=True)  # the run ends with line 2
    assert _at(check(cut, "integrity")) == 1


def test_total_forks_keep_their_own_delivery_positions() -> None:
    """b delivered m1 then m2; c's two orders of them, one in the fork and one in the
    original: only the opposite order breaks ``total``."""
    head = [{"peer": "a", "kind": "send", "msg": "m1", "to": ["b", "c"]},
            {"peer": "a", "kind": "send", "msg": "m2", "to": ["b", "c"]},
            {"peer": "b", "kind": "deliver", "msg": "m1"}, {"peer": "b", "kind": "deliver", "msg": "m2"}]
    same = _log(_jsonl(*head, {"peer": "c", "kind": "deliver", "msg": "m1"}, {"peer": "c", "kind": "deliver", "msg": "m2"}))
    flip = _log(_jsonl(*head, {"peer": "c", "kind": "deliver", "msg": "m2"}, {"peer": "c", "kind": "deliver", "msg": "m1"}))
    for name in ("total", "total_global", "total_prefix"):
        original = MONITORS[name](same)
        assert all(original.step(i) is None for i in range(4))
        fork = original.fork(flip)
        found = fork.step(4)
        assert original.step(4) is None and original.step(5) is None and original.end() is None
        found = found or fork.step(5)
        assert found is not None and found.at == (4 if name == "total_prefix" else 5), name


def _growing(log: Log):
    """``log``'s events appended one at a time to a new log, as a model checker or a
    harness lays out a run: a message enters the tables when an event first names it,
    and gets its sender, destinations and send when its send is appended. Yields the
    growing log after each event."""
    out = Log(log.source, list(log.peers))
    for i in range(len(log)):
        k, a = log.kind[i], log.arg[i]
        if k in (SEND, DELIVER, DROP):
            while out.messages <= a:
                out.msg_name.append(log.msg_name[out.messages])
                out.msg_sender.append(-1)
                out.msg_seq.append(-1)
                out.msg_dests.append(())
                out.msg_send.append(-1)
            if k == SEND:
                out.msg_sender[a], out.msg_seq[a] = log.msg_sender[a], log.msg_seq[a]
                out.msg_dests[a], out.msg_send[a] = log.msg_dests[a], i
        out.peer.append(log.peer[i])
        out.kind.append(k)
        out.arg.append(a)
        out.line.append(log.line[i])
        yield out


@pytest.mark.parametrize("name", NAMES)
def test_a_monitor_reads_a_log_that_grows_under_it(name: str) -> None:
    for seed, text in _logs(60):
        log = _log(text)
        monitor = None
        found = None
        for grown in _growing(log):
            if monitor is None:
                monitor = MONITORS[name](grown)
            found = found or monitor.step(len(grown) - 1)
        assert monitor is not None
        assert _at(found or monitor.end()) == _at(check(log, name)), f"seed {seed}"


class _Placeless(Log):
    """A log with no places, as a model's history is laid out (``at`` is empty)."""

    def at(self, i: int) -> str:
        return ""

    def where(self, i: int) -> str:
        return self.describe(i)


def test_a_log_with_no_places_reads_without_empty_parentheses() -> None:
    seen = set()
    for _seed, text in _logs(150):
        log = _log(text)
        bare = _Placeless(**{f: getattr(log, f) for f in log.__dataclass_fields__})
        bare.fmt = "history"
        for name in NAMES:
            v = check(bare, name)
            if v is None:
                continue
            seen.add(name)
            assert "()" not in v.sentence and "line" not in v.sentence and "( " not in v.sentence, (name, v.sentence)
            assert " log " not in v.sentence, (name, v.sentence)
            assert v.at == check(log, name).at
    assert seen == set(NAMES)


def test_fifo_and_causal_name_every_message_that_had_to_come_first() -> None:
    sends = [{"peer": "a", "kind": "send", "msg": f"a{k}", "to": ["b"]} for k in (1, 2, 3)]
    log = _log(_jsonl(*sends, {"peer": "b", "kind": "deliver", "msg": "a2"}, {"peer": "b", "kind": "deliver", "msg": "a3"}))
    log3 = _log(_jsonl(*sends, {"peer": "b", "kind": "deliver", "msg": "a3"}))
    for name in ("fifo", "causal"):
        one, two = check(log, name), check(log3, name)
        assert one is not None and one.at == 3 and " while a1, which " in one.sentence and len(one.missing) == 1
        assert two is not None and two.at == 3 and " while a1 and a2, which " in two.sentence
        assert [m for m, _q in two.missing] == [0, 1] and two.events == (0, 2, 3)  # the window shows a1's case


def test_global_lock_decides_a_recording_by_its_prefixes_as_it_does_step_by_step(monkeypatch) -> None:
    """``GlobalLock.run`` searches the prefixes of a log read from its start or of a long
    stretch, and steps a short one that extends what it stepped (a fork's, as the model
    checker's): the same first violation, window and sentence as stepping each event."""
    from ordercheck.checker.monitors import lock

    def stepped_through(log: Log) -> object:
        monitor = lock.GlobalLock(log)
        for i in range(len(log.kind)):
            found = monitor.step(i)
            if found is not None:
                return found
        return monitor.end()

    def forked_halfway(log: Log) -> object:  # searched up to the middle, forked, run on
        monitor, half = lock.GlobalLock(log), len(log.kind) // 2
        found = monitor.run(0, half)
        if found is not None:
            return found
        fork = monitor.fork(log)
        found = fork.run(half, len(log.kind))
        return found if found is not None else fork.end()

    logs = [_log(text) for _seed, text in _logs(150)]
    stepped = [stepped_through(log) for log in logs]
    assert [check(log, "global_lock") for log in logs] == stepped
    assert [forked_halfway(log) for log in logs] == stepped
    monkeypatch.setattr(lock, "STEPWISE", 0)
    assert [forked_halfway(log) for log in logs] == stepped
    assert sum(v is not None for v in stepped) > 100


@pytest.mark.parametrize("name", NAMES)
def test_read_to_fork_decides_as_run_and_leaves_what_a_fork_needs(name: str) -> None:
    """``read_to_fork`` (a prefix read from its start to be forked, as the model checker
    reads a parent whose entry it no longer has) finds what ``run`` finds on the prefix,
    and a fork of it run on to the end of the log reaches the verdict and state of a
    monitor stepped through the whole log."""
    differ = 0
    for seed, text in _logs(60):
        log = _log(text)
        half = len(log) // 2
        while 0 < half < len(log) and log.line[half] == log.line[half - 1]:
            half += 1  # a line's events (a one-line signal) arrive together: cut between lines
        reader, runner = MONITORS[name](log), MONITORS[name](log)
        found = reader.read_to_fork(half)
        # (a late signal on the prefix's last line is known once the line closes: end())
        assert _at(found or reader.end()) == _at(runner.run(0, half) or runner.end()), f"seed {seed}"
        if found is not None:
            continue
        fork = reader.fork(log)
        later = fork.run(half, len(log)) or fork.end()
        whole, want = _stepped(name, log)
        want = want or whole.end()
        assert _at(later) == _at(want), f"seed {seed}"
        assert _state(fork) == _state(whole), f"seed {seed}: the fork's state"
        differ += later is not None
    assert differ, "some logs break the property after their first half"


def test_integrity_names_the_cycle_when_a_delivery_happened_before_its_own_send() -> None:
    """A delivery that happened before its message's send (b received a1, then signalled
    a, who then sent a1) is a cycle of happened-before: the sentence shows the chain,
    not only where the send stands."""
    text = "\n".join([
        '{"format":"ordercheck-log","version":1,"peers":["a","b"]}',
        '{"peer":"b","kind":"deliver","msg":"a1"}',
        '{"peer":"b","kind":"signal","to":"a"}',
        '{"peer":"a","kind":"send","msg":"a1","to":["b"]}',
    ]) + "\n"
    log = read_jsonl(text.splitlines(), "cycle.jsonl")
    v = check(log, "integrity")
    assert v is not None and v.at == 0
    assert v.sentence.endswith(
        "before it was sent: b received a1 (line 2), b signalled a (line 3), "
        "a got a signal from b (line 3), a sent a1 to b (line 4)")
    assert v.events == (0, 1, 2, 3)

"""A spec's history laid out as a log, so that the property monitors read it.

A :class:`~specs.history.History` keeps one sequence of events per peer; the monitors
(:mod:`checker.monitors`) read one sequence of events, a
:class:`~checker.monitors.log.Log`. :func:`history_log` lays a history out as one: a
linearization of the peers' logs consistent with happened-before (each peer's program
order; a message's send before its deliveries and drops; the k-th signal from p to q
before q's k-th receipt of a signal from p), chosen deterministically: peer by peer,
each peer's events are laid out as far as their predecessors on other peers allow, and
the pass repeats until every event is laid out. When happened-before has a cycle (a
delivery before its own send: ``integrity`` reports it), the first waiting event of the
lowest peer is laid out anyway, and the pass goes on.

Specs' histories only grow at the ends of the peers' logs from a state to its successor
(:meth:`~specs.base.PeerSpec.history_growth`); :func:`extend_log` appends to a parent's
log the events a successor's history adds, laid out among themselves the same way, so a
model checker feeds its monitors a few events per state instead of a whole history.

Message names, senders, sequence numbers and destinations are the history's; each event
has its own ``line`` (its index plus one), so signals pair first-in-first-out, as the
history pairs them. The log's ``unit`` is empty: a model's history has no lines to cite,
and sentences name peers and messages only. ``msg_past`` keeps each message's causal past
as the spec computed it (:func:`spec_past`): a spec may know more than the events show
(bus1_impl: a user that sees ``BUS1_HANDLE_INVALID`` joins a destruction's past).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from checker.monitors.log import Log
from specs.history import DELIVER, DROP, SEND, SIGNAL_IN, SIGNAL_OUT, History


@dataclass
class HistoryLog(Log):
    """A :class:`~checker.monitors.log.Log` laid out from a history, with what extending
    it needs: ``ids`` maps a history message id to its log message index, ``seen[p]``
    counts peer ``p``'s history events laid out, ``outs``/``ins`` count the signals
    laid out per ``(signaller, receiver)`` pair, and ``msg_past[m]`` is message ``m``'s
    causal past in the spec, as a bitmask of *history* message ids (0 until sent; see
    :func:`spec_past` for log indices: ``ids`` maps them)."""

    ids: dict[int, int] = field(default_factory=dict)
    seen: list[int] = field(default_factory=list)
    outs: dict[tuple[int, int], int] = field(default_factory=dict)
    ins: dict[tuple[int, int], int] = field(default_factory=dict)
    msg_past: list[int] = field(default_factory=list)
    spec_pasts = True  # the causal monitor reads msg_past (checker.monitors.spec_past)

    def at(self, i: int) -> str:
        """A history has no lines: the empty string."""
        return ""

    def where(self, i: int) -> str:
        """Event ``i`` in words (a history has no place to add)."""
        return self.describe(i)

    def copy(self) -> HistoryLog:
        """An independent copy (the lists copied, the per-event ``meta`` shared until
        written: only :func:`extend_log` writes it, replacing the dict)."""
        other = object.__new__(HistoryLog)
        d = self.__dict__
        o = dict(d)
        for name in _LISTS:
            o[name] = d[name][:]
        o["ids"] = dict(d["ids"])
        o["outs"] = dict(d["outs"])
        o["ins"] = dict(d["ins"])
        other.__dict__ = o
        return other


_LISTS = ("peer", "kind", "arg", "line", "msg_name", "msg_sender", "msg_seq", "msg_dests", "msg_send", "seen", "msg_past")


def history_log(h: History, source: str = "history") -> HistoryLog:
    """The whole history ``h`` as a log (see the module's docstring for the order)."""
    log = HistoryLog(source, list(h.peers), unit="", fmt="history")
    log.seen = [0] * len(h.peers)
    _lay_out(log, h)
    return log


def extend_log(parent: HistoryLog, h: History) -> HistoryLog:
    """A new log: ``parent`` (left as it is) followed by the events of ``h`` beyond those
    ``parent`` laid out. ``h`` must extend the history ``parent`` was laid out from:
    each peer's log with events appended, each appended send a new message, the other
    messages as they were."""
    log = parent.copy()
    _lay_out(log, h)
    return log


def _lay_out(log: HistoryLog, h: History) -> None:
    """Append the events of ``h`` beyond ``log.seen``, in the deterministic order."""
    logs = h.logs
    n = len(logs)
    pos = log.seen
    ends = [len(events) for events in logs]
    left = sum(ends) - sum(pos)
    if left <= 0:
        return
    messages = h.messages
    ids = log.ids
    outs, ins = log.outs, log.ins
    # Signals that exist anywhere in the history, per pair: a receipt waits only for
    # a signal that will come.
    signals: dict[tuple[int, int], int] | None = None
    sends_left: set[int] | None = None
    while left:
        moved = False
        for p in range(n):
            i, end = pos[p], ends[p]
            if i >= end:
                continue
            events = logs[p]
            while i < end:
                kind, arg = events[i]
                if kind == DELIVER or kind == DROP:
                    m = ids.get(arg)
                    if m is None or log.msg_send[m] < 0:
                        if sends_left is None:
                            sends_left = _pending_sends(log, h)
                        if arg in sends_left:
                            break  # its send is still to come
                elif kind == SIGNAL_IN:
                    pair = (arg, p)
                    if ins.get(pair, 0) >= outs.get(pair, 0):
                        if signals is None:
                            signals = _signals(h)
                        if ins.get(pair, 0) < signals.get(pair, 0):
                            break  # its signal is still to come
                _emit(log, h, p, kind, arg, messages)
                if kind == SEND and sends_left is not None:
                    sends_left.discard(arg)
                i += 1
                left -= 1
            if i != pos[p]:
                pos[p] = i
                moved = True
        if not moved:  # a cycle: lay out the lowest peer's waiting event anyway
            p = next(q for q in range(n) if pos[q] < ends[q])
            kind, arg = logs[p][pos[p]]
            _emit(log, h, p, kind, arg, messages)
            if kind == SIGNAL_IN and signals is not None:
                signals[(arg, p)] = 0  # it will not wait again
            pos[p] += 1
            left -= 1


def _pending_sends(log: HistoryLog, h: History) -> set[int]:
    """The history message ids whose send event is in ``h`` but not yet laid out."""
    out = set()
    for p, events in enumerate(h.logs):
        for kind, arg in events[log.seen[p]:]:
            if kind == SEND:
                out.add(arg)
    return out


def _signals(h: History) -> dict[tuple[int, int], int]:
    count: dict[tuple[int, int], int] = {}
    for p, events in enumerate(h.logs):
        for kind, arg in events:
            if kind == SIGNAL_OUT:
                count[(p, arg)] = count.get((p, arg), 0) + 1
    return count


def _message(log: HistoryLog, h: History, mid: int) -> int:
    """The log index of history message ``mid``, added (as not yet sent) on first sight."""
    m = log.ids.get(mid)
    if m is None:
        m = log.ids[mid] = len(log.msg_name)
        log.msg_name.append(h.message_label(mid))
        log.msg_sender.append(-1)
        log.msg_seq.append(-1)
        log.msg_dests.append(())
        log.msg_send.append(-1)
        log.msg_past.append(0)
    return m


_DESTS: dict[frozenset[int], tuple[int, ...]] = {}


def _emit(log: HistoryLog, h: History, p: int, kind: int, arg: int, messages: dict[int, Any]) -> None:
    i = len(log.kind)
    if kind == SEND or kind == DELIVER or kind == DROP:
        m = log.ids.get(arg)
        if m is None:
            m = _message(log, h, arg)
        if kind == SEND:
            msg = messages.get(arg)
            log.msg_sender[m] = p
            log.msg_send[m] = i
            if msg is not None:
                log.msg_seq[m] = msg.seq
                dests = _DESTS.get(msg.dests)
                if dests is None:
                    dests = _DESTS[msg.dests] = tuple(sorted(msg.dests))
                log.msg_dests[m] = dests
                log.msg_past[m] = msg.past_mask
            else:
                log.msg_seq[m] = sum(1 for s in log.msg_sender if s == p) - 1
        elif kind == DROP:
            reason = h.drops.get((p, arg))
            if reason:
                meta = dict(log.meta)
                meta[i] = {"reason": reason}
                log.meta = meta
        arg = m
    elif kind == SIGNAL_OUT:
        log.outs[(p, arg)] = log.outs.get((p, arg), 0) + 1
    elif kind == SIGNAL_IN:
        log.ins[(arg, p)] = log.ins.get((arg, p), 0) + 1
    else:
        arg = 0
    log.peer.append(p)
    log.kind.append(kind)
    log.arg.append(arg)
    log.line.append(i + 1)


def spec_past(log: HistoryLog, m: int) -> list[int]:
    """Message ``m``'s causal past in the spec, as log message indices (those laid out)."""
    mask = log.msg_past[m]
    ids = log.ids
    out = []
    while mask:
        low = mask & -mask
        k = ids.get(low.bit_length() - 1)
        if k is not None:
            out.append(k)
        mask ^= low
    return out


__all__ = ["HistoryLog", "extend_log", "history_log", "spec_past"]

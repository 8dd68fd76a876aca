"""Building recorded executions (:class:`~ordercheck.checker.monitors.log.Log`) and the helpers
``validate`` shares: :class:`LogBuilder` (what the readers call per event), the causal
pasts and :class:`~ordercheck.specs.history.History` of a small log, and sub-logs (windows).
The readers refuse hostile documents with :mod:`ordercheck.checker.api.inputs`.

The :class:`~ordercheck.checker.monitors.log.Log` itself, the event kinds and the pairing of
signals live in :mod:`ordercheck.checker.monitors`, which the property monitors read; they are
re-exported here for the readers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ordercheck.checker.monitors.events import (
    DELIVER,
    DROP,
    FAIL,
    MESSAGE_KINDS,
    RESTART,
    SEND,
    SIGNAL_IN,
    SIGNAL_KINDS,
    SIGNAL_OUT,
)
from ordercheck.checker.monitors.log import KIND_OF_NAME, NAME_OF_KIND, STEP, Log, signal_sources
from ordercheck.specs.history import Event, History, Message

__all__ = [
    "DELIVER", "DROP", "FAIL", "RESTART", "SEND", "SIGNAL_IN", "SIGNAL_OUT", "STEP",
    "KIND_OF_NAME", "NAME_OF_KIND", "Log", "LogBuilder", "signal_sources", "to_history",
]


class LogBuilder:
    """Builds a :class:`Log` event by event, naming peers and messages as it goes.

    Readers call :meth:`add` per event; message ids are the recording's own (strings),
    peers are names. Raises :class:`ValueError` with a field name and a reason when an
    event contradicts an earlier one (a second send of one id); readers turn that into
    an input error naming the line.
    """

    def __init__(self, source: str, peers: Sequence[str] = ()) -> None:
        self.log = Log(source, list(peers))
        self._peer_index = {p: i for i, p in enumerate(self.log.peers)}
        self._msg_index: dict[str, int] = {}
        self._sends: list[int] = [0] * len(self.log.peers)
        self.fixed_peers = bool(peers)

    def peer_id(self, name: str, field_name: str = "peer") -> int:
        """The index of peer ``name``, added on first sight unless the header fixed the peers."""
        i = self._peer_index.get(name)
        if i is None:
            if self.fixed_peers:
                raise ValueError(f"{field_name}: {name!r} is not one of the peers the header names ({', '.join(self.log.peers)})")
            i = self._peer_index[name] = len(self.log.peers)
            self.log.peers.append(name)
            self._sends.append(0)
        return i

    def message_id(self, name: str) -> int:
        """The index of message ``name``, added (as not yet sent) on first sight."""
        m = self._msg_index.get(name)
        if m is None:
            log = self.log
            m = self._msg_index[name] = len(log.msg_name)
            log.msg_name.append(name)
            log.msg_sender.append(-1)
            log.msg_seq.append(-1)
            log.msg_dests.append(())
            log.msg_send.append(-1)
        return m

    def add(self, peer: int, kind: int, arg: int, line: int, meta: dict[str, Any] | None = None) -> int:
        """Append one event; returns its index."""
        log = self.log
        i = len(log.kind)
        log.peer.append(peer)
        log.kind.append(kind)
        log.arg.append(arg)
        log.line.append(line)
        if meta:
            log.meta[i] = meta
        return i

    def send(self, peer: int, name: str, dests: Iterable[int], line: int, meta: dict[str, Any] | None = None) -> int:
        """Append a send of message ``name`` to ``dests``."""
        log = self.log
        m = self.message_id(name)
        if log.msg_send[m] >= 0:
            raise ValueError(f"msg: message {name!r} was already sent on {log.at(log.msg_send[m])}; ids must be unique")
        i = self.add(peer, SEND, m, line, meta)
        log.msg_sender[m] = peer
        log.msg_seq[m] = self._sends[peer]
        self._sends[peer] += 1
        log.msg_dests[m] = tuple(sorted(set(dests)))
        log.msg_send[m] = i
        return i

    def step(self, peer: int, action: Any, line: int, meta: dict[str, Any] | None = None) -> int:
        """Append a spec step named by the recording."""
        self.log.actions.append(action)
        return self.add(peer, STEP, len(self.log.actions) - 1, line, meta)


def causal_pasts(log: Log) -> list[frozenset[int]]:
    """For each message, the messages whose send happened before its send.

    Happened-before is program order, each send to the deliveries of its message, and
    each signal to its receipt (paired by :func:`signal_sources`). Sets are built whole,
    so this is for small logs (windows, tests): the validators at scale use vector
    clocks instead.
    """
    know: list[set[int]] = [set() for _ in log.peers]
    past: list[frozenset[int]] = [frozenset()] * log.messages
    source = signal_sources(log)
    sent: dict[int, set[int]] = {}  # signal event -> what its sender knew, until received
    for i in range(len(log)):
        p, k, a = log.peer[i], log.kind[i], log.arg[i]
        if k == SEND:
            past[a] = frozenset(know[p])
            know[p].add(a)
        elif k == DELIVER:
            if log.msg_send[a] >= 0 and log.msg_send[a] < i:
                know[p] |= past[a]
            know[p].add(a)
        elif k == SIGNAL_OUT:
            sent[i] = set(know[p])
        elif k == SIGNAL_IN:
            theirs = sent.pop(source.get(i, -1), None)
            if theirs is not None:
                know[p] |= theirs
    return past


def to_history(log: Log) -> History:
    """The log as a :class:`~ordercheck.specs.history.History`, for the property library and the
    report's diagrams. Message ids are the log's message indices; messages never sent
    are left out of ``messages`` (their deliveries stay in the logs). ``failed`` holds
    the peers whose last ``fail`` has no ``restart`` after it. Meant for small logs
    (see :func:`causal_pasts`)."""
    past = causal_pasts(log)
    messages: dict[int, Message] = {}
    for m in range(log.messages):
        if log.msg_send[m] < 0:
            continue
        messages[m] = Message(
            m, log.msg_name[m], log.msg_sender[m], log.msg_seq[m], frozenset(log.msg_dests[m]), past[m]
        )
    logs: list[list[Event]] = [[] for _ in log.peers]
    drops: dict[tuple[int, int], str] = {}
    down: set[int] = set()
    for i in range(len(log)):
        p, k, a = log.peer[i], log.kind[i], log.arg[i]
        if k == STEP:
            continue
        logs[p].append(Event(k, a))
        if k == DROP:
            drops[(p, a)] = str(log.meta.get(i, {}).get("reason", ""))
        elif k == FAIL:
            down.add(p)
        elif k == RESTART:
            down.discard(p)
    return History(tuple(log.peers), messages, tuple(tuple(events) for events in logs), drops, frozenset(down))


def sub_log(log: Log, events: Iterable[int], *, all_peers: bool = False) -> tuple[Log, list[int]]:
    """The log made of ``events`` (indices, kept in log order): their peers (every
    peer with ``all_peers``), the messages they name (with their senders, sequence
    numbers among the kept sends, and destinations among the kept peers) and their
    lines. Returns it with the original index of each kept event."""
    keep = sorted(set(events))
    if all_peers:
        peers = list(range(len(log.peers)))
    else:
        peers = sorted({log.peer[i] for i in keep} | {log.arg[i] for i in keep if log.kind[i] in SIGNAL_KINDS})
    msgs = sorted({log.arg[i] for i in keep if log.kind[i] in MESSAGE_KINDS})
    pmap = {p: j for j, p in enumerate(peers)}
    mmap = {m: j for j, m in enumerate(msgs)}
    out = Log(log.source, [log.peers[p] for p in peers], header=dict(log.header), unit=log.unit,
              fmt=log.fmt, sources=list(log.sources))
    sends = [0] * len(peers)
    for m in msgs:
        out.msg_name.append(log.msg_name[m])
        out.msg_sender.append(-1)
        out.msg_seq.append(-1)
        out.msg_dests.append(tuple(pmap[d] for d in log.msg_dests[m] if d in pmap))
        out.msg_send.append(-1)
    for j, i in enumerate(keep):
        p, k, a = log.peer[i], log.kind[i], log.arg[i]
        if k in MESSAGE_KINDS:
            a = mmap[a]
            if k == SEND:
                out.msg_sender[a] = pmap[p]
                out.msg_seq[a] = sends[pmap[p]]
                sends[pmap[p]] += 1
                out.msg_send[a] = j
        elif k in SIGNAL_KINDS:
            a = pmap[a]
        elif k == STEP:
            out.actions.append(log.actions[a])
            a = len(out.actions) - 1
        out.peer.append(pmap[p])
        out.kind.append(k)
        out.arg.append(a)
        out.line.append(log.line[i])
        if log.origin:
            out.origin.append(log.origin[i])
        if i in log.meta:
            out.meta[j] = log.meta[i]
    return out, keep

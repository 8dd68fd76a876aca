"""A recorded execution in memory: peers, messages and events, in columns.

A :class:`Log` holds one recording as parallel lists (one entry per event), so that a
million-event log costs a few lists of ints rather than a million objects. Events are
in the log's order, which is the order they happened in: each peer's events in its
program order, and every send before the deliveries of its message (a log whose
order breaks the latter is read as it is, and :mod:`~checker.validate.integrity`
reports the delivery that comes first).

Event kinds are those of :mod:`specs.history` (``SEND``, ``DELIVER``, ``SIGNAL_OUT``,
``SIGNAL_IN``, ``DROP``, ``FAIL``, ``RESTART``) plus :data:`STEP`, a spec step the
recording names (used by conformance only). ``arg`` is a message index for sends,
deliveries and drops, the other peer for signals, an index into ``actions`` for steps.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from specs.history import DELIVER, DROP, FAIL, KIND_NAMES, RESTART, SEND, SIGNAL_IN, SIGNAL_OUT, Event, History, Message

STEP = 7
"""A spec step named by the recording (``{"kind": "step", "action": ...}``)."""

KIND_OF_NAME: dict[str, int] = {name: code for code, name in KIND_NAMES.items()}
KIND_OF_NAME["step"] = STEP
NAME_OF_KIND: dict[int, str] = {code: name for name, code in KIND_OF_NAME.items()}

MESSAGE_KINDS = frozenset((SEND, DELIVER, DROP))
SIGNAL_KINDS = frozenset((SIGNAL_OUT, SIGNAL_IN))

__all__ = [
    "DELIVER", "DROP", "FAIL", "RESTART", "SEND", "SIGNAL_IN", "SIGNAL_OUT", "STEP",
    "KIND_OF_NAME", "NAME_OF_KIND", "Log", "LogBuilder", "signal_sources", "to_history",
]


@dataclass
class Log:
    """One recorded execution.

    Per event ``i``: ``peer[i]`` (an index into ``peers``), ``kind[i]``, ``arg[i]`` and
    ``line[i]``, the line of the source file it was read from (both events of a
    one-line ``signal`` share it; for an ITF trace, the index of the state it leads
    to, and ``unit`` is ``"state"``). Per message ``m``: ``msg_name[m]`` (the recording's
    id), ``msg_sender[m]`` (-1 if it was never sent), ``msg_seq[m]`` (how many
    messages its sender sent before it), ``msg_dests[m]`` (peer indices, sorted) and
    ``msg_send[m]`` (the event index of its send, -1 if none). ``meta`` keeps, for the
    events that carry them, the optional recorded fields (``vc``, ``lamport``,
    ``time``, ``reason``); ``actions`` the spec steps named by ``STEP`` events. A log
    merged from several files (:mod:`~checker.validate.merge`) names them in
    ``sources`` and gives each event's file in ``origin`` (both empty otherwise); its
    lines are those of the event's own file.
    """

    source: str
    peers: list[str]
    peer: list[int] = field(default_factory=list)
    kind: list[int] = field(default_factory=list)
    arg: list[int] = field(default_factory=list)
    line: list[int] = field(default_factory=list)
    msg_name: list[str] = field(default_factory=list)
    msg_sender: list[int] = field(default_factory=list)
    msg_seq: list[int] = field(default_factory=list)
    msg_dests: list[tuple[int, ...]] = field(default_factory=list)
    msg_send: list[int] = field(default_factory=list)
    meta: dict[int, dict[str, Any]] = field(default_factory=dict)
    actions: list[Any] = field(default_factory=list)
    header: dict[str, Any] = field(default_factory=dict)
    unit: str = "line"
    fmt: str = "jsonl"
    sources: list[str] = field(default_factory=list)
    origin: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.kind)

    @property
    def messages(self) -> int:
        """How many distinct message ids the log names."""
        return len(self.msg_name)

    def describe(self, i: int) -> str:
        """Event ``i`` in words: ``b received a1``, ``a sent a1 to b,c``..."""
        who = self.peers[self.peer[i]]
        k, a = self.kind[i], self.arg[i]
        if k == SEND:
            dests = ",".join(self.peers[d] for d in self.msg_dests[a])
            return f"{who} sent {self.msg_name[a]} to {dests}"
        if k == DELIVER:
            return f"{who} received {self.msg_name[a]}"
        if k == DROP:
            reason = self.meta.get(i, {}).get("reason")
            return f"{who} dropped {self.msg_name[a]}" + (f" ({reason})" if reason else "")
        if k == SIGNAL_OUT:
            return f"{who} signalled {self.peers[a]}"
        if k == SIGNAL_IN:
            return f"{who} got a signal from {self.peers[a]}"
        if k == STEP:
            return f"{who} took step {self.actions[a]!r}"
        return f"{who}: {NAME_OF_KIND[k]}"

    def at(self, i: int) -> str:
        """Where event ``i`` stands in the source: ``line 12`` (``state 12`` for ITF
        traces; ``b.jsonl line 12`` in a merged log)."""
        if self.origin:
            return f"{self.sources[self.origin[i]]} {self.unit} {self.line[i]}"
        return f"{self.unit} {self.line[i]}"

    def where(self, i: int) -> str:
        """Event ``i`` with its place in the source: ``b received a1 (line 12)``."""
        return f"{self.describe(i)} ({self.at(i)})"


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


def signal_sources(log: Log) -> dict[int, int]:
    """Each signal receipt's signal: ``{receipt event: signal event}``.

    The one place signals are paired (every validator reads this). A receipt recorded
    on the same line as a signal from the same peer to the receiving peer, after it (a
    one-line ``signal``; in an ITF trace, one step's signal) is that signal's own
    receipt. The other receipts are paired first-in-first-out with the other signals:
    the k-th remaining receipt at q of a signal from p with the k-th remaining signal
    from p to q, whether that signal comes before the receipt in the log or after it
    (``integrity`` reports the latter). A receipt with no signal left, and a signal
    never received, are in no pair. Lines count as the same only within one file of
    a merged log. O(events).
    """
    kinds, peers, args, lines = log.kind, log.peer, log.arg, log.line
    origin = log.origin
    out: dict[int, int] = {}
    own: set[int] = set()  # signals received on their own line
    unit_key: tuple[int, int] | None = None
    unit_outs: dict[tuple[int, int], list[int]] = {}  # this line's signals not yet received on it
    for i in range(len(kinds)):
        k = kinds[i]
        if k != SIGNAL_OUT and k != SIGNAL_IN:
            continue
        key = (origin[i] if origin else 0, lines[i])
        if key != unit_key:
            unit_key, unit_outs = key, {}
        if k == SIGNAL_OUT:
            unit_outs.setdefault((peers[i], args[i]), []).append(i)
        else:
            waiting = unit_outs.get((args[i], peers[i]))
            if waiting:
                j = waiting.pop(0)
                out[i] = j
                own.add(j)
    outs: dict[tuple[int, int], list[int]] = {}
    ins: dict[tuple[int, int], list[int]] = {}
    for i in range(len(kinds)):
        k = kinds[i]
        if k == SIGNAL_OUT and i not in own:
            outs.setdefault((peers[i], args[i]), []).append(i)
        elif k == SIGNAL_IN and i not in out:
            ins.setdefault((args[i], peers[i]), []).append(i)
    for pair, receipts in ins.items():
        for r, s in zip(receipts, outs.get(pair, ())):
            out[r] = s
    return out


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
    """The log as a :class:`~specs.history.History`, for the property library and the
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


def nesting(doc: Any, limit: int) -> int:
    """How deeply ``doc`` (parsed JSON) nests lists and objects, counted without
    recursion; counting stops as soon as it passes ``limit``. Readers refuse documents
    past a fixed limit of their own, so that the answer does not depend on Python's
    recursion limit at the time (an engine in the same process may have raised it)."""
    deepest = 0
    stack = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (list, dict)):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
            stack.extend((v, depth) for v in (value.values() if isinstance(value, dict) else value))
    return deepest

"""A run as monitors read it: peers, messages and events, in columns.

A :class:`Log` holds one execution as parallel lists (one entry per event), so that a
million-event recording costs a few lists of ints rather than a million objects, and a
model checker's history of a few dozen events is cheap to copy. Events are in the order
they happened in: each peer's events in its program order, and (in a well-formed run)
every send before the deliveries of its message. ``validate`` reads recordings into a
log (:mod:`ordercheck.checker.validate.log` builds them); the model checker lays a spec's history
out as one; the property monitors (:mod:`ordercheck.checker.monitors`) read nothing else.

Event kinds are those of :mod:`ordercheck.checker.monitors.events` plus :data:`STEP`, a spec step a
recording names (used by conformance only). ``arg`` is a message index for sends,
deliveries and drops, the other peer for signals, an index into ``actions`` for steps.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ordercheck.checker.monitors.events import DELIVER, DROP, KIND_NAMES, SEND, SIGNAL_IN, SIGNAL_OUT

STEP = 7
"""A spec step named by the recording (``{"kind": "step", "action": ...}``)."""

KIND_OF_NAME: dict[str, int] = {name: code for code, name in KIND_NAMES.items()}
KIND_OF_NAME["step"] = STEP
NAME_OF_KIND: dict[int, str] = {code: name for name, code in KIND_OF_NAME.items()}


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
    merged from several files (:mod:`~ordercheck.checker.validate.merge`) names them in
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


class SignalPairs:
    """Pairs signals with their receipts as the events arrive (the one place signals are
    paired: every monitor and :func:`signal_sources` read it).

    A *unit* is a run of consecutive events on one line of one file (a one-line
    ``signal``; in an ITF trace, one step). A receipt at q of a signal from p, in the
    same unit as a signal from p to q before it and not yet received, is that signal's
    own receipt. The other receipts and signals are paired first-in-first-out: the k-th
    remaining receipt at q of a signal from p with the k-th remaining signal from p to
    q, whether that signal comes before the receipt in the log (paired at the receipt)
    or after it (a *late* pair, which ``integrity`` reports). A signal is known not to
    be its unit's own only once the unit closes, so late pairs are formed then: at the
    first event of the next unit, or at :meth:`flush` when the run ends. A receipt with
    no signal left, and a signal never received, are in no pair. O(1) amortised per
    event; :meth:`copy` copies the few waiting lists.
    """

    __slots__ = ("log", "unit", "unit_outs", "outs", "early")

    def __init__(self, log: Log) -> None:
        self.log = log
        self.unit: tuple[int, int] | None = None
        self.unit_outs: dict[tuple[int, int], list[int]] = {}  # (p, q) -> this unit's signals, not received in it
        self.outs: dict[tuple[int, int], deque[int]] = {}  # (p, q) -> earlier units' signals waiting for a receipt
        self.early: dict[tuple[int, int], deque[int]] = {}  # (p, q) -> receipts waiting for a signal

    def step(self, i: int) -> list[tuple[int, int]]:
        """Event ``i`` arrived: the pairs ``(receipt, signal)`` it completes (the late
        pairs of the unit it closes, then its own), in the order of their signals."""
        log = self.log
        k = log.kind[i]
        signal = k == SIGNAL_OUT or k == SIGNAL_IN
        if not signal and not self.unit_outs:
            return []
        key = (log.origin[i] if log.origin else 0, log.line[i])
        found = []
        if key != self.unit:
            if self.unit_outs:
                found = self.flush()
            self.unit = key
        if not signal:
            return found
        if k == SIGNAL_OUT:
            self.unit_outs.setdefault((log.peer[i], log.arg[i]), []).append(i)
            return found
        pair = (log.arg[i], log.peer[i])
        waiting = self.unit_outs.get(pair)
        if waiting:
            found.append((i, waiting.pop(0)))
            if not waiting:
                del self.unit_outs[pair]
            return found
        outs = self.outs.get(pair)
        if outs:
            found.append((i, outs.popleft()))
        else:
            self.early.setdefault(pair, deque()).append(i)
        return found

    def flush(self) -> list[tuple[int, int]]:
        """Close the open unit: its signals not received in it join the first-in-
        first-out pairing; the late pairs that forms, in the order of their signals."""
        found = []
        for pair, signals in sorted(self.unit_outs.items(), key=lambda item: item[1][0]):
            early = self.early.get(pair)
            for j in signals:
                if early:
                    found.append((early.popleft(), j))
                else:
                    self.outs.setdefault(pair, deque()).append(j)
        self.unit_outs = {}
        found.sort(key=lambda rs: rs[1])
        return found

    def pack(self) -> tuple:
        """The pairing's state as plain values (for :meth:`Monitor.pack
        <ordercheck.checker.monitors.base.Monitor.pack>`); :meth:`unpack` restores it."""
        return (self.unit, {k: tuple(v) for k, v in self.unit_outs.items()} if self.unit_outs else None,
                {k: tuple(v) for k, v in self.outs.items()} if self.outs else None,
                {k: tuple(v) for k, v in self.early.items()} if self.early else None)

    @classmethod
    def unpack(cls, log: Log, state: tuple) -> SignalPairs:
        """A pairing in the state :meth:`pack` gave, reading ``log``."""
        other = cls(log)
        unit, unit_outs, outs, early = state
        other.unit = unit
        if unit_outs:
            other.unit_outs = {k: list(v) for k, v in unit_outs.items()}
        if outs:
            other.outs = {k: deque(v) for k, v in outs.items()}
        if early:
            other.early = {k: deque(v) for k, v in early.items()}
        return other

    def copy(self, log: Log) -> SignalPairs:
        """An independent copy reading ``log``."""
        other = SignalPairs.__new__(SignalPairs)  # every slot set below: no __init__ to run
        other.log = log
        other.unit = self.unit
        other.unit_outs = {k: v[:] for k, v in self.unit_outs.items()} if self.unit_outs else {}
        other.outs = {k: deque(v) for k, v in self.outs.items()} if self.outs else {}
        other.early = {k: deque(v) for k, v in self.early.items()} if self.early else {}
        return other


def pack_ints(values: list[int]) -> bytes | tuple[int, ...]:
    """A list of ints packed: as bytes where every value is in 0..255 (the usual case
    for a model's short histories), else as a tuple; ``list()`` of either restores it."""
    try:
        return bytes(values)
    except (ValueError, TypeError):
        return tuple(values)


def signal_sources(log: Log) -> dict[int, int]:
    """Each signal receipt's signal in the whole log: ``{receipt event: signal event}``,
    as :class:`SignalPairs` pairs them event by event. O(events)."""
    pairs = SignalPairs(log)
    out: dict[int, int] = {}
    kinds = log.kind
    for i in range(len(kinds)):
        k = kinds[i]
        if k == SIGNAL_OUT or k == SIGNAL_IN or pairs.unit_outs:  # the others pair nothing
            for r, s in pairs.step(i):
                out[r] = s
    for r, s in pairs.flush():
        out[r] = s
    return out

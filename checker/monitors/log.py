"""A run as monitors read it: peers, messages and events, in columns.

A :class:`Log` holds one execution as parallel lists (one entry per event), so that a
million-event recording costs a few lists of ints rather than a million objects, and a
model checker's history of a few dozen events is cheap to copy. Events are in the order
they happened in: each peer's events in its program order, and (in a well-formed run)
every send before the deliveries of its message. ``validate`` reads recordings into a
log (:mod:`checker.validate.log` builds them); the model checker lays a spec's history
out as one; the property monitors (:mod:`checker.monitors`) read nothing else.

Event kinds are those of :mod:`checker.monitors.events` plus :data:`STEP`, a spec step a
recording names (used by conformance only). ``arg`` is a message index for sends,
deliveries and drops, the other peer for signals, an index into ``actions`` for steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from checker.monitors.events import DELIVER, DROP, KIND_NAMES, SEND, SIGNAL_IN, SIGNAL_OUT

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

"""Is a recording a behaviour of the spec? Trace validation with a bounded search.

As TLA+ trace validation does, the log is read as a partial record of a behaviour:
what it records must each be the work of a spec step, and the spec steps it does not
record (bus1's blocks, ticks and syncs; any step that adds nothing observable) are
filled in by a breadth-first search.

**What is recorded.** A spec step's observable effect is the events it appends to the
spec's history (:meth:`~ordercheck.checker.Spec.history`): sends (with their sequence number
among the sender's sends, and destinations), deliveries and drops (of which sender's
which message), signals, failures. A log event is matched by a spec event with the
same peer (by name), kind and those fields; message ids in the log are the
recording's own and are matched through (sender, sequence number). A step that adds
several events (bus1's signal adds the signal and its receipt) must match as many
consecutive log events, in any order across peers and in order within each peer.
Events of the kinds named ``unrecorded`` are left out of the log and ignored in spec
steps (an implementation that does not log its side-channel signals, say). A ``step``
line must be matched by a spec step with that label (as a list: the label; as text:
the spec's formatted action) taken at that point; steps that append nothing recorded
may still be filled in around it.

**Search.** The states consistent with the first k events form a set. From it, spec
steps that record nothing are explored breadth first up to ``bound`` steps deep (per
gap between recorded events), and every step that records exactly what comes next
moves its state to the set of the next position. The log conforms when a state
explains all its events. Otherwise the longest prefix some state explains is the
answer, with the event that no spec step explains and what the spec could have
recorded instead; if the bound or ``max_states`` cut any part of the search, the
answer is ``unknown`` (a deeper search might explain more).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from heapq import heappop, heappush
from typing import Any

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.rendering import rendering_of
from ordercheck.checker.api.spec import Spec, State
from ordercheck.checker.validate.log import (
    DELIVER,
    DROP,
    KIND_OF_NAME,
    NAME_OF_KIND,
    SEND,
    SIGNAL_IN,
    SIGNAL_OUT,
    STEP,
    Log,
)
from ordercheck.specs.history import message_name

DEFAULT_BOUND = 100
DEFAULT_MAX_STATES = 1_000_000
UNRECORDABLE = ("send", "deliver", "drop", "signal_out", "signal_in", "fail", "restart")

Sig = tuple[int, int, Any]  # (spec peer, kind, what identifies the event)


@dataclass
class Conformance:
    """The answer for one log.

    ``status`` is ``conforms``, ``violated`` (some event no spec step explains) or
    ``unknown`` (a bound cut the search). ``matched`` is how many of the log's events
    (after leaving out the unrecorded kinds) the longest conforming prefix holds;
    ``at`` is the index in the log of the first event no state explains (``None``
    when it conforms). ``could`` lists what the spec could have recorded there
    instead (at most a few, in words). ``states`` counts the spec states the search
    visited; ``cut`` says which bound cut it, if any.
    """

    status: str
    matched: int
    recorded: int
    at: int | None
    sentence: str
    could: list[str] = field(default_factory=list)
    states: int = 0
    cut: str | None = None

    def to_json(self, log: Log) -> dict[str, Any]:
        """A JSON record of the answer (lines instead of event indices)."""
        return {
            "status": self.status,
            "matched_events": self.matched,
            "recorded_events": self.recorded,
            "line": None if self.at is None else log.line[self.at],
            "explanation": self.sentence,
            "could": list(self.could),
            "states": self.states,
            "cut": self.cut,
        }


def parse_unrecorded(text: str) -> frozenset[int]:
    """Event kinds from ``signal_in,signal_out``; ``signal`` stands for both.
    Raises :class:`ValueError` naming an unknown kind."""
    kinds: set[int] = set()
    for part in text.split(","):
        name = part.strip()
        if not name:
            continue
        if name == "signal":
            kinds |= {SIGNAL_OUT, SIGNAL_IN}
        elif name in UNRECORDABLE:
            kinds.add(KIND_OF_NAME[name])
        else:
            raise ValueError(f"unknown event kind {name!r} (one of signal, {', '.join(UNRECORDABLE)})")
    return frozenset(kinds)


class _Explainer:
    """The search for one spec and one log."""

    def __init__(self, spec: Spec, log: Log, unrecorded: frozenset[int], by_position: bool = False) -> None:
        self.spec = spec
        self.log = log
        self.unrecorded = unrecorded
        self._histories: dict[Hashable, Any] = {}
        first = self.history(spec.init_states()[0])
        self.spec_peers = list(first.peers)
        index = {name: i for i, name in enumerate(self.spec_peers)}
        self.peer_map: list[int] = []
        if by_position:
            if len(log.peers) != len(self.spec_peers):
                raise InputError(
                    log.source, "peers",
                    f"{len(log.peers)} peers ({', '.join(log.peers)}), but spec {spec.name!r} has "
                    f"{len(self.spec_peers)} ({', '.join(self.spec_peers)}); they are matched by position",
                )
            self.peer_map = list(range(len(log.peers)))
        for name in log.peers if not by_position else ():
            if name not in index:
                raise InputError(
                    log.source, "peer",
                    f"{name!r} is not a peer of spec {spec.name!r} (its peers are {', '.join(self.spec_peers)})",
                )
            self.peer_map.append(index[name])
        self.events = [i for i in range(len(log)) if log.kind[i] not in unrecorded]
        self.sigs = [self._log_sig(i) for i in self.events]

    # -- signatures ------------------------------------------------------------------

    def _log_sig(self, i: int) -> Sig:
        log, pm = self.log, self.peer_map
        p, k, a = pm[log.peer[i]], log.kind[i], log.arg[i]
        if k == SEND:
            return (p, k, (log.msg_seq[a], tuple(sorted(pm[d] for d in log.msg_dests[a]))))
        if k == DELIVER or k == DROP:
            s = log.msg_sender[a]
            return (p, k, (pm[s] if s >= 0 else -1, log.msg_seq[a]))
        if k == SIGNAL_OUT or k == SIGNAL_IN:
            return (p, k, pm[a])
        if k == STEP:
            return (p, k, log.actions[a])
        return (p, k, None)

    def history(self, state: State) -> Any:
        key = self.spec.history_key(state)
        h = self._histories.get(key)
        if h is None:
            if len(self._histories) > 1 << 16:
                self._histories.clear()
            h = self._histories[key] = self.spec.history(state)
        return h

    def new_sigs(self, before: Any, after: Any) -> list[Sig]:
        """The recorded events ``after`` has beyond ``before``, per peer in order."""
        out: list[Sig] = []
        if after is before:
            return out
        for p, log in enumerate(after.logs):
            old = before.logs[p]
            if log is old or len(log) == len(old):
                continue
            for ev in log[len(old) :]:
                k = ev.kind
                if k in self.unrecorded:
                    continue
                if k == SEND:
                    msg = after.messages[ev.arg]
                    out.append((p, k, (msg.seq, tuple(sorted(msg.dests)))))
                elif k == DELIVER or k == DROP:
                    msg = after.messages.get(ev.arg)
                    out.append((p, k, (msg.sender, msg.seq) if msg is not None else (-1, ev.arg)))
                elif k == SIGNAL_OUT or k == SIGNAL_IN:
                    out.append((p, k, ev.arg))
                else:
                    out.append((p, k, None))
        return out

    def label_matches(self, label: Any, action: Any) -> bool:
        if isinstance(action, tuple):
            return tuple(label) == action
        return rendering_of(self.spec).format_action(label) == action

    def describe(self, sig: Sig) -> str:
        """A spec event in words, its messages named as the spec names them (``a1``)."""
        p, k, x = sig
        who = self.spec_peers[p]
        if k == SEND:
            seq, dests = x
            return f"{who} sends {message_name(self.spec_peers, p, seq)} to {','.join(self.spec_peers[d] for d in dests)}"
        if k == DELIVER or k == DROP:
            s, seq = x
            name = message_name(self.spec_peers, s, seq) if s >= 0 else "a message never sent"
            return f"{who} {'receives' if k == DELIVER else 'drops'} {name}"
        if k == SIGNAL_OUT:
            return f"{who} signals {self.spec_peers[x]}"
        if k == SIGNAL_IN:
            return f"{who} gets a signal from {self.spec_peers[x]}"
        return f"{who}: {NAME_OF_KIND[k]}"


def _same_events(new: list[Sig], recorded: list[Sig]) -> bool:
    """Equal as sequences per peer (any order across peers)."""
    if len(new) != len(recorded):
        return False
    if len(new) == 1:
        return new[0] == recorded[0]
    return sorted(new, key=lambda s: s[0]) == sorted(recorded, key=lambda s: s[0])


def conformance(
    spec: Spec,
    log: Log,
    *,
    bound: int = DEFAULT_BOUND,
    max_states: int = DEFAULT_MAX_STATES,
    unrecorded: Iterable[int] = (),
    by_position: bool = False,
) -> Conformance:
    """Decide whether ``log`` records a behaviour of ``spec`` (see the module's text).

    ``bound`` is the most unrecorded spec steps searched between two recorded events;
    ``max_states`` the most spec states visited in all. The log's peers are the spec's
    peers of the same names, or with ``by_position`` the spec's peers in order (the
    log's first peer is the spec's first, and so on; ``ordercheck run`` names its nodes
    ``n1``, ``n2``, ...). Raises :class:`~ordercheck.checker.InputError` when the log names a
    peer the spec does not have (with ``by_position``: when the two have not as many
    peers), or the spec keeps no history.
    """
    try:
        ex = _Explainer(spec, log, frozenset(unrecorded), by_position)
    except NotImplementedError:
        raise InputError(log.source, "", f"spec {spec.name!r} keeps no history, so no log can be matched to it") from None
    sigs = ex.sigs
    n = len(sigs)
    pending: dict[int, dict[Any, State]] = {0: {s: s for s in spec.init_states()}}
    queue = [0]
    visited = 0
    best = 0
    cut: str | None = None
    could: list[str] = []
    while queue:
        k = heappop(queue)
        states = pending.pop(k)
        if k == n:
            return Conformance(
                "conforms", n, n, None,
                f"every recorded event is explained by a spec step ({visited:,} spec states searched)",
                states=visited, cut=cut,
            )
        want = sigs[k]
        frontier = list(states.values())
        seen = set(states)
        options: list[str] = []
        depth = 0
        while frontier:
            nxt = []
            for s in frontier:
                hs = ex.history(s)
                for label, t in spec.next_states(s):
                    visited += 1
                    new = ex.new_sigs(hs, ex.history(t))
                    target = None
                    if want[1] == STEP:
                        if ex.label_matches(label, want[2]) and _same_events(new, sigs[k + 1 : k + 1 + len(new)]):
                            target = k + 1 + len(new)
                    elif new and _same_events(new, sigs[k : k + len(new)]):
                        target = k + len(new)
                    if target is not None:
                        bucket = pending.get(target)
                        if bucket is None:
                            bucket = pending[target] = {}
                            heappush(queue, target)
                        bucket.setdefault(t, t)
                    if new:
                        if len(options) < 6:
                            text = "; ".join(ex.describe(sig) for sig in new)
                            if text not in options:
                                options.append(text)
                        continue
                    if t in seen:
                        continue
                    if depth >= bound:
                        cut = cut or f"bound of {bound} unrecorded steps"
                        continue
                    seen.add(t)
                    nxt.append(t)
                if visited > max_states:
                    cut = f"max_states {max_states:,}"
                    frontier = nxt = []
                    queue.clear()
                    break
            frontier = nxt
            depth += 1
        if k >= best:
            best, could = k, options
    at = ex.events[best] if best < n else None
    status = "unknown" if cut else "violated"
    where = log.where(at) if at is not None else "the end of the log"
    prefix = f"the first {best} recorded events conform" + (f" (up to {log.at(ex.events[best - 1])})" if best else "")
    if status == "violated":
        sentence = (
            f"no behaviour of spec {spec.name!r} records {where}: {prefix}, with the unrecorded steps "
            f"filled in by search, and after them no spec step, whatever unrecorded steps come first, "
            f"records this event"
        )
    else:
        sentence = (
            f"no behaviour of spec {spec.name!r} was found that records {where} ({prefix}); the search was "
            f"cut by its {cut}, so a larger one might explain it"
        )
    return Conformance(status, best, n, at, sentence, could, visited, cut)

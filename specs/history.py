"""The history every spec exposes: what an outside observer of the bus could see.

For each message: its sender, its destinations and its causal past. For each peer: the
sequence of its events (sends, deliveries, drops, side-channel signals, failures). The
ordering properties in :mod:`specs.properties` read only this, so one property library
serves every protocol, and a recorded log of a real system can be checked by building a
:class:`History` from it.

Inside a state, specs keep the raw material compactly (see :func:`encode_event`): each
peer's log is a tuple of ints and each message's metadata a pair of bitmasks. A
:class:`History` is built from that raw material only when a property needs it.

Causal past (DESIGN.md): a peer's knowledge grows when one of its sends completes (the
message joins it), when it delivers a message (the message and that message's causal
past) and when it receives a side-channel signal (the signaller's whole knowledge). A
message's causal past is its sender's knowledge when the send starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

from checker.monitors.events import (  # noqa: F401 - the event kinds, re-exported for specs
    DELIVER,
    DROP,
    FAIL,
    KIND_NAMES,
    RESTART,
    SEND,
    SIGNAL_IN,
    SIGNAL_OUT,
)


def encode_event(kind: int, arg: int = 0) -> int:
    """Pack an event into one int: ``arg << 3 | kind``."""
    return (arg << 3) | kind


class Event(NamedTuple):
    """One event of one peer's log."""

    kind: int
    arg: int

    @property
    def kind_name(self) -> str:
        return KIND_NAMES[self.kind]


def decode_event(code: int) -> Event:
    """Unpack an event made by :func:`encode_event`."""
    return Event(code & 7, code >> 3)


@dataclass(frozen=True)
class Message:
    """A message as an observer sees it. ``past`` is a set of message ids."""

    id: int
    name: str
    sender: int
    seq: int
    dests: frozenset[int]
    past: frozenset[int]

    @cached_property
    def dests_mask(self) -> int:
        """``dests`` as a bitmask: bit ``q`` is set when the message is addressed to ``q``."""
        return sum(1 << q for q in self.dests)

    @cached_property
    def past_mask(self) -> int:
        """``past`` as a bitmask: bit ``m`` is set when message ``m`` is in the causal past."""
        return sum(1 << m for m in self.past)


class MessageMasks:
    """Facts about a set of messages as bitmasks of message ids (bit ``m`` stands for
    message ``m``), each computed on first use."""

    def __init__(self, messages: dict[int, Message], peers: int) -> None:
        self.messages = messages
        self.peers = peers

    @cached_property
    def addressed(self) -> tuple[int, ...]:
        """Per peer ``q``, the messages addressed to ``q``."""
        to = [0] * self.peers
        for msg in self.messages.values():
            bit = 1 << msg.id
            for q in msg.dests:
                if q < self.peers:
                    to[q] |= bit
        return tuple(to)

    @cached_property
    def earlier(self) -> dict[int, int]:
        """Per message, the messages its sender sent before it (a smaller ``seq``)."""
        by_sender: dict[int, list[tuple[int, int]]] = {}
        for msg in self.messages.values():
            by_sender.setdefault(msg.sender, []).append((msg.seq, msg.id))
        out: dict[int, int] = {}
        for sent in by_sender.values():
            sent.sort()
            mask = 0
            k = 0
            while k < len(sent):
                j = k
                while j < len(sent) and sent[j][0] == sent[k][0]:  # equal seqs precede neither
                    out[sent[j][1]] = mask
                    j += 1
                for _seq, mid in sent[k:j]:
                    mask |= 1 << mid
                k = j
        return out

    @cached_property
    def past(self) -> dict[int, int]:
        """Per message, its causal past."""
        return {mid: msg.past_mask for mid, msg in self.messages.items()}


@dataclass(frozen=True)
class History:
    """Messages, and for each peer the ordered list of its events.

    ``peers`` are the peers' names, indexed by peer id. ``messages`` maps a message id
    to its :class:`Message`. ``logs[p]`` is peer ``p``'s events in program order.
    ``drops`` gives, for a (peer, message) pair the peer dropped, the reason.
    ``failed`` holds the peers that are down at the end of the history.
    """

    peers: tuple[str, ...]
    messages: dict[int, Message]
    logs: tuple[tuple[Event, ...], ...]
    drops: dict[tuple[int, int], str] = field(default_factory=dict)
    failed: frozenset[int] = frozenset()

    # -- building -------------------------------------------------------------------

    @classmethod
    def from_raw(
        cls,
        peers: Sequence[str],
        sent: Sequence[Sequence[tuple[int, int]]],
        logs: Sequence[Iterable[int]],
        stride: int,
        *,
        drops: dict[tuple[int, int], str] | None = None,
        failed: Iterable[int] = (),
    ) -> History:
        """Build a history from the compact form specs keep in their states.

        ``sent[p][i]`` is ``(dests_mask, past_mask)`` of peer ``p``'s ``i``-th message,
        whose id is ``p * stride + i``; bit ``b`` of a mask stands for peer ``b`` (dests)
        or message id ``b`` (past). ``logs[p]`` holds encoded events.
        """
        peers = tuple(peers)
        sent_key: tuple | None = (peers, stride, sent)
        try:
            known = _OUTBOXES.get(sent_key)
        except TypeError:  # not hashable (lists): build it every time
            sent_key = known = None
        if known is None:
            messages = _messages(peers, sent, stride)
            known = (messages, MessageMasks(messages, len(peers)))
            if sent_key is not None:
                if len(_OUTBOXES) >= _MEMO_LIMIT:
                    _OUTBOXES.clear()
                _OUTBOXES[sent_key] = known
        entries = tuple(map(_decoded_log, logs))
        h = cls(peers, dict(known[0]), tuple(e[0] for e in entries), dict(drops or {}), frozenset(failed))
        h.__dict__["_delivered"] = tuple(e[1] for e in entries)  # what the cached property would compute
        h.__dict__["masks"] = known[1]  # shared by every history with these messages
        return h

    # -- reading ----------------------------------------------------------------------

    def name(self, peer: int) -> str:
        return self.peers[peer]

    def deliveries(self, peer: int) -> list[int]:
        """The ids of the messages ``peer`` delivered, in order."""
        return list(self._delivered[peer])

    @cached_property
    def masks(self) -> MessageMasks:
        """Bitmask facts about the messages that the ordering properties read; shared by
        all histories built (:meth:`from_raw`) from the same messages."""
        return MessageMasks(self.messages, len(self.peers))

    @cached_property
    def _delivered(self) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(e.arg for e in log if e.kind == DELIVER) for log in self.logs)

    def message_label(self, mid: int) -> str:
        """The message's name (``a1``), or ``message 7`` for an id no send introduced."""
        msg = self.messages.get(mid)
        return msg.name if msg is not None else f"message {mid}"

    def dropped(self, peer: int) -> set[int]:
        return {e.arg for e in self.logs[peer] if e.kind == DROP}

    def sent_messages(self) -> list[Message]:
        """Every message whose send has started, by id."""
        return [self.messages[m] for m in sorted(self.messages)]

    def as_log(self) -> Any:
        """This history laid out as a :class:`~checker.monitors.log.Log`, the form the
        property monitors read (:func:`specs.history_log.history_log`)."""
        from specs.history_log import history_log

        return history_log(self)

    def extend_log(self, parent: Any) -> Any:
        """A new log: ``parent`` (the :meth:`as_log` of a history this one extends, or
        an extension of it) followed by the events this history adds
        (:func:`specs.history_log.extend_log`)."""
        from specs.history_log import extend_log

        return extend_log(parent, self)

    def happened_before_path(self, m1: int, m2: int) -> list[str] | None:
        """A chain of events showing why ``m1`` is in the causal past of ``m2``.

        Returns phrases such as ``["a sent a1", "b received a1", "b sent b1"]``, or
        ``None`` if no chain of program order, deliveries and signals links them.
        """
        return _causal_chain(self, m1, m2)


# Histories of one model share most of their messages and logs: build each once.
_MEMO_LIMIT = 1 << 16
_MESSAGES: dict[tuple, Message] = {}
_LOGS: dict[tuple[int, ...], tuple[tuple[Event, ...], tuple[int, ...]]] = {}
_OUTBOXES: dict[tuple, tuple[dict[int, Message], MessageMasks]] = {}  # raw ``sent`` -> its messages


def _messages(peers: tuple[str, ...], sent: Sequence[Sequence[tuple[int, int]]], stride: int) -> dict[int, Message]:
    """The messages of raw ``sent``, each :class:`Message` built once per model."""
    messages: dict[int, Message] = {}
    memo = _MESSAGES
    for p, outbox in enumerate(sent):
        for i, (dests, past) in enumerate(outbox):
            mid = p * stride + i
            key = (peers, mid, p, i, dests, past)
            msg = memo.get(key)
            if msg is None:
                if len(memo) >= _MEMO_LIMIT:
                    memo.clear()
                msg = memo[key] = Message(
                    mid, message_name(peers, p, i), p, i, frozenset(bits(dests)), frozenset(bits(past))
                )
            messages[mid] = msg
    return messages


def _decoded_log(log: Iterable[int]) -> tuple[tuple[Event, ...], tuple[int, ...]]:
    """A raw log decoded, and the ids it delivered in order; each built once per model."""
    key = log if isinstance(log, tuple) else tuple(log)
    out = _LOGS.get(key)
    if out is None:
        if len(_LOGS) >= _MEMO_LIMIT:
            _LOGS.clear()
        out = _LOGS[key] = (tuple(map(decode_event, key)), tuple(e >> 3 for e in key if e & 7 == DELIVER))
    return out


def bits(mask: int) -> Iterable[int]:
    """The positions of the set bits of ``mask``, lowest first."""
    i = 0
    while mask:
        if mask & 1:
            yield i
        mask >>= 1
        i += 1


def message_name(peers: Sequence[str], sender: int, seq: int) -> str:
    """The readable name of a sender's ``seq``-th message: ``a1``, ``a2``, ``b1``..."""
    return f"{peers[sender]}{seq + 1}"


def event_phrase(h: History, peer: int, ev: Event) -> str:
    """One event in words: ``a sent a1``, ``b received a1``, ``a signalled b``..."""
    who = h.peers[peer]
    if ev.kind == SEND:
        return f"{who} sent {h.message_label(ev.arg)}"
    if ev.kind == DELIVER:
        return f"{who} received {h.message_label(ev.arg)}"
    if ev.kind == SIGNAL_OUT:
        return f"{who} signalled {h.peers[ev.arg]}"
    if ev.kind == SIGNAL_IN:
        return f"{who} got a signal from {h.peers[ev.arg]}"
    if ev.kind == DROP:
        return f"{who} dropped {h.message_label(ev.arg)}"
    return f"{who} {KIND_NAMES[ev.kind]}"


def event_graph(h: History) -> tuple[dict[tuple[int, int], list[tuple[int, int]]], dict[int, tuple[int, int]]]:
    """Happened-before edges between events ``(peer, index)``, and each send's event.

    Edges: program order; a send to each delivery of its message; the k-th signal from
    p to q to the k-th signal q received from p.
    """
    succ: dict[tuple[int, int], list[tuple[int, int]]] = {}
    send_at: dict[int, tuple[int, int]] = {}
    outs: dict[tuple[int, int], list[tuple[int, int]]] = {}
    ins: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for p, log in enumerate(h.logs):
        for i, ev in enumerate(log):
            node = (p, i)
            succ.setdefault(node, [])
            if i + 1 < len(log):
                succ[node].append((p, i + 1))
            if ev.kind == SEND:
                send_at[ev.arg] = node
            elif ev.kind == SIGNAL_OUT:
                outs.setdefault((p, ev.arg), []).append(node)
            elif ev.kind == SIGNAL_IN:
                ins.setdefault((ev.arg, p), []).append(node)
    for p, log in enumerate(h.logs):
        for i, ev in enumerate(log):
            if ev.kind == DELIVER and ev.arg in send_at:
                succ[send_at[ev.arg]].append((p, i))
    for pair, out_nodes in outs.items():
        for a, b in zip(out_nodes, ins.get(pair, [])):
            succ[a].append(b)
    return succ, send_at


def _causal_chain(h: History, m1: int, m2: int) -> list[str] | None:
    succ, send_at = event_graph(h)
    if m1 not in send_at or m2 not in send_at:
        return None
    start, goal = send_at[m1], send_at[m2]
    parent: dict[tuple[int, int], tuple[int, int] | None] = {start: None}
    todo = [start]
    while todo:
        nxt = []
        for node in todo:
            for child in succ.get(node, ()):
                if child not in parent:
                    parent[child] = node
                    nxt.append(child)
        todo = nxt
    if goal not in parent:
        return None
    path = []
    node: tuple[int, int] | None = goal
    while node is not None:
        path.append(node)
        node = parent[node]
    path.reverse()
    # Keep the events that carry information: sends, deliveries and signals, and drop
    # the peer's unrelated events in between.
    phrases = []
    for k, (p, i) in enumerate(path):
        ev = h.logs[p][i]
        nxt_node = path[k + 1] if k + 1 < len(path) else None
        hops_peer = nxt_node is not None and nxt_node[0] != p
        if k == 0 or nxt_node is None or hops_peer or (k > 0 and path[k - 1][0] != p):
            phrases.append(event_phrase(h, p, ev))
    return phrases

"""The history every spec exposes: what an outside observer of the bus could see.

For each message: its sender, its destinations and its causal past. For each peer: the
sequence of its events (sends, deliveries, drops, side-channel signals, failures). The
ordering properties in :mod:`ordercheck.specs.properties` read only this, so one property library
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
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any, NamedTuple

from ordercheck.checker.monitors.events import (  # noqa: F401 - the event kinds, re-exported for specs
    DELIVER,
    DROP,
    FAIL,
    KIND_NAMES,
    RESTART,
    SEND,
    SIGNAL_IN,
    SIGNAL_OUT,
)
from ordercheck.checker.monitors.log import Log, pack_ints


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
        # each peer's events decoded, and the messages it delivered, as two tuples
        decoded, delivered = tuple(zip(*map(_decoded_log, logs))) or ((), ())
        messages = dict(known[0])
        if cls is History:  # the fields set as the frozen dataclass's __init__ sets them, without its setattr calls
            h = object.__new__(cls)
            d = h.__dict__
            d["peers"] = peers
            d["messages"] = messages
            d["logs"] = decoded
            d["drops"] = dict(drops) if drops else {}
            d["failed"] = frozenset(failed)
        else:
            h = cls(peers, messages, decoded, dict(drops or {}), frozenset(failed))
            d = h.__dict__
        d["_delivered"] = delivered  # what the cached property would compute
        d["masks"] = known[1]  # shared by every history with these messages
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
        return _label(self.messages, mid)

    def dropped(self, peer: int) -> set[int]:
        return {e.arg for e in self.logs[peer] if e.kind == DROP}

    def sent_messages(self) -> list[Message]:
        """Every message whose send has started, by id."""
        return [self.messages[m] for m in sorted(self.messages)]

    def as_log(self) -> Any:
        """This history laid out as a ``ordercheck.checker.monitors.log.Log``, the form the
        property monitors read (:func:`history_log`)."""
        return history_log(self)

    def extend_log(self, parent: Any) -> Any:
        """A new log: ``parent`` (the :meth:`as_log` of a history this one extends, or
        an extension of it) followed by the events this history adds
        (:func:`extend_log`)."""
        return extend_log(parent, self)

    def extend_log_in_place(self, log: Any) -> bool:
        """Append to ``log`` (an :meth:`as_log` of a history this one extends, or an
        extension of it) the events this history adds, changing ``log`` itself
        (:func:`extend_log_in_place`); ``False``, with ``log`` unchanged, where this
        history must be laid out afresh."""
        return extend_log_in_place(log, self)

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
    for p, outbox in enumerate(sent):
        for i, (dests, past) in enumerate(outbox):
            mid = p * stride + i
            messages[mid] = _message_at(peers, mid, p, i, dests, past)
    return messages


def _message_at(peers: tuple[str, ...], mid: int, p: int, i: int, dests: int, past: int) -> Message:
    """Peer ``p``'s ``i``-th message (id ``mid``), raw ``(dests, past)`` masks; built once per model."""
    key = (peers, mid, p, i, dests, past)
    msg = _MESSAGES.get(key)
    if msg is None:
        if len(_MESSAGES) >= _MEMO_LIMIT:
            _MESSAGES.clear()
        msg = _MESSAGES[key] = Message(mid, message_name(peers, p, i), p, i, frozenset(bits(dests)), frozenset(bits(past)))
    return msg


class _GhostMessages:
    """The messages of a raw ``sent`` (:meth:`History.from_raw`), each read on demand
    (``get``, as a dict of them would answer), for extending a log without building
    the history's whole table of messages (:func:`extend_ghost_log`)."""

    __slots__ = ("peers", "sent", "stride")

    def __init__(self, peers: tuple[str, ...], sent: Sequence[Sequence[tuple[int, int]]], stride: int) -> None:
        self.peers, self.sent, self.stride = peers, sent, stride

    def get(self, mid: int) -> Message | None:
        p, i = divmod(mid, self.stride)
        sent = self.sent
        if p >= len(sent) or i >= len(sent[p]):
            return None
        dests, past = sent[p][i]
        return _message_at(self.peers, mid, p, i, dests, past)


class _Ghost(NamedTuple):
    """What laying out a history's events reads of it (a :class:`History` has the same
    fields): each peer's decoded events, its messages (``get``), the drops' reasons
    and the peers down at the end."""

    logs: Sequence[Sequence[tuple[int, int]]]
    messages: Any
    drops: dict[tuple[int, int], str]
    failed: frozenset[int]


def _decoded_log(log: Iterable[int]) -> tuple[tuple[Event, ...], tuple[int, ...]]:
    """A raw log decoded, and the ids it delivered in order; each built once per model."""
    key = log if isinstance(log, tuple) else tuple(log)
    out = _LOGS.get(key)
    if out is None:
        if len(_LOGS) >= _MEMO_LIMIT:
            _LOGS.clear()
        out = _LOGS[key] = (tuple(map(decode_event, key)), tuple(e >> 3 for e in key if e & 7 == DELIVER))
    return out


def _label(messages: Any, mid: int) -> str:
    """Message ``mid``'s name in ``messages`` (a dict of them, or anything with its
    ``get``), or ``message 7`` for an id no send introduced."""
    msg = messages.get(mid)
    return msg.name if msg is not None else f"message {mid}"


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


# -- the history as a log ---------------------------------------------------------------
#
# A spec's history laid out as a log, so that the property monitors read it.
#
# A :class:`~ordercheck.specs.history.History` keeps one sequence of events per peer; the monitors
# (``ordercheck.checker.monitors``) read one sequence of events, a
# ``ordercheck.checker.monitors.log.Log``. :func:`history_log` lays a history out as one: a
# linearization of the peers' logs consistent with happened-before (each peer's program
# order; a message's send before its deliveries and drops; the k-th signal from p to q
# before q's k-th receipt of a signal from p), chosen deterministically: peer by peer,
# each peer's events are laid out as far as their predecessors on other peers allow, and
# the pass repeats until every event is laid out. When happened-before has a cycle (a
# delivery before its own send: ``integrity`` reports it), the waiting event of the
# lowest peer is laid out anyway (the lowest peer waiting with a delivery or drop, if
# any: the violation then names the message), and the pass goes on.
#
# Specs' histories only grow at the ends of the peers' logs from a state to its successor
# (:meth:`~ordercheck.specs.base.PeerSpec.history_growth`); :func:`extend_log` appends to a parent's
# log the events a successor's history adds, laid out among themselves the same way, so a
# model checker feeds its monitors a few events per state instead of a whole history.
#
# Message names, senders, sequence numbers and destinations are the history's; each event
# has its own ``line`` (its index plus one), so signals pair first-in-first-out, as the
# history pairs them. The log's ``unit`` is empty: a model's history has no lines to cite,
# and sentences name peers and messages only. ``msg_past`` keeps each message's causal past
# as the spec computed it (:func:`spec_past`): a spec may know more than the events show
# (bus1_impl: a user that sees ``BUS1_HANDLE_INVALID`` joins a destruction's past).


@dataclass
class HistoryLog(Log):
    """A ``ordercheck.checker.monitors.log.Log`` laid out from a history, with what extending
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
    spec_pasts = True  # the causal monitor reads msg_past (ordercheck.checker.monitors.spec_past)

    def at(self, i: int) -> str:
        """A history has no lines: the empty string."""
        return ""

    def where(self, i: int) -> str:
        """Event ``i`` in words (a history has no place to add)."""
        return self.describe(i)

    def copy(self, messages: bool = True, signals: bool = True) -> HistoryLog:
        """An independent copy: the event columns and ``seen`` copied; the message
        columns and ``ids`` only with ``messages``, the signal counts only with
        ``signals`` (else shared: the caller appends no new message, no signal); the
        per-event ``meta`` shared until written (:func:`extend_log` replaces the dict)."""
        other = object.__new__(HistoryLog)
        d = self.__dict__
        o = other.__dict__  # filled in place: it shares its keys with the class's other instances
        o.update(d)
        for name in _EVENT_COLUMNS:
            o[name] = d[name][:]
        _own(other, messages, signals)
        return other


    def pack(self) -> tuple[tuple, tuple]:
        """This log packed, for a model checker that keeps many logs waiting
        (:meth:`unpack` restores it): the fields no extension writes in place
        (``peers``, ``meta``, ``header``...), to keep by reference, and the others as
        plain values (int columns as bytes where they fit) that share nothing with
        the log."""
        d = self.__dict__
        shared = tuple(d[name] for name in _SHARED_FIELDS)
        ids = tuple(map(id, shared))  # the memo holds the objects: no id is reused while it is there
        same = _PACKED_SHARED.get(ids)
        if same is None:
            if len(_PACKED_SHARED) >= _MEMO_LIMIT:
                _PACKED_SHARED.clear()
            same = _PACKED_SHARED[ids] = shared
        return same, (tuple(pack_ints(d[name]) for name in _INT_COLUMNS), tuple(d["msg_name"]), tuple(d["msg_dests"]),
                      tuple(d["msg_past"]), dict(d["ids"]), dict(d["outs"]), dict(d["ins"]))

    @classmethod
    def unpack(cls, shared: tuple, plain: tuple) -> HistoryLog:
        """A log as :meth:`pack` packed it, sharing nothing that it writes."""
        columns, msg_name, msg_dests, msg_past, ids, outs, ins = plain
        values = dict(zip(_SHARED_FIELDS, shared))
        for name, value in zip(_INT_COLUMNS, columns):
            values[name] = list(value)
        values["msg_name"], values["msg_dests"], values["msg_past"] = list(msg_name), list(msg_dests), list(msg_past)
        values["ids"], values["outs"], values["ins"] = dict(ids), dict(outs), dict(ins)
        log = object.__new__(cls)
        d = log.__dict__
        for name in _FIELDS:  # in the dataclass's order: a key-sharing dict, as HistoryLog.copy keeps
            d[name] = values[name]
        return log


_FIELDS = tuple(f.name for f in fields(HistoryLog))
_PACKED_SHARED: dict[tuple[int, ...], tuple] = {}  # HistoryLog.pack's fields kept by reference, by identity
_SHARED_FIELDS = ("source", "peers", "meta", "actions", "header", "unit", "fmt", "sources", "origin")
_INT_COLUMNS = ("peer", "kind", "arg", "line", "seen", "msg_sender", "msg_seq", "msg_send")
_EVENT_COLUMNS = ("peer", "kind", "arg", "line", "seen")
_MESSAGE_COLUMNS = ("msg_name", "msg_sender", "msg_seq", "msg_dests", "msg_send", "msg_past")


def history_log(h: History, source: str = "history") -> HistoryLog:
    """The whole history ``h`` as a log (see the comment above for the order); a peer of
    ``h.failed`` whose log does not end with a ``fail`` gets one at the end."""
    log = HistoryLog(source, list(h.peers), unit="", fmt="history")
    log.seen = [0] * len(h.peers)
    _lay_out(log, h)
    for p in sorted(h.failed):  # down at the end with no fail in its log: it failed last
        if not h.logs[p] or h.logs[p][-1].kind != FAIL:
            _emit(log, h.drops, p, FAIL, 0, h.messages)
    return log


def extend_log(parent: HistoryLog, h: History) -> HistoryLog:
    """A new log: ``parent`` (left as it is) followed by the events of ``h`` beyond those
    ``parent`` laid out. ``h`` must extend the history ``parent`` was laid out from:
    each peer's log with events appended, each appended send a new message, the other
    messages as they were."""
    if h.failed:  # a peer down with no fail in its log fails at the end: lay out afresh
        return history_log(h)
    return _grow(parent, h, _new_event(parent, h), True)


def extend_log_in_place(log: HistoryLog, h: History) -> bool:
    """Append to ``log`` itself the events of ``h`` beyond those it laid out, in the
    order :func:`extend_log` would give them, for a log that nothing reads as it was
    any more (a model checker's parent state, expanded, handing its log to its last
    successor). The message columns and signal counts, which copies of ``log`` may
    share (:meth:`HistoryLog.copy`), are copied first where the new events write them.
    ``False``, with ``log`` unchanged, where :func:`extend_log` would lay ``h`` out
    afresh (a peer down with no ``fail`` in its log)."""
    if h.failed:
        return False
    _grow(log, h, _new_event(log, h), False)
    return True


def extend_ghost_log(log: HistoryLog, peers: Sequence[str], sent: Sequence[Sequence[tuple[int, int]]],
                     logs: Sequence[Sequence[int]], stride: int, in_place: bool = False) -> HistoryLog:
    """What ``History.from_raw(peers, sent, logs, stride)`` gives for ``log``: its
    :func:`extend_log` (a new log), or with ``in_place`` its :func:`extend_log_in_place`
    (``log`` itself, extended), without building the history: the raw ghost is read
    where the new events need it (a message's facts at its send; each peer's events
    decoded only where more than one event is new)."""
    messages = _GhostMessages(tuple(peers), sent, stride)
    p = _one_new(log.seen, logs)
    if p >= 0:  # a search's usual step: the one event, and the messages it names, read
        kind, arg = decode_event(logs[p][-1])
        return _grow(log, _Ghost((), messages, _NO_DROPS, _NO_FAILED), (p, kind, arg), not in_place)
    decoded = tuple(_decoded_log(events)[0] for events in logs)
    return _grow(log, _Ghost(decoded, messages, _NO_DROPS, _NO_FAILED), None, not in_place)


_NO_DROPS: dict[tuple[int, int], str] = {}  # read only
_NO_FAILED: frozenset[int] = frozenset()


def _new_event(log: HistoryLog, h: History | _Ghost) -> tuple[int, int, int] | None:
    """``(peer, kind, arg)`` of the one event ``h`` has beyond ``log.seen``; ``None``
    where it has none or several."""
    p = _one_new(log.seen, h.logs)
    if p < 0:
        return None
    kind, arg = h.logs[p][-1]
    return p, kind, arg


def _grow(log: HistoryLog, h: History | _Ghost, one: tuple[int, int, int] | None, copy: bool) -> HistoryLog:
    """``log`` (with ``copy``, a copy of it) with the events of ``h`` beyond those it
    laid out appended; ``one``: the only new event (:func:`_new_event`), else ``None``
    (``h.logs`` is not read where ``one`` is given). The message columns and signal
    counts are copied only where the new events write them (a copy shares them
    otherwise)."""
    writes = _event_writes(one[1], one[2], log.ids) if one is not None else _writes(log, h)
    if copy:
        log = log.copy(*writes)
    else:
        _own(log, *writes)
    if one is not None:  # the one event read once, not per pass
        _lay_out_one(log, h, one)
    else:
        _lay_out(log, h)
    return log


def _own(log: HistoryLog, messages: bool, signals: bool) -> None:
    """Give ``log`` its own message columns and ``ids`` (with ``messages``) and signal
    counts (with ``signals``), copied from those it may share with other logs."""
    d = log.__dict__
    if messages:
        for name in _MESSAGE_COLUMNS:
            d[name] = d[name][:]
        d["ids"] = d["ids"].copy()
    if signals:
        d["outs"] = d["outs"].copy()
        d["ins"] = d["ins"].copy()


def _writes(log: HistoryLog, h: History | _Ghost) -> tuple[bool, bool]:
    """Whether laying out the events of ``h`` beyond ``log``'s adds a message to its
    message columns, and whether it counts a signal."""
    messages = signals = False
    ids = log.ids
    for p, events in enumerate(h.logs):
        for kind, arg in events[log.seen[p]:]:
            adds, counts = _event_writes(kind, arg, ids)
            messages = messages or adds
            signals = signals or counts
    return messages, signals


def _event_writes(kind: int, arg: int, ids: dict[int, int]) -> tuple[bool, bool]:
    """Whether laying out one event (``kind``, history message or peer ``arg``) after a
    log whose message ids are ``ids`` adds a message to its message columns, and
    whether it counts a signal."""
    if kind == SEND or ((kind == DELIVER or kind == DROP) and arg not in ids):
        return True, False
    return False, kind == SIGNAL_OUT or kind == SIGNAL_IN


def _one_new(seen: Sequence[int], logs: Sequence[Sequence[Any]]) -> int:
    """The peer of the one event ``logs`` (each peer's events, raw or decoded) have
    beyond ``seen`` (how many of each peer's are laid out); -1 where they have none
    or several."""
    found = -1
    for p in range(len(logs)):
        more = len(logs[p]) - seen[p]
        if more:
            if more != 1 or found >= 0:
                return -1
            found = p
    return found


def _lay_out_one(log: HistoryLog, h: History | _Ghost, one: tuple[int, int, int]) -> None:
    """Append the one new event ``one`` (:func:`_new_event`): with nothing else new there
    is nothing for it to wait for, whatever it is."""
    p, kind, arg = one
    _emit(log, h.drops, p, kind, arg, h.messages)
    log.seen[p] += 1


def _lay_out(log: HistoryLog, h: History | _Ghost) -> None:
    """Append the events of ``h`` beyond ``log.seen``, in the deterministic order."""
    one = _new_event(log, h)
    if one is not None:  # a search's usual step
        _lay_out_one(log, h, one)
        return
    logs = h.logs
    n = len(logs)
    pos = log.seen
    ends = [len(events) for events in logs]
    left = sum(ends) - sum(pos)
    if left <= 0:
        return
    messages = h.messages
    drops = h.drops
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
                _emit(log, drops, p, kind, arg, messages)
                if kind == SEND and sends_left is not None:
                    sends_left.discard(arg)
                i += 1
                left -= 1
            if i != pos[p]:
                pos[p] = i
                moved = True
        if not moved:  # a cycle: lay out a waiting delivery or drop (else any event) anyway
            waiting = [q for q in range(n) if pos[q] < ends[q]]
            p = next((q for q in waiting if logs[q][pos[q]][0] in (DELIVER, DROP)), waiting[0])
            kind, arg = logs[p][pos[p]]
            _emit(log, drops, p, kind, arg, messages)
            if kind == SIGNAL_IN and signals is not None:
                signals[(arg, p)] = 0  # it will not wait again
            pos[p] += 1
            left -= 1


def _pending_sends(log: HistoryLog, h: History | _Ghost) -> set[int]:
    """The history message ids whose send event is in ``h`` but not yet laid out."""
    out = set()
    for p, events in enumerate(h.logs):
        for kind, arg in events[log.seen[p]:]:
            if kind == SEND:
                out.add(arg)
    return out


def _signals(h: History | _Ghost) -> dict[tuple[int, int], int]:
    count: dict[tuple[int, int], int] = {}
    for p, events in enumerate(h.logs):
        for kind, arg in events:
            if kind == SIGNAL_OUT:
                count[(p, arg)] = count.get((p, arg), 0) + 1
    return count


def _message(log: HistoryLog, messages: Any, mid: int) -> int:
    """The log index of history message ``mid``, added (as not yet sent) on first sight."""
    m = log.ids.get(mid)
    if m is None:
        m = log.ids[mid] = len(log.msg_name)
        log.msg_name.append(_label(messages, mid))
        log.msg_sender.append(-1)
        log.msg_seq.append(-1)
        log.msg_dests.append(())
        log.msg_send.append(-1)
        log.msg_past.append(0)
    return m


_DESTS: dict[frozenset[int], tuple[int, ...]] = {}


def _emit(log: HistoryLog, drops: dict[tuple[int, int], str], p: int, kind: int, arg: int, messages: Any) -> None:
    """Append peer ``p``'s event (``kind``, history message or peer ``arg``) to ``log``;
    ``messages`` and ``drops`` are the history's (``messages`` read by ``get``)."""
    i = len(log.kind)
    if kind == SEND or kind == DELIVER or kind == DROP:
        m = log.ids.get(arg)
        if m is None:
            m = _message(log, messages, arg)
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
            reason = drops.get((p, arg))
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

"""``fifo`` and ``causal`` as monitors: per-sender fronts, and vector clocks for ``causal``.

Both are prefix-safety properties (the property library's definitions): when peer p
delivers m2, every m1 that must precede m2 and is addressed to p has already been
delivered at p (or dropped there, as a protocol may do with a reason). For ``fifo``, m1
must precede m2 when the same peer sent m1 before m2; for ``causal``, when m1's send
happened before m2's send (program order, each send to the deliveries of its message,
each side-channel signal to its receipt). The violation is at that delivery, whether or
not m1 arrives later. Deliveries of messages not sent before them are ``integrity``'s
business and are skipped here.

**Algorithm.** For every (sender s, destination p) pair the messages s addresses to p,
in send order, form a list; p's *front* in it is the first one p has not delivered (or
dropped) yet. The messages from s that must precede m2 are those sent before a bound
(``fifo``: m2's own sequence number; ``causal``: the vector clock of m2's send, entry s,
which counts s's sends in m2's causal past), so the check at a delivery is "each front
lies at or past its bound": one comparison per sender. Fronts only move forward, so
keeping them costs O(1) amortised per delivery. Time O(peers) per event for ``causal``
(vector clocks), O(destinations) for ``fifo``; memory O(messages x peers) for the clocks
of sends.
"""

from __future__ import annotations

from collections import deque
from typing import ClassVar

from ordercheck.checker.monitors.base import Monitor
from ordercheck.checker.monitors.events import DELIVER, DROP, SEND, SIGNAL_IN, SIGNAL_OUT
from ordercheck.checker.monitors.log import Log, SignalPairs, pack_ints, signal_sources
from ordercheck.checker.monitors.violation import Violation, chain, place


def _grow(values: list, m: int, fill: object) -> None:
    """Extend a per-message list so that index ``m`` exists (a log that grows names new
    messages as it goes)."""
    values.extend([fill] * (m + 1 - len(values)))


class _Fronts(Monitor):
    """What ``fifo`` and ``causal`` share: per (sender, destination) the messages in
    send order and the front in them, per message the peers that consumed it (a
    bitmask), and the one loop over the events (:meth:`run`); a subclass decides at
    each delivery (:meth:`_delivered`) and, with :attr:`clocks`, keeps vector clocks
    (:meth:`_signal`, :meth:`_clock_send`)."""

    changed_by = frozenset({"deliver"})
    clocks: ClassVar[bool] = False
    """Whether the monitor keeps clocks: then :meth:`run` calls :meth:`_signal` and
    :meth:`_clock_send`."""
    pairs: SignalPairs | None = None
    """With :attr:`clocks`, the pairing of signals."""

    def __init__(self, log: Log) -> None:
        super().__init__(log)
        n = self.n = len(log.peers)
        self.lists: list[list[int]] = [[] for _ in range(n * n)]  # (s, p) -> messages, in send order
        self.front = [0] * (n * n)
        self.got = [0] * log.messages  # bit p: p consumed the message
        self.done = False

    def fork(self, log: Log) -> _Fronts:
        other = type(self).__new__(type(self))
        other.log, other.n, other.done = log, self.n, self.done
        other.lists = [lst[:] for lst in self.lists]
        other.front = self.front[:]
        other.got = self.got[:]
        return other

    def _pack_fronts(self) -> tuple:
        """The state :meth:`fork` copies here, packed (see :meth:`Monitor.pack`)."""
        return (self.n, self.done, tuple(map(pack_ints, self.lists)), pack_ints(self.front), pack_ints(self.got))

    def _unpack_fronts(self, log: Log, state: tuple) -> None:
        """Restore what :meth:`_pack_fronts` packed into this (new) monitor."""
        self.log = log
        self.n, self.done, lists, front, got = state
        self.lists = [list(lst) for lst in lists]
        self.front = list(front)
        self.got = list(got)

    def run(self, start: int, end: int) -> Violation | None:
        if self.done:
            return None
        log = self.log
        kinds, peers, args, dests, msg_send = log.kind, log.peer, log.arg, log.msg_dests, log.msg_send
        n, lists, got, clocks = self.n, self.lists, self.got, self.clocks
        pairs = self.pairs if clocks else None
        for i in range(start, end):
            k = kinds[i]
            p = peers[i]
            if pairs is not None and (k == SIGNAL_OUT or k == SIGNAL_IN or pairs.unit_outs):
                self._signal(i, k, p)
            if k == SEND:
                m = args[i]
                if m >= len(got):
                    _grow(got, m, 0)
                if clocks:
                    self._clock_send(p, m)
                base = p * n
                for d in dests[m]:
                    lists[base + d].append(m)
            elif k == DROP or k == DELIVER:
                m = args[i]
                if m >= len(got):
                    _grow(got, m, 0)
                if k == DROP:
                    got[m] |= 1 << p
                    continue
                sent_at = msg_send[m]
                if sent_at < 0 or sent_at > i:
                    continue
                bit = 1 << p
                got[m] |= bit
                found = self._delivered(i, p, m, bit)
                if found is not None:
                    self.done = True
                    return found
        return None

    def _advance(self, key: int, bit: int) -> tuple[list[int], int]:
        """Move the front of the list ``key`` past the messages the peer of ``bit`` has
        consumed: the list and the new front."""
        lst, j, got = self.lists[key], self.front[key], self.got
        while j < len(lst) and got[lst[j]] & bit:
            j += 1
        self.front[key] = j
        return lst, j

    def _delivered(self, i: int, p: int, m: int, bit: int) -> Violation | None:
        """Event ``i`` is ``p``'s delivery of ``m`` (``bit`` is ``p``'s), sent before it
        and now marked consumed: the violation it makes, if any."""
        raise NotImplementedError

    def _signal(self, i: int, k: int, p: int) -> None:
        """Event ``i`` (of kind ``k``, at ``p``), a signal or an event while signals of
        the open line wait (with :attr:`clocks`, whose ``pairs`` pair them), before its
        kind's own step: the signals it sends or pairs."""

    def _clock_send(self, p: int, m: int) -> None:
        """``p`` sends ``m`` (with :attr:`clocks`)."""


class Fifo(_Fronts):
    """``fifo``: the first delivery of a message while an earlier message of the same
    sender, addressed to the same peer, is not yet delivered (or dropped) there.

    State: per (sender, destination) the messages in send order and the front in
    them, and per message the peers that consumed it (a bitmask).
    """

    name = "fifo"

    def pack(self) -> tuple | None:
        if type(self).fork is not Fifo.fork:  # a subclass with state of its own
            return None
        return self._pack_fronts()

    @classmethod
    def unpack(cls, log: Log, state: tuple) -> Fifo:
        other = cls.__new__(cls)
        other._unpack_fronts(log, state)
        return other

    def _delivered(self, i: int, p: int, m: int, bit: int) -> Violation | None:
        log = self.log
        seq, s_m = log.msg_seq, log.msg_sender[m]
        lst, j = self._advance(s_m * self.n + p, bit)
        if j < len(lst) and seq[lst[j]] < seq[m]:
            m1 = lst[j]
            missing = _unconsumed(lst, j, seq[m], seq, self.got, bit)
            return _violation(log, "fifo", i, m1, [log.msg_send[m1], log.msg_send[m], i],
                              f"{_names(log, missing)}, which {log.peers[s_m]} sent before it", missing)
        return None


class Causal(_Fronts):
    """``causal``: the first delivery of a message m2 at p while a message m1 addressed
    to p, whose send happened before m2's send, is not yet delivered (or dropped) at p.

    State: ``fifo``'s lists and fronts, each peer's vector clock (how many sends of each
    peer it knows of), the clock of each send and of each signal until it is received,
    and the pairing of signals (:class:`~ordercheck.checker.monitors.log.SignalPairs`).
    """

    name = "causal"
    clocks = True

    def __init__(self, log: Log) -> None:
        super().__init__(log)
        n = self.n
        self.clock = [[0] * n for _ in range(n)]  # per peer: sends of each peer it knows of
        self.at_send: list[list[int] | None] = [None] * log.messages  # never changed once set
        self.signals: dict[int, list[int]] = {}  # signal event -> its sender's clock, until received
        self.pairs = SignalPairs(log)

    def fork(self, log: Log) -> Causal:
        other = super().fork(log)
        assert isinstance(other, Causal)
        other.clock = [c[:] for c in self.clock]
        other.at_send = self.at_send[:]
        other.signals = dict(self.signals)
        other.pairs = self.pairs.copy(log)
        return other

    def pack(self) -> tuple | None:
        if type(self).fork is not Causal.fork:  # a subclass with state of its own
            return None
        return self._pack_causal()

    def _pack_causal(self) -> tuple:
        return (self._pack_fronts(), tuple(map(pack_ints, self.clock)),
                tuple(None if c is None else pack_ints(c) for c in self.at_send),
                {k: pack_ints(v) for k, v in self.signals.items()}, self.pairs.pack())

    @classmethod
    def unpack(cls, log: Log, state: tuple) -> Causal:
        other = cls.__new__(cls)
        other._unpack_causal(log, state)
        return other

    def _unpack_causal(self, log: Log, state: tuple) -> None:
        fronts, clock, at_send, signals, pairs = state
        self._unpack_fronts(log, fronts)
        self.clock = [list(c) for c in clock]
        self.at_send = [None if c is None else list(c) for c in at_send]
        self.signals = {k: list(v) for k, v in signals.items()}
        self.pairs = SignalPairs.unpack(log, pairs)

    def _signal(self, i: int, k: int, p: int) -> None:
        clock, signals = self.clock, self.signals
        if k == SIGNAL_OUT:
            signals[i] = clock[p][:]
        for r, s in self.pairs.step(i):
            theirs = signals.pop(s, None)
            if r == i and theirs is not None:  # the signal came first: its past joins the receipt's
                _join(clock[p], theirs)

    def _clock_send(self, p: int, m: int) -> None:
        at_send, mine = self.at_send, self.clock[p]
        if m >= len(at_send):
            _grow(at_send, m, None)
        at_send[m] = mine[:]
        mine[p] += 1

    def _delivered(self, i: int, p: int, m: int, bit: int) -> Violation | None:
        log = self.log
        seq, msg_send = log.msg_seq, log.msg_send
        n, lists, front, got = self.n, self.lists, self.front, self.got
        senders = range(n)
        s_m = log.msg_sender[m]
        self._advance(s_m * n + p, bit)
        past = self.at_send[m]
        assert past is not None
        for s in senders:
            bound = past[s]
            if not bound:
                continue
            key = s * n + p
            lst, j = lists[key], front[key]
            if j < len(lst) and seq[lst[j]] < bound:
                lst, j = self._advance(key, bit)  # the front may be stale (p delivered it out of order)
                if j < len(lst) and seq[lst[j]] < bound:
                    m1 = lst[j]
                    path = happened_before(log, msg_send[m1], msg_send[m])
                    missing = sorted(
                        (x for t in senders if past[t]
                         for x in _unconsumed(lists[t * n + p], front[t * n + p], past[t], seq, got, bit)),
                        key=msg_send.__getitem__)
                    what = f"{_names(log, missing)}, which happened before it"
                    return _violation(log, "causal", i, m1, [*path, i], what, missing)
        mine = self.clock[p]
        _join(mine, past)
        if seq[m] + 1 > mine[s_m]:
            mine[s_m] = seq[m] + 1
        return None


def _join(mine: list[int], theirs: list[int]) -> None:
    """Raise the clock ``mine`` to ``theirs`` where it is behind."""
    for x in range(len(mine)):
        if theirs[x] > mine[x]:
            mine[x] = theirs[x]


def _unconsumed(lst: list[int], j: int, bound: int, seq: list[int], got: list[int], bit: int) -> list[int]:
    """The messages of ``lst`` from position ``j`` on, with a sequence number below
    ``bound``, that the peer of ``bit`` has not consumed."""
    out = []
    while j < len(lst) and seq[lst[j]] < bound:
        if not got[lst[j]] & bit:
            out.append(lst[j])
        j += 1
    return out


def _names(log: Log, messages: list[int]) -> str:
    """``a1``, ``a1 and a2``, ``a1, a2 and b1``."""
    names = [log.msg_name[m] for m in messages]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _violation(log: Log, prop: str, i: int, m1: int, events: list[int], what: str,
               missing: list[int] | None = None) -> Violation:
    """A delivery at event ``i`` while ``m1`` (and the rest of ``missing``, every
    message that had to come first and had not: ``what`` names them) had not been
    delivered there; ``events``, the window, shows ``m1``'s case."""
    p = log.peer[i]
    m2 = log.arg[i]
    why = chain(log, sorted(set(events)))
    sentence = (
        f"{log.peers[p]} delivered {log.msg_name[m2]}{place(log, i)} while {what}, "
        f"had not been delivered there: {why}"
    )
    return Violation(prop, i, sentence, tuple(sorted(set(events))), (i,), tuple((x, p) for x in missing or [m1]))


def happened_before(log: Log, start: int, goal: int) -> list[int]:
    """The fewest-hop chain of events by which event ``start`` happened before event
    ``goal``: ``start``, then each hop's two ends (a send and a delivery of its message,
    or a signal and its receipt), then ``goal``. Steps along one peer's program order
    are free; each hop to another peer counts one. ``[start, goal]`` when they are on
    one peer; raises :class:`ValueError` when ``start`` did not happen before ``goal``.

    Runs a 0-1 breadth-first search backwards from ``goal`` over the events before it:
    O(goal) time and memory, paid once per violation.
    """
    if start == goal:
        return [start]
    peers, kinds, args, msg_send = log.peer, log.kind, log.arg, log.msg_send
    prev = [-1] * (goal + 1)  # the same peer's previous event
    last: dict[int, int] = {}
    pair_of = signal_sources(log)  # signal receipt -> its signal
    for i in range(goal + 1):
        p = peers[i]
        prev[i] = last.get(p, -1)
        last[p] = i
    dist = {goal: 0}
    parent: dict[int, int] = {}
    todo: deque[int] = deque([goal])
    while todo:
        node = todo.popleft()
        if node == start:
            break
        d = dist[node]
        options = []
        if prev[node] >= 0:
            options.append((prev[node], 0))
        if kinds[node] == DELIVER:
            s = msg_send[args[node]]
            if 0 <= s < node:
                options.append((s, 1))
        elif kinds[node] == SIGNAL_IN and pair_of.get(node, goal) < node:
            options.append((pair_of[node], 1))
        for nxt, w in options:
            if nxt not in dist or dist[nxt] > d + w:
                dist[nxt] = d + w
                parent[nxt] = node
                if w:
                    todo.append(nxt)
                else:
                    todo.appendleft(nxt)
    if start not in dist:
        raise ValueError(f"event {start} did not happen before event {goal}")
    path = [start]
    node = start
    while node != goal:
        node = parent[node]
        path.append(node)
    # keep the ends of each hop to another peer, and the two ends of the chain
    kept = [path[0]]
    for a, b in zip(path, path[1:]):
        if peers[a] != peers[b]:
            if kept[-1] != a:
                kept.append(a)
            kept.append(b)
    if kept[-1] != goal:
        kept.append(goal)
    return kept

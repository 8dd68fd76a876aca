"""``synchronous`` as a monitor: no crown, so every message could have been instantaneous.

The property library's definition (:func:`ordercheck.specs.properties.synchronous`): the relation
m1 -> m2 when m1's send happened before a delivery of m2 (``m1 != m2``; happened-before
is program order, each send to each delivery of its message and each signal to its
receipt) has no cycle. Happened-before is the log's order: a delivery's past is what
came before it, so a delivery that comes before its message's send (``integrity``'s
violation) has no edge from that send, and a signal's receipt learns its signal's past
when the signal came first (:class:`~ordercheck.checker.monitors.log.SignalPairs`).

**Algorithm.** Vector clocks over sends (as for ``causal``) give each delivery's past;
m1 -> m2 exactly when m1's sequence number at its sender s is below B(m2)[s], the
largest clock entry s among m2's deliveries. The messages with an edge into m2 from one
sender are thus a prefix of that sender's sends, so the relation is kept as a graph
through one chain of nodes "first k sends of s" per sender (m -> its sender's chain at
m's send, each chain node to the next, the chain node at B(m2)[s] - 1 -> m2), in a
topological order (:class:`~ordercheck.checker.monitors.graph.DynamicOrder`): a delivery that
raises B(m2) adds at most one edge per sender, and an edge that closes a cycle is the
crown. Sends of m2's own sender after m2 with an edge into m2 are the one exception
(the chain would also lead from m2 to itself): any of them that is delivered closes a
crown of two with m2 at once, found by two range queries per delivery over the
sender's delivered sends. O(peers) per event plus the reordering, which is small when
deliveries follow their sends closely.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections import deque

from ordercheck.checker.monitors.base import Monitor
from ordercheck.checker.monitors.events import DELIVER, SEND, SIGNAL_IN, SIGNAL_OUT
from ordercheck.checker.monitors.graph import DynamicOrder, backtrack
from ordercheck.checker.monitors.log import Log, SignalPairs
from ordercheck.checker.monitors.order import happened_before
from ordercheck.checker.monitors.violation import Violation, place


class _PrefixMax:
    """Per position a value that only grows, and the largest value before a position
    (a Fenwick tree, rebuilt twice as large when a position past its end arrives).
    O(log size) per operation, amortised."""

    __slots__ = ("values", "tree")

    def __init__(self) -> None:
        self.values: list[int] = []
        self.tree = [0] * 8

    def copy(self) -> _PrefixMax:
        other = _PrefixMax()
        other.values = self.values[:]
        other.tree = self.tree[:]
        return other

    def raise_to(self, pos: int, value: int) -> None:
        """The value at ``pos`` becomes at least ``value``."""
        values = self.values
        if pos >= len(values):
            values.extend([0] * (pos + 1 - len(values)))
        if values[pos] >= value:
            return
        values[pos] = value
        tree = self.tree
        if pos + 1 >= len(tree):
            size = len(tree)
            while pos + 1 >= size:
                size *= 2
            self.tree = tree = [0] * size
            for x, v in enumerate(values):
                if v:
                    self._raise(x, v)
            return
        self._raise(pos, value)

    def _raise(self, pos: int, value: int) -> None:
        tree = self.tree
        x = pos + 1
        while x < len(tree):
            if tree[x] < value:
                tree[x] = value
            x += x & -x

    def before(self, pos: int) -> int:
        """The largest value at positions ``< pos`` (0 if none)."""
        tree = self.tree
        x = min(pos, len(tree) - 1)
        best = 0
        while x > 0:
            if tree[x] > best:
                best = tree[x]
            x -= x & -x
        return best


class Synchronous(Monitor):
    """``synchronous``: the first delivery that closes a crown (a cycle of messages,
    each sent before a delivery of the next).

    State: each peer's vector clock, the clock of each send and of each signal until
    received, B of each delivered message, the graph of the relation, and per sender
    its delivered sends (their sequence numbers, sorted) and their own-sender bounds.
    With ``keep`` (the explanation's replay), each delivery's clock too.
    """

    name = "synchronous"
    changed_by = frozenset({"deliver"})

    def __init__(self, log: Log) -> None:
        super().__init__(log)
        n = self.n = len(log.peers)
        self.clock = [[0] * n for _ in range(n)]
        self.at_send: dict[int, list[int]] = {}  # message -> its sender's clock at the send (never changed)
        self.signals: dict[int, list[int]] = {}
        self.pairs = SignalPairs(log)
        self.bound: dict[int, list[int]] = {}  # delivered message -> B
        self.graph = DynamicOrder()
        self.sent = [0] * n  # sends of each peer so far
        self.delivered: list[list[int]] = [[] for _ in range(n)]  # per sender: delivered sequence numbers
        self.own = [_PrefixMax() for _ in range(n)]  # per sender: at seq, B(m)[sender] of its message m
        self.keep: list[tuple[int, list[int]]] | None = None
        self.done = False

    def fork(self, log: Log) -> Synchronous:
        other = Synchronous.__new__(Synchronous)
        other.log, other.n, other.done = log, self.n, self.done
        other.clock = [c[:] for c in self.clock]
        other.at_send = dict(self.at_send)
        other.signals = dict(self.signals)
        other.pairs = self.pairs.copy(log)
        other.bound = {m: b[:] for m, b in self.bound.items()}
        other.graph = self.graph.copy()
        other.sent = self.sent[:]
        other.delivered = [d[:] for d in self.delivered]
        other.own = [pm.copy() for pm in self.own]
        other.keep = None if self.keep is None else self.keep[:]
        return other

    def step(self, i: int) -> Violation | None:
        if self.done:
            return None
        log = self.log
        k = log.kind[i]
        p = log.peer[i]
        pairs = self.pairs
        if k == SIGNAL_OUT or k == SIGNAL_IN or pairs.unit_outs:
            if k == SIGNAL_OUT:
                self.signals[i] = self.clock[p][:]
            for r, s in pairs.step(i):
                theirs = self.signals.pop(s, None)
                if r == i and theirs is not None:
                    mine = self.clock[p]
                    for x in range(self.n):
                        if theirs[x] > mine[x]:
                            mine[x] = theirs[x]
        if k == SEND:
            m = log.arg[i]
            mine = self.clock[p]
            if log.msg_send[m] == i:
                self.at_send[m] = mine[:]
                seq = self.sent[p]
                self.sent[p] = seq + 1
                node = _chain(self.n, p, seq)
                self.graph.add(m, node)
                if seq:
                    self.graph.add(_chain(self.n, p, seq - 1), node)
            mine[p] += 1
        elif k == DELIVER:
            return self._deliver(i, p)
        return None

    def _deliver(self, i: int, p: int) -> Violation | None:
        log = self.log
        m = log.arg[i]
        past = self.at_send.get(m)
        if past is None:
            return None  # never sent, or sent later: integrity's business
        n = self.n
        mine = self.clock[p]
        for s in range(n):
            if past[s] > mine[s]:
                mine[s] = past[s]
        s2, seq2 = log.msg_sender[m], log.msg_seq[m]
        if seq2 + 1 > mine[s2]:
            mine[s2] = seq2 + 1
        if self.keep is not None:
            self.keep.append((i, mine[:]))
        b = self.bound.get(m)
        first = b is None
        if first:
            b = self.bound[m] = [0] * n
        assert b is not None
        crown = False
        add = self.graph.add
        for s in range(n):
            c = mine[s]
            if c > b[s]:
                b[s] = c
                if s != s2 and not add(-1 - ((c - 1) * n + s), m):  # _chain(n, s, c - 1) -> m
                    crown = True
        if first and seq2 and not add(_chain(n, s2, seq2 - 1), m):
            crown = True
        # m's own sender s2: an earlier send of s2 whose B reaches past m (m, now delivered,
        # is below its bound), or a later delivered send of s2 below B(m)[s2]: a crown of two
        delivered, own = self.delivered[s2], self.own[s2]
        if first:
            if own.before(seq2) > seq2:
                crown = True
            insort(delivered, seq2)
        own.raise_to(seq2, b[s2])
        j = bisect_right(delivered, seq2)
        if j < len(delivered) and delivered[j] < b[s2]:
            crown = True
        if not crown or self.keep is not None:  # the replay leaves the explaining to its caller
            return None
        self.done = True
        return _crown_violation(log, i)


def _chain(n: int, s: int, k: int) -> int:
    """The graph node "the first k + 1 sends of s" (messages are the nodes >= 0)."""
    return -1 - (k * n + s)


def _crown_violation(log: Log, at: int) -> Violation:
    """The violation at delivery ``at``, the first to close a crown, with a shortest
    crown through it: the monitor replayed on the prefix, keeping each delivery's clock."""
    replay = Synchronous(log)
    replay.keep = []
    for i in range(at + 1):
        replay.step(i)
    kept = replay.keep
    assert kept and kept[-1][0] == at  # only a delivery adds edges to the relation
    cycle = _crown_through(log, replay.bound, kept[-1][1], log.arg[at])
    return _violation(log, at, cycle, kept)


def _crown_through(log: Log, bound: dict[int, list[int]], clock_at: list[int], m_new: int) -> list[int]:
    """A shortest crown ending with an edge into ``m_new`` through the delivery whose
    clock is ``clock_at``: breadth first from ``m_new`` along m -> m2 (m's send before a
    delivery of m2) to a message in that delivery's past. Each sender's delivered
    messages are taken in decreasing B order and each is reached once: O(messages x
    peers x log messages)."""
    sender, seq = log.msg_sender, log.msg_seq
    n = len(log.peers)
    by_bound: list[deque[int]] = []
    for s in range(n):
        order = sorted(bound, key=lambda m, s=s: (-bound[m][s], m))
        by_bound.append(deque(order))
    parent: dict[int, int | None] = {m_new: None}
    todo = deque([m_new])
    while todo:
        m = todo.popleft()
        if m != m_new and seq[m] < clock_at[sender[m]]:
            return backtrack(parent, m)
        s = sender[m]
        queue = by_bound[s]
        skipped = []
        while queue and bound[queue[0]][s] > seq[m]:
            m2 = queue.popleft()
            if m2 == m:
                skipped.append(m2)  # not an edge to itself; others may still reach it
                continue
            if m2 not in parent:
                parent[m2] = m
                todo.append(m2)
        queue.extendleft(reversed(skipped))
    raise ValueError(f"no crown through the delivery of {log.msg_name[m_new]}")


def _violation(log: Log, at: int, cycle: list[int], kept: list[tuple[int, list[int]]]) -> Violation:
    sender, seq, msg_send = log.msg_sender, log.msg_seq, log.msg_send
    events: set[int] = set()
    offending = []
    steps = []
    for m1, m2 in zip(cycle, cycle[1:] + cycle[:1]):
        if m2 == cycle[0]:
            d = at
        else:
            d = next(i for i, clock in kept if log.arg[i] == m2 and clock[sender[m1]] > seq[m1])
        events |= set(happened_before(log, msg_send[m1], d))
        offending.append(d)
        steps.append(f"{log.peers[sender[m1]]} sent {log.msg_name[m1]}{place(log, msg_send[m1])} before "
                     f"{log.peers[log.peer[d]]} received {log.msg_name[m2]}{place(log, d)}")
    names = ", ".join(log.msg_name[m] for m in cycle)
    sentence = f"messages {names} form a crown, so they cannot all have been instantaneous: " + "; ".join(steps)
    return Violation("synchronous", at, sentence, tuple(sorted(events)), tuple(sorted(set(offending))))

"""The three total-order properties as monitors: ``total``, ``total_global``, ``total_prefix``.

The property library's definitions, over each peer's delivery order (a message's first
delivery at a peer; repeated deliveries are ``integrity``'s business, as are messages
not sent before they are delivered):

- ``total`` (pairwise): any two peers that both deliver m1 and m2 deliver them in the
  same relative order. The monitor keeps, for each ordered pair of peers (p, q), the
  latest position at q of a message both have delivered; when p delivers m, which q
  delivered at position j, the pair disagrees exactly when that latest position is past
  j. O(peers that delivered m) per delivery: O(events x peers) in all.
- ``total_global``: the union of all peers' delivery orders is acyclic (one order of all
  messages explains every peer). The union's edges are each peer's consecutive
  deliveries, kept in a topological order as they come
  (:class:`~ordercheck.checker.monitors.graph.DynamicOrder`): O(1) per edge that agrees with the
  order so far, the size of the region reordered otherwise. The first violation is the
  delivery whose edge closes a cycle, shown with a shortest cycle through it.
- ``total_prefix``: for any two peers, the sequences of the messages addressed to both
  that each delivered are such that one is a prefix of the other. For each pair, the
  peer that is ahead leaves its unmatched deliveries in a queue the other consumes:
  O(destinations) per delivery, memory the largest lead.
"""

from __future__ import annotations

from collections import deque

from ordercheck.checker.monitors.base import Monitor
from ordercheck.checker.monitors.events import DELIVER
from ordercheck.checker.monitors.graph import DynamicOrder
from ordercheck.checker.monitors.log import Log, pack_ints
from ordercheck.checker.monitors.violation import Violation, chain, place


class _FirstDeliveries(Monitor):
    """A monitor that reads each peer's first delivery of each message sent before it:
    subclasses write :meth:`_delivered`."""

    changed_by = frozenset({"deliver"})

    def __init__(self, log: Log) -> None:
        super().__init__(log)
        self.n = len(log.peers)
        self.got = [0] * log.messages
        self.done = False

    def fork(self, log: Log) -> _FirstDeliveries:
        other = type(self).__new__(type(self))
        other.log, other.n, other.done = log, self.n, self.done
        other.got = self.got[:]
        return other

    def run(self, start: int, end: int) -> Violation | None:
        if self.done:
            return None
        log, got = self.log, self.got
        kinds, peers, args, msg_send = log.kind, log.peer, log.arg, log.msg_send
        for i in range(start, end):
            if kinds[i] != DELIVER:
                continue
            m = args[i]
            s = msg_send[m]
            if s < 0 or s > i:  # a message not sent before it: integrity's business
                continue
            if m >= len(got):
                got.extend([0] * (m + 1 - len(got)))
            p = peers[i]
            bit = 1 << p
            if got[m] & bit:  # a repeated delivery
                continue
            got[m] |= bit
            found = self._delivered(i, p, m)
            if found is not None:
                return found
        return None

    def _delivered(self, i: int, p: int, m: int) -> Violation | None:
        """Event ``i`` is ``p``'s first delivery of ``m``: the violation it makes, if any."""
        raise NotImplementedError


class _Deliveries(_FirstDeliveries):
    """The first deliveries themselves (for :func:`first_deliveries`)."""

    def __init__(self, log: Log) -> None:
        super().__init__(log)
        self.found: list[tuple[int, int, int]] = []

    def _delivered(self, i: int, p: int, m: int) -> Violation | None:
        self.found.append((i, p, m))
        return None


def first_deliveries(log: Log, end: int) -> list[tuple[int, int, int]]:
    """``(event, peer, message)`` of each message's first delivery at each peer among the
    first ``end`` events, for messages sent before their delivery, as the monitors read
    them."""
    reader = _Deliveries(log)
    reader.run(0, end)
    return reader.found


class Total(_FirstDeliveries):
    """``total``: the first delivery at which two peers have delivered two messages in
    opposite orders.

    State: per message the event of its first delivery at each peer (a dict replaced,
    never changed in place, so that a fork shares it), and per ordered pair of peers
    (p, q) the latest ``(event at q, message)`` both delivered."""

    name = "total"

    def __init__(self, log: Log) -> None:
        super().__init__(log)
        n = self.n
        self.at: list[dict[int, int] | None] = [None] * log.messages  # message -> {peer: event}
        self.latest: list[tuple[int, int] | None] = [None] * (n * n)  # (p, q) -> (event at q, message)

    def fork(self, log: Log) -> Total:
        other = super().fork(log)
        assert isinstance(other, Total)
        other.at = self.at[:]  # the per-message dicts are replaced, never changed in place: shared
        other.latest = self.latest[:]
        return other

    def pack(self) -> tuple | None:
        if type(self).fork is not Total.fork:  # a subclass with state of its own
            return None
        return (self.n, self.done, pack_ints(self.got), tuple(self.at), tuple(self.latest))

    @classmethod
    def unpack(cls, log: Log, state: tuple) -> Total:
        other = cls.__new__(cls)
        other.log = log
        other.n, other.done, got, at, latest = state
        other.got, other.at, other.latest = list(got), list(at), list(latest)
        return other

    def _delivered(self, i: int, p: int, m: int) -> Violation | None:
        n, at, latest = self.n, self.at, self.latest
        if m >= len(at):
            at.extend([None] * (m + 1 - len(at)))
        where = at[m]
        if where is None:
            at[m] = {p: i}
            return None
        for q, jq in where.items():
            key = p * n + q
            best = latest[key]
            if best is not None and best[0] > jq:
                self.done = True
                return _disagreement(self.log, at, p, q, m, i, jq, best)
            if best is None or jq > best[0]:
                latest[key] = (jq, m)
            latest[q * n + p] = (i, m)
        at[m] = {**where, p: i}  # a new dict: a fork may share the old one
        return None


def _disagreement(log: Log, at: list[dict[int, int] | None], p: int, q: int, m: int, i: int, jq: int,
                  best: tuple[int, int]) -> Violation:
    """``total``'s violation: p delivers m (event ``i``), which q delivered at ``jq``,
    after q delivered ``best``'s message at ``best``'s event."""
    m1 = best[1]
    at1 = at[m1]
    assert at1 is not None
    ip1 = at1[p]
    events = sorted({log.msg_send[m1], log.msg_send[m], ip1, i, jq, best[0]})
    a, b, pn, qn = log.msg_name[m1], log.msg_name[m], log.peers[p], log.peers[q]
    sentence = (
        f"{pn} and {qn} delivered {a} and {b} in different orders: {pn} delivered {a}"
        f"{place(log, ip1)} before {b}{place(log, i)}, {qn} delivered {b}"
        f"{place(log, jq)} before {a}{place(log, best[0])}"
    )
    return Violation("total", i, sentence, tuple(events), (ip1, i, jq, best[0]))


class TotalGlobal(_FirstDeliveries):
    """``total_global``: the first delivery that closes a cycle in the union of the
    peers' delivery orders.

    State: each peer's last first-delivery and the union graph in a topological order;
    the cycle shown is found on the log's prefix once, when the property breaks."""

    name = "total_global"

    def __init__(self, log: Log) -> None:
        super().__init__(log)
        self.last: dict[int, int] = {}  # peer -> the message it delivered last
        self.graph = DynamicOrder()

    def fork(self, log: Log) -> TotalGlobal:
        other = super().fork(log)
        assert isinstance(other, TotalGlobal)
        other.last = dict(self.last)
        other.graph = self.graph.copy()
        return other

    def _delivered(self, i: int, p: int, m: int) -> Violation | None:
        log = self.log
        before = self.last.get(p)
        self.last[p] = m
        self.graph.node(m, log.msg_send[m])  # placed by its send: peers tend to deliver in send order
        if before is None:
            return None
        if self.graph.add(before, m):
            return None
        self.done = True
        return _cycle_violation(log, i)


def _order_edges(log: Log, end: int) -> list[tuple[int, int, int, int]]:
    """Each peer's consecutive first deliveries ``(m1, m2, event of m1, event of m2)``
    among the first ``end`` events, in log order."""
    last: dict[int, tuple[int, int]] = {}
    edges = []
    for i, p, m in first_deliveries(log, end):
        before = last.get(p)
        if before is not None:
            edges.append((before[1], m, before[0], i))
        last[p] = (i, m)
    return edges


def _cycle_violation(log: Log, at: int) -> Violation:
    """``total_global``'s violation at event ``at``, whose edge closes the first cycle."""
    edges = _order_edges(log, at + 1)
    closing = edges[-1]
    cycle = _shortest_path(edges[:-1], closing[1], closing[0])
    used = [closing, *cycle]
    events: set[int] = set()
    steps = []
    for a, b, ea, eb in used:
        events |= {ea, eb, log.msg_send[a], log.msg_send[b]}
        who = log.peers[log.peer[eb]]
        steps.append(f"{who} delivered {log.msg_name[a]}{place(log, ea)} before {log.msg_name[b]}{place(log, eb)}")
    names = ", ".join(log.msg_name[e[0]] for e in used)
    sentence = f"no single order of {names} explains the peers' deliveries, which form a cycle: " + "; ".join(steps)
    offending = tuple(sorted({e for a, b, ea, eb in used for e in (ea, eb)}))
    return Violation("total_global", closing[3], sentence, tuple(sorted(events)), offending)


def _shortest_path(edges: list[tuple[int, int, int, int]], start: int, goal: int) -> list[tuple[int, int, int, int]]:
    """The edges of a shortest path from message ``start`` to ``goal`` (breadth first)."""
    succ: dict[int, list[tuple[int, int, int, int]]] = {}
    for e in edges:
        succ.setdefault(e[0], []).append(e)
    parent: dict[int, tuple[int, int, int, int] | None] = {start: None}
    todo = deque([start])
    while todo and goal not in parent:
        node = todo.popleft()
        for e in succ.get(node, ()):
            if e[1] not in parent:
                parent[e[1]] = e
                todo.append(e[1])
    path = []
    node = goal
    while parent[node] is not None:
        e = parent[node]
        assert e is not None
        path.append(e)
        node = e[0]
    path.reverse()
    return path


class TotalPrefix(_FirstDeliveries):
    """``total_prefix``: the first delivery after which, for two peers, neither's
    sequence of delivered messages addressed to both is a prefix of the other's.

    State: per pair of peers, the peer ahead, its unmatched deliveries ``(message,
    event)`` and how many matched."""

    name = "total_prefix"

    def __init__(self, log: Log) -> None:
        super().__init__(log)
        self.pairs: dict[int, tuple[int, deque[tuple[int, int]], int]] = {}  # leader, its unmatched, matched

    def fork(self, log: Log) -> TotalPrefix:
        other = super().fork(log)
        assert isinstance(other, TotalPrefix)
        other.pairs = {k: (leader, deque(queue), matched) for k, (leader, queue, matched) in self.pairs.items()}
        return other

    def _delivered(self, i: int, p: int, m: int) -> Violation | None:
        log = self.log
        ds = log.msg_dests[m]
        if p not in ds:
            return None
        n = self.n
        pairs = self.pairs
        for q in ds:
            if q == p:
                continue
            key = p * n + q if p < q else q * n + p
            state = pairs.get(key)
            if state is None:
                pairs[key] = (p, deque([(m, i)]), 0)
                continue
            leader, queue, matched = state
            if not queue or leader == p:
                if leader != p:
                    pairs[key] = (p, queue, matched)
                queue.append((m, i))
                continue
            other, j = queue.popleft()
            if other != m:
                self.done = True
                pos = matched + 1
                pn, qn = log.peers[p], log.peers[q]
                a, b = log.msg_name[m], log.msg_name[other]
                window = sorted({log.msg_send[m], log.msg_send[other], j, i})
                sentence = (
                    f"{pn} and {qn} deliver different messages as their message number {pos} addressed to both "
                    f"({qn} delivered {b}{place(log, j)}, {pn} delivered {a}{place(log, i)}), so neither order "
                    f"is a prefix of the other: {chain(log, window)}"
                )
                return Violation("total_prefix", i, sentence, tuple(window), (j, i))
            pairs[key] = (leader, queue, matched + 1)
        return None

"""``global_lock`` as a monitor: could the run have happened under one global lock?

The property library's definition (:func:`ordercheck.specs.properties.lock_edges`), read on each
prefix of the log: the graph whose nodes are the events and whose edges are each
peer's program order, each signal to its receipt (paired by
:class:`~ordercheck.checker.monitors.log.SignalPairs`), each send to each delivery of its message,
and for each receiving peer q, send(m1) -> send(m2) when q consumed (delivered or
dropped) m1 and next m2, and send(m1) -> send(m) for q's last consumed m1 and every
message m addressed to q that q has not consumed (unless q is down: its last ``fail``
has no ``restart`` after it), must be acyclic. A message counts as sent in a prefix
when its send is in the prefix. :class:`_LockGraph` states that rule once, as the
edges each event adds (and the few it removes); the monitor's steps and
:func:`lock_graph` (the graph of one prefix, with each edge's reason for the sentence)
both take events in through it.

**Algorithm.** :class:`GlobalLock` keeps the graph of the prefix as events come:
each event adds its edges (a peer's waiting edges go through a node of the peer's own,
so that a consumption changes two edges, not one per waiting message), and an edge
a -> b closes a cycle exactly when b already reaches a, which a search from b decides
over the part of the graph b reaches: O(that part) per new edge, small on a model
checker's histories, and a fork copies a few lists. Edges only go when a ``fail``
takes a peer's waiting edges away (a ``restart`` brings them back) or a consumption
moves a peer's waiting edges to its new last send; removing edges closes no cycle.
For a whole recording, :meth:`GlobalLock.run` searches the prefixes instead, laying
each one's graph out with :func:`lock_graph` (no search per edge) and testing it for
a cycle: growing the prefix only adds edges or replaces an edge
send(m1) -> send(m) by the path through q's later consumptions, so a cycle, once
there, stays, except across two kinds of events that remove edges: a ``fail`` and a
consumption of a message not yet sent. Between those, the shortest violated prefix is
found by checking the stretch's last prefix (one pass: most logs stop here), then
galloping from its start (lengths 1, 2, 4, ... past it) and bisecting: one pass for a
log that holds, O(v log v) more for a violation at event v, and one pass more per
edge-removing event before it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

from ordercheck.checker.monitors.base import Monitor
from ordercheck.checker.monitors.events import DELIVER, DROP, FAIL, RESTART, SEND, SIGNAL_IN, SIGNAL_OUT
from ordercheck.checker.monitors.graph import backtrack
from ordercheck.checker.monitors.log import Log, SignalPairs, pack_ints, signal_sources
from ordercheck.checker.monitors.violation import Violation, place

STEPWISE = 256
""":meth:`GlobalLock.run` steps a stretch of up to this many events that extends what it
has stepped (a model checker's step) and searches the prefixes of a longer one, or of a
log read from its start (a recording, a history laid out whole); the graph of searched
prefixes is laid out only when stepping goes on (:meth:`GlobalLock.step`) or the
monitor is forked."""

_NO_PAIRS: tuple[tuple[int, int], ...] = ()  # an event that completes no signal pair

ORDER, HB, SIGNAL, QUEUE, WAITING, HUB = range(6)
"""The kinds of lock-graph edges (a reason's first field): program order, a send to a
delivery, a signal to its receipt, two consecutive consumptions' sends, and a peer's
waiting edge in two halves (its last consumption's send -> the peer's node, the peer's
node -> a send it still waits for)."""


class _LockGraph:
    """The lock graph of a log's prefix, taken in event by event: the ``global_lock``
    edge rule, written once (the monitor's steps and :func:`lock_graph` both take events
    in through :meth:`event`).

    Nodes are the events (``>= 0``) and, per peer q, a node ``-1 - q`` of its own that
    carries q's waiting edges: its last consumption's send -> q's node (while q is up)
    -> each send addressed to q that q has not consumed, the same paths as the waiting
    edges send(m1) -> send(m). Successors are tuples, replaced and never changed in
    place, so a copy copies two lists. With ``check``, an edge a -> b closes a cycle
    when b already reaches a (a search from b, over the part of the graph b reaches);
    with ``reasons``, ``why`` keeps each edge's ``(kind, witness)``: the consuming event
    behind a QUEUE edge (the second consumption) or a WAITING one (the last), else -1.
    Edges waiting for a send not yet in the log (a delivery or a consumption recorded
    before its message's send) are kept in ``later`` until the send comes.
    """

    __slots__ = ("log", "check", "why", "succ", "hub", "hub_from", "last_event", "last_consumed", "last_at",
                 "got", "down", "later", "cycle")

    def __init__(self, log: Log, *, check: bool, reasons: bool = False) -> None:
        n = len(log.peers)
        self.log = log
        self.check = check
        self.why: dict[tuple[int, int], tuple[int, int]] | None = {} if reasons else None
        self.succ: list[tuple[int, ...]] = []  # event -> its successors (events >= 0, peer nodes < 0)
        self.hub: list[tuple[int, ...]] = [()] * n  # peer q's node (-1 - q) -> the sends q waits for
        self.hub_from: list[int] = [-1] * n  # the send of q's last consumption, if in the log
        self.last_event: list[int] = [-1] * n
        self.last_consumed: list[int] = [-1] * n  # q's last consumed message
        self.last_at: list[int] = [-1] * n  # q's last consumption (a waiting edge's witness)
        self.got: list[int] = []  # per message: the peers that consumed it (a bitmask)
        self.down = 0
        self.later: dict[int, tuple[tuple[int, int, int], ...]] = {}  # message not yet sent -> its edges' cases
        self.cycle = False

    def copy(self, log: Log) -> _LockGraph:
        """An independent copy reading ``log``."""
        other = _LockGraph.__new__(_LockGraph)
        other.log, other.check, other.why, other.down, other.cycle = log, self.check, None, self.down, False
        other.succ = self.succ[:]
        other.hub = self.hub[:]
        other.hub_from = self.hub_from[:]
        other.last_event = self.last_event[:]
        other.last_consumed = self.last_consumed[:]
        other.last_at = self.last_at[:]
        other.got = self.got[:]
        other.later = dict(self.later) if self.later else {}
        return other

    def pack(self) -> tuple | None:
        """The state :meth:`copy` copies, packed (see :meth:`Monitor.pack
        <ordercheck.checker.monitors.base.Monitor.pack>`); ``None`` for a graph that keeps reasons."""
        if self.why is not None:
            return None
        return (self.check, self.down, tuple(self.succ), tuple(self.hub), pack_ints(self.hub_from),
                pack_ints(self.last_event), pack_ints(self.last_consumed), pack_ints(self.last_at),
                pack_ints(self.got), dict(self.later))

    @classmethod
    def unpack(cls, log: Log, state: tuple) -> _LockGraph:
        """A graph in the state :meth:`pack` gave, reading ``log``."""
        other = cls.__new__(cls)
        other.log, other.why, other.cycle = log, None, False
        other.check, other.down, succ, hub, hub_from, last_event, last_consumed, last_at, got, later = state
        other.succ, other.hub, other.hub_from = list(succ), list(hub), list(hub_from)
        other.last_event, other.last_consumed, other.last_at = list(last_event), list(last_consumed), list(last_at)
        other.got, other.later = list(got), dict(later)
        return other

    def _add(self, a: int, b: int, kind: int, witness: int = -1) -> None:
        why = self.why
        if why is not None:
            if (a, b) in why:
                return
            why[(a, b)] = (kind, witness)
        if a >= 0:
            self.succ[a] += (b,)
        else:
            self.hub[-1 - a] += (b,)
        if self.check and not self.cycle:
            # b reaches a only through a successor of its own (or being a); most new
            # edges end at a new event, which has none yet
            if (b == a or (self.succ[b] if b >= 0 else self.hub[-1 - b])) and self._reaches(b, a):
                self.cycle = True

    def _remove(self, a: int, b: int) -> None:
        if self.why is not None:
            del self.why[(a, b)]
        edges = self.succ if a >= 0 else self.hub
        at = a if a >= 0 else -1 - a
        out = edges[at]
        j = out.index(b)
        edges[at] = out[:j] + out[j + 1:]

    def _reaches(self, start: int, goal: int) -> bool:
        if start == goal:
            return True
        succ, hub = self.succ, self.hub
        seen = {start}
        todo = [start]
        while todo:
            u = todo.pop()
            for w in succ[u] if u >= 0 else hub[-1 - u]:
                if w == goal:
                    return True
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        return False

    def _sent(self, m: int, i: int) -> int:
        """The event of m's send if it is before event ``i``, else -1."""
        s = self.log.msg_send[m]
        return s if 0 <= s < i else -1

    def event(self, i: int, pairs: Sequence[tuple[int, int]]) -> bool:
        """Take event ``i`` in, with the signal pairs ``(receipt, signal)`` that join the
        graph with it: whether an edge it added closed a cycle (with ``check``)."""
        log = self.log
        p, k, a = log.peer[i], log.kind[i], log.arg[i]
        self.cycle = False
        self.succ.append(())
        before = self.last_event[p]
        if before >= 0:
            self._add(before, i, ORDER)
        self.last_event[p] = i
        for r, sig in pairs:
            self._add(sig, r, SIGNAL)
        if k == SEND and log.msg_send[a] == i:
            self._send(i, a)
        elif k == DELIVER or k == DROP:
            self._consume(i, p, k, a)
        elif k == FAIL:
            if not self.down >> p & 1 and self.hub_from[p] >= 0:
                self._remove(self.hub_from[p], -1 - p)
            self.down |= 1 << p
        elif k == RESTART:
            if self.down >> p & 1 and self.hub_from[p] >= 0:
                self._add(self.hub_from[p], -1 - p, WAITING, self.last_at[p])
            self.down &= ~(1 << p)
        return self.cycle

    def _send(self, i: int, m: int) -> None:
        got = self.got
        if m >= len(got):
            got.extend([0] * (m + 1 - len(got)))
        for q in self.log.msg_dests[m]:
            if not got[m] >> q & 1:
                self._add(-1 - q, i, HUB)  # q waits for m
        for x, y, e in self.later.pop(m, ()):
            if x == -2:  # a delivery (event y) recorded before this send
                self._add(i, y, HB)
            elif x == -3:  # q (y) consumed m last, before its send: q's waiting starts here
                q = y
                if self.last_consumed[q] == m and self.hub_from[q] < 0:
                    self.hub_from[q] = i
                    if not self.down >> q & 1:
                        self._add(i, -1 - q, WAITING, self.last_at[q])
            else:  # a peer consumed x and next y (at e): both sends now in the log?
                sx, sy = self._sent(x, i + 1), self._sent(y, i + 1)
                if sx >= 0 and sy >= 0:
                    self._add(sx, sy, QUEUE, e)

    def _later(self, m: int, edge: tuple[int, int, int]) -> None:
        self.later[m] = self.later.get(m, ()) + (edge,)

    def _consume(self, i: int, q: int, k: int, m: int) -> None:
        msg_send = self.log.msg_send
        s = msg_send[m]
        if not 0 <= s < i:
            s = -1
        if k == DELIVER:
            if s >= 0:
                self._add(s, i, HB)
            else:
                self._later(m, (-2, i, -1))
        m1 = self.last_consumed[q]
        if m1 >= 0 and m1 != m:
            s1 = msg_send[m1]
            if not 0 <= s1 < i:
                s1 = -1
            if s1 >= 0 and s >= 0:
                self._add(s1, s, QUEUE, i)
            else:
                for x in {m1, m} if s1 < 0 and s < 0 else ({m1} if s1 < 0 else {m}):
                    self._later(x, (m1, m, i))
        got = self.got
        if m >= len(got):
            got.extend([0] * (m + 1 - len(got)))
        bit = 1 << q
        if not got[m] & bit and s >= 0 and q in self.log.msg_dests[m]:
            self._remove(-1 - q, s)  # q no longer waits for m
        got[m] |= bit
        old = self.hub_from[q]
        if old >= 0 and not self.down & bit:
            self._remove(old, -1 - q)
        self.last_consumed[q] = m
        self.last_at[q] = i
        self.hub_from[q] = s
        if s >= 0:
            if not self.down & bit:
                self._add(s, -1 - q, WAITING, i)
        else:
            self._later(m, (-3, q, -1))


class GlobalLock(Monitor):
    """``global_lock``: the first event after which the lock graph of the log's prefix
    has a cycle, shown with a shortest cycle through an edge that event added.

    State, kept event by event: the lock graph of the prefix (:class:`_LockGraph`, with
    ``check``), the pairing of signals and the pairs :meth:`run` formed for a graph
    laid out later. A fork shares the pairing with its source until either steps it
    (:meth:`_pairing`): most events pair nothing, so most forks never copy it.
    """

    name = "global_lock"
    changed_by = None  # a line closing on a late signal pair can be any event

    def __init__(self, log: Log) -> None:
        super().__init__(log)
        self.graph = _LockGraph(log, check=True)
        self.pairs = SignalPairs(log)
        self.shared = False  # whether self.pairs may be another monitor's too (a fork's source or fork)
        self.paired = 0  # the pairing has seen the events before this one
        self.held: dict[int, list[tuple[int, int]]] = {}  # pairs run() formed, for a graph laid out later
        self.stepped = 0
        self.done = False

    def fork(self, log: Log) -> GlobalLock:
        if not self.done and len(self.graph.succ) < self.stepped:
            self._catch_up(self.stepped)  # lay the graph out once here, not once per fork (run() left it behind)
        other = GlobalLock.__new__(GlobalLock)
        other.log, other.stepped, other.done = log, self.stepped, self.done
        other.graph = self.graph.copy(log)
        other.pairs = self.pairs  # shared until either steps it (_pairing)
        self.shared = other.shared = True
        other.paired = self.paired
        other.held = dict(self.held) if self.held else {}
        return other

    def pack(self) -> tuple | None:
        if type(self).fork is not GlobalLock.fork:  # a subclass with state of its own
            return None
        graph = self.graph.pack()
        if graph is None:
            return None
        return (self.stepped, self.done, self.paired, graph, self.pairs.pack(),
                {k: tuple(v) for k, v in self.held.items()} if self.held else None)

    @classmethod
    def unpack(cls, log: Log, state: tuple) -> GlobalLock:
        other = cls.__new__(cls)
        other.log = log
        other.stepped, other.done, other.paired, graph, pairs, held = state
        other.graph = _LockGraph.unpack(log, graph)
        other.pairs = SignalPairs.unpack(log, pairs)
        other.shared = False
        other.held = {k: list(v) for k, v in held.items()} if held else {}
        return other

    def _event(self, i: int) -> None:
        """Take event ``i`` into the graph (a prefix already decided)."""
        self.graph.event(i, self._pairs_at(i))

    def _take(self, i: int) -> Violation | None:
        """Take event ``i`` into the graph, every event before it taken: the violation
        when the prefix it ends is the first with a cycle."""
        pairs = self._pairs_at(i)
        cycle = self.graph.event(i, pairs)
        self.stepped = i + 1
        if pairs:
            late = min((sig for r, sig in pairs if sig > r), default=-1)
            if late >= 0:  # a late pair's edge is in every prefix holding its signal
                for end in range(late + 1, i + 1):
                    if _cyclic(lock_graph(self.log, end)[0]):
                        return self._found(end)
        return self._found(i + 1) if cycle else None

    def _pairs_at(self, i: int) -> Sequence[tuple[int, int]]:
        """The signal pairs event ``i`` completes (held from :meth:`run` if it paired them)."""
        if i < self.paired:
            return self.held.pop(i, _NO_PAIRS)
        self.paired = i + 1
        k = self.log.kind[i]
        if k == SIGNAL_OUT or k == SIGNAL_IN or self.pairs.unit_outs:
            return self._pairing().step(i)
        return _NO_PAIRS

    def _pairing(self) -> SignalPairs:
        """The signal pairing, to step: this monitor's own, reading its log (a copy made
        here first if a fork shares it)."""
        if self.shared:
            self.pairs = self.pairs.copy(self.log)
            self.shared = False
        return self.pairs

    def _pair_up(self, upto: int) -> None:
        """Run the pairing over the events before ``upto``, holding the pairs for the
        graph (laid out only if stepping goes on)."""
        kinds = self.log.kind
        for i in range(self.paired, upto):
            k = kinds[i]
            if k == SIGNAL_OUT or k == SIGNAL_IN or self.pairs.unit_outs:
                found = self._pairing().step(i)
                if found:
                    self.held[i] = found
        self.paired = max(self.paired, upto)

    def step(self, i: int) -> Violation | None:
        if self.done:
            return None
        self._catch_up(i)
        return self._take(i)

    def _catch_up(self, i: int) -> None:
        """Take the events :meth:`run` decided (and did not lay out) into the graph."""
        for j in range(len(self.graph.succ), i):
            self._event(j)

    def end(self) -> Violation | None:
        """The violation a late signal on the last line makes, if any; the monitor
        itself is left as it was."""
        if self.done:
            return None
        self._pair_up(self.stepped)
        late = [s for r, s in self.pairs.copy(self.log).flush() if s > r]
        if not late:
            return None
        for end in range(min(late) + 1, self.stepped + 1):
            if _cyclic(lock_graph(self.log, end)[0]):
                return _explain(self.log, end)
        return None

    def read_to_fork(self, end: int) -> Violation | None:
        """Step the events one by one: a fork needs the graph laid out, which searching
        the prefixes would leave for :meth:`fork` to lay out again."""
        return Monitor.run(self, 0, end)

    def run(self, start: int, end: int) -> Violation | None:
        """Events ``start`` to ``end - 1``, decided by searching the prefixes: the same
        answer as stepping them one by one, and for a recording read whole, one pass
        when it holds (the graph is laid out only if stepping goes on)."""
        if self.done or start >= end:
            return None
        if start and end - start <= STEPWISE and len(self.graph.succ) == start:  # a few more events: step them
            take = self._take
            for i in range(start, end):
                found = take(i)
                if found is not None:
                    return found
            return None
        log = self.log
        self._pair_up(end)
        self.stepped = end
        prefixes = _Prefixes(log, signal_sources(log))  # the whole recording's pairing, read by every prefix
        length = _first_violated_length(prefixes.cyclic, start, end, _breaks(log, start, end))
        return None if length is None else self._found(length)

    def _found(self, length: int) -> Violation:
        self.done = True
        return _explain(self.log, length)


def _explain(log: Log, length: int) -> Violation:
    """The violation of the shortest cyclic prefix, of ``length`` events: a shortest
    cycle through an edge its last event added."""
    at = length - 1
    graph = _LockGraph(log, check=False, reasons=True)
    joins = _joins(signal_sources(log))
    _lay_out(graph, joins, 0, at)
    why = graph.why
    assert why is not None
    old = set(why)
    _lay_out(graph, joins, at, length)
    new = [edge for edge in why if edge not in old]
    succ = graph.succ + graph.hub[::-1]
    cycle, why = _without_peer_nodes(_shortest_cycle(succ, new or list(why)), why)
    return _violation(log, at, cycle, why)


def lock_graph(log: Log, end: int, *, reasons: bool = False
               ) -> tuple[list[tuple[int, ...]], dict[tuple[int, int], tuple[int, int]]]:
    """The lock graph of the prefix of ``end`` events, as :class:`_LockGraph` takes
    them in (signals paired as in the whole log, a pair joining once both its events
    are in the prefix): successor tuples of ``end`` events and then the peers' nodes
    (so that node ``-1 - q``, peer q's, indexes it as it is), and with ``reasons`` each
    edge's ``(kind, witness)``."""
    graph = _LockGraph(log, check=False, reasons=reasons)
    _lay_out(graph, _joins(signal_sources(log)), 0, end)
    return graph.succ + graph.hub[::-1], graph.why or {}


def _lay_out(graph: _LockGraph, joins: dict[int, list[tuple[int, int]]], start: int, end: int) -> None:
    """Take events ``start`` to ``end - 1`` into ``graph``, each with the signal pairs it
    completes (:func:`_joins`)."""
    get = joins.get
    for i in range(start, end):
        graph.event(i, get(i, _NO_PAIRS))


def _joins(sources: dict[int, int]) -> dict[int, list[tuple[int, int]]]:
    """Per event, the signal pairs ``(receipt, signal)`` it completes: a pair joins the
    graph at the later of its two events, in every prefix that holds both."""
    joins: dict[int, list[tuple[int, int]]] = {}
    for r, sig in sources.items():
        joins.setdefault(max(r, sig), []).append((r, sig))
    return joins


class _Prefixes:
    """Whether :func:`lock_graph` of a prefix has a cycle, for the prefix lengths a
    search asks about in turn. Each prefix's graph is laid out from the graph of the
    longest prefix found acyclic so far (kept, and copied before it is extended), not
    from the first event: a search whose acyclic prefixes only grow, as
    :func:`_first_violated_length`'s do, lays each event out about twice in all rather
    than once per probe. A shorter prefix than the one kept starts again from the first
    event."""

    def __init__(self, log: Log, sources: dict[int, int]) -> None:
        self.log = log
        self.joins = _joins(sources)
        self.base = _LockGraph(log, check=False)
        self.length = 0  # the events self.base holds

    def cyclic(self, end: int) -> bool:
        """Whether the lock graph of the first ``end`` events has a cycle."""
        if end < self.length:
            self.base, self.length = _LockGraph(self.log, check=False), 0
        graph = self.base.copy(self.log)
        _lay_out(graph, self.joins, self.length, end)
        if _cyclic(graph.succ + graph.hub[::-1]):
            return True
        self.base, self.length = graph, end
        return False


def _cyclic(succ: Sequence[Sequence[int]]) -> bool:
    """Whether the graph (successors by node, a peer's node ``-1 - q`` at its negative
    index) has a cycle."""
    indegree = [0] * len(succ)
    for children in succ:
        for c in children:
            indegree[c] += 1
    ready = [n for n in range(len(succ)) if not indegree[n]]
    removed = 0
    while ready:
        node = ready.pop()
        removed += 1
        for c in succ[node]:
            indegree[c] -= 1
            if not indegree[c]:
                ready.append(c)
    return removed != len(succ)


def _breaks(log: Log, start: int, end: int) -> list[int]:
    """The events from ``start`` to ``end - 1`` after which a cycle may disappear:
    ``fail``, and consumptions of a message whose send is not before them."""
    out = []
    for i in range(start, end):
        k = log.kind[i]
        if k == FAIL:
            out.append(i)
        elif (k == DELIVER or k == DROP) and not 0 <= log.msg_send[log.arg[i]] < i:
            out.append(i)
    return out


def _shortest_cycle(succ: Sequence[Sequence[int]], new: list[tuple[int, int]]) -> list[int]:
    """The nodes of a shortest cycle through one of the ``new`` edges (breadth first
    from each edge's head back to its tail), starting at that edge's head. A peer's
    node is no step of its own: the waiting edge through it counts one."""
    best: list[int] | None = None
    for a, b in new:
        parent: dict[int, int | None] = {b: None}
        todo = deque([b])
        while todo and a not in parent:
            node = todo.popleft()
            for c in succ[node]:
                if c in parent:
                    continue
                parent[c] = node
                todo.append(c)
                if c < 0 <= node:  # through the peer's node, one step
                    for c2 in succ[c]:
                        if c2 not in parent:
                            parent[c2] = c
                            todo.append(c2)
        if a not in parent:
            continue
        path = backtrack(parent, a)
        if best is None or _steps(path) < _steps(best):
            best = path
    assert best is not None  # the prefix before had no cycle, so one goes through a new edge
    return best


def _steps(path: list[int]) -> int:
    return sum(1 for v in path if v >= 0)


def _without_peer_nodes(cycle: list[int], why: dict[tuple[int, int], tuple[int, int]]
                        ) -> tuple[list[int], dict[tuple[int, int], tuple[int, int]]]:
    """The cycle with each peer's node left out, and the reasons with the waiting edge
    ``a -> b`` it stood for (``a -> node -> b``) added."""
    if min(cycle) >= 0:
        return cycle, why
    why = dict(why)
    k = len(cycle)
    out = []
    for j, v in enumerate(cycle):
        if v >= 0:
            out.append(v)
        else:
            why[(cycle[j - 1], cycle[(j + 1) % k])] = why[(cycle[j - 1], v)]
    return out, why


def _violation(log: Log, at: int, cycle: list[int], why: dict[tuple[int, int], tuple[int, int]]) -> Violation:
    pairs = list(zip(cycle, cycle[1:] + cycle[:1]))
    kept: set[int] = {at}
    steps = []
    offending: set[int] = set()
    for u, v in pairs:
        kind, witness = why[(u, v)]
        if kind != ORDER:
            kept |= {u, v}
        if kind == QUEUE:
            q = log.peer[witness]
            first = _previous_consumption(log, witness)
            kept |= {first, witness}
            offending |= {first, witness}
            a, b = log.msg_name[log.arg[u]], log.msg_name[log.arg[v]]
            steps.append(f"{a} sent before {b} ({log.peers[q]} consumed {a}{_on(log, first)}, "
                         f"then {b}{_on(log, witness)})")
        elif kind == WAITING:
            q = log.peer[witness]
            kept.add(witness)
            offending.add(witness)
            a, b = log.msg_name[log.arg[u]], log.msg_name[log.arg[v]]
            steps.append(f"{a} sent before {b} ({log.peers[q]} consumed {a} last{_on(log, witness, ',')}, "
                         f"and still waits for {b})")
        elif kind == HB:
            offending.add(v)
            steps.append(f"{log.msg_name[log.arg[u]]} sent{place(log, u)} before {log.peers[log.peer[v]]} "
                         f"received it{place(log, v)}")
        elif kind == SIGNAL:
            where = log.at(u) if log.at(u) == log.at(v) else f"{log.at(u)}, {log.at(v)}"
            steps.append(f"{log.peers[log.peer[u]]} signalled {log.peers[log.peer[v]]}"
                         + (f" ({where})" if log.at(u) else ""))
        else:
            steps.append(f"{log.where(u)} before {log.where(v)}")
    # program-order runs keep their two ends: the events where the cycle changes peer
    steps = _merge_order_steps(log, pairs, why, steps)
    upto = f" up to {log.at(at)}" if log.at(at) else ""
    sentence = f"no single global lock can explain the run{upto}; it would need " + "; ".join(steps) + ", a cycle"
    return Violation("global_lock", at, sentence, tuple(sorted(kept)), tuple(sorted(offending)))


def _on(log: Log, i: int, sep: str = "") -> str:
    """`` on line 12`` (after ``sep``), or nothing for a log with no places."""
    return f"{sep} on {log.at(i)}" if log.at(i) else ""


def _merge_order_steps(log: Log, pairs: list[tuple[int, int]], why: dict[tuple[int, int], tuple[int, int]],
                       steps: list[str]) -> list[str]:
    """Joins consecutive program-order steps into one ``x before y`` step."""
    out: list[str] = []
    run: tuple[int, int] | None = None
    for (u, v), text in zip(pairs, steps):
        if why[(u, v)][0] == ORDER:
            run = (run[0], v) if run is not None else (u, v)
            continue
        if run is not None:
            out.append(f"{log.where(run[0])} before {log.where(run[1])}")
            run = None
        out.append(text)
    if run is not None:
        out.append(f"{log.where(run[0])} before {log.where(run[1])}")
    return out


def _previous_consumption(log: Log, i: int) -> int:
    """The consumption (delivery or drop) at event ``i``'s peer just before event ``i``."""
    p = log.peer[i]
    for j in range(i - 1, -1, -1):
        if log.peer[j] == p and (log.kind[j] == DELIVER or log.kind[j] == DROP):
            return j
    raise ValueError(f"event {i} is its peer's first consumption")


def _first_true(check: Callable[[int], bool], lo: int, hi: int) -> int | None:
    """The smallest ``length`` in ``[lo, hi]`` with ``check(length)``, for a ``check``
    that is monotone there (once true, true for every longer length); ``None`` when
    ``check(hi)`` is false (so none is)."""
    if lo > hi or not check(hi):
        return None
    bad = lo - 1  # check is false at every length <= bad (vacuously at lo - 1)
    step = 1
    good = hi
    while True:
        probe = min(hi, bad + step)
        if probe >= good:
            break
        if check(probe):
            good = probe
            break
        bad = probe
        step *= 2
    while good - bad > 1:
        mid = (bad + good) // 2
        if check(mid):
            good = mid
        else:
            bad = mid
    return good


def _first_violated_length(check: Callable[[int], bool], start: int, events: int,
                           breaks: Sequence[int] = ()) -> int | None:
    """The length of the shortest prefix longer than ``start`` (and at most ``events``)
    for which ``check(length)`` is true, or ``None``.

    ``check`` is monotone over prefix lengths except at the events listed in ``breaks``
    (sorted event indices), after which it may turn false again, and an event of
    ``breaks`` never turns it true by itself. Each stretch between two of them is
    searched with :func:`_first_true`, in order: one pass per stretch, plus the
    galloping search in the first stretch that is violated.
    """
    start += 1
    for b in [*breaks, events]:
        end = b if b < events else events  # the prefix of length b leaves event b out
        found = _first_true(check, start, end)
        if found is not None:
            return found
        start = b + 2  # the prefix holding event b holds the property if the one before did
    return None

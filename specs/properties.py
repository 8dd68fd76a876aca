"""The ordering properties every spec shares, decided on a :class:`History`.

Each check returns ``None`` when the history satisfies the property and otherwise one
sentence naming the messages and peers involved. The names are the contract of
DESIGN.md and ``docs/reference/properties.md``: ``fifo``, ``causal``, ``integrity``,
``total``, ``total_global``, ``total_prefix``, ``global_lock``, ``eventual_delivery``,
``synchronous``.

``fifo`` and ``causal`` are safety properties of every prefix, as the literature states
them: when a peer delivers m2, every message that must precede m2 there and is addressed
to it has already been delivered there (or dropped there with a reason, as a protocol
may do); otherwise the run is violated at that delivery, whether or not the predecessor
arrives later. That the predecessor arrives at all is ``eventual_delivery``'s business.
``integrity`` says each message is delivered at most once at each peer, only at its
destinations and only after it was sent; the total-order properties read each peer's
*first* delivery of a message, so a repeated delivery is integrity's alone.
"""

from __future__ import annotations

import networkx as nx

from checker import Property
from checker.monitors.delivery import EventualDelivery
from checker.monitors.integrity import Integrity
from checker.monitors.spec_past import CausalPast, FifoGrown
from checker.monitors.total import Total, TotalGlobal, TotalPrefix
from checker.monitors.violation import Violation
from specs.history import DELIVER, DROP, SEND, SIGNAL_IN, SIGNAL_OUT, History, HistoryLog, event_graph, history_log

MONITORS: dict[str, type] = {
    "fifo": FifoGrown, "causal": CausalPast, "integrity": Integrity, "total": Total, "total_global": TotalGlobal,
    "total_prefix": TotalPrefix, "eventual_delivery": EventualDelivery,
}
"""The monitor deciding each library property (every name, once they are all monitors)."""


def _ids(mask: int) -> list[int]:
    """The ids of the set bits of ``mask``, smallest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _and_list(names: list[str]) -> str:
    """``a1``, ``a1 and b1``, ``a1, a2 and b1``."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def first_violation(h: History, prop: str | type) -> tuple[HistoryLog, Violation] | None:
    """The first violation of property ``prop`` (a name of :data:`MONITORS` or a monitor
    class) on the history laid out as a log (:func:`~specs.history.history_log`),
    with that log; ``None`` when the history satisfies it. For an ``eventually``
    property, what is outstanding at the end."""
    cls = MONITORS[prop] if isinstance(prop, str) else prop
    log = history_log(h)
    monitor = cls(log)
    for i in range(len(log)):
        found = monitor.step(i)
        if found is not None:
            return log, found
    found = monitor.end()
    return (log, found) if found is not None else None


def _sentence(h: History, cls: type) -> str | None:
    found = first_violation(h, cls)
    return None if found is None else found[1].sentence


def premature_delivery(h: History, name: str) -> tuple[int, int, list[int]] | None:
    """For ``fifo`` or ``causal``: the delivery at which the property first breaks, as
    ``(peer, index in the peer's log, history ids of the predecessors it did not wait
    for)``, or ``None`` when the property holds (reports highlight these); read off the
    monitor's violation."""
    if name not in ("fifo", "causal"):
        raise ValueError(f"premature_delivery reads fifo or causal, not {name!r}")
    found = first_violation(h, name)
    if found is None:
        return None
    log, v = found
    q = log.peer[v.at]
    index = sum(1 for i in range(v.at) if log.peer[i] == q)
    mid = {m: k for k, m in log.ids.items()}
    return q, index, [mid[m] for m, peer in v.missing if peer == q and m in mid]


def fifo(h: History) -> str | None:
    """FIFO delivery: when a peer ``q`` delivers ``m2``, every message that ``m2``'s sender
    sent before ``m2`` (a smaller ``seq``) and addressed to ``q`` has already been
    delivered at ``q``, or dropped there with a reason. Violated at the delivery of
    ``m2`` otherwise, whether or not the earlier message is delivered later
    (:class:`checker.monitors.order.Fifo` decides it)."""
    return _sentence(h, FifoGrown)


def causal(h: History) -> str | None:
    """Causal delivery: when a peer ``q`` delivers ``m2``, every message in ``m2``'s causal
    past (it happened before ``m2``: program order, deliveries and side-channel signals)
    that is addressed to ``q`` has already been delivered at ``q``, or dropped there with
    a reason. Violated at the delivery of ``m2`` otherwise, whether or not the earlier
    message is delivered later (:class:`checker.monitors.spec_past.CausalPast` decides
    it, with the spec's own causal pasts)."""
    return _sentence(h, CausalPast)


def delivery_orders(h: History) -> list[list[int]]:
    """Per peer, the sent messages it delivered, each once, in the order of its first
    delivery of each (a repeated delivery is :func:`integrity`'s business)."""
    known = h.messages
    orders = []
    for q in range(len(h.peers)):
        seen: set[int] = set()
        order = []
        for m in h.deliveries(q):
            if m in known and m not in seen:
                seen.add(m)
                order.append(m)
        orders.append(order)
    return orders


def total(h: History) -> str | None:
    """Pairwise total order: any two peers that both delivered ``m1`` and ``m2`` delivered
    them in the same order (each peer's first delivery of each counts). Says nothing of
    messages only one of the two delivered, so it allows gaps (:func:`total_prefix`) and
    cycles through three or more peers (:func:`total_global`)."""
    return _sentence(h, Total)


def total_global(h: History) -> str | None:
    """Global total order: the union of all peers' delivery orders (m1 before m2 when some
    peer delivered m1 before m2, first deliveries only) is acyclic, so one sequence of
    all messages agrees with every peer. Stronger than :func:`total`: it also forbids a
    cycle such as a1 -> c1 -> b1 -> a1 spread over three peers, each pair agreeing."""
    return _sentence(h, TotalGlobal)


def total_prefix(h: History) -> str | None:
    """Prefix (gap-free) total order: for any two peers, the messages addressed to both,
    in the order each delivered them (first deliveries), form two sequences one of which
    is a prefix of the other. So neither skips a message the other delivered before a
    common later one ("a2 without a1" against "a1 then a2" breaks it)."""
    return _sentence(h, TotalPrefix)


def integrity(h: History) -> str | None:
    """Integrity: each message is delivered at most once at each peer, only at its
    destinations, and only after it was sent. Drops count as deliveries here: a peer
    consumes a message (delivers or drops it) at most once, and only if addressed to it.
    "After it was sent": the message's send is in its sender's log, and happened-before
    (program order, each send to each delivery or drop of its message, each signal to its
    receipt) has no cycle, so no delivery precedes its own send (the history is laid out
    in happened-before order where it has no cycle, so the log's order tells)."""
    return _sentence(h, Integrity)


def lock_edges(h: History) -> dict[tuple[int, int], dict[tuple[int, int], str]]:
    """The edges of DESIGN.md's ``global_lock`` graph, each with the reason it exists.

    Nodes are events ``(peer, index)``: send transactions, deliveries, drops and
    signals. Edges: each peer's program order; each signal to its receipt; each send to
    each delivery of its message; and for each receiving queue, send(m1) -> send(m2)
    when the queue delivered m1 before m2, and every delivered message's send before
    the send of every message still waiting for that queue.
    """
    succ, send_at = event_graph(h)
    edges: dict[tuple[int, int], dict[tuple[int, int], str]] = {
        node: dict.fromkeys(children, "order") for node, children in succ.items()
    }
    for q in range(len(h.peers)):
        consumed = [e.arg for e in h.logs[q] if e.kind in (DELIVER, DROP)]
        for m1, m2 in zip(consumed, consumed[1:]):
            if m1 in send_at and m2 in send_at and m1 != m2:
                edges[send_at[m1]].setdefault(send_at[m2], f"queue:{q}")
        if consumed and q not in h.failed and consumed[-1] in send_at:
            last = send_at[consumed[-1]]
            done = set(consumed)
            for msg in h.messages.values():
                if q in msg.dests and msg.id not in done and msg.id in send_at:
                    if send_at[msg.id] != last:
                        edges[last].setdefault(send_at[msg.id], f"waiting:{q}")
    return edges


def lock_graph(h: History) -> nx.DiGraph:
    """:func:`lock_edges` as a networkx graph; each edge's reason is its ``why``."""
    g = nx.DiGraph()
    for node, children in lock_edges(h).items():
        g.add_node(node)
        for child, why in children.items():
            g.add_edge(node, child, why=why)
    return g


def _lock_acyclic(h: History) -> bool:
    """Whether :func:`lock_edges`'s graph is acyclic, without building it (the hot path).

    Events are numbered peer by peer; the edges are those of :func:`lock_edges`, the
    same ones, as integer lists; Kahn's algorithm removes sources until none is left.
    """
    logs = h.logs
    start = []
    total = 0
    for log in logs:
        start.append(total)
        total += len(log)
    succ: list[list[int]] = [[] for _ in range(total)]
    indegree = [0] * total
    send_at: dict[int, int] = {}
    outs: dict[tuple[int, int], list[int]] = {}
    ins: dict[tuple[int, int], list[int]] = {}
    for p, log in enumerate(logs):
        base = start[p]
        for i, (kind, arg) in enumerate(log):
            node = base + i
            if i:
                succ[node - 1].append(node)
                indegree[node] += 1
            if kind == SEND:
                send_at[arg] = node
            elif kind == SIGNAL_OUT:
                outs.setdefault((p, arg), []).append(node)
            elif kind == SIGNAL_IN:
                ins.setdefault((arg, p), []).append(node)
    extra: set[tuple[int, int]] = set()  # edges beyond program order, without repeats
    for p, log in enumerate(logs):
        base = start[p]
        consumed = []
        for i, (kind, arg) in enumerate(log):
            if kind == DELIVER:
                if arg in send_at:
                    extra.add((send_at[arg], base + i))
                consumed.append(arg)
            elif kind == DROP:
                consumed.append(arg)
        for m1, m2 in zip(consumed, consumed[1:]):
            if m1 in send_at and m2 in send_at and m1 != m2:
                extra.add((send_at[m1], send_at[m2]))
        if consumed and p not in h.failed and consumed[-1] in send_at:
            last = send_at[consumed[-1]]
            done = set(consumed)
            for msg in h.messages.values():
                if p in msg.dests and msg.id not in done and msg.id in send_at:
                    extra.add((last, send_at[msg.id]))
    for pair, out_nodes in outs.items():
        for a, b in zip(out_nodes, ins.get(pair, ())):
            extra.add((a, b))
    for a, b in extra:
        if b != a + 1 or _peer_of(start, a) != _peer_of(start, b):
            succ[a].append(b)
            indegree[b] += 1
    ready = [n for n in range(total) if not indegree[n]]
    removed = 0
    while ready:
        node = ready.pop()
        removed += 1
        for child in succ[node]:
            indegree[child] -= 1
            if not indegree[child]:
                ready.append(child)
    return removed == total


def _peer_of(start: list[int], node: int) -> int:
    p = len(start) - 1
    while start[p] > node:
        p -= 1
    return p


def global_lock(h: History) -> str | None:
    """The run could have happened with one global lock (DESIGN.md's graph is acyclic)."""
    if _lock_acyclic(h):
        return None
    g = lock_graph(h)
    cycle = nx.find_cycle(g)
    steps = [_edge_phrase(h, g, u, v) for u, v, *_ in cycle]
    return "no single global lock can explain this run; it would need " + "; ".join(steps) + ", a cycle"


def _edge_phrase(h: History, g: nx.DiGraph, u: tuple[int, int], v: tuple[int, int]) -> str:
    why = g.edges[u, v]["why"]
    eu, ev = h.logs[u[0]][u[1]], h.logs[v[0]][v[1]]
    if why.startswith("queue:") or why.startswith("waiting:"):
        q = h.name(int(why.split(":")[1]))
        a, b = h.messages[eu.arg].name, h.messages[ev.arg].name
        if why.startswith("queue:"):
            return f"{a} sent before {b} (peer {q} received {a} first)"
        return f"{a} sent before {b} (peer {q} received {a} and still waits for {b})"
    pu, pv = h.name(u[0]), h.name(v[0])
    if eu.kind == SEND and ev.kind in (DELIVER, DROP) and ev.arg == eu.arg:
        return f"{h.messages[eu.arg].name} sent before {pv} received it"
    if eu.kind == SIGNAL_OUT and ev.kind == SIGNAL_IN:
        return f"{pu} signalled {pv}"
    return f"{_short(h, u[0], eu)} before {_short(h, v[0], ev)}"


def _short(h: History, peer: int, ev) -> str:
    who = h.name(peer)
    if ev.kind == SEND:
        return f"{who} sent {h.message_label(ev.arg)}"
    if ev.kind == DELIVER:
        return f"{who} received {h.message_label(ev.arg)}"
    if ev.kind == DROP:
        return f"{who} dropped {h.message_label(ev.arg)}"
    if ev.kind == SIGNAL_OUT:
        return f"{who} signalled {h.name(ev.arg)}"
    if ev.kind == SIGNAL_IN:
        return f"{who} got a signal from {h.name(ev.arg)}"
    return f"{who} event {ev.kind_name}"


def crown_edges(h: History) -> dict[int, dict[int, tuple[int, int]]]:
    """The relation a crown is a cycle of: ``m1 -> m2`` when send(m1) happened before a
    receipt of ``m2`` (``m1 != m2``), with the delivery event ``(peer, index)`` reached.

    Happened-before is :func:`~specs.history.event_graph`'s: program order, each send to
    each delivery of its message, and side-channel signals. For a multicast ``m2`` any
    of its deliveries counts.
    """
    succ, send_at = event_graph(h)
    receipts: dict[tuple[int, int], int] = {}
    for p, log in enumerate(h.logs):
        for i, ev in enumerate(log):
            if ev.kind == DELIVER:
                receipts[(p, i)] = ev.arg
    edges: dict[int, dict[int, tuple[int, int]]] = {}
    for m1, start in sorted(send_at.items()):
        out: dict[int, tuple[int, int]] = {}
        seen = {start}
        todo = [start]
        while todo:
            node = todo.pop()
            m2 = receipts.get(node)
            if m2 is not None and m2 != m1 and m2 not in out:
                out[m2] = node
            for child in succ.get(node, ()):
                if child not in seen:
                    seen.add(child)
                    todo.append(child)
        edges[m1] = out
    return edges


def synchronous(h: History) -> str | None:
    """No crown: "send(m1) happened before the receipt of m2" is acyclic over distinct
    messages, so the run could have happened with every message instantaneous."""
    edges = crown_edges(h)
    cycle = _shortest_cycle(edges)
    if cycle is None:
        return None
    steps = []
    for m1, m2 in zip(cycle, cycle[1:] + cycle[:1]):
        p, _i = edges[m1][m2]
        a, b = h.messages[m1], h.messages[m2]
        steps.append(f"{h.name(a.sender)} sent {a.name} before {h.name(p)} received {b.name}")
    names = ", ".join(h.messages[m].name for m in cycle)
    return (
        f"messages {names} form a crown, so they cannot all have been instantaneous: "
        + "; ".join(steps)
    )


def _shortest_cycle(edges: dict[int, dict[int, tuple[int, int]]]) -> list[int] | None:
    """A shortest cycle of ``edges`` (as its nodes, smallest id first), or ``None``."""
    best: list[int] | None = None
    for start in sorted(edges):
        parent: dict[int, int | None] = {start: None}
        frontier = [start]
        found = None
        while frontier and found is None:
            nxt = []
            for node in frontier:
                for child in sorted(edges.get(node, {})):
                    if child == start:
                        found = node
                        break
                    if child not in parent and child > start:
                        parent[child] = node
                        nxt.append(child)
                if found is not None:
                    break
            frontier = nxt
        if found is None:
            continue
        path = []
        node: int | None = found
        while node is not None:
            path.append(node)
            node = parent[node]
        path.reverse()
        if best is None or len(path) < len(best):
            best = path
    return best


def eventual_delivery(h: History) -> str | None:
    """What is still undelivered: every message to a live destination must be delivered
    or dropped with a reason. ``None`` once nothing is outstanding."""
    return _sentence(h, EventualDelivery)


# Which appended events can change a verdict (Property.changed_by). fifo, causal and the
# total orders compare deliveries, and a message's causal past and destinations are
# fixed when it is sent, so only a delivery can break them (a drop only satisfies later
# deliveries; a new message's send adds a message nobody has delivered). integrity also
# reads drops. In global_lock's graph a new message's send, and a signal's two events,
# are new nodes with edges only into them (program order, the signal's own edge,
# "waiting" edges to the new send) and so cannot close a cycle; deliveries and drops add
# queue edges between old nodes.
_DELIVERIES = ("deliver",)
FIFO = Property.always(
    "fifo", fifo, over="history", doc=fifo.__doc__ or "", stable=True, changed_by=_DELIVERIES, monitor=FifoGrown,
)
CAUSAL = Property.always(
    "causal", causal, over="history", doc=causal.__doc__ or "", stable=True, changed_by=_DELIVERIES, monitor=CausalPast,
)
INTEGRITY = Property.always(
    "integrity", integrity, over="history", doc=integrity.__doc__ or "", stable=True, changed_by=("deliver", "drop"),
    monitor=Integrity,
)
TOTAL = Property.always(
    "total", total, over="history", doc=total.__doc__ or "", stable=True, changed_by=_DELIVERIES, monitor=Total,
)
TOTAL_GLOBAL = Property.always(
    "total_global", total_global, over="history", doc=total_global.__doc__ or "", stable=True, changed_by=_DELIVERIES,
    monitor=TotalGlobal,
)
TOTAL_PREFIX = Property.always(
    "total_prefix", total_prefix, over="history", doc=total_prefix.__doc__ or "", stable=True, changed_by=_DELIVERIES,
    monitor=TotalPrefix,
)
GLOBAL_LOCK = Property.always(
    "global_lock", global_lock, over="history", doc=global_lock.__doc__ or "", stable=True,
    changed_by=("deliver", "drop", "fail", "restart"),
)
EVENTUAL_DELIVERY = Property.eventually(
    "eventual_delivery",
    eventual_delivery,
    over="history",
    doc="every message sent to a live destination is eventually delivered or dropped with a reason",
    monitor=EventualDelivery,
)
SYNCHRONOUS = Property.always("synchronous", synchronous, over="history", doc=synchronous.__doc__ or "")

# The always-properties above but synchronous are ``stable``: a history only grows (logs
# are appended to, messages added), and each violation names events already in it, which
# stay. fifo and causal: the delivery made while a predecessor was unconsumed stays where
# it is; integrity: a repeat, a misaddressed delivery and a happened-before cycle stay
# (a delivery of a message never sent is the one exception in principle, but a spec's
# history introduces a message together with its send, so it cannot arise in a search);
# the total orders: two first deliveries in conflicting orders stay so; global_lock: an
# edge to a still-waiting message becomes a path through the deliveries that follow.
# Partial-order reduction relies on this (checker.engine.reduce).

LIBRARY: tuple[Property, ...] = (
    FIFO, CAUSAL, INTEGRITY, TOTAL, TOTAL_GLOBAL, TOTAL_PREFIX, GLOBAL_LOCK, EVENTUAL_DELIVERY, SYNCHRONOUS,
)
"""The shared ordering properties, in the order reports list them."""

__all__ = [
    "LIBRARY",
    "causal",
    "crown_edges",
    "delivery_orders",
    "eventual_delivery",
    "fifo",
    "global_lock",
    "integrity",
    "lock_edges",
    "lock_graph",
    "premature_delivery",
    "synchronous",
    "total",
    "total_global",
    "total_prefix",
    "SEND",
]

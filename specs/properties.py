"""The ordering properties every spec shares, decided on a :class:`History`.

Each check returns ``None`` when the history satisfies the property and otherwise one
sentence naming the messages and peers involved. The names are the contract of
DESIGN.md: ``fifo``, ``causal``, ``total``, ``global_lock``, ``eventual_delivery``,
``synchronous``.

Safety properties speak of deliveries that happened: "q delivered m2 before m1" needs
both deliveries in q's log. A message that is never delivered at all is the business
of ``eventual_delivery``.
"""

from __future__ import annotations

import networkx as nx

from checker import Property
from specs.history import DELIVER, DROP, SEND, SIGNAL_IN, SIGNAL_OUT, History, event_graph


def fifo(h: History) -> str | None:
    """For each sender and receiver, deliveries follow send order."""
    for q in range(len(h.peers)):
        latest: dict[int, int] = {}  # sender -> id of the highest-seq message delivered
        for mid in h.deliveries(q):
            msg = h.messages[mid]
            prev = latest.get(msg.sender)
            if prev is not None and h.messages[prev].seq > msg.seq:
                later = h.messages[prev]
                return (
                    f"peer {h.name(q)} received {later.name} before {msg.name}, although "
                    f"{h.name(msg.sender)} sent {msg.name} first"
                )
            if prev is None or h.messages[prev].seq < msg.seq:
                latest[msg.sender] = mid
    return None


def causal(h: History) -> str | None:
    """If m1 is in the causal past of m2 and q receives both, q delivers m1 first."""
    for q in range(len(h.peers)):
        order = h.deliveries(q)
        position = {mid: i for i, mid in enumerate(order)}
        for i, m2 in enumerate(order):
            for m1 in sorted(h.messages[m2].past):
                if position.get(m1, -1) > i:
                    a, b = h.messages[m1].name, h.messages[m2].name
                    chain = h.happened_before_path(m1, m2)
                    why = f": {', '.join(chain)}" if chain else ""
                    return (
                        f"peer {h.name(q)} received {b} before {a}, although {a} happened "
                        f"before {b}{why}"
                    )
    return None


def total(h: History) -> str | None:
    """Any two peers that both deliver m1 and m2 deliver them in the same order."""
    orders = [h.deliveries(q) for q in range(len(h.peers))]
    for p in range(len(orders)):
        for q in range(p + 1, len(orders)):
            common = set(orders[p]) & set(orders[q])
            if len(common) < 2:
                continue
            seq_p = [m for m in orders[p] if m in common]
            seq_q = [m for m in orders[q] if m in common]
            if seq_p == seq_q:
                continue
            for x, y in zip(seq_p, seq_q):
                if x != y:
                    mx, my = h.messages[x].name, h.messages[y].name
                    return (
                        f"peers {h.name(p)} and {h.name(q)} received {mx} and {my} in "
                        f"different orders: {h.name(p)} got {mx} first, {h.name(q)} got "
                        f"{my} first"
                    )
    return None


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
        return f"{who} sent {h.messages[ev.arg].name}"
    if ev.kind == DELIVER:
        return f"{who} received {h.messages[ev.arg].name}"
    if ev.kind == DROP:
        return f"{who} dropped {h.messages[ev.arg].name}"
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
    missing = []
    for msg in h.sent_messages():
        for q in sorted(msg.dests):
            if q in h.failed:
                continue
            log = h.logs[q]
            if not any(e.arg == msg.id and e.kind in (DELIVER, DROP) for e in log):
                missing.append(f"{msg.name} to {h.name(q)}")
    if not missing:
        return None
    if len(missing) == 1:
        return f"{missing[0]} is never delivered"
    return f"{', '.join(missing[:-1])} and {missing[-1]} are never delivered"


# Which appended events can change a verdict (Property.changed_by). fifo, causal and
# total compare deliveries, and a message's causal past is fixed when it is sent, so
# only a delivery can break them. In global_lock's graph a new message's send, and a
# signal's two events, are new nodes with edges only into them (program order, the
# signal's own edge, "waiting" edges to the new send) and so cannot close a cycle;
# deliveries and drops add queue edges between old nodes.
_DELIVERIES = ("deliver",)
FIFO = Property.always("fifo", fifo, over="history", doc=fifo.__doc__ or "", stable=True, changed_by=_DELIVERIES)
CAUSAL = Property.always("causal", causal, over="history", doc=causal.__doc__ or "", stable=True, changed_by=_DELIVERIES)
TOTAL = Property.always("total", total, over="history", doc=total.__doc__ or "", stable=True, changed_by=_DELIVERIES)
GLOBAL_LOCK = Property.always(
    "global_lock", global_lock, over="history", doc=global_lock.__doc__ or "", stable=True,
    changed_by=("deliver", "drop", "fail", "restart"),
)
EVENTUAL_DELIVERY = Property.eventually(
    "eventual_delivery",
    eventual_delivery,
    over="history",
    doc="every message sent to a live destination is eventually delivered or dropped with a reason",
)
SYNCHRONOUS = Property.always("synchronous", synchronous, over="history", doc=synchronous.__doc__ or "")

# fifo, causal, total and global_lock are ``stable``: a history only grows (logs are
# appended to, messages added), and each violation names events already in it, which
# stay (for global_lock, an edge to a still-waiting message becomes a path through the
# deliveries that follow). Partial-order reduction relies on this (checker.engine.reduce).

LIBRARY: tuple[Property, ...] = (FIFO, CAUSAL, TOTAL, GLOBAL_LOCK, EVENTUAL_DELIVERY, SYNCHRONOUS)
"""The shared ordering properties, in the order reports list them."""

__all__ = [
    "LIBRARY",
    "causal",
    "crown_edges",
    "eventual_delivery",
    "fifo",
    "global_lock",
    "lock_edges",
    "lock_graph",
    "synchronous",
    "total",
    "SEND",
]

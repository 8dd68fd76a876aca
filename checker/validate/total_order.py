"""The three total-order properties on a log: ``total``, ``total_global``, ``total_prefix``.

The property library's definitions, over each peer's delivery order (a message's first
delivery at a peer; repeated deliveries are ``integrity``'s business, as are messages
never sent):

- ``total`` (pairwise): any two peers that both deliver m1 and m2 deliver them in the
  same relative order. One pass keeps, for each ordered pair of peers (p, q), the
  latest position at q of a message both have delivered; when p delivers m, which q
  delivered at position j, the pair disagrees exactly when that latest position is
  past j. O(Σ deliveries of a message²) = O(events × peers).
- ``total_global``: the union of all peers' delivery orders is acyclic (one order of
  all messages explains every peer). The union's edges are each peer's consecutive
  deliveries; a topological sort decides it in O(events). The first violation is the
  delivery that closes the first cycle, found by binary search over prefixes
  (O(events × log events), paid only when the log is violated), with a shortest cycle
  through it.
- ``total_prefix``: for any two peers, the sequences of the messages addressed to both
  that each delivered are such that one is a prefix of the other. For each pair, the
  peer that is ahead leaves its unmatched deliveries in a queue the other consumes:
  O(events × destinations), memory the largest lead.
"""

from __future__ import annotations

from collections import deque

from checker.validate.log import DELIVER, Log
from checker.validate.violation import Violation, chain


def _first_deliveries(log: Log):
    """``(event, peer, message)`` of each message's first delivery at each peer, for
    messages sent earlier in the log."""
    kinds, peers, args, msg_send = log.kind, log.peer, log.arg, log.msg_send
    got = [0] * log.messages
    for i in range(len(kinds)):
        if kinds[i] != DELIVER:
            continue
        m = args[i]
        s = msg_send[m]
        if s < 0 or s > i:
            continue
        bit = 1 << peers[i]
        if got[m] & bit:
            continue
        got[m] |= bit
        yield i, peers[i], m


def total(log: Log) -> Violation | None:
    """The first delivery at which two peers have delivered two messages in opposite
    orders; ``None`` if there is none."""
    n = len(log.peers)
    at: list[dict[int, int] | None] = [None] * log.messages  # message -> {peer: event}
    latest: list[tuple[int, int] | None] = [None] * (n * n)  # (p, q) -> (event at q, message)
    for i, p, m in _first_deliveries(log):
        where = at[m]
        if where is None:
            at[m] = {p: i}
            continue
        for q, jq in where.items():
            key = p * n + q
            best = latest[key]
            if best is not None and best[0] > jq:
                m1 = best[1]
                at1 = at[m1]
                assert at1 is not None
                ip1 = at1[p]
                events = sorted({log.msg_send[m1], log.msg_send[m], ip1, i, jq, best[0]})
                a, b, pn, qn = log.msg_name[m1], log.msg_name[m], log.peers[p], log.peers[q]
                sentence = (
                    f"{pn} and {qn} delivered {a} and {b} in different orders: {pn} delivered {a} "
                    f"({log.at(ip1)}) before {b} ({log.at(i)}), {qn} delivered {b} "
                    f"({log.at(jq)}) before {a} ({log.at(best[0])})"
                )
                return Violation("total", i, sentence, tuple(events), (ip1, i, jq, best[0]))
            if best is None or jq > best[0]:
                latest[key] = (jq, m)
            latest[q * n + p] = (i, m)
        where[p] = i
    return None


def _order_edges(log: Log) -> list[tuple[int, int, int, int]]:
    """Each peer's consecutive deliveries ``(m1, m2, event of m1, event of m2)``, in log order."""
    last: dict[int, tuple[int, int]] = {}
    edges = []
    for i, p, m in _first_deliveries(log):
        before = last.get(p)
        if before is not None:
            edges.append((before[1], m, before[0], i))
        last[p] = (i, m)
    return edges


def _acyclic(edges: list[tuple[int, int, int, int]], count: int, messages: int) -> bool:
    """Whether the first ``count`` edges form an acyclic graph (Kahn's algorithm)."""
    succ: dict[int, list[int]] = {}
    indegree = [0] * messages
    for e in range(count):
        a, b = edges[e][0], edges[e][1]
        succ.setdefault(a, []).append(b)
        indegree[b] += 1
    ready = [a for a in succ if not indegree[a]]
    removed = 0
    while ready:
        node = ready.pop()
        removed += 1
        for child in succ.get(node, ()):
            indegree[child] -= 1
            if not indegree[child]:
                ready.append(child)
    nodes = set(succ)
    for e in range(count):
        nodes.add(edges[e][1])
    return removed == len(nodes)


def total_global(log: Log) -> Violation | None:
    """The first delivery that closes a cycle in the union of the peers' delivery
    orders; ``None`` if the union is acyclic."""
    edges = _order_edges(log)
    if _acyclic(edges, len(edges), log.messages):
        return None
    lo, hi = 0, len(edges)  # edges[:lo] acyclic, edges[:hi] cyclic
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _acyclic(edges, mid, log.messages):
            lo = mid
        else:
            hi = mid
    closing = edges[hi - 1]
    cycle = _shortest_path(edges[: hi - 1], closing[1], closing[0])
    used = [closing, *cycle]
    events: set[int] = set()
    steps = []
    for a, b, ea, eb in used:
        events |= {ea, eb, log.msg_send[a], log.msg_send[b]}
        who = log.peers[log.peer[eb]]
        steps.append(f"{who} delivered {log.msg_name[a]} ({log.at(ea)}) before {log.msg_name[b]} ({log.at(eb)})")
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


def total_prefix(log: Log) -> Violation | None:
    """The first delivery after which, for two peers, neither's sequence of delivered
    messages addressed to both is a prefix of the other's; ``None`` if there is none."""
    n = len(log.peers)
    dests = log.msg_dests
    pairs: dict[int, tuple[int, deque[tuple[int, int]], list[int]]] = {}  # leader, its unmatched, [matched]
    for i, p, m in _first_deliveries(log):
        ds = dests[m]
        if p not in ds:
            continue
        for q in ds:
            if q == p:
                continue
            key = p * n + q if p < q else q * n + p
            state = pairs.get(key)
            if state is None:
                pairs[key] = (p, deque([(m, i)]), [0])
                continue
            leader, queue, matched = state
            if not queue or leader == p:
                if leader != p:
                    pairs[key] = (p, queue, matched)
                queue.append((m, i))
                continue
            other, j = queue.popleft()
            if other != m:
                pos = matched[0] + 1
                pn, qn = log.peers[p], log.peers[q]
                a, b = log.msg_name[m], log.msg_name[other]
                sentence = (
                    f"{pn} and {qn} deliver different messages as their message number {pos} addressed to both: "
                    f"{qn} delivered {b} ({log.at(j)}), {pn} delivered {a} ({log.at(i)}): "
                    f"{chain(log, sorted({log.msg_send[m], log.msg_send[other], j, i}))}"
                )
                events = tuple(sorted({log.msg_send[m], log.msg_send[other], j, i}))
                return Violation("total_prefix", i, sentence, events, (j, i))
            matched[0] += 1
    return None


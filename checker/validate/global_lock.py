"""``global_lock`` on a log: could the run have happened under one global lock?

The property library's definition (:func:`specs.properties.lock_edges`), read on each
prefix of the log: the graph whose nodes are the events and whose edges are each
peer's program order, each signal to its receipt (paired by
:func:`~checker.validate.log.signal_sources`), each send to each delivery of its message, and
for each receiving peer q, send(m1) -> send(m2) when q consumed (delivered or dropped)
m1 and next m2, and send(m1) -> send(m) for q's last consumed m1 and every message m
addressed to q that q has not consumed (unless q is down: its last ``fail`` has no
``restart`` after it), must be acyclic. A message counts as sent in a prefix when its
send is in the prefix.

**Algorithm.** One prefix is decided by building that graph as integer lists and
removing sources (Kahn): O(events + destinations still waiting). Growing the prefix
only adds edges or replaces an edge send(m1) -> send(m) by the path through q's later
consumptions, so a cycle, once there, stays, except across two kinds of events that
remove edges: a ``fail`` (its peer's waiting edges go) and a consumption of a message
not yet sent (it becomes q's last, with no send to start waiting edges from). The
first violation is found by :func:`~checker.validate.prefix_search.first_violated_length`:
one pass for a log that holds, O(v log v) more for a violation at event v, and one
pass more per such edge-removing event before it.
"""

from __future__ import annotations

from collections import deque

from checker.validate.log import DELIVER, DROP, FAIL, RESTART, SEND, Log, signal_sources
from checker.validate.prefix_search import first_violated_length
from checker.validate.violation import Violation

ORDER, HB, SIGNAL, QUEUE, WAITING = range(5)


def _edges(log: Log, end: int, *, reasons: bool = False) -> tuple[list[list[int]], dict[tuple[int, int], tuple[int, int]]]:
    """The lock graph of the prefix of ``end`` events: successor lists, and with
    ``reasons`` each edge's ``(kind, witness)``: the consuming event behind a QUEUE or
    WAITING edge (the second consumption, or the last one), else -1."""
    kinds, peers, args, msg_send, dests = log.kind, log.peer, log.arg, log.msg_send, log.msg_dests
    succ: list[list[int]] = [[] for _ in range(end)]
    why: dict[tuple[int, int], tuple[int, int]] = {}
    last: dict[int, int] = {}
    consumed: dict[int, list[tuple[int, int]]] = {}  # peer -> (message, event)
    down: set[int] = set()
    sent_msgs: list[int] = []

    def add(a: int, b: int, kind: int, witness: int = -1) -> None:
        if reasons:
            if (a, b) in why:
                return
            why[(a, b)] = (kind, witness)
        succ[a].append(b)

    for i in range(end):
        p, k, a = peers[i], kinds[i], args[i]
        before = last.get(p)
        if before is not None:
            add(before, i, ORDER)
        last[p] = i
        if k == SEND:
            if msg_send[a] == i:
                sent_msgs.append(a)
        elif k == DELIVER or k == DROP:
            s = msg_send[a]
            if k == DELIVER and 0 <= s < end:
                add(s, i, HB)
            consumed.setdefault(p, []).append((a, i))
        elif k == FAIL:
            down.add(p)
        elif k == RESTART:
            down.discard(p)
    for y, x in signal_sources(log).items():
        if x < end and y < end:
            add(x, y, SIGNAL)
    waiting: dict[int, list[int]] = {}  # peer -> messages addressed to it, sent in the prefix
    for m in sent_msgs:
        for d in dests[m]:
            waiting.setdefault(d, []).append(m)
    for q, seq in consumed.items():
        for (m1, _e1), (m2, e2) in zip(seq, seq[1:]):
            s1, s2 = msg_send[m1], msg_send[m2]
            if m1 != m2 and 0 <= s1 < end and 0 <= s2 < end:
                add(s1, s2, QUEUE, e2)
        m_last, e_last = seq[-1]
        s_last = msg_send[m_last]
        if q in down or not 0 <= s_last < end:
            continue
        done = {m for m, _e in seq}
        for m in waiting.get(q, ()):
            if m not in done and msg_send[m] != s_last:
                add(s_last, msg_send[m], WAITING, e_last)
    return succ, why


def _cyclic(succ: list[list[int]]) -> bool:
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


def _breaks(log: Log) -> list[int]:
    """The events after which a cycle may disappear: ``fail``, and consumptions of a
    message whose send is not before them."""
    out = []
    for i in range(len(log)):
        k = log.kind[i]
        if k == FAIL:
            out.append(i)
        elif (k == DELIVER or k == DROP) and not 0 <= log.msg_send[log.arg[i]] < i:
            out.append(i)
    return out


def global_lock(log: Log) -> Violation | None:
    """The first event after which the lock graph of the log's prefix has a cycle,
    with a shortest cycle through an edge that event added; ``None`` if every prefix's
    graph is acyclic."""
    length = first_violated_length(lambda n: _cyclic(_edges(log, n)[0]), len(log), _breaks(log))
    if length is None:
        return None
    at = length - 1
    succ, why = _edges(log, length, reasons=True)
    _before, old = _edges(log, at, reasons=True)
    new = [edge for edge in why if edge not in old]
    cycle = _shortest_cycle(succ, new)
    return _violation(log, at, cycle, why)


def _shortest_cycle(succ: list[list[int]], new: list[tuple[int, int]]) -> list[int]:
    """The nodes of a shortest cycle through one of the ``new`` edges (breadth first
    from each edge's head back to its tail), starting at that edge's head."""
    best: list[int] | None = None
    for a, b in new:
        parent = {b: -1}
        todo = deque([b])
        while todo and a not in parent:
            node = todo.popleft()
            for c in succ[node]:
                if c not in parent:
                    parent[c] = node
                    todo.append(c)
        if a not in parent:
            continue
        path = []
        node = a
        while node != -1:
            path.append(node)
            node = parent[node]
        path.reverse()
        if best is None or len(path) < len(best):
            best = path
    assert best is not None  # the prefix before had no cycle, so one goes through a new edge
    return best


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
            steps.append(f"{a} sent before {b} ({log.peers[q]} consumed {a} on {log.at(first)}, "
                         f"then {b} on {log.at(witness)})")
        elif kind == WAITING:
            q = log.peer[witness]
            kept.add(witness)
            offending.add(witness)
            a, b = log.msg_name[log.arg[u]], log.msg_name[log.arg[v]]
            steps.append(f"{a} sent before {b} ({log.peers[q]} consumed {a} last, on {log.at(witness)}, "
                         f"and still waits for {b})")
        elif kind == HB:
            offending.add(v)
            steps.append(f"{log.msg_name[log.arg[u]]} sent ({log.at(u)}) before {log.peers[log.peer[v]]} "
                         f"received it ({log.at(v)})")
        elif kind == SIGNAL:
            where = log.at(u) if log.at(u) == log.at(v) else f"{log.at(u)}, {log.at(v)}"
            steps.append(f"{log.peers[log.peer[u]]} signalled {log.peers[log.peer[v]]} ({where})")
        else:
            steps.append(f"{log.where(u)} before {log.where(v)}")
    # program-order runs keep their two ends: the events where the cycle changes peer
    steps = _merge_order_steps(log, pairs, why, steps)
    sentence = ("no single global lock can explain the run up to " + log.at(at) + "; it would need "
                + "; ".join(steps) + ", a cycle")
    return Violation("global_lock", at, sentence, tuple(sorted(kept)), tuple(sorted(offending)))


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

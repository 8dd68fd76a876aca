"""``synchronous`` on a log: no crown, so every message could have been instantaneous.

The property library's definition (:func:`specs.properties.synchronous`): the relation
m1 -> m2 when m1's send happened before a delivery of m2 (``m1 != m2``; happened-before
is program order, each send to each delivery of its message and each signal to its
receipt) has no cycle. Read on each prefix of the log, with happened-before as the
log's order gives it: a delivery's past is what came before it, so a delivery that
comes before its message's send (``integrity``'s violation) has no edge from that send,
and a signal's receipt is matched with its signal
(:func:`~checker.validate.log.signal_sources`) when that comes before it.

**Algorithm.** One pass of vector clocks over sends (as for ``causal``) gives each
delivery's past; m1 -> m2 exactly when m1's sequence number at its sender s is below
B(m2)[s], the largest clock entry s among m2's deliveries. The messages with an edge
into m2 from one sender are thus a prefix of that sender's sends, so the relation is
a graph of O(messages x peers) edges through one chain of "first k sends of s" nodes
per sender, acyclic exactly when there is no crown. Sends of m2's own sender after m2
with an edge into m2 are the one exception: any of them that is delivered closes a
crown of two with m2 at once. Growing the prefix only adds edges, so the first crown
is found by galloping over prefixes (:func:`~checker.validate.prefix_search.first_true`):
O(events x peers) for a log that holds, O(v log v x peers) for a crown at event v.
"""

from __future__ import annotations

from collections import deque

from checker.validate.causal_order import happened_before
from checker.validate.log import DELIVER, SEND, SIGNAL_IN, SIGNAL_OUT, Log, signal_sources
from checker.validate.prefix_search import first_true
from checker.validate.violation import Violation


def _bounds(log: Log, end: int, *, keep: bool = False) -> tuple[dict[int, list[int]], list[tuple[int, list[int]]]]:
    """For the prefix of ``end`` events: B(m) of every delivered message (the
    componentwise maximum of the clocks of its deliveries, counting sends per peer),
    and with ``keep`` each delivery's ``(event, clock)``."""
    n = len(log.peers)
    kinds, peers, args, msg_send, sender, seq = log.kind, log.peer, log.arg, log.msg_send, log.msg_sender, log.msg_seq
    clock = [[0] * n for _ in range(n)]
    at_send: dict[int, list[int]] = {}
    source = signal_sources(log)
    signals: dict[int, list[int]] = {}  # signal event -> its sender's clock, until received
    bound: dict[int, list[int]] = {}
    kept: list[tuple[int, list[int]]] = []
    senders = range(n)
    for i in range(end):
        k, p = kinds[i], peers[i]
        if k == SEND:
            m = args[i]
            mine = clock[p]
            if msg_send[m] == i:
                at_send[m] = mine[:]
            mine[p] += 1
        elif k == DELIVER:
            m = args[i]
            past = at_send.get(m)
            if past is None:
                continue  # never sent, or sent later: integrity's business
            mine = clock[p]
            for s in senders:
                if past[s] > mine[s]:
                    mine[s] = past[s]
            if seq[m] + 1 > mine[sender[m]]:
                mine[sender[m]] = seq[m] + 1
            b = bound.get(m)
            if b is None:
                bound[m] = mine[:]
            else:
                for s in senders:
                    if mine[s] > b[s]:
                        b[s] = mine[s]
            if keep:
                kept.append((i, mine[:]))
        elif k == SIGNAL_OUT:
            signals[i] = clock[p][:]
        elif k == SIGNAL_IN:
            theirs = signals.pop(source.get(i, -1), None)
            if theirs is not None:
                mine = clock[p]
                for s in senders:
                    if theirs[s] > mine[s]:
                        mine[s] = theirs[s]
    return bound, kept


def _sends_by_peer(log: Log, end: int) -> list[list[int]]:
    """Each peer's messages sent in the prefix, in sequence order (index = ``msg_seq``)."""
    out: list[list[int]] = [[] for _ in log.peers]
    for i in range(end):
        if log.kind[i] == SEND and log.msg_send[log.arg[i]] == i:
            out[log.peer[i]].append(log.arg[i])
    return out


def _has_crown(log: Log, end: int) -> bool:
    bound, _ = _bounds(log, end)
    if not bound:
        return False
    sends = _sends_by_peer(log, end)
    sender, seq = log.msg_sender, log.msg_seq
    n = len(log.peers)
    # nodes: messages (by index), then per peer s the chain node "first k sends of s", k >= 1
    base = log.messages
    offset = []
    total = base
    for s in range(n):
        offset.append(total)
        total += len(sends[s])
    succ: list[list[int]] = [[] for _ in range(total)]
    delivered_before: list[list[int]] = []  # per peer: delivered messages among its first k sends
    for s in range(n):
        acc = [0]
        for m in sends[s]:
            acc.append(acc[-1] + (m in bound))
        delivered_before.append(acc)
    for s in range(n):
        for k, m in enumerate(sends[s]):
            succ[m].append(offset[s] + k)  # m -> "first k+1 sends of s"
            if k:
                succ[offset[s] + k - 1].append(offset[s] + k)
    for m2, b in bound.items():
        s2 = sender[m2]
        for s in range(n):
            limit = b[s]
            if s == s2:
                acc = delivered_before[s]
                if acc[limit] - acc[seq[m2] + 1] > 0:
                    return True  # a later send of s2, delivered, happened before m2's delivery
                limit = seq[m2]
            if limit > 0:
                succ[offset[s] + limit - 1].append(m2)
    indegree = [0] * total
    for children in succ:
        for c in children:
            indegree[c] += 1
    ready = [x for x in range(total) if not indegree[x]]
    removed = 0
    while ready:
        x = ready.pop()
        removed += 1
        for c in succ[x]:
            indegree[c] -= 1
            if not indegree[c]:
                ready.append(c)
    return removed != total


def synchronous(log: Log) -> Violation | None:
    """The first delivery that closes a crown (a cycle of messages, each sent before a
    delivery of the next), with a shortest crown through that delivery; ``None`` if
    there is none."""
    length = first_true(lambda e: _has_crown(log, e), 1, len(log))
    if length is None:
        return None
    at = length - 1
    bound, kept = _bounds(log, length, keep=True)
    assert kept and kept[-1][0] == at  # only a delivery adds edges to the relation
    m_new = log.arg[at]
    cycle = _crown_through(log, bound, kept[-1][1], m_new)
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
    parent: dict[int, int] = {m_new: -1}
    todo = deque([m_new])
    while todo:
        m = todo.popleft()
        if m != m_new and seq[m] < clock_at[sender[m]]:
            path = []
            node = m
            while node != -1:
                path.append(node)
                node = parent[node]
            path.reverse()
            return path
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
        steps.append(f"{log.peers[sender[m1]]} sent {log.msg_name[m1]} ({log.at(msg_send[m1])}) before "
                     f"{log.peers[log.peer[d]]} received {log.msg_name[m2]} ({log.at(d)})")
    names = ", ".join(log.msg_name[m] for m in cycle)
    sentence = f"messages {names} form a crown, so they cannot all have been instantaneous: " + "; ".join(steps)
    return Violation("synchronous", at, sentence, tuple(sorted(events)), tuple(sorted(set(offending))))

"""``fifo`` and ``causal`` on a log, in one pass each: per-sender counters and vector clocks.

Both are prefix-safety properties (the property library's definitions): when peer p
delivers m2, every m1 that must precede m2 and is addressed to p has already been
delivered at p (or dropped there, as a protocol may do with a reason). For ``fifo``, m1 must precede m2 when the same peer sent m1 before m2;
for ``causal``, when m1's send happened before m2's send (program order, each send to
the deliveries of its message, each side-channel signal to its receipt). The
violation is at that delivery, whether or not m1 arrives later.

**Algorithm.** For every (sender s, destination p) pair the messages s addresses to
p, in send order, form a list; p's *front* in it is the first one p has not
delivered (or dropped) yet. The messages from s that must precede m2 are those sent before a bound
(``fifo``: m2's own sequence number; ``causal``: the vector clock of m2's send, entry
s, which counts s's sends in m2's causal past), so the check at a delivery is "each
front lies at or past its bound": one comparison per sender. Fronts only move forward,
so keeping them costs O(1) amortised per delivery. Time O(events × peers) for
``causal`` (vector clocks), O(events + destinations) for ``fifo``; memory O(messages ×
peers) for the clocks of sends.
"""

from __future__ import annotations

from collections import deque

from checker.validate.log import DELIVER, DROP, SEND, SIGNAL_IN, SIGNAL_OUT, Log, signal_sources
from checker.validate.violation import Violation, chain


def _was_sent(log: Log, m: int, i: int) -> bool:
    s = log.msg_send[m]
    return 0 <= s < i


def fifo(log: Log) -> Violation | None:
    """The first delivery of a message while an earlier message of the same sender,
    addressed to the same peer, is not yet delivered (or dropped) there; ``None`` if
    there is none.

    Deliveries of messages never sent (or sent later in the log) are left to
    ``integrity``.
    """
    n_peers = len(log.peers)
    kinds, peers, args = log.kind, log.peer, log.arg
    dests, sender, seq, msg_send = log.msg_dests, log.msg_sender, log.msg_seq, log.msg_send
    lists: list[list[int]] = [[] for _ in range(n_peers * n_peers)]  # (s, p) -> messages, in send order
    front = [0] * (n_peers * n_peers)
    got = [0] * log.messages  # bit p: p delivered the message
    for i in range(len(kinds)):
        k = kinds[i]
        if k == SEND:
            m = args[i]
            base = peers[i] * n_peers
            for d in dests[m]:
                lists[base + d].append(m)
        elif k == DROP:
            got[args[i]] |= 1 << peers[i]
        elif k == DELIVER:
            m = args[i]
            sent_at = msg_send[m]
            if sent_at < 0 or sent_at > i:
                continue
            p = peers[i]
            bit = 1 << p
            got[m] |= bit
            key = sender[m] * n_peers + p
            lst, j = lists[key], front[key]
            while j < len(lst) and got[lst[j]] & bit:
                j += 1
            front[key] = j
            if j < len(lst) and seq[lst[j]] < seq[m]:
                m1 = lst[j]
                return _violation(log, "fifo", i, m1, [msg_send[m1], sent_at, i],
                                  f"{log.msg_name[m1]}, which {log.peers[sender[m]]} sent before it")
    return None


def causal(log: Log) -> Violation | None:
    """The first delivery of a message m2 at p while a message m1 addressed to p, whose
    send happened before m2's send, is not yet delivered (or dropped) at p; ``None``
    if there is none."""
    n_peers = len(log.peers)
    kinds, peers, args = log.kind, log.peer, log.arg
    dests, sender, seq, msg_send = log.msg_dests, log.msg_sender, log.msg_seq, log.msg_send
    lists: list[list[int]] = [[] for _ in range(n_peers * n_peers)]
    front = [0] * (n_peers * n_peers)
    got = [0] * log.messages
    clock = [[0] * n_peers for _ in range(n_peers)]  # per peer: sends of each peer it knows of
    at_send: list[list[int] | None] = [None] * log.messages
    source = signal_sources(log)
    signals: dict[int, list[int]] = {}  # signal event -> its sender's clock, until received
    senders = range(n_peers)
    for i in range(len(kinds)):
        k = kinds[i]
        p = peers[i]
        if k == SEND:
            m = args[i]
            mine = clock[p]
            at_send[m] = mine[:]
            mine[p] += 1
            base = p * n_peers
            for d in dests[m]:
                lists[base + d].append(m)
        elif k == DROP:
            got[args[i]] |= 1 << p
        elif k == DELIVER:
            m = args[i]
            sent_at = msg_send[m]
            if sent_at < 0 or sent_at > i:
                continue
            bit = 1 << p
            got[m] |= bit
            s_m = sender[m]
            key = s_m * n_peers + p
            lst, j = lists[key], front[key]
            while j < len(lst) and got[lst[j]] & bit:
                j += 1
            front[key] = j
            past = at_send[m]
            assert past is not None
            for s in senders:
                bound = past[s]
                if not bound:
                    continue
                key = s * n_peers + p
                lst, j = lists[key], front[key]
                if j < len(lst) and seq[lst[j]] < bound:
                    # the front may be stale (p delivered it out of order): move it on
                    while j < len(lst) and got[lst[j]] & bit:
                        j += 1
                    front[key] = j
                    if j < len(lst) and seq[lst[j]] < bound:
                        m1 = lst[j]
                        path = happened_before(log, msg_send[m1], sent_at)
                        what = f"{log.msg_name[m1]}, which happened before it"
                        return _violation(log, "causal", i, m1, [*path, i], what)
            mine = clock[p]
            for s in senders:
                if past[s] > mine[s]:
                    mine[s] = past[s]
            if seq[m] + 1 > mine[s_m]:
                mine[s_m] = seq[m] + 1
        elif k == SIGNAL_OUT:
            signals[i] = clock[p][:]
        elif k == SIGNAL_IN:
            theirs = signals.pop(source.get(i, -1), None)
            if theirs is not None:
                mine = clock[p]
                for s in senders:
                    if theirs[s] > mine[s]:
                        mine[s] = theirs[s]
    return None


def _violation(log: Log, prop: str, i: int, m1: int, events: list[int], what: str) -> Violation:
    p = log.peer[i]
    m2 = log.arg[i]
    why = chain(log, sorted(set(events)))
    sentence = (
        f"{log.peers[p]} delivered {log.msg_name[m2]} ({log.at(i)}) while {what}, "
        f"had not been delivered there: {why}"
    )
    return Violation(prop, i, sentence, tuple(sorted(set(events))), (i,), ((m1, p),))


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

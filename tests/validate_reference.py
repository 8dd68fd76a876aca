"""A plain reference checker for recorded logs, written from docs/reference/properties.md
and docs/reference/log-format.md, for the differential test of ``validate``.

It reads the JSON Lines records itself and shares no code with ``checker`` (nor with
``tests/validate_oracle.py``, which goes through ``ordercheck.checker.validate.log``). Everything is
done the slow, obvious way: happened-before is a graph of events whose reachability is
computed from every node (a transitive closure), and each property is checked literally,
on every delivery or on every prefix. Quadratic and worse; meant for logs of a few dozen
events.

Events. A record is one event, except a one-line ``signal``, which is two: the signal at
``peer`` and its receipt at ``to``, paired with each other. A ``signal_in`` at q from p
is paired with a ``signal_out`` from p to q: the k-th ``signal_in`` at q from p with the
k-th ``signal_out`` from p to q (one-line signals take no part in this count).

Happened-before (strict): each peer's program order; a message's send to each delivery
of it that comes after the send in the log (a drop learns nothing: "what it delivered,
with those messages' pasts"); a signal to its receipt when the signal comes first in
the log.

Properties, each violated *at* the first event of the log after which it is broken:

- ``fifo``: at a delivery of m2 (sent earlier in the log) at q, some m1 with the same
  sender, sent before m2, addressed to q, not delivered or dropped at q before.
- ``causal``: the same, with "m1's send happened before m2's send".
- ``integrity``: a delivery or drop of m at q where m was not sent earlier in the log, q
  is not a destination of m, or q consumed m before; or a ``signal_out`` whose paired
  ``signal_in`` came earlier in the log.
- ``total``: two peers whose delivery orders (first deliveries of messages sent earlier
  in the log) put two messages in opposite orders.
- ``total_global``: the union of the delivery orders has a cycle.
- ``total_prefix``: two peers whose sequences of delivered messages addressed to both are
  not one a prefix of the other.
- ``synchronous``: messages with m1 -> m2 when m1 != m2 and m1's send happened before a
  delivery of m2 form a cycle.
- ``global_lock`` (docs/reference/log-format.md's table): the graph of the prefix's
  events with program order, each signal to its receipt, each send to each delivery of
  its message, send(m1) -> send(m2) when a peer consumed (delivered or dropped) m1 and
  next m2, and send(last message a peer consumed) -> send(m) for every message m
  addressed to that peer that it has not consumed, has a cycle. Only messages sent in
  the prefix take part; the graph has no order across peers but these edges, so a
  receipt recorded before its signal, or a delivery before its send, still gets the
  edge. (The logs here record no ``fail``, so no peer is down.)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

REFERENCE_PROPERTIES = ("fifo", "causal", "integrity", "total", "total_global", "total_prefix", "synchronous",
                        "global_lock")


@dataclass
class Ev:
    peer: str
    kind: str  # send | deliver | drop | out | in
    line: int
    msg: str | None = None
    other: str | None = None  # the other peer of a signal
    partner: int | None = None  # a signal's receipt / a receipt's signal (event index)


@dataclass
class Msg:
    sender: str
    dests: frozenset[str]
    send: int  # event index of its send


@dataclass
class RefLog:
    events: list[Ev] = field(default_factory=list)
    msgs: dict[str, Msg] = field(default_factory=dict)


def parse(text: str) -> RefLog:
    """The events of a JSON Lines log (header and blank lines skipped)."""
    log = RefLog()
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        rec: dict[str, Any] = json.loads(raw)
        if "format" in rec:
            continue
        kind, peer = rec["kind"], rec["peer"]
        ev = log.events
        if kind == "send":
            log.msgs[str(rec["msg"])] = Msg(peer, frozenset(rec["to"]), len(ev))
            ev.append(Ev(peer, "send", number, msg=str(rec["msg"])))
        elif kind in ("deliver", "drop"):
            ev.append(Ev(peer, kind, number, msg=str(rec["msg"])))
        elif kind == "signal":
            ev.append(Ev(peer, "out", number, other=rec["to"], partner=len(ev) + 1))
            ev.append(Ev(rec["to"], "in", number, other=peer, partner=len(ev) - 1))
        elif kind == "signal_out":
            ev.append(Ev(peer, "out", number, other=rec["to"]))
        elif kind == "signal_in":
            ev.append(Ev(peer, "in", number, other=rec["from"]))
        else:
            raise ValueError(f"the reference does not read kind {kind!r}")
    # pair the split signals: k-th out from p to q with the k-th in at q from p
    pairs = {(e.peer, e.other) for e in log.events if e.kind == "out"}
    for p, q in pairs:
        outs = [i for i, e in enumerate(log.events) if e.kind == "out" and e.peer == p and e.other == q
                and e.partner is None]
        ins = [i for i, e in enumerate(log.events) if e.kind == "in" and e.peer == q and e.other == p
               and e.partner is None]
        for a, b in zip(outs, ins):
            log.events[a].partner = b
            log.events[b].partner = a
    return log


def happened_before(log: RefLog) -> list[set[int]]:
    """``hb[i]``: every event that event i happened before (the transitive closure)."""
    n = len(log.events)
    succ: list[set[int]] = [set() for _ in range(n)]
    last: dict[str, int] = {}
    for i, e in enumerate(log.events):
        if e.peer in last:
            succ[last[e.peer]].add(i)
        last[e.peer] = i
        if e.kind == "deliver" and e.msg in log.msgs and log.msgs[e.msg].send < i:
            succ[log.msgs[e.msg].send].add(i)
        if e.kind == "in" and e.partner is not None and e.partner < i:
            succ[e.partner].add(i)
    hb: list[set[int]] = []
    for i in range(n):
        seen: set[int] = set()
        todo = list(succ[i])
        while todo:
            j = todo.pop()
            if j not in seen:
                seen.add(j)
                todo.extend(succ[j])
        hb.append(seen)
    return hb


def _consumed_before(log: RefLog, q: str, m: str, end: int) -> bool:
    return any(e.peer == q and e.kind in ("deliver", "drop") and e.msg == m for e in log.events[:end])


def _sent_before(log: RefLog, m: str | None, i: int) -> bool:
    return m is not None and m in log.msgs and log.msgs[m].send < i


def _order_violation(log: RefLog, hb: list[set[int]], name: str) -> int | None:
    for i, e in enumerate(log.events):
        if e.kind != "deliver" or not _sent_before(log, e.msg, i):
            continue
        m2 = log.msgs[e.msg]
        for m1_name, m1 in log.msgs.items():
            if m1_name == e.msg or e.peer not in m1.dests or _consumed_before(log, e.peer, m1_name, i):
                continue
            if name == "fifo":
                before = m1.sender == m2.sender and m1.send < m2.send
            else:
                before = m2.send in hb[m1.send]
            if before:
                return i
    return None


def _integrity_violation(log: RefLog) -> int | None:
    for i, e in enumerate(log.events):
        if e.kind in ("deliver", "drop"):
            if not _sent_before(log, e.msg, i) or e.peer not in log.msgs[e.msg].dests:
                return i
            if _consumed_before(log, e.peer, e.msg, i):
                return i
        if e.kind == "out" and e.partner is not None and e.partner < i:
            return i
    return None


def _orders(log: RefLog, end: int) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for i, e in enumerate(log.events[:end]):
        if e.kind == "deliver" and _sent_before(log, e.msg, i):
            order = out.setdefault(e.peer, [])
            if e.msg not in order:
                order.append(e.msg)
    return out


def _has_cycle(edges: set[tuple[str, str]]) -> bool:
    nodes = {a for a, _ in edges} | {b for _, b in edges}
    reach = {a: {b for x, b in edges if x == a} for a in nodes}
    changed = True
    while changed:
        changed = False
        for a in nodes:
            more = set().union(*(reach[b] for b in reach[a])) - reach[a] if reach[a] else set()
            if more:
                reach[a] |= more
                changed = True
    return any(a in reach[a] for a in nodes)


def _broken_on_prefix(log: RefLog, hb: list[set[int]], name: str, end: int) -> bool:
    orders = _orders(log, end)
    peers = sorted(orders)
    if name == "total":
        for p in peers:
            for q in peers:
                both = [m for m in orders[p] if m in orders[q]]
                if both != [m for m in orders[q] if m in orders[p]]:
                    return True
        return False
    if name == "total_global":
        return _has_cycle({(a, b) for order in orders.values() for k, a in enumerate(order) for b in order[k + 1:]})
    if name == "total_prefix":
        for p in peers:
            for q in peers:
                sp = [m for m in orders[p] if {p, q} <= log.msgs[m].dests]
                sq = [m for m in orders[q] if {p, q} <= log.msgs[m].dests]
                short = min(len(sp), len(sq))
                if sp[:short] != sq[:short]:
                    return True
        return False
    if name == "synchronous":
        edges = set()
        for i, e in enumerate(log.events[:end]):
            if e.kind != "deliver":
                continue
            for m1_name, m1 in log.msgs.items():
                if m1_name != e.msg and m1.send < end and i in hb[m1.send]:
                    edges.add((m1_name, str(e.msg)))
        return _has_cycle(edges)
    if name == "global_lock":
        return _lock_graph_has_cycle(log, end)
    raise ValueError(name)


def _lock_graph_has_cycle(log: RefLog, end: int) -> bool:
    events = log.events[:end]
    sent = {m: msg.send for m, msg in log.msgs.items() if msg.send < end}
    succ: dict[int, set[int]] = {i: set() for i in range(end)}
    last: dict[str, int] = {}
    consumed: dict[str, list[str]] = {}
    for i, e in enumerate(events):
        if e.peer in last:
            succ[last[e.peer]].add(i)
        last[e.peer] = i
        if e.kind == "deliver" and e.msg in sent:
            succ[sent[e.msg]].add(i)
        if e.kind == "out" and e.partner is not None and e.partner < end:
            succ[i].add(e.partner)
        if e.kind in ("deliver", "drop"):
            consumed.setdefault(e.peer, []).append(str(e.msg))
    for q, seq in consumed.items():
        for m1, m2 in zip(seq, seq[1:]):
            if m1 != m2 and m1 in sent and m2 in sent:
                succ[sent[m1]].add(sent[m2])
        if seq[-1] not in sent:
            continue
        for m in sent:
            if q in log.msgs[m].dests and m not in seq and sent[m] != sent[seq[-1]]:
                succ[sent[seq[-1]]].add(sent[m])
    for start in range(end):  # a cycle: some event reaches itself
        seen: set[int] = set()
        todo = list(succ[start])
        while todo:
            j = todo.pop()
            if j == start:
                return True
            if j not in seen:
                seen.add(j)
                todo.extend(succ[j])
    return False


def first_violation(text: str, name: str) -> int | None:
    """The line at which property ``name`` is first broken in the log ``text``, or
    ``None`` when it holds."""
    log = parse(text)
    hb = happened_before(log)
    if name in ("fifo", "causal"):
        at = _order_violation(log, hb, name)
    elif name == "integrity":
        at = _integrity_violation(log)
    else:
        at = next((end - 1 for end in range(1, len(log.events) + 1) if _broken_on_prefix(log, hb, name, end)), None)
    return None if at is None else log.events[at].line

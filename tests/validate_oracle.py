"""A slow, literal reading of the ordering properties on a History, for the validate tests.

Each function says whether a :class:`~ordercheck.specs.history.History` violates a property,
written straight from the definitions (quadratic and worse), with no code shared with
``ordercheck.checker.validate``'s algorithms. The tests compare ``validate``'s verdicts, and where
a log breaks a property the event at which it first breaks, with these.
"""

from __future__ import annotations

import itertools

import networkx as nx
from hypothesis import strategies as st

from ordercheck.checker.validate.log import Log, LogBuilder, sub_log, to_history
from ordercheck.specs.history import DELIVER, DROP, SEND, SIGNAL_IN, SIGNAL_OUT, History

PREFIX_SAFE = ("fifo", "causal", "integrity", "total", "total_global", "total_prefix", "global_lock", "synchronous")


def _consumed_before(h: History, q: int, i: int) -> set[int]:
    return {e.arg for e in h.logs[q][:i] if e.kind in (DELIVER, DROP)}


def _must_wait(h: History, name: str) -> bool:
    for q, log in enumerate(h.logs):
        for i, e in enumerate(log):
            if e.kind != DELIVER or e.arg not in h.messages:
                continue
            m2 = h.messages[e.arg]
            done = _consumed_before(h, q, i)
            for m1 in h.messages.values():
                if q not in m1.dests or m1.id in done:
                    continue
                if name == "fifo" and m1.sender == m2.sender and m1.seq < m2.seq:
                    return True
                if name == "causal" and m1.id in m2.past:
                    return True
    return False


def _orders(h: History) -> list[list[int]]:
    out = []
    for log in h.logs:
        order: list[int] = []
        for e in log:
            if e.kind == DELIVER and e.arg in h.messages and e.arg not in order:
                order.append(e.arg)
        out.append(order)
    return out


def violated(name: str, h: History) -> bool:
    """Whether ``h`` breaks property ``name`` (``eventual_delivery``: at its end)."""
    if name in ("fifo", "causal"):
        return _must_wait(h, name)
    if name == "integrity":
        for q, log in enumerate(h.logs):
            seen = set()
            for e in log:
                if e.kind in (DELIVER, DROP):
                    if e.arg not in h.messages or q not in h.messages[e.arg].dests or e.arg in seen:
                        return True
                    seen.add(e.arg)
        return False
    orders = _orders(h)
    pairs = list(itertools.combinations(range(len(orders)), 2))
    if name == "total":
        for p, q in pairs:
            for m1, m2 in itertools.permutations(set(orders[p]) & set(orders[q]), 2):
                if orders[p].index(m1) < orders[p].index(m2) and orders[q].index(m1) > orders[q].index(m2):
                    return True
        return False
    if name == "total_global":
        g = nx.DiGraph()
        for order in orders:
            g.add_nodes_from(order)
            for a, b in itertools.combinations(order, 2):
                g.add_edge(a, b)
        return not nx.is_directed_acyclic_graph(g)
    if name == "total_prefix":
        for p, q in pairs:
            sp = [m for m in orders[p] if {p, q} <= h.messages[m].dests]
            sq = [m for m in orders[q] if {p, q} <= h.messages[m].dests]
            short = min(len(sp), len(sq))
            if sp[:short] != sq[:short]:
                return True
        return False
    if name == "global_lock":
        return not nx.is_directed_acyclic_graph(_lock_graph(h))
    if name == "synchronous":
        hb = nx.transitive_closure_dag(_hb_graph(h)) if nx.is_directed_acyclic_graph(_hb_graph(h)) else None
        if hb is None:
            return False  # validate's logs keep each delivery after its send (see _hb_graph)
        crown = nx.DiGraph()
        for (p, i), e in _events(h):
            if e.kind == DELIVER and e.arg in h.messages:
                for m1 in h.messages.values():
                    send = _send_node(h, m1.id)
                    if m1.id != e.arg and send is not None and hb.has_edge(send, (p, i)):
                        crown.add_edge(m1.id, e.arg)
        return not nx.is_directed_acyclic_graph(crown)
    if name == "eventual_delivery":
        for m in h.messages.values():
            for q in m.dests:
                if q not in h.failed and not any(e.kind in (DELIVER, DROP) and e.arg == m.id for e in h.logs[q]):
                    return True
        return False
    raise ValueError(name)


def _events(h: History):
    for p, log in enumerate(h.logs):
        for i, e in enumerate(log):
            yield (p, i), e


def _send_node(h: History, m: int) -> tuple[int, int] | None:
    for p, log in enumerate(h.logs):
        for i, e in enumerate(log):
            if e.kind == SEND and e.arg == m and p == h.messages[m].sender:
                return (p, i)
    return None


def _hb_graph(h: History) -> nx.DiGraph:
    """Happened-before's generating edges: program order, send to each delivery, the
    k-th signal from p to q to the k-th receipt at q of a signal from p."""
    g = nx.DiGraph()
    for (p, i), e in _events(h):
        g.add_node((p, i))
        if i:
            g.add_edge((p, i - 1), (p, i))
        if e.kind == DELIVER and e.arg in h.messages:
            send = _send_node(h, e.arg)
            if send is not None:
                g.add_edge(send, (p, i))
    for p, q in itertools.permutations(range(len(h.logs)), 2):
        outs = [(p, i) for i, e in enumerate(h.logs[p]) if e.kind == SIGNAL_OUT and e.arg == q]
        ins = [(q, i) for i, e in enumerate(h.logs[q]) if e.kind == SIGNAL_IN and e.arg == p]
        g.add_edges_from(zip(outs, ins))
    return g


def _lock_graph(h: History) -> nx.DiGraph:
    """DESIGN.md's global-lock graph, literally: happened-before's edges, then for each
    peer q send(m1) -> send(m2) for any two messages it consumed one right after the
    other, and, unless q is down, send(last consumed) -> send(m) for every message
    addressed to q that it has not consumed."""
    g = _hb_graph(h)
    for q, log in enumerate(h.logs):
        consumed = [e.arg for e in log if e.kind in (DELIVER, DROP)]
        for m1, m2 in zip(consumed, consumed[1:]):
            s1, s2 = (_send_node(h, m) if m in h.messages else None for m in (m1, m2))
            if m1 != m2 and s1 is not None and s2 is not None:
                g.add_edge(s1, s2)
        if not consumed or q in h.failed or consumed[-1] not in h.messages:
            continue
        last = _send_node(h, consumed[-1])
        if last is None:
            continue
        for m in h.messages.values():
            send = _send_node(h, m.id)
            if q in m.dests and m.id not in consumed and send is not None and send != last:
                g.add_edge(last, send)
    return g


def log_violated(name: str, log: Log) -> bool:
    """Whether ``log`` breaks ``name``: :func:`violated` on its history, and for
    ``integrity`` also the rule that only a log's order can tell: the k-th receipt at q
    of a signal from p comes after the k-th signal p sent to q."""
    if violated(name, to_history(log)):
        return True
    if name != "integrity":
        return False
    outs: dict[tuple[int, int], list[int]] = {}
    ins: dict[tuple[int, int], list[int]] = {}
    for i in range(len(log)):
        if log.kind[i] == SIGNAL_OUT:
            outs.setdefault((log.peer[i], log.arg[i]), []).append(i)
        elif log.kind[i] == SIGNAL_IN:
            ins.setdefault((log.arg[i], log.peer[i]), []).append(i)
    return any(r < s for pair, got in ins.items() for r, s in zip(got, outs.get(pair, [])))


def first_violation(log: Log, name: str) -> int | None:
    """The event at which ``name`` first breaks, by :func:`log_violated` on every prefix."""
    for end in range(1, len(log) + 1):
        prefix, _kept = sub_log(log, range(end))
        if log_violated(name, prefix):
            return end - 1
    return None


@st.composite
def random_logs(draw, max_events: int = 24):
    """Small logs of 2-4 peers: multicasts, deliveries (mostly of messages addressed to
    the peer and not yet consumed there, sometimes repeats, misaddressed ones or ids
    never sent), drops, side-channel signals (in one line or as a signal and a later
    receipt, the receipt always after its signal). Lines number the events from 1.

    A one-line signal from p to q is drawn only while no split signal from p to q is in
    flight: a :class:`~ordercheck.specs.history.History` pairs the k-th signal with the k-th
    receipt, which is the log's pairing only then (a one-line signal is its own receipt,
    :func:`ordercheck.checker.validate.log.signal_sources`). Logs where they overlap are compared
    with a reference that reads the log itself, in ``tests/test_validate_differential.py``."""
    n = draw(st.integers(2, 4))
    names = "abcd"[:n]
    b = LogBuilder("random.jsonl", list(names))
    pending: list[tuple[int, int]] = []  # (message, peer) addressed and not consumed
    signals: list[tuple[int, int]] = []  # (from, to) signals not yet received
    sent = [0] * n
    line = 1
    for _ in range(draw(st.integers(0, max_events))):
        line += 1
        what = draw(st.sampled_from(["send", "send", "deliver", "deliver", "deliver", "deliver", "odd", "drop",
                                     "signal", "signal_out", "signal_in"]))
        if what == "send" or (what in ("deliver", "drop") and not pending):
            p = draw(st.integers(0, n - 1))
            dests = draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n))
            b.send(p, f"{names[p]}{sent[p] + 1}", sorted(dests), line)
            sent[p] += 1
            m = b.log.arg[-1]
            pending += [(m, d) for d in sorted(dests)]
        elif what in ("deliver", "drop"):
            m, q = pending.pop(draw(st.integers(0, len(pending) - 1)))
            b.add(q, DELIVER if what == "deliver" else DROP, m, line)
        elif what == "odd":
            q = draw(st.integers(0, n - 1))
            if b.log.messages and draw(st.booleans()):
                m = draw(st.integers(0, b.log.messages - 1))
            else:
                m = b.message_id(f"x{line}")
            b.add(q, DELIVER, m, line)
        elif what in ("signal", "signal_out"):
            p, q = draw(st.permutations(range(n)))[:2]
            if what == "signal" and (p, q) in signals:
                continue  # see the docstring: no one-line signal overtakes a split one
            b.add(p, SIGNAL_OUT, q, line)
            if what == "signal":
                b.add(q, SIGNAL_IN, p, line)
            else:
                signals.append((p, q))
        elif signals:
            p, q = signals.pop(draw(st.integers(0, len(signals) - 1)))
            b.add(q, SIGNAL_IN, p, line)
    return b.log

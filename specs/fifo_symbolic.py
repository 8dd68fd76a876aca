"""Naive FIFO queues (:mod:`ordercheck.specs.fifo`) as Z3 formulas.

The same steps as the explicit spec: a peer starts a send (``send``), appends the message
to its destinations' queues one at a time (``append``), and delivers the head of its own
queue (``deliver``); a peer inside a send does nothing else. Side-channel signals change
none of these variables and are left out.

Variables: for each peer ``p``, ``cnt.p`` (sends finished), ``ph.p`` (inside a send),
``pos.p`` (the destination it appends to next) and ``dst.p.d`` (the send's
destinations); each queue ``q`` as slots of ``(snd, seq)`` (``q.q.i.snd``,
``q.q.i.seq``: the sender and its message number, ``mid % stride`` in the explicit
spec); and the proof ghost ``last.q.p``, the number of the last message from ``p``
that ``q`` delivered (-1 before the first).

``bounded=False`` lets each peer send any number of messages (queues of at most
``queue_bound`` entries); ``bounded=True`` keeps the model's ``sends`` and decodes
explicit states (``encode``) for ``prove --infer``.

The target ``fifo_per_queue``: on each queue, a sender's messages are numbered in
increasing order from head to tail, each above the last one of that sender the queue's
owner delivered. Queues deliver from the head, so each peer delivers a sender's
messages in sending order: the model's ``fifo`` (``guarantees``).
"""

from __future__ import annotations

from typing import Any

import z3

from ordercheck.specs.common import members, message_dests
from ordercheck.specs.fifo import Fifo
from ordercheck.specs.history import DELIVER
from ordercheck.specs.symbolic import SlotQueue, SymAction, SymState, first_member, target_properties


class SymbolicFifo:
    """The symbolic encoding of a :class:`~ordercheck.specs.fifo.Fifo` instance (module doc)."""

    def __init__(self, spec: Fifo, *, queue_bound: int | None = None, bounded: bool = True) -> None:
        self.spec = spec
        self.n = n = spec.peers
        self.bounded = bounded
        self.names = spec.names
        self.capacity = queue_bound if queue_bound is not None else self.max_queue()
        self.queue = SlotQueue("q", {"snd": "int", "seq": "int"}, self.capacity)
        schema: dict[str, str] = {}
        for p in range(n):
            schema.update({f"cnt.{p}": "int", f"ph.{p}": "bool", f"pos.{p}": "int"})
            schema.update({f"dst.{p}.{d}": "bool" for d in range(n)})
            schema.update({f"last.{p}.{x}": "int" for x in range(n) if x != p})
            schema.update(self.queue.schema(p))
        self.schema = schema
        self.lemmas = {
            "shape": ("counts, cursors and queue lengths are in range; entries name another sender", self.l_shape),
            "numbered_below_count": ("every queued message is numbered below its sender's next", self.l_below),
            "current_not_queued": ("the message a sender is appending is numbered above what it queued", self.l_current),
            "in_order": ("each sender's messages on a queue are numbered in order, above the last delivered", self.t_fifo),
        }
        self.targets = {
            "fifo_per_queue": ("each sender's messages on a queue are numbered in order, above the last delivered", self.t_fifo),
        }
        self.properties = target_properties(self.targets)  # BMC of the targets (bmc_queries)
        self.guarantees: dict[str, tuple[str, ...]] = {"fifo": ("fifo_per_queue",)}

    def max_queue(self) -> int:
        """The most messages one queue holds in a bounded run: all sent to it."""
        spec = self.spec
        most = 1
        for q in range(self.n):
            total = 0
            for p in range(self.n):
                if p != q:
                    total += sum(1 for m in spec.plan[p] if m >> q & 1) if spec.plan is not None else spec.sends
            most = max(most, total)
        return most

    def masks(self, p: int) -> tuple[int, ...]:
        spec = self.spec
        return tuple(dict.fromkeys(spec.plan[p])) if spec.plan is not None else tuple(spec.choices[p])

    def limit(self, p: int) -> int:
        return len(self.spec.plan[p]) if self.spec.plan is not None else self.spec.sends

    # -- initial states and actions --------------------------------------------------------

    def init(self, s: SymState) -> z3.BoolRef:
        parts = []
        for p in range(self.n):
            parts += [s["cnt", p] == 0, z3.Not(s["ph", p]), s["pos", p] == 0, self.queue.init(s, p)]
            parts += [z3.Not(s["dst", p, d]) for d in range(self.n)]
            parts += [s["last", p, x] == -1 for x in range(self.n) if x != p]
        return z3.And(parts)

    def actions(self) -> list[SymAction]:
        out = []
        for p in range(self.n):
            for mask in self.masks(p):
                out.append(self._send(p, mask))
            for d in range(self.n):
                if d != p:
                    out.append(self._append(p, d))
            out.append(self._deliver(p))
        return out

    def _send(self, p: int, mask: int) -> SymAction:
        def step(s: SymState, t: SymState) -> tuple[Any, dict]:
            guard = z3.Not(s["ph", p])
            if self.bounded:
                guard = z3.And(guard, s["cnt", p] < self.limit(p))
                if self.spec.plan is not None:
                    guard = z3.And(guard, z3.Or([s["cnt", p] == k for k, m in enumerate(self.spec.plan[p]) if m == mask]))
            upd: dict[str, Any] = {f"ph.{p}": z3.BoolVal(True), f"pos.{p}": z3.IntVal(min(members(mask)))}
            upd.update({f"dst.{p}.{d}": z3.BoolVal(bool(mask >> d & 1)) for d in range(self.n)})
            return guard, upd

        return SymAction(f"send({self.names[p]}, {mask})", step, lambda pre, post: ("send", p, mask))

    def _append(self, p: int, d: int) -> SymAction:
        def step(s: SymState, t: SymState) -> tuple[Any, dict]:
            guard = z3.And(s["ph", p], s["pos", p] == d)
            upd, fits = self.queue.append(s, d, {"snd": z3.IntVal(p), "seq": s["cnt", p]})
            nxt = first_member([s["dst", p, x] for x in range(self.n)], after=d)
            last = nxt == -1
            upd[f"pos.{p}"] = z3.If(last, 0, nxt)
            upd[f"ph.{p}"] = z3.Not(last)
            upd[f"cnt.{p}"] = z3.If(last, s["cnt", p] + 1, s["cnt", p])
            for x in range(self.n):
                upd[f"dst.{p}.{x}"] = z3.If(last, False, s["dst", p, x])
            return z3.And(guard, fits), upd

        return SymAction(f"append({self.names[p]}->{self.names[d]})", step,
                         lambda pre, post: ("append", p, d, pre[f"cnt.{p}"]))

    def _deliver(self, q: int) -> SymAction:
        def step(s: SymState, t: SymState) -> tuple[Any, dict]:
            head = self.queue.slot(s, q, 0)
            guard = z3.And(z3.Not(s["ph", q]), self.queue.length(s, q) > 0)
            upd = self.queue.pop_front(s, q)
            for x in range(self.n):
                if x != q:
                    upd[f"last.{q}.{x}"] = z3.If(head["snd"] == x, head["seq"], s["last", q, x])
            return guard, upd

        return SymAction(f"deliver({self.names[q]})", step,
                         lambda pre, post: ("deliver", q, pre[f"q.{q}.0.snd"], pre[f"q.{q}.0.seq"]))

    # -- the invariant ----------------------------------------------------------------------

    def _entries(self, s: SymState, q: int) -> list[tuple[int, Any, dict[str, Any]]]:
        return [(i, live, e) for i, (live, e) in enumerate(self.queue.live(s, q))]

    def l_shape(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        n = self.n
        for q in range(n):
            a = self.names[q]
            length = self.queue.length(s, q)
            out.append((f"{a}'s count is not negative", s["cnt", q] >= 0))
            out.append((f"{a}'s queue holds 0..{self.capacity} entries", z3.And(length >= 0, length <= self.capacity)))
            cursor = z3.Or([z3.And(s["pos", q] == d, s["dst", q, d]) for d in range(n) if d != q] or [False])
            out.append((f"{a}'s cursor is on one of its destinations", z3.Implies(s["ph", q], cursor)))
            out.append((f"{a} never sends to itself", z3.Not(s["dst", q, q])))
            for i, live, e in self._entries(s, q):
                other = z3.Or([e["snd"] == x for x in range(n) if x != q] or [False])
                out.append((f"{a}'s slot {i} names another sender", z3.Implies(live, z3.And(other, e["seq"] >= 0))))
        return out

    def l_below(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q in range(self.n):
            for i, live, e in self._entries(s, q):
                for p in range(self.n):
                    if p != q:
                        out.append((f"{self.names[q]}'s slot {i}, if {self.names[p]}'s, is numbered up to {self.names[p]}'s count",
                                    z3.Implies(z3.And(live, e["snd"] == p), e["seq"] <= s["cnt", p])))
        return out

    def l_current(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q in range(self.n):
            for i, live, e in self._entries(s, q):
                for p in range(self.n):
                    if p == q:
                        continue
                    done = z3.And(s["ph", p], s["dst", p, q], s["pos", p] > q)
                    mine = z3.And(live, e["snd"] == p)
                    out.append((f"{self.names[q]}'s slot {i}, if {self.names[p]}'s, is its current message only once appended",
                                z3.Implies(z3.And(mine, e["seq"] == s["cnt", p]), done)))
                    out.append((f"{self.names[p]}'s count is above the last {self.names[q]} delivered from it",
                                s["last", q, p] < s["cnt", p] + z3.If(done, 1, 0)))
        return out

    def t_fifo(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q in range(self.n):
            entries = self._entries(s, q)
            for i, live, e in entries:
                for p in range(self.n):
                    if p != q:
                        out.append((f"{self.names[q]}'s slot {i}, if {self.names[p]}'s, is above the last delivered from {self.names[p]}",
                                    z3.Implies(z3.And(live, e["snd"] == p), e["seq"] > s["last", q, p])))
                for j, live_j, f in entries[i + 1:]:
                    out.append((f"{self.names[q]}'s slots {i} and {j} from one sender are in sending order",
                                z3.Implies(z3.And(live_j, e["snd"] == f["snd"]), e["seq"] < f["seq"])))
        return out

    # -- explicit states, and presentation -------------------------------------------------

    def encode(self, state: tuple) -> dict[str, Any]:
        """An explicit :mod:`ordercheck.specs.fifo` state as variable values."""
        queues, txs, ghost, _know, _signals = state
        sent, logs = ghost
        stride = self.spec.stride
        v: dict[str, Any] = {}
        for p in range(self.n):
            tx = txs[p]
            v[f"cnt.{p}"] = len(sent[p]) - (1 if tx else 0)
            v[f"ph.{p}"] = bool(tx)
            mask = message_dests(ghost, tx[0], stride) if tx else 0
            v[f"pos.{p}"] = self.spec.dest_table[mask][tx[1]] if tx else 0
            for d in range(self.n):
                v[f"dst.{p}.{d}"] = bool(mask >> d & 1)
            delivered = [e >> 3 for e in logs[p] if e & 7 == DELIVER]
            for x in range(self.n):
                if x != p:
                    mine = [m for m in delivered if m // stride == x]
                    v[f"last.{p}.{x}"] = mine[-1] % stride if mine else -1
            v[f"q.{p}.len"] = len(queues[p])
            for i in range(self.capacity):
                mid = queues[p][i] if i < len(queues[p]) else None
                v[f"q.{p}.{i}.snd"] = mid // stride if mid is not None else 0
                v[f"q.{p}.{i}.seq"] = mid % stride if mid is not None else 0
        return v

    def format_action(self, label: tuple) -> str:
        names = self.names
        if label[0] == "send":
            return f"{names[label[1]]} starts sending to " + "".join(names[d] for d in members(label[2]))
        if label[0] == "append":
            return f"{names[label[1]]} appends its message #{label[3]} to {names[label[2]]}'s queue"
        snd = names[label[2]] if 0 <= label[2] < self.n else str(label[2])
        return f"{names[label[1]]} delivers {snd}'s message #{label[3]}"

    def describe(self, v: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for p, name in enumerate(self.names):
            n = min(max(int(v[f"q.{p}.len"]), 0), self.capacity)
            entries = []
            for i in range(n):
                snd = int(v[f"q.{p}.{i}.snd"])
                who = self.names[snd] if 0 <= snd < self.n else f"?{snd}"
                entries.append(f"{who}#{v[f'q.{p}.{i}.seq']}")
            sending = ""
            if v[f"ph.{p}"]:
                to = "".join(self.names[d] for d in range(self.n) if v[f"dst.{p}.{d}"])
                sending = f", sending #{v[f'cnt.{p}']} to {to} (next {v[f'pos.{p}']})"
            last = ", ".join(f"{self.names[x]}#{v[f'last.{p}.{x}']}" for x in range(self.n) if x != p)
            out[name] = f"sent {v[f'cnt.{p}']}{sending}; queue [{', '.join(entries)}]; last delivered {last}"
        return {"queues": out}


SYMBOLIC = SymbolicFifo

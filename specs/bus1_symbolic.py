"""bus1's ordering algorithm as Z3 formulas, beside the explicit :mod:`ordercheck.specs.bus1`.

The same steps as the explicit spec (block, tick, sync, queue, deliver, send, signal),
over integer clocks and timestamps and queues of at most ``K`` slots. Two modes:

* ``bounded=True`` mirrors the explicit spec exactly: the model's ``sends`` (or script)
  and ``signals`` bound the run, and a history ghost (delivery positions, knowledge and
  causal pasts per message id) decides ``fifo``, ``causal`` and ``total`` as the
  explicit property library does. Used for the agreement test and bounded model checking.
* ``bounded=False`` drops every bound but the queue length: any number of sends by the
  fixed set of peers, any number of side-channel signals, unbounded clocks. Used for the
  inductive invariant of the ``ordering`` lemmas below.

Proof ghosts kept in both modes: each queue's *last dequeued key* ``(ts, rank)`` (rank
is the sender id, or ``0`` when ties go by arrival), each peer's *knowledge clock*
``kt[p][d]``: the largest timestamp of a message addressed to ``d`` in ``p``'s causal
past (``0`` if none), and for each message (on a queue or in its sender's transaction)
its destinations and its sender's knowledge clocks when the send started.

The per-queue guarantees proved for unbounded runs (``targets``):

* ``total_per_queue``: every message on queue ``q``, and every message still on its way
  to ``q``, has a key above ``q``'s last dequeued key. So each queue dequeues messages in
  strictly increasing ``(timestamp, sender)`` order; a message has one timestamp on all
  its destinations, so two peers that deliver m1 and m2 deliver them in the same order.
* ``causal_per_queue``: every message ``m`` on queue ``q`` or on its way there has a
  timestamp above every timestamp of a message to ``q`` in its causal past. With
  ``total_per_queue`` (nothing still to come to ``q`` orders before what ``q``
  dequeues), ``q`` delivers every m1 in the causal past of m2 before m2.
"""

from __future__ import annotations

from typing import Any

import z3

from ordercheck.specs.bus1 import BLOCK, SYNCING, TICK, Bus1
from ordercheck.specs.common import members, names_of
from ordercheck.specs.symbolic import SlotQueue, SymAction, SymState, first_member, lex_less, zmax

# Symbolic phases: the explicit phase plus one, 0 for an idle peer.
IDLE, S_BLOCKING, S_TICK, S_SYNCING, S_QUEUEING, S_SYNC_QUEUE = range(6)
PHASE_NAMES = ["idle", "blocking", "tick", "syncing", "queueing", "sync+queue"]


class SymbolicBus1:
    """The symbolic encoding of a :class:`~ordercheck.specs.bus1.Bus1` instance (see module doc)."""

    def __init__(self, spec: Bus1, *, queue_bound: int | None = None, bounded: bool = True) -> None:
        self.spec = spec
        self.n = spec.peers
        self.bounded = bounded
        self.names = spec.names
        self.stride = spec.stride
        self.limits = [len(spec.plan[p]) if spec.plan is not None else spec.sends for p in range(self.n)]
        self.capacity = queue_bound if queue_bound is not None else self.max_queue()
        n = self.n
        fields = {"blk": "bool", "ts": "int", "snd": "int", "seq": "int"}
        fields.update({f"dst{d}": "bool" for d in range(n)})
        fields.update({f"past{d}": "int" for d in range(n)})
        self.queue = SlotQueue("q", fields, self.capacity)
        schema: dict[str, str] = {}
        for p in range(n):
            schema.update({f"clk.{p}": "int", f"cnt.{p}": "int", f"ph.{p}": "int", f"pos.{p}": "int", f"acc.{p}": "int"})
            for d in range(n):
                schema.update({f"dst.{p}.{d}": "bool", f"past.{p}.{d}": "int", f"kt.{p}.{d}": "int"})
            schema.update({f"last.{p}.has": "bool", f"last.{p}.ts": "int", f"last.{p}.rank": "int"})
            schema.update(self.queue.schema(p))
        if bounded:
            self.mids = range(n * self.stride)
            schema["sig"] = "int"
            for p in range(n):
                schema[f"dcnt.{p}"] = "int"
                for m in self.mids:
                    schema.update({f"dpos.{p}.{m}": "int", f"kn.{p}.{m}": "bool"})
            for m in self.mids:
                for x in self.mids:
                    schema[f"mpast.{m}.{x}"] = "bool"
                for d in range(n):
                    schema[f"mdst.{m}.{d}"] = "bool"
        self.schema = schema
        self.lemmas = {
            "shape": ("variables stay in range; slots past a queue's length hold nothing", self.l_shape),
            "queue_sorted": ("each queue is ordered by timestamp; at one timestamp, messages before blocks", self.l_sorted),
            "distinct_keys": ("no two messages on a queue share a (timestamp, rank) key", self.l_distinct),
            "entries_behind_clock": ("no entry on a queue is ahead of that queue's clock", self.l_behind_clock),
            "blocks_pending": (
                "a transaction's block sits on exactly the destinations it has blocked and not yet queued on",
                self.l_blocks_pending,
            ),
            "block_under_acc": ("while blocking, the collected maximum is at least each of its blocks", self.l_block_acc),
            "message_after_block": ("a transaction's timestamp is above each of its own blocks", self.l_after_block),
            "sender_clock": ("a sender's earlier messages have smaller timestamps than its current one", self.l_sender),
            "current_message": ("a transaction's message sits only on destinations already queued, at its timestamp", self.l_current),
            "dequeue_order": ("every entry on a queue orders after the queue's last dequeued key", self.l_dequeue_order),
            "sync_before_queue": ("a message is queued only once every destination clock reached its timestamp", self.l_synced),
            "knowledge_behind_clocks": ("known timestamps to d never exceed d's clock", self.l_knowledge),
            "past_before_timestamp": ("a message's timestamp is above every known timestamp to its destinations", self.l_past),
        }
        self.targets = {
            "total_per_queue": (
                "every message on or on its way to a queue orders after that queue's last dequeued key",
                self.t_total,
            ),
            "causal_per_queue": (
                "every message on or on its way to q is stamped above every message to q in its causal past",
                self.t_causal,
            ),
            "ready_is_final": (
                "an unblocked message at the head of a queue orders before every message still to be queued there",
                self.t_ready_final,
            ),
        }
        # the explicit properties the targets establish (module docstring)
        self.guarantees: dict[str, tuple[str, ...]] = {
            "total": ("total_per_queue",),
            "causal": ("total_per_queue", "causal_per_queue"),
            "ready_is_final": ("ready_is_final",),
        }
        self.properties: dict[str, tuple[str, Any]] = {
            "message_after_block": ("always", self.p_after_block),
            "ready_is_final": ("always", self.p_ready_final),
            "entries_behind_clock": ("always", lambda s: self._and(self.l_behind_clock(s))),
            "waits_behind_block": ("sometimes", self.p_waits),
            "equal_timestamps": ("sometimes", self.p_equal),
            "deadlock_free": ("terminal", self.p_busy),
        }
        if bounded:
            self.properties.update(
                {
                    "fifo": ("always", self.p_fifo),
                    "causal": ("always", self.p_causal),
                    "total": ("always", self.p_total),
                    "eventual_delivery": ("terminal", self.p_undelivered),
                }
            )

    # -- sizes and small helpers --------------------------------------------------------

    def max_queue(self) -> int:
        """The most entries a queue can hold in a bounded run: the messages sent to it
        and one block per other peer."""
        spec = self.spec
        most = 1
        for q in range(self.n):
            total = self.n - 1
            for p in range(self.n):
                if p == q:
                    continue
                if spec.plan is not None:
                    total += sum(1 for mask in spec.plan[p] if mask >> q & 1)
                else:
                    total += spec.sends
            most = max(most, total)
        return most

    @staticmethod
    def _and(clauses: list[tuple[str, Any]]) -> z3.BoolRef:
        return z3.And([c for _t, c in clauses]) if clauses else z3.BoolVal(True)

    def options(self, p: int) -> tuple[int, ...]:
        """Destination masks ``p`` may choose (any count in unbounded mode)."""
        spec = self.spec
        if spec.plan is not None:
            return tuple(dict.fromkeys(spec.plan[p]))
        return spec.choices[p]

    def rank(self, e: dict[str, Any]) -> Any:
        return e["snd"] if self.spec.tiebreak_by_sender else z3.IntVal(0)

    def dst(self, s: SymState, p: int) -> list[Any]:
        return [s["dst", p, d] for d in range(self.n)]

    def seq(self, s: SymState, p: int) -> Any:
        return s["cnt", p] - 1

    def pending(self, s: SymState, p: int, q: int) -> Any:
        """``p``'s transaction addresses ``q`` and has not queued its message there yet."""
        ph, pos = s["ph", p], s["pos", p]
        return z3.And(
            s["dst", p, q],
            z3.Or(
                ph == S_BLOCKING,
                ph == S_TICK,
                ph == S_SYNCING,
                z3.And(z3.Or(ph == S_QUEUEING, ph == S_SYNC_QUEUE), pos <= q),
            ),
        )

    def blocked(self, s: SymState, p: int, q: int) -> Any:
        """``p``'s block should be on ``q``: blocked and not yet queued."""
        ph, pos = s["ph", p], s["pos", p]
        return z3.And(self.pending(s, p, q), z3.Or(ph != S_BLOCKING, q < pos))

    def stamped(self, s: SymState, p: int) -> Any:
        """``p``'s transaction has its timestamp (in ``acc``)."""
        return s["ph", p] >= S_SYNCING

    def live(self, s: SymState, q: int) -> list[tuple[int, Any, dict[str, Any]]]:
        return [(i, ok, e) for i, (ok, e) in enumerate(self.queue.live(s, q))]

    def msg(self, snd: int, seq: int) -> Any:
        """A message reference for action labels: the explicit id when bounded."""
        if self.bounded:
            return snd * self.stride + seq
        return f"{self.names[snd]}{seq + 1}"

    def mname(self, ref: Any) -> str:
        return ref if isinstance(ref, str) else self.spec.mname(ref)

    # -- initial states and actions ----------------------------------------------------

    def init(self, s: SymState) -> z3.BoolRef:
        n = self.n
        parts = []
        for p in range(n):
            parts += [s["clk", p] == 0, s["cnt", p] == 0, s["ph", p] == IDLE, s["pos", p] == 0, s["acc", p] == 0]
            parts += [z3.Not(s["last", p, "has"]), s["last", p, "ts"] == 0, s["last", p, "rank"] == 0]
            for d in range(n):
                parts += [z3.Not(s["dst", p, d]), s["past", p, d] == 0, s["kt", p, d] == 0]
            parts.append(self.queue.init(s, p))
        if self.bounded:
            parts.append(s["sig"] == self.spec.signals)
            for p in range(n):
                parts.append(s["dcnt", p] == 0)
                for m in self.mids:
                    parts += [s["dpos", p, m] == 0, z3.Not(s["kn", p, m])]
            for m in self.mids:
                parts += [z3.Not(s["mpast", m, x]) for x in self.mids]
                parts += [z3.Not(s["mdst", m, d]) for d in range(n)]
        return z3.And(parts)

    def actions(self) -> list[SymAction]:
        out: list[SymAction] = []
        n = self.n
        for p in range(n):
            out.append(self._deliver(p))
            if self.options(p):
                out.append(self._send(p))
            for q in range(n):
                if q != p:
                    out.append(self._signal(p, q))
            out.append(self._tick(p))
            for d in range(n):
                if d == p:
                    continue
                out.append(self._block(p, d))
                out.append(self._sync(p, d))
                out.append(self._queue(p, d, S_QUEUEING))
                if not self.spec.sync_receivers_before_queueing:
                    out.append(self._queue(p, d, S_SYNC_QUEUE))
        return out

    def _deliver(self, p: int) -> SymAction:
        n = self.n

        def step(s: SymState, t: SymState) -> tuple[Any, dict]:
            head = self.queue.slot(s, p, 0)
            guard = z3.And(s["ph", p] == IDLE, self.queue.length(s, p) > 0, z3.Not(head["blk"]))
            upd = self.queue.pop_front(s, p)
            upd.update({f"last.{p}.has": z3.BoolVal(True), f"last.{p}.ts": head["ts"], f"last.{p}.rank": self.rank(head)})
            for d in range(n):
                known = zmax(head[f"past{d}"], z3.If(head[f"dst{d}"], head["ts"], 0))
                upd[f"kt.{p}.{d}"] = zmax(s["kt", p, d], known)
            if self.bounded:
                mid = head["snd"] * self.stride + head["seq"]
                upd[f"dcnt.{p}"] = s["dcnt", p] + 1
                for m in self.mids:
                    upd[f"dpos.{p}.{m}"] = z3.If(mid == m, s["dcnt", p] + 1, s["dpos", p, m])
                    past = z3.Or([z3.And(mid == x, s["mpast", x, m]) for x in self.mids])
                    upd[f"kn.{p}.{m}"] = z3.Or(s["kn", p, m], mid == m, past)
            return guard, upd

        def label(pre: dict, post: dict) -> tuple:
            return ("deliver", p, self.msg(pre[f"q.{p}.0.snd"], pre[f"q.{p}.0.seq"]))

        return SymAction(f"deliver({self.names[p]})", step, label)

    def _send(self, p: int) -> SymAction:
        n = self.n
        opts = self.options(p)
        plan = self.spec.plan

        def step(s: SymState, t: SymState) -> tuple[Any, dict]:
            cnt = s["cnt", p]
            guard = s["ph", p] == IDLE
            if self.bounded:
                guard = z3.And(guard, cnt < self.limits[p])
            upd: dict[str, Any] = {f"cnt.{p}": cnt + 1, f"ph.{p}": S_BLOCKING, f"acc.{p}": 0}
            tdst = self.dst(t, p)
            upd[f"pos.{p}"] = first_member(tdst)
            for d in range(n):
                upd[f"dst.{p}.{d}"] = t["dst", p, d]
                upd[f"past.{p}.{d}"] = s["kt", p, d]
            if self.bounded:
                for k in range(self.stride):
                    m = p * self.stride + k
                    for x in self.mids:
                        upd[f"mpast.{m}.{x}"] = z3.If(cnt == k, s["kn", p, x], s["mpast", m, x])
                    for d in range(n):
                        upd[f"mdst.{m}.{d}"] = z3.If(cnt == k, t["dst", p, d], s["mdst", m, d])
            return guard, upd

        def is_mask(t: SymState, mask: int) -> Any:
            return z3.And([t["dst", p, d] == bool(mask >> d & 1) for d in range(n)])

        def choose(s: SymState, t: SymState) -> Any:
            if self.bounded and plan is not None:
                return z3.Or([z3.And(s["cnt", p] == k, is_mask(t, m)) for k, m in enumerate(plan[p])])
            return z3.Or([is_mask(t, m) for m in opts])

        def label(pre: dict, post: dict) -> tuple:
            mask = sum(1 << d for d in range(n) if post[f"dst.{p}.{d}"])
            return ("send", p, self.msg(p, pre[f"cnt.{p}"]), mask)

        return SymAction(f"send({self.names[p]})", step, label, choose)

    def _signal(self, p: int, q: int) -> SymAction:
        def step(s: SymState, t: SymState) -> tuple[Any, dict]:
            guard = z3.And(s["ph", p] == IDLE, s["ph", q] == IDLE)
            upd: dict[str, Any] = {f"kt.{q}.{d}": zmax(s["kt", q, d], s["kt", p, d]) for d in range(self.n)}
            if self.bounded:
                guard = z3.And(guard, s["sig"] > 0)
                upd["sig"] = s["sig"] - 1
                for m in self.mids:
                    upd[f"kn.{q}.{m}"] = z3.Or(s["kn", q, m], s["kn", p, m])
            return guard, upd

        return SymAction(f"signal({self.names[p]},{self.names[q]})", step, lambda pre, post: ("signal", p, q))

    def _tick(self, p: int) -> SymAction:
        def step(s: SymState, t: SymState) -> tuple[Any, dict]:
            base = zmax(s["clk", p], s["acc", p]) if self.spec.sync_sender else s["clk", p]
            ts = base + 1
            nxt = S_SYNCING if self.spec.sync_receivers_before_queueing else S_SYNC_QUEUE
            upd = {f"clk.{p}": ts, f"acc.{p}": ts, f"ph.{p}": nxt, f"pos.{p}": first_member(self.dst(s, p))}
            return s["ph", p] == S_TICK, upd

        def label(pre: dict, post: dict) -> tuple:
            return ("tick", p, self.msg(p, pre[f"cnt.{p}"] - 1))

        return SymAction(f"tick({self.names[p]})", step, label)

    def _advance(self, s: SymState, p: int, d: int, done: dict[str, Any]) -> dict[str, Any]:
        """Move ``p``'s cursor past destination ``d``; on the last one apply ``done``."""
        nxt = first_member(self.dst(s, p), after=d)
        last = nxt == -1
        upd = {f"pos.{p}": z3.If(last, done.pop(f"pos.{p}"), nxt)}
        for key, value in done.items():
            upd[key] = z3.If(last, value, s.vars[key])
        return upd

    def _block(self, p: int, d: int) -> SymAction:
        def step(s: SymState, t: SymState) -> tuple[Any, dict]:
            c = s["clk", d]
            guard = z3.And(s["ph", p] == S_BLOCKING, s["pos", p] == d)
            upd: dict[str, Any] = {}
            if self.spec.block_destinations:
                seq = self.seq(s, p)
                rec = {f: self.queue.default(f) for f in self.queue.fields}
                rec.update({"blk": z3.BoolVal(True), "ts": c, "snd": z3.IntVal(p), "seq": seq})

                def before(e: dict[str, Any]) -> Any:
                    own = lex_less([(e["snd"], p), (e["seq"], seq)])
                    return z3.Or(e["ts"] < c, z3.And(e["ts"] == c, z3.Or(z3.Not(e["blk"]), own)))

                upd, fits = self.queue.insert(s, d, rec, before)
                guard = z3.And(guard, fits)
            upd[f"acc.{p}"] = zmax(s["acc", p], c)
            upd.update(self._advance(s, p, d, {f"pos.{p}": z3.IntVal(0), f"ph.{p}": z3.IntVal(S_TICK)}))
            return guard, upd

        def label(pre: dict, post: dict) -> tuple:
            return ("block", p, d, self.msg(p, pre[f"cnt.{p}"] - 1))

        return SymAction(f"block({self.names[p]}->{self.names[d]})", step, label)

    def _sync(self, p: int, d: int) -> SymAction:
        def step(s: SymState, t: SymState) -> tuple[Any, dict]:
            guard = z3.And(s["ph", p] == S_SYNCING, s["pos", p] == d)
            upd: dict[str, Any] = {f"clk.{d}": zmax(s["clk", d], s["acc", p])}
            first = first_member(self.dst(s, p))
            upd.update(self._advance(s, p, d, {f"pos.{p}": first, f"ph.{p}": z3.IntVal(S_QUEUEING)}))
            return guard, upd

        def label(pre: dict, post: dict) -> tuple:
            return ("sync", p, d, self.msg(p, pre[f"cnt.{p}"] - 1))

        return SymAction(f"sync({self.names[p]}->{self.names[d]})", step, label)

    def _queue(self, p: int, d: int, phase: int) -> SymAction:
        n = self.n
        kind = "queue" if phase == S_QUEUEING else "sync_queue"

        def step(s: SymState, t: SymState) -> tuple[Any, dict]:
            ts, seq = s["acc", p], self.seq(s, p)
            guard = z3.And(s["ph", p] == phase, s["pos", p] == d)
            rec: dict[str, Any] = {"blk": z3.BoolVal(False), "ts": ts, "snd": z3.IntVal(p), "seq": seq}
            for x in range(n):
                rec[f"dst{x}"] = s["dst", p, x]
                rec[f"past{x}"] = s["past", p, x]

            def before(e: dict[str, Any]) -> Any:
                if self.spec.tiebreak_by_sender:
                    mine = z3.And(z3.Not(e["blk"]), lex_less([(e["snd"], p), (e["seq"], seq)]))
                else:
                    mine = z3.Not(e["blk"])
                return z3.Or(e["ts"] < ts, z3.And(e["ts"] == ts, mine))

            def own_block(e: dict[str, Any]) -> Any:
                return z3.And(e["blk"], e["snd"] == p)

            upd, fits = self.queue.insert(s, d, rec, before, remove=own_block)
            if phase == S_SYNC_QUEUE:
                upd[f"clk.{d}"] = zmax(s["clk", d], ts)
            done: dict[str, Any] = {f"pos.{p}": z3.IntVal(0), f"ph.{p}": z3.IntVal(IDLE), f"acc.{p}": z3.IntVal(0)}
            for x in range(n):
                done[f"dst.{p}.{x}"] = z3.BoolVal(False)
                done[f"past.{p}.{x}"] = z3.IntVal(0)
                done[f"kt.{p}.{x}"] = zmax(s["kt", p, x], z3.If(s["dst", p, x], ts, 0))
            if self.bounded:
                mid = p * self.stride + seq
                for m in range(p * self.stride, (p + 1) * self.stride):
                    done[f"kn.{p}.{m}"] = z3.Or(s["kn", p, m], mid == m)
            upd.update(self._advance(s, p, d, done))
            return z3.And(guard, fits), upd

        def label(pre: dict, post: dict) -> tuple:
            return (kind, p, d, self.msg(p, pre[f"cnt.{p}"] - 1))

        return SymAction(f"{kind}({self.names[p]}->{self.names[d]})", step, label)

    # -- the strengthened invariant: lemmas --------------------------------------------

    def l_shape(self, s: SymState) -> list[tuple[str, Any]]:
        n, K = self.n, self.capacity
        out: list[tuple[str, Any]] = []
        for p in range(n):
            a = self.names[p]
            ph = s["ph", p]
            dst = self.dst(s, p)
            out.append((f"{a}'s clock and send count are not negative", z3.And(s["clk", p] >= 0, s["cnt", p] >= 0)))
            out.append((f"{a}'s phase is a phase", z3.And(ph >= IDLE, ph <= S_SYNC_QUEUE)))
            if self.spec.sync_receivers_before_queueing:
                out.append((f"{a} never syncs and queues in one step", ph != S_SYNC_QUEUE))
            else:
                out.append((f"{a} never syncs before queueing", z3.And(ph != S_SYNCING, ph != S_QUEUEING)))
            busy = ph != IDLE
            allowed = z3.Or([z3.And([dst[d] == bool(m >> d & 1) for d in range(n)]) for m in self.options(p)] or [False])
            out.append((f"{a}'s transaction has a destination set it may choose", z3.Implies(busy, allowed)))
            out.append((f"{a}'s transaction has a message", z3.Implies(busy, s["cnt", p] >= 1)))
            cursor = z3.Or([z3.And(s["pos", p] == d, dst[d]) for d in range(n)])
            out.append((f"{a}'s cursor is on one of its destinations", z3.Implies(z3.And(busy, ph != S_TICK), cursor)))
            out.append((f"{a}'s collected clock is not negative", s["acc", p] >= 0))
            rank_ok = z3.And(s["last", p, "rank"] >= 0, s["last", p, "rank"] < n)
            out.append((f"{a}'s last dequeued key is a timestamp and a rank", z3.And(s["last", p, "ts"] >= 0, rank_ok)))
            for d in range(n):
                out.append((f"{a}'s known timestamps are not negative", z3.And(s["kt", p, d] >= 0, s["past", p, d] >= 0)))
            out.append((f"{a}'s queue length is within 0..{K}", z3.And(self.queue.length(s, p) >= 0, self.queue.length(s, p) <= K)))
            for i, ok, e in self.live(s, p):
                sender_ok = z3.Or([e["snd"] == x for x in range(n) if x != p])
                ok_entry = z3.And(
                    sender_ok,
                    e["seq"] >= 0,
                    z3.Or([z3.And(e["snd"] == x, e["seq"] < s["cnt", x]) for x in range(n)]),
                    z3.Implies(z3.Not(e["blk"]), z3.And(e["ts"] >= 1, e[f"dst{p}"])),
                    z3.Implies(z3.Not(e["blk"]), z3.And([z3.Implies(e["snd"] == x, z3.Not(e[f"dst{x}"])) for x in range(n)])),
                    z3.And([e[f"past{d}"] >= 0 for d in range(n)]),
                    e["ts"] >= 0,
                )
                out.append((f"{a}'s queue slot {i} holds a well-formed entry", z3.Implies(ok, ok_entry)))
        return out

    def _pairs(self, s: SymState, q: int):
        live = self.live(s, q)
        for (i, ok_i, a), (_j, ok_j, b) in zip(live, live[1:]):
            yield i, z3.And(ok_i, ok_j), a, b

    def l_sorted(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q in range(self.n):
            for i, ok, a, b in self._pairs(s, q):
                same = a["ts"] == b["ts"]
                blocks = lex_less([(a["snd"], b["snd"]), (a["seq"], b["seq"])])
                good = z3.And(
                    a["ts"] <= b["ts"],
                    z3.Implies(z3.And(same, a["blk"]), z3.And(b["blk"], blocks)),
                )
                out.append((f"{self.names[q]}'s queue entries {i} and {i + 1} are in order", z3.Implies(ok, good)))
        return out

    def l_distinct(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q in range(self.n):
            for i, ok, a, b in self._pairs(s, q):
                both = z3.And(ok, z3.Not(a["blk"]), z3.Not(b["blk"]), a["ts"] == b["ts"])
                out.append(
                    (
                        f"{self.names[q]}'s queue entries {i} and {i + 1} have different keys",
                        z3.Implies(both, self.rank(a) < self.rank(b)),
                    )
                )
        return out

    def l_behind_clock(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q in range(self.n):
            for i, ok, e in self.live(s, q):
                out.append((f"{self.names[q]}'s queue slot {i} is not ahead of its clock", z3.Implies(ok, e["ts"] <= s["clk", q])))
        return out

    def l_blocks_pending(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        n = self.n
        for q in range(n):
            live = self.live(s, q)
            for p in range(n):
                if p == q:
                    continue
                a, b = self.names[p], self.names[q]
                mine = [z3.And(ok, e["blk"], e["snd"] == p) for _i, ok, e in live]
                out.append((f"{a}'s block is on {b}'s queue exactly while {a} has blocked {b} and not queued there", self.blocked(s, p, q) == z3.Or(mine)))
                for i, _ok, e in live:
                    out.append((f"a block of {a} on {b}'s queue belongs to {a}'s current message", z3.Implies(mine[i], e["seq"] == self.seq(s, p))))
                for i in range(len(mine)):
                    for j in range(i + 1, len(mine)):
                        out.append((f"{a} has at most one block on {b}'s queue", z3.Not(z3.And(mine[i], mine[j]))))
        return out

    def _own_blocks(self, s: SymState, p: int):
        for q in range(self.n):
            if q == p:
                continue
            for i, ok, e in self.live(s, q):
                yield q, i, z3.And(ok, e["blk"], e["snd"] == p), e

    def l_block_acc(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for p in range(self.n):
            early = z3.Or(s["ph", p] == S_BLOCKING, s["ph", p] == S_TICK)
            for q, _i, mine, e in self._own_blocks(s, p):
                out.append(
                    (
                        f"{self.names[p]}'s collected clock covers its block on {self.names[q]}'s queue",
                        z3.Implies(z3.And(early, mine), e["ts"] <= s["acc", p]),
                    )
                )
        return out

    def l_after_block(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for p in range(self.n):
            for q, _i, mine, e in self._own_blocks(s, p):
                out.append(
                    (
                        f"{self.names[p]}'s timestamp is above its block on {self.names[q]}'s queue",
                        z3.Implies(z3.And(self.stamped(s, p), mine), e["ts"] < s["acc", p]),
                    )
                )
        return out

    def l_sender(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        n = self.n
        for p in range(n):
            a = self.names[p]
            out.append((f"{a}'s clock is at least its current timestamp", z3.Implies(self.stamped(s, p), s["acc", p] <= s["clk", p])))
            for q in range(n):
                for i, ok, e in self.live(s, q):
                    msg = z3.And(ok, z3.Not(e["blk"]), e["snd"] == p)
                    older = z3.And(msg, e["seq"] != self.seq(s, p), self.stamped(s, p))
                    out.append((f"{a}'s message in {self.names[q]}'s slot {i} is not ahead of {a}'s clock", z3.Implies(msg, e["ts"] <= s["clk", p])))
                    out.append((f"{a}'s earlier message in {self.names[q]}'s slot {i} is stamped below its current one", z3.Implies(older, e["ts"] < s["acc", p])))
        return out

    def l_current(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        n = self.n
        for p in range(n):
            for q in range(n):
                for i, ok, e in self.live(s, q):
                    cur = z3.And(ok, z3.Not(e["blk"]), e["snd"] == p, e["seq"] == self.seq(s, p), s["ph", p] != IDLE)
                    placed = z3.And(z3.Not(self.pending(s, p, q)), self.stamped(s, p), e["ts"] == s["acc", p])
                    same = z3.And([z3.And(e[f"dst{x}"] == s["dst", p, x], e[f"past{x}"] == s["past", p, x]) for x in range(n)])
                    out.append(
                        (
                            f"{self.names[p]}'s current message in {self.names[q]}'s slot {i} was queued by its transaction",
                            z3.Implies(cur, z3.And(placed, same)),
                        )
                    )
        return out

    def l_dequeue_order(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q in range(self.n):
            b = self.names[q]
            has, lts, lrank = s["last", q, "has"], s["last", q, "ts"], s["last", q, "rank"]
            out.append((f"{b}'s last dequeued timestamp is not ahead of its clock", lts <= s["clk", q]))
            for i, ok, e in self.live(s, q):
                after = z3.If(e["blk"], e["ts"] >= lts, lex_less([(lts, e["ts"]), (lrank, self.rank(e))]))
                out.append((f"{b}'s queue slot {i} orders after {b}'s last dequeued key", z3.Implies(z3.And(ok, has), after)))
        return out

    def l_synced(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        n = self.n
        for p in range(n):
            ph = s["ph", p]
            for d in range(n):
                done = z3.Or(ph == S_QUEUEING, ph == S_SYNC_QUEUE, z3.And(ph == S_SYNCING, s["pos", p] > d))
                out.append(
                    (
                        f"{self.names[d]}'s clock reached {self.names[p]}'s timestamp before {self.names[p]} queues",
                        z3.Implies(z3.And(done, s["dst", p, d]), s["clk", d] >= s["acc", p]),
                    )
                )
        for q in range(n):
            for i, ok, e in self.live(s, q):
                for d in range(n):
                    out.append(
                        (
                            f"the message in {self.names[q]}'s slot {i} has {self.names[d]}'s clock synced",
                            z3.Implies(z3.And(ok, z3.Not(e["blk"]), e[f"dst{d}"]), s["clk", d] >= e["ts"]),
                        )
                    )
        return out

    def l_knowledge(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        n = self.n
        for d in range(n):
            c = s["clk", d]
            for p in range(n):
                out.append((f"{self.names[p]}'s knowledge of messages to {self.names[d]} is behind {self.names[d]}'s clock", s["kt", p, d] <= c))
                out.append((f"{self.names[p]}'s transaction's past to {self.names[d]} is behind {self.names[d]}'s clock", s["past", p, d] <= c))
            for q in range(n):
                for i, ok, e in self.live(s, q):
                    out.append((f"the past of {self.names[q]}'s slot {i} to {self.names[d]} is behind {self.names[d]}'s clock", z3.Implies(ok, e[f"past{d}"] <= c)))
        return out

    def l_past(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        n = self.n
        for p in range(n):
            ph = s["ph", p]
            for d in range(n):
                seen = z3.Or(ph == S_TICK, z3.And(ph == S_BLOCKING, s["pos", p] > d))
                both = z3.And(s["dst", p, d])
                out.append(
                    (
                        f"{self.names[p]}'s collected clock covers its past to {self.names[d]}",
                        z3.Implies(z3.And(both, seen), s["acc", p] >= s["past", p, d]),
                    )
                )
                out.append(
                    (
                        f"{self.names[p]}'s timestamp is above its past to {self.names[d]}",
                        z3.Implies(z3.And(both, self.stamped(s, p)), s["acc", p] > s["past", p, d]),
                    )
                )
        for q in range(n):
            for i, ok, e in self.live(s, q):
                for d in range(n):
                    out.append(
                        (
                            f"the message in {self.names[q]}'s slot {i} is stamped above its past to {self.names[d]}",
                            z3.Implies(z3.And(ok, z3.Not(e["blk"]), e[f"dst{d}"]), e["ts"] > e[f"past{d}"]),
                        )
                    )
        return out

    # -- targets: the per-queue guarantees --------------------------------------------

    def t_total(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        n = self.n
        for q in range(n):
            has, lts, lrank = s["last", q, "has"], s["last", q, "ts"], s["last", q, "rank"]
            for i, ok, e in self.live(s, q):
                msg = z3.And(ok, z3.Not(e["blk"]), has)
                out.append((f"the message in {self.names[q]}'s slot {i} orders after {self.names[q]}'s last dequeued key", z3.Implies(msg, lex_less([(lts, e["ts"]), (lrank, self.rank(e))]))))
            for p in range(n):
                if p == q:
                    continue
                way = z3.And(self.pending(s, p, q), self.stamped(s, p), has)
                rank = z3.IntVal(p if self.spec.tiebreak_by_sender else 0)
                out.append((f"{self.names[p]}'s message on its way to {self.names[q]} orders after {self.names[q]}'s last dequeued key", z3.Implies(way, lex_less([(lts, s["acc", p]), (lrank, rank)]))))
        return out

    def t_causal(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        n = self.n
        for q in range(n):
            for i, ok, e in self.live(s, q):
                msg = z3.And(ok, z3.Not(e["blk"]))
                out.append((f"the message in {self.names[q]}'s slot {i} is stamped above its causal past to {self.names[q]}", z3.Implies(msg, e["ts"] > e[f"past{q}"])))
            for p in range(n):
                if p == q:
                    continue
                way = z3.And(self.pending(s, p, q), self.stamped(s, p))
                out.append((f"{self.names[p]}'s message on its way to {self.names[q]} is stamped above its causal past to {self.names[q]}", z3.Implies(way, s["acc", p] > s["past", p, q])))
        return out

    def t_ready_final(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q in range(self.n):
            head = self.queue.slot(s, q, 0)
            ready = z3.And(self.queue.length(s, q) > 0, z3.Not(head["blk"]))
            for p in range(self.n):
                if p == q:
                    continue
                way = z3.And(self.pending(s, p, q), self.stamped(s, p), ready)
                rank = z3.IntVal(p if self.spec.tiebreak_by_sender else 0)
                out.append((f"{self.names[q]}'s ready head orders before {self.names[p]}'s message still to come", z3.Implies(way, z3.Not(lex_less([(s["acc", p], head["ts"]), (rank, self.rank(head))])))))
        return out

    # -- properties for bounded model checking (explicit names) ---------------------------

    def p_after_block(self, s: SymState) -> Any:
        """The explicit ``message_after_block``: stamped, not yet queued, above own block."""
        parts = []
        for p in range(self.n):
            for q, _i, mine, e in self._own_blocks(s, p):
                way = z3.And(self.pending(s, p, q), self.stamped(s, p), mine)
                parts.append(z3.Implies(way, e["ts"] < s["acc", p]))
        return z3.And(parts) if parts else z3.BoolVal(True)

    def p_ready_final(self, s: SymState) -> Any:
        return self._and(self.t_ready_final(s))

    def p_waits(self, s: SymState) -> Any:
        parts = []
        for q in range(self.n):
            head_blk = z3.And(self.queue.length(s, q) > 0, self.queue.slot(s, q, 0)["blk"])
            parts.append(z3.And(head_blk, z3.Or([z3.And(ok, z3.Not(e["blk"])) for _i, ok, e in self.live(s, q)])))
        return z3.Or(parts)

    def p_equal(self, s: SymState) -> Any:
        parts = []
        for q in range(self.n):
            live = self.live(s, q)
            for i, ok_i, a in live:
                for _j, ok_j, b in live[i + 1 :]:
                    parts.append(z3.And(ok_i, ok_j, z3.Not(a["blk"]), z3.Not(b["blk"]), a["ts"] == b["ts"]))
        return z3.Or(parts) if parts else z3.BoolVal(False)

    def p_busy(self, s: SymState) -> Any:
        """``deadlock_free``'s outstanding work: some peer is inside a transaction."""
        return z3.Or([s["ph", p] != IDLE for p in range(self.n)])

    def _sent(self, s: SymState, m: int) -> Any:
        return s["cnt", m // self.stride] > m % self.stride

    def p_fifo(self, s: SymState) -> Any:
        bad = []
        for q in range(self.n):
            for p in range(self.n):
                for i in range(self.stride):
                    for j in range(i + 1, self.stride):
                        a, b = s["dpos", q, p * self.stride + i], s["dpos", q, p * self.stride + j]
                        bad.append(z3.And(a > 0, b > 0, b < a))
        return z3.Not(z3.Or(bad)) if bad else z3.BoolVal(True)

    def p_causal(self, s: SymState) -> Any:
        bad = []
        for q in range(self.n):
            for m1 in self.mids:
                for m2 in self.mids:
                    if m1 != m2:
                        a, b = s["dpos", q, m1], s["dpos", q, m2]
                        bad.append(z3.And(s["mpast", m2, m1], a > 0, b > 0, b < a))
        return z3.Not(z3.Or(bad)) if bad else z3.BoolVal(True)

    def p_total(self, s: SymState) -> Any:
        bad = []
        for p in range(self.n):
            for q in range(p + 1, self.n):
                for m1 in self.mids:
                    for m2 in self.mids:
                        if m1 < m2:
                            a1, a2, b1, b2 = s["dpos", p, m1], s["dpos", p, m2], s["dpos", q, m1], s["dpos", q, m2]
                            bad.append(z3.And(a1 > 0, a2 > 0, b1 > 0, b2 > 0, (a1 < a2) != (b1 < b2)))
        return z3.Not(z3.Or(bad)) if bad else z3.BoolVal(True)

    def p_undelivered(self, s: SymState) -> Any:
        """``eventual_delivery``'s outstanding work: a sent message not yet delivered."""
        parts = []
        for m in self.mids:
            for d in range(self.n):
                parts.append(z3.And(self._sent(s, m), s["mdst", m, d], s["dpos", d, m] == 0))
        return z3.Or(parts) if parts else z3.BoolVal(False)

    # -- explicit states as variable values ---------------------------------------------

    def encode(self, state: tuple, ts_of: dict[int, int], last: list[tuple[int, int] | None]) -> dict[str, int | bool]:
        """An explicit bus1 state as this encoding's variable values.

        ``ts_of`` gives the timestamp of every message that has one, ``last`` each
        queue's last dequeued ``(ts, rank)``: the proof ghosts an explicit state does
        not keep (:class:`Bus1Ghosts` follows them along a run).
        """
        clocks, queues, txs, ghost, know, signals = state
        sent, logs = ghost
        n, stride = self.n, self.stride
        spec = self.spec

        def known(mask: int, d: int) -> int:
            out = 0
            for m in members(mask):
                if spec.dest_table[sent[m // stride][m % stride][0]].count(d):
                    out = max(out, ts_of[m])
            return out

        v: dict[str, int | bool] = {}
        for p in range(n):
            v[f"clk.{p}"] = clocks[p]
            v[f"cnt.{p}"] = len(sent[p])
            tx = txs[p]
            dmask, pmask = (0, 0)
            if tx:
                mid, phase, i, acc = tx
                dmask, pmask = sent[p][mid % stride]
                dests = spec.dest_table[dmask]
                v[f"ph.{p}"] = phase + 1
                v[f"pos.{p}"] = 0 if phase == TICK else dests[i]
                v[f"acc.{p}"] = acc
            else:
                v[f"ph.{p}"], v[f"pos.{p}"], v[f"acc.{p}"] = IDLE, 0, 0
            for d in range(n):
                v[f"dst.{p}.{d}"] = bool(tx) and bool(dmask >> d & 1)
                v[f"past.{p}.{d}"] = known(pmask, d) if tx else 0
                v[f"kt.{p}.{d}"] = known(know[p], d)
            lk = last[p]
            v[f"last.{p}.has"] = lk is not None
            v[f"last.{p}.ts"], v[f"last.{p}.rank"] = lk if lk is not None else (0, 0)
            v[f"q.{p}.len"] = len(queues[p])
            for i in range(self.capacity):
                rec: dict[str, int | bool] = {f: (False if k == "bool" else 0) for f, k in self.queue.fields.items()}
                if i < len(queues[p]):
                    ts, rank, mid = queues[p][i]
                    rec.update({"blk": rank == BLOCK, "ts": ts, "snd": mid // stride, "seq": mid % stride})
                    if rank != BLOCK:
                        edmask, epmask = sent[mid // stride][mid % stride]
                        for d in range(n):
                            rec[f"dst{d}"] = bool(edmask >> d & 1)
                            rec[f"past{d}"] = known(epmask, d)
                for f, val in rec.items():
                    v[f"q.{p}.{i}.{f}"] = val
        if self.bounded:
            v["sig"] = signals
            for p in range(n):
                delivered = [e >> 3 for e in logs[p] if e & 7 == 1]
                v[f"dcnt.{p}"] = len(delivered)
                for m in self.mids:
                    v[f"dpos.{p}.{m}"] = delivered.index(m) + 1 if m in delivered else 0
                    v[f"kn.{p}.{m}"] = bool(know[p] >> m & 1)
            for m in self.mids:
                out = sent[m // stride]
                dm, pm = out[m % stride] if m % stride < len(out) else (0, 0)
                for x in self.mids:
                    v[f"mpast.{m}.{x}"] = bool(pm >> x & 1)
                for d in range(n):
                    v[f"mdst.{m}.{d}"] = bool(dm >> d & 1)
        return v

    def explicit_values(self, limit: int):
        """The explicit spec's reachable states, breadth first, each with the proof
        ghosts of a run reaching it (:class:`Bus1Ghosts`), as variable values: at most
        ``limit`` distinct ones (for ``prove --infer``)."""
        spec = self.spec
        seen: set[tuple] = set()
        frontier = [(state, Bus1Ghosts(self.n)) for state in spec.init_states()]
        count = 0
        while frontier and count < limit:
            nxt = []
            for state, ghosts in frontier:
                values = self.encode(state, ghosts.ts_of, ghosts.last)
                key = tuple(sorted(values.items()))
                if key in seen:
                    continue
                seen.add(key)
                yield values
                count += 1
                if count >= limit:
                    return
                nxt += [(succ, ghosts.after(state, label, succ)) for label, succ in spec.next_states(state)]
            frontier = nxt

    # -- presentation --------------------------------------------------------------------

    def format_action(self, label: tuple) -> str:
        kind, p, *rest = label
        names = self.names
        if kind == "send":
            ref, mask = rest
            return f"{names[p]} starts sending {self.mname(ref)} to {names_of(mask, names)}"
        if kind == "deliver":
            return f"{names[p]} receives {self.mname(rest[0])}"
        if kind == "signal":
            return f"{names[p]} signals {names[rest[0]]}"
        if kind == "tick":
            return f"{names[p]} ticks its clock for {self.mname(rest[0])}"
        d, ref = rest
        verbs = {"block": "block {d}'s queue for {m}", "sync": "sync {d}'s clock to {m}", "queue": "queue {m} on {d}", "sync_queue": "sync and queue {m} on {d}"}
        return verbs[kind].format(d=names[d], m=self.mname(ref))

    def describe(self, v: dict[str, int | bool]) -> dict[str, Any]:
        """A readable view of concrete variable values, like the explicit ``describe``."""
        n = self.n
        peers = {}
        for p, name in enumerate(self.names):
            entries = []
            for i in range(min(int(v[f"q.{p}.len"]), self.capacity)):
                e = {f: v[f"q.{p}.{i}.{f}"] for f in self.queue.fields}
                ref = self.mname(self.msg(int(e["snd"]), int(e["seq"]))) if 0 <= e["snd"] < n and e["seq"] >= 0 else f"?{e['snd']}/{e['seq']}"
                if e["blk"]:
                    entries.append(f"block@{e['ts']}({ref})")
                else:
                    past = ",".join(f"{self.names[d]}:{e[f'past{d}']}" for d in range(n) if e[f"past{d}"])
                    to = "".join(self.names[d] for d in range(n) if e[f"dst{d}"])
                    entries.append(f"{ref}@{e['ts']} to {to or '-'}" + (f" past {{{past}}}" if past else ""))
            ph = int(v[f"ph.{p}"])
            tx = None
            if ph != IDLE:
                to = "".join(self.names[d] for d in range(n) if v[f"dst.{p}.{d}"])
                phase = PHASE_NAMES[ph] if 0 <= ph < len(PHASE_NAMES) else f"phase {ph}"
                tx = f"{self.mname(self.msg(p, int(v[f'cnt.{p}']) - 1))} to {to}: {phase}"
                if ph not in (S_TICK,):
                    tx += f" at {self.names[v[f'pos.{p}']] if 0 <= v[f'pos.{p}'] < n else v[f'pos.{p}']}"
                tx += f", {'timestamp' if ph >= S_SYNCING else 'max clock'} {v[f'acc.{p}']}"
            last = f"({v[f'last.{p}.ts']}, {v[f'last.{p}.rank']})" if v[f"last.{p}.has"] else None
            known = {self.names[d]: v[f"kt.{p}.{d}"] for d in range(n) if v[f"kt.{p}.{d}"]}
            peers[name] = {
                "clock": v[f"clk.{p}"],
                "queue": entries,
                "transaction": tx,
                "sent": v[f"cnt.{p}"],
                "last_dequeued": last,
                "knows_up_to": known,
            }
        out: dict[str, Any] = {"peers": peers}
        if self.bounded:
            out["signals_left"] = v["sig"]
        return out


class Bus1Ghosts:
    """Follows a run of the explicit spec and keeps the proof ghosts it does not store:
    each message's timestamp and each queue's last dequeued key."""

    def __init__(self, n: int) -> None:
        self.ts_of: dict[int, int] = {}
        self.last: list[tuple[int, int] | None] = [None] * n

    def after(self, state: tuple, label: tuple, nxt: tuple) -> Bus1Ghosts:
        """The ghosts after ``state`` takes the step ``label`` to ``nxt``."""
        out = Bus1Ghosts(len(self.last))
        out.ts_of = dict(self.ts_of)
        out.last = list(self.last)
        if label[0] == "tick":
            out.ts_of[label[2]] = nxt[0][label[1]]
        elif label[0] == "deliver":
            ts, rank, _mid = state[1][label[1]][0]
            out.last[label[1]] = (ts, rank)
        return out


SYMBOLIC = SymbolicBus1

__all__ = ["SYMBOLIC", "Bus1Ghosts", "SymbolicBus1", "SYNCING"]

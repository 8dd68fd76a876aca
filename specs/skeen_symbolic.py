"""Skeen's total-order multicast as Z3 formulas, beside the explicit :mod:`ordercheck.specs.skeen`.

A focused encoding of each receiver's queue, where the order is decided. Variables
(``n`` peers, ``K`` slots per queue, the ``queue_bound``):

* ``clk.q``: ``q``'s Lamport clock, as in the explicit spec;
* ``q.q.i.{ts,mid,fin}`` and ``q.q.len``: ``q``'s queue, sorted by ``(ts, mid)`` as the
  explicit one, each entry's proposed or final timestamp, message id and whether it is
  final (deliverable);
* ghosts: ``q``'s last delivery ``last.q.{has,ts,mid}`` and the one before it
  ``prev.q.{has,ts,mid}``; the id of the last message ``q`` queued, ``arr.q``, and the
  last final timestamp it received, ``fts.q`` (the choices of those steps).

Actions: ``propose(q)``: a message arrives, ``q`` ticks past it and queues it with its
clock as the proposal (its id a choice, new to the queue; its timestamp a choice);
``final(q, i)``: the final timestamp of the entry in slot ``i`` arrives, a choice that
is at least ``q``'s own proposal under ``take_max`` (the maximum of every proposal,
``q``'s among them; at most it under ``mutant_final = "min"``; any under ``"first"``),
and the entry moves to its place; ``tick(q)``: ``q``'s clock grows (a send, or a
proposal or final taken by the sender); ``deliver(q, i)``: the entry in slot ``i`` is
delivered, as the explicit ``next_deliveries`` says (the head when final; without
``wait_for_undeliverable`` the first final entry). Channels and senders' waiting lists
are not enumerated: what arrives is a choice within what the spec can send, so the
encoding allows every step of the spec and more (``tests/test_symbolic_seeds.py``
checks that on the explicit state space).

The proof, for any number of messages (queues of at most ``K`` entries):
``clock_above_entries`` (no entry's timestamp exceeds the clock), ``queue_sorted``,
``entries_after_last`` (every entry orders after ``q``'s last delivery: a new
proposal is above the clock, a final timestamp is at least the proposal it replaces)
and the target ``delivered_in_order``: each peer delivers in strictly increasing
``(final timestamp, id)``. The sender fixes a message's final timestamp once and sends
the same one to every destination, so two peers deliver two messages in the same order
(``total``, ``total_global``), for models whose channels make no copies.
"""

from __future__ import annotations

from typing import Any

import z3

from ordercheck.specs.symbolic import SlotQueue, SymAction, SymState, lex_less, target_properties
from ordercheck.specs.symbolic_exact import ExactPeers, Slot


class SymbolicSkeen:
    """The encoding of a :class:`~ordercheck.specs.skeen.Skeen` instance (module doc)."""

    def __init__(self, spec: Any, *, queue_bound: int | None = None, bounded: bool = True) -> None:
        self.spec = spec
        self.n = spec.peers
        self.names = spec.names
        self.capacity = queue_bound if queue_bound is not None else self.max_queue()
        self.queue = SlotQueue("q", {"ts": "int", "mid": "int", "fin": "bool"}, self.capacity)
        schema: dict[str, str] = {}
        for q in range(self.n):
            schema.update({f"clk.{q}": "int", f"arr.{q}": "int", f"fts.{q}": "int"})
            schema.update(self.queue.schema(q))
            for g in ("last", "prev"):
                schema.update({f"{g}.{q}.has": "bool", f"{g}.{q}.ts": "int", f"{g}.{q}.mid": "int"})
        self.schema = schema
        self.lemmas = {
            "shape": ("clocks and timestamps are naturals; slots past a queue's length are empty", self.l_shape),
            "clock_above_entries": ("no entry of a queue has a timestamp above its peer's clock", self.l_clock),
            "queue_sorted": ("each queue is sorted by (timestamp, id), no two entries alike", self.l_sorted),
            "entries_after_last": ("every entry of a queue orders after its peer's last delivery", self.l_after_last),
            "delivered_in_order": ("each peer's last delivery orders after the one before it", self.l_order),
        }
        self.targets = {"delivered_in_key_order": self.lemmas["delivered_in_order"]}
        self.properties = target_properties(self.targets)  # BMC of the targets (bmc_queries)
        self.guarantees: dict[str, tuple[str, ...]] = {}
        if not spec.duplicates:
            self.guarantees = {"total": ("delivered_in_key_order",), "total_global": ("delivered_in_key_order",)}

    def max_queue(self) -> int:
        """The most entries a queue can hold: the messages that may be sent to it."""
        spec = self.spec
        most = 1
        for q in range(self.n):
            total = 0
            for p in range(self.n):
                if spec.plan is not None:
                    total += sum(1 for mask in spec.plan[p] if mask >> q & 1)
                elif any(mask >> q & 1 for mask in spec.choices[p]):
                    total += spec.sends
            most = max(most, total)
        return most

    def init(self, s: SymState) -> z3.BoolRef:
        parts = []
        for q in range(self.n):
            parts += [s[f"clk.{q}"] == 0, s[f"arr.{q}"] == 0, s[f"fts.{q}"] == 0, self.queue.init(s, q)]
            for g in ("last", "prev"):
                parts += [z3.Not(s[f"{g}.{q}.has"]), s[f"{g}.{q}.ts"] == 0, s[f"{g}.{q}.mid"] == 0]
        return z3.And(parts)

    @staticmethod
    def key_less(a: dict[str, Any], b: dict[str, Any]) -> z3.BoolRef:
        return lex_less([(a["ts"], b["ts"]), (a["mid"], b["mid"])])

    # -- actions ------------------------------------------------------------------------

    def actions(self) -> list[SymAction]:
        out = []
        for q in range(self.n):
            out.append(SymAction(f"tick {self.names[q]}", self._tick(q), lambda pre, post, q=q: ("tick", q),
                                 choose=lambda s, t, q=q: t[f"clk.{q}"] > s[f"clk.{q}"]))
            out.append(SymAction(f"propose {self.names[q]}", self._propose(q),
                                 lambda pre, post, q=q: ("propose", q, post[f"arr.{q}"]),
                                 choose=lambda s, t, q=q: self._choose_new(s, t, q)))
            for i in range(self.capacity):
                out.append(SymAction(f"final {self.names[q]} slot {i}", self._final(q, i),
                                     lambda pre, post, q=q: ("final", q, post[f"fts.{q}"]),
                                     choose=lambda s, t, q=q, i=i: self._choose_final(s, t, q, i)))
                out.append(SymAction(f"deliver {self.names[q]} slot {i}", self._deliver(q, i),
                                     lambda pre, post, q=q: ("deliver", q, post[f"last.{q}.mid"])))
        return out

    def _tick(self, q: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            return z3.BoolVal(True), {f"clk.{q}": t[f"clk.{q}"]}

        return step

    def _choose_new(self, s: SymState, t: SymState, q: int) -> z3.BoolRef:
        """The arriving message: an id not queued yet; ``q``'s clock ticks past it."""
        mid = t[f"arr.{q}"]
        fresh = [z3.Implies(live, e["mid"] != mid) for live, e in self.queue.live(s, q)]
        return z3.And(t[f"clk.{q}"] > s[f"clk.{q}"], mid >= 0, *fresh)

    def _propose(self, q: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            clock = t[f"clk.{q}"]
            rec = {"ts": clock, "mid": t[f"arr.{q}"], "fin": z3.BoolVal(False)}
            upd, fits = self.queue.insert(s, q, rec, lambda e: self.key_less(e, rec))
            upd[f"clk.{q}"] = clock
            upd[f"arr.{q}"] = t[f"arr.{q}"]
            return fits, upd

        return step

    def _choose_final(self, s: SymState, t: SymState, q: int, i: int) -> z3.BoolRef:
        """The final timestamp of slot ``i``'s message, as the spec's sender computes it
        from the proposals, ``q``'s (the entry's timestamp) among them."""
        e = self.queue.slot(s, q, i)
        final = t[f"fts.{q}"]
        if self.spec.take_max:
            bound = final >= e["ts"]
        elif self.spec.mutant_final == "min":
            bound = final <= e["ts"]
        else:
            bound = z3.BoolVal(True)
        return z3.And(final >= 0, bound)

    def _final(self, q: int, i: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            e = self.queue.slot(s, q, i)
            final = t[f"fts.{q}"]
            rec = {"ts": final, "mid": e["mid"], "fin": z3.BoolVal(True)}
            upd, _fits = self.queue.insert(s, q, rec, lambda x: self.key_less(x, rec), remove=lambda x: x["mid"] == e["mid"])
            upd[f"clk.{q}"] = z3.If(s[f"clk.{q}"] >= final, s[f"clk.{q}"], final) + 1
            upd[f"fts.{q}"] = final
            return z3.And(self.queue.length(s, q) > i, z3.Not(e["fin"])), upd

        return step

    def _deliverable(self, s: SymState, q: int, i: int) -> z3.BoolRef:
        """The explicit ``next_deliveries``: slot ``i`` is one of the entries ``q`` may deliver."""
        spec = self.spec
        live = self.queue.live(s, q)
        n = self.queue.length(s, q)
        e = self.queue.slot(s, q, i)
        if spec.wait_for_undeliverable:
            first_ts = live[0][1]["ts"]
            is_first = z3.BoolVal(i == 0)
        else:  # the pool is the final entries: slot i is the first final one
            before = [z3.Not(live[j][1]["fin"]) for j in range(i)]
            is_first = z3.And(before) if before else z3.BoolVal(True)
            first_ts = e["ts"]
            low: Any = z3.IntVal(-1)
            for j in reversed(range(self.capacity)):
                low = z3.If(z3.And(n > j, live[j][1]["fin"]), live[j][1]["ts"], low)
            first_ts = low
        if spec.tiebreak_by_sender:
            return z3.And(n > i, e["fin"], is_first)
        return z3.And(n > i, e["fin"], e["ts"] == first_ts)

    def _deliver(self, q: int, i: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            e = self.queue.slot(s, q, i)
            recs, n = self.queue._remove(self.queue.slots(s, q), self.queue.length(s, q), z3.IntVal(i))
            upd = self.queue._write(q, recs, n)
            for f in ("has", "ts", "mid"):
                upd[f"prev.{q}.{f}"] = s[f"last.{q}.{f}"]
            upd.update({f"last.{q}.has": z3.BoolVal(True), f"last.{q}.ts": e["ts"], f"last.{q}.mid": e["mid"]})
            return self._deliverable(s, q, i), upd

        return step

    # -- lemmas -------------------------------------------------------------------------

    def l_shape(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q, a in enumerate(self.names):
            n = self.queue.length(s, q)
            out += [(f"{a}'s clock is a natural", s[f"clk.{q}"] >= 0),
                    (f"{a}'s queue length is within its slots", z3.And(n >= 0, n <= self.capacity))]
            for g in ("last", "prev"):
                out.append((f"{a}'s {g} delivery has a natural timestamp and id",
                            z3.Implies(s[f"{g}.{q}.has"], z3.And(s[f"{g}.{q}.ts"] >= 0, s[f"{g}.{q}.mid"] >= 0))))
            for i, (live, e) in enumerate(self.queue.live(s, q)):
                out.append((f"{a}'s slot {i} holds a natural timestamp and id, or nothing",
                            z3.If(live, z3.And(e["ts"] >= 0, e["mid"] >= 0),
                                  z3.And(e["ts"] == 0, e["mid"] == 0, z3.Not(e["fin"])))))
        return out

    def l_clock(self, s: SymState) -> list[tuple[str, Any]]:
        return [(f"{a}'s slot {i} is not above {a}'s clock", z3.Implies(live, e["ts"] <= s[f"clk.{q}"]))
                for q, a in enumerate(self.names) for i, (live, e) in enumerate(self.queue.live(s, q))]

    def l_sorted(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q, a in enumerate(self.names):
            live = self.queue.live(s, q)
            for i in range(self.capacity - 1):
                out.append((f"{a}'s slot {i} orders before slot {i + 1}",
                            z3.Implies(live[i + 1][0], self.key_less(live[i][1], live[i + 1][1]))))
            for i in range(self.capacity):
                for j in range(i + 1, self.capacity):
                    out.append((f"{a}'s slots {i} and {j} hold different messages",
                                z3.Implies(live[j][0], live[i][1]["mid"] != live[j][1]["mid"])))
        return out

    def _last(self, s: SymState, q: int, g: str = "last") -> dict[str, Any]:
        return {"ts": s[f"{g}.{q}.ts"], "mid": s[f"{g}.{q}.mid"]}

    def l_after_last(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q, a in enumerate(self.names):
            last = self._last(s, q)
            out.append((f"{a}'s last delivery is not above its clock",
                        z3.Implies(s[f"last.{q}.has"], last["ts"] <= s[f"clk.{q}"])))
            for i, (live, e) in enumerate(self.queue.live(s, q)):
                out.append((f"{a}'s slot {i} orders after {a}'s last delivery",
                            z3.Implies(z3.And(live, s[f"last.{q}.has"]), self.key_less(last, e))))
        return out

    def l_order(self, s: SymState) -> list[tuple[str, Any]]:
        return [(f"{a}'s last delivery orders after the one before it",
                 z3.Implies(s[f"prev.{q}.has"], z3.And(s[f"last.{q}.has"],
                                                        self.key_less(self._last(s, q, "prev"), self._last(s, q)))))
                for q, a in enumerate(self.names)]

    # -- readable states and the explicit side ------------------------------------------

    def format_action(self, label: tuple) -> str:
        a = self.names[label[1]]
        if label[0] == "propose":
            return f"{a} queues message #{label[2]} with its clock as proposal"
        if label[0] == "final":
            return f"{a} receives a final timestamp {label[2]}"
        if label[0] == "deliver":
            return f"{a} delivers message #{label[2]}"
        return f"{a}'s clock ticks"

    def describe(self, values: dict[str, Any]) -> dict[str, Any]:
        lines = []
        for q, a in enumerate(self.names):
            entries = []
            for i in range(min(values[f"q.{q}.len"], self.capacity)):
                fin = "final" if values[f"q.{q}.{i}.fin"] else "proposed"
                entries.append(f"#{values[f'q.{q}.{i}.mid']}@{values[f'q.{q}.{i}.ts']} {fin}")
            line = f"{a}: clock {values[f'clk.{q}']}; queue [{', '.join(entries)}]"
            for g, word in (("prev", "delivery before"), ("last", "last delivery")):
                if values[f"{g}.{q}.has"]:
                    line += f"; {word} #{values[f'{g}.{q}.mid']}@{values[f'{g}.{q}.ts']}"
            lines.append(line)
        return {"lines": lines}

    def encode(self, state: tuple, prev: tuple | None = None) -> dict[str, Any]:
        """An explicit state as variable values; ``prev = (pre_state, pre_values,
        label)`` gives the ghosts (see :mod:`ordercheck.specs.bss_symbolic`)."""
        from ordercheck.specs.skeen import CLOCKS, QUEUES

        out: dict[str, Any] = {}
        for q in range(self.n):
            out[f"clk.{q}"] = state[CLOCKS][q]
            queue = state[QUEUES][q]
            out[f"q.{q}.len"] = len(queue)
            for i in range(self.capacity):
                ts, mid, fin = queue[i] if i < len(queue) else (0, 0, 0)
                out.update({f"q.{q}.{i}.ts": ts, f"q.{q}.{i}.mid": mid, f"q.{q}.{i}.fin": bool(fin)})
            if prev is None:
                out.update({f"arr.{q}": 0, f"fts.{q}": 0})
                for g in ("last", "prev"):
                    out.update({f"{g}.{q}.has": False, f"{g}.{q}.ts": 0, f"{g}.{q}.mid": 0})
            else:
                for key in (f"arr.{q}", f"fts.{q}", *(f"{g}.{q}.{f}" for g in ("last", "prev") for f in ("has", "ts", "mid"))):
                    out[key] = prev[1][key]
        if prev is not None:
            pre_state, pre_values, label = prev
            q = label[1]
            if label[0] == "propose":
                out[f"arr.{q}"] = label[2]
            elif label[0] == "final":
                out[f"fts.{q}"] = label[3]
            elif label[0] == "deliver":
                ts = next(e[0] for e in pre_state[QUEUES][q] if e[1] == label[2])
                for f in ("has", "ts", "mid"):
                    out[f"prev.{q}.{f}"] = pre_values[f"last.{q}.{f}"]
                out.update({f"last.{q}.has": True, f"last.{q}.ts": ts, f"last.{q}.mid": label[2]})
        return out


SYMBOLIC = SymbolicSkeen


class ExactSkeen(ExactPeers):
    """Skeen's multicast step for step, for one model's plan
    (:mod:`ordercheck.specs.symbolic_exact`): ``clock.p``; the sender's entry for ``m``
    awaiting proposals as ``wait.m`` with ``wait.m.left.d`` (``d``'s proposal still to
    come) and ``wait.m.acc`` (the proposals combined so far); ``q``'s queue as
    ``inq.q.m`` with ``inq.q.m.ts`` and ``inq.q.m.ok`` (deliverable); wire slots
    ``mM>d`` (the message), ``pM:d`` (``d``'s proposal to the sender) and ``fM>d`` (the
    final timestamp), each with its timestamp ``ts``."""

    def wire_slots(self) -> list[Slot]:
        out = []
        for m in self.mids:
            p = self.msgs[m][0]
            for d in self.dests(m):
                a = self.mname(m)
                out += [Slot(f"m{m}>{d}", p, d, {"ts": "int"}, f"msg({a})"),
                        Slot(f"p{m}:{d}", d, p, {"ts": "int"}, f"propose({a})"),
                        Slot(f"f{m}>{d}", p, d, {"ts": "int"}, f"final({a})")]
        return out

    def own_schema(self) -> dict[str, str]:
        out = {f"clock.{q}": "int" for q in range(self.n)}
        for m in self.mids:
            out.update({f"wait.{m}": "bool", f"wait.{m}.acc": "int"})
            out.update({f"wait.{m}.left.{d}": "bool" for d in self.dests(m)})
            for q in self.dests(m):
                out.update({f"inq.{q}.{m}": "bool", f"inq.{q}.{m}.ts": "int", f"inq.{q}.{m}.ok": "bool"})
        return out

    def slot_of(self, src: int, dst: int, msg: Any) -> tuple[str, dict[str, int]]:
        from ordercheck.specs.skeen import MSG, PROPOSE

        kind, mid, ts = msg
        key = f"m{mid}>{dst}" if kind == MSG else f"p{mid}:{src}" if kind == PROPOSE else f"f{mid}>{dst}"
        return key, {"ts": ts}

    def encode_own(self, state: tuple, out: dict[str, Any]) -> None:
        from ordercheck.specs.skeen import CLOCKS, QUEUES, WAITING

        for q in range(self.n):
            out[f"clock.{q}"] = state[CLOCKS][q]
            for mid, left, acc in state[WAITING][q]:
                out[f"wait.{mid}"] = True
                out[f"wait.{mid}.acc"] = acc
                for d in self.dests(mid):
                    out[f"wait.{mid}.left.{d}"] = bool(left >> d & 1)
            for ts, mid, ok in state[QUEUES][q]:
                assert not out[f"inq.{q}.{mid}"], "two queue entries for one message"
                out.update({f"inq.{q}.{mid}": True, f"inq.{q}.{mid}.ts": ts, f"inq.{q}.{mid}.ok": bool(ok)})

    def _tick(self, s: SymState, q: int, ts: Any) -> Any:
        return z3.If(s[f"clock.{q}"] >= ts, s[f"clock.{q}"], ts) + 1

    def _combine(self, acc: Any, ts: Any) -> Any:
        bigger = z3.If(acc >= ts, acc, ts)
        if self.spec.take_max:
            return bigger
        if self.spec.mutant_final == "min":
            return z3.If(acc == 0, bigger, z3.If(acc <= ts, acc, ts))
        return z3.If(acc == 0, bigger, acc)

    def protocol_actions(self) -> list[SymAction]:
        out = []
        for m in self.mids:
            p, dmask = self.msgs[m]
            dests = self.dests(m)

            def send(s: SymState, t: SymState, p: int = p, m: int = m, dests: list[int] = dests) -> tuple[Any, dict[str, Any]]:
                guard, upd = self.send_app(s, p, m)
                ts = s[f"clock.{p}"] + 1
                free = [self.put(s, f"m{m}>{d}", {"ts": ts}, upd) for d in dests]
                upd.update({f"clock.{p}": ts, f"wait.{m}": z3.BoolVal(True), f"wait.{m}.acc": z3.IntVal(0)})
                upd.update({f"wait.{m}.left.{d}": z3.BoolVal(True) for d in dests})
                return z3.And(guard, *free), upd

            out.append(self.action(f"send {self.mname(m)}", send, lambda pre, post, p=p, m=m, d=dmask: ("send", p, m, d)))
            for d in dests:
                out += self._message(p, d, m) + self._proposal(p, d, m) + self._final(p, d, m)
                out.append(self._deliver(d, m))
        return out

    def _discard(self, q: int, src: int, kind: int, m: int, key: str, when: Any) -> SymAction:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            upd: dict[str, Any] = {}
            self.take(s, key, upd)
            return z3.And(self.can_take(s, key), when(s)), upd

        return self.action(f"discard {key}", step, lambda pre, post: ("discard", q, src, kind, m))

    def _message(self, p: int, q: int, m: int) -> list[SymAction]:
        key, dd = f"m{m}>{q}", self.spec.discard_duplicates

        def stale(s: SymState) -> Any:
            return z3.And(z3.BoolVal(dd), z3.Or(s[f"inq.{q}.{m}"], s[f"dl.{q}.{m}"]))

        def propose(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            clock = self._tick(s, q, s[f"w.{key}.ts"])
            upd: dict[str, Any] = {f"clock.{q}": clock, f"inq.{q}.{m}": z3.BoolVal(True), f"inq.{q}.{m}.ts": clock,
                                   f"inq.{q}.{m}.ok": z3.BoolVal(False)}
            self.take(s, key, upd)
            free = self.put(s, f"p{m}:{q}", {"ts": clock}, upd)
            return z3.And(self.can_take(s, key), z3.Not(stale(s)), free), upd

        return [self._discard(q, p, 0, m, key, stale),
                self.action(f"propose {key}", propose, lambda pre, post: ("propose", q, m, post[f"clock.{q}"]))]

    def _proposal(self, p: int, d: int, m: int) -> list[SymAction]:
        key, dd, dests = f"p{m}:{d}", self.spec.discard_duplicates, self.dests(m)

        def discarded(s: SymState) -> Any:
            stale = z3.Not(z3.And(s[f"wait.{m}"], s[f"wait.{m}.left.{d}"]))
            return z3.And(stale, z3.Or(z3.BoolVal(dd), z3.Not(s[f"wait.{m}"])))

        def left_after(s: SymState) -> Any:
            return z3.Or([s[f"wait.{m}.left.{o}"] for o in dests if o != d] or [z3.BoolVal(False)])

        def collect(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            ts = s[f"w.{key}.ts"]
            upd: dict[str, Any] = {f"clock.{p}": self._tick(s, p, ts), f"wait.{m}.left.{d}": z3.BoolVal(False),
                                   f"wait.{m}.acc": self._combine(s[f"wait.{m}.acc"], ts)}
            self.take(s, key, upd)
            return z3.And(self.can_take(s, key), z3.Not(discarded(s)), left_after(s)), upd

        def finalise(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            ts = s[f"w.{key}.ts"]
            acc = self._combine(s[f"wait.{m}.acc"], ts)
            upd: dict[str, Any] = {f"clock.{p}": self._tick(s, p, ts), f"wait.{m}": z3.BoolVal(False),
                                   f"wait.{m}.acc": z3.IntVal(0)}
            upd.update({f"wait.{m}.left.{o}": z3.BoolVal(False) for o in dests})
            self.take(s, key, upd)
            free = [self.put(s, f"f{m}>{o}", {"ts": acc}, upd) for o in dests]
            return z3.And(self.can_take(s, key), z3.Not(discarded(s)), z3.Not(left_after(s)), *free), upd

        return [
            self._discard(p, d, 1, m, key, discarded),
            self.action(f"collect {key}", collect, lambda pre, post: ("collect", p, d, m, pre[f"w.{key}.ts"])),
            self.action(f"finalise {key}", finalise,
                        lambda pre, post: ("finalise", p, d, m, pre[f"w.{key}.ts"], post[f"w.f{m}>{dests[0]}.ts"])),
        ]

    def _final(self, p: int, q: int, m: int) -> list[SymAction]:
        key, dd = f"f{m}>{q}", self.spec.discard_duplicates

        def stale(s: SymState) -> Any:
            return z3.And(z3.BoolVal(dd), z3.Not(z3.And(s[f"inq.{q}.{m}"], z3.Not(s[f"inq.{q}.{m}.ok"]))))

        def final(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            ts = s[f"w.{key}.ts"]
            upd: dict[str, Any] = {f"clock.{q}": self._tick(s, q, ts), f"inq.{q}.{m}": z3.BoolVal(True),
                                   f"inq.{q}.{m}.ts": ts, f"inq.{q}.{m}.ok": z3.BoolVal(True)}
            self.take(s, key, upd)
            return z3.And(self.can_take(s, key), z3.Not(stale(s))), upd

        return [self._discard(q, p, 2, m, key, stale),
                self.action(f"final {key}", final, lambda pre, post: ("final", q, m, pre[f"w.{key}.ts"]))]

    def _deliver(self, q: int, m: int) -> SymAction:
        spec = self.spec
        others = [o for o in self.mids if o != m and q in self.dests(o)]

        def pooled(s: SymState, o: int) -> Any:
            return s[f"inq.{q}.{o}"] if spec.wait_for_undeliverable else z3.And(s[f"inq.{q}.{o}"], s[f"inq.{q}.{o}.ok"])

        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            ts = s[f"inq.{q}.{m}.ts"]
            first = []
            for o in others:
                ots = s[f"inq.{q}.{o}.ts"]
                later = z3.Or(ots > ts, z3.And(ots == ts, o > m)) if spec.tiebreak_by_sender else ots >= ts
                first.append(z3.Or(z3.Not(pooled(s, o)), later))
            upd: dict[str, Any] = {f"inq.{q}.{m}": z3.BoolVal(False), f"inq.{q}.{m}.ts": z3.IntVal(0),
                                   f"inq.{q}.{m}.ok": z3.BoolVal(False)}
            upd.update(self.deliver_app(s, q, m))
            return z3.And(s[f"inq.{q}.{m}"], s[f"inq.{q}.{m}.ok"], *first), upd

        return self.action(f"deliver {self.mname(m)} at {self.names[q]}", step, lambda pre, post: ("deliver", q, m))

    def describe_own(self, values: dict[str, Any]) -> list[str]:
        lines = []
        for q, a in enumerate(self.names):
            queue = sorted((values[f"inq.{q}.{m}.ts"], m, values[f"inq.{q}.{m}.ok"]) for m in self.mids
                           if values.get(f"inq.{q}.{m}"))
            lines.append(f"{a}: clock {values[f'clock.{q}']}; queue "
                         + (", ".join(f"{self.mname(m)}@{ts}{'' if ok else '?'}" for ts, m, ok in queue) or "empty"))
        return lines


EXACT = ExactSkeen

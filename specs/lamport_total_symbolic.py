"""Lamport's total-order broadcast as Z3 formulas, beside :mod:`ordercheck.specs.lamport_total`.

A focused encoding of each process's queue and of what it has taken off its links.
Variables (``n`` peers, ``K`` slots per queue, the ``queue_bound``):

* ``clk.q``: ``q``'s Lamport clock; ``sent.q``: its broadcasts so far;
* ``q.q.i.{ts,src,a.d}`` and ``q.q.len``: ``q``'s queue, sorted by ``(timestamp,
  sender)`` as the explicit one, each entry's timestamp, sender and, per process ``d``,
  whether ``q`` holds ``d``'s acknowledgement of it;
* ``R.q.c`` (``c != q``): the largest timestamp ``q`` has taken off the link ``c -> q``
  (a broadcast or an acknowledgement; the explicit ``latest[q][c]``, a ghost under
  ``all_acks``);
* ghosts: the last item ``q`` took off a link, ``in.q.{ts,src,ack}`` and, for a
  broadcast, the acknowledgements ``q`` already held for it ``in.q.a.d`` (the choices
  of those steps); ``q``'s last delivery ``last.q.{has,ts,src}`` and the one before it
  ``prev.q.{has,ts,src}``.

Actions: ``send(q)``: ``q`` stamps a broadcast with ``clk + 1``, queues it with its own
acknowledgement, and its clock becomes ``clk + 2`` (the acknowledgement's event);
``receive(q, c)``: a broadcast from ``c`` arrives, stamped ``x``; it is queued (with
the acknowledgements ``q`` already held for it and ``q``'s own) and ``q``'s clock
becomes ``max(clk, x) + 2``; ``ack(q, c)``: an acknowledgement from ``c`` stamped ``a``
arrives, for the entry in some slot or for a message not queued, and ``q``'s clock
becomes ``max(clk, a) + 1``; ``deliver(q, i)``: the entry in slot ``i`` is delivered
when it is a head (slot 0; any entry of the lowest timestamp without
``tiebreak_by_sender``) and, with ``wait_acks``, every acknowledgement is in
(``all_acks``) or ``R.q.c`` is above its timestamp for every ``c != q``
(``later_timestamp``).

Links are not enumerated: what arrives is a choice within what the spec can put on a
link, so the encoding allows every step of the spec and more. The facts the choices
rest on, each a fact of the explicit spec (``tests/test_symbolic_seeds.py`` checks them
on its explored states, where every explicit step must be a step of this encoding):

* a process stamps what it puts on its links in increasing order, and on FIFO links
  items arrive in that order: a broadcast from ``c`` arrives stamped above ``R.q.c``
  (an acknowledgement too; at least ``R.q.c`` when a link may copy it). Over unordered
  links (``fifo_links`` off), or when a copy of a broadcast is queued again
  (``discard_duplicates`` off on a duplicating link), any stamp may arrive;
* nothing arrives stamped above its sender's clock;
* ``d``'s acknowledgement of a message is stamped above the message (``d`` sends it in
  a later event), so an acknowledgement ``q`` holds for a message when the message
  arrives was stamped above it and has raised ``R.q.d`` past it.

The proof, for any number of broadcasts by the model's senders (queues of at most ``K``
entries): ``clock_bounds``, ``received_below_sender_clock``, ``queue_sorted``,
``acks_after_entry`` (an acknowledgement from ``d`` of a queued entry means ``R.q.d`` is
above the entry), ``entries_after_last`` (every queued entry orders after the last
delivery: a new one arrives above ``R``, a new own one above the clock),
``received_past_last`` (after a delivery stamped ``t``, ``R.q.c >= t`` for every
``c != q``: what the delivery waited for) and ``delivered_in_order``. Targets:

* ``delivered_in_key_order``: each process delivers in strictly increasing
  ``(timestamp, sender)``. A message's key is fixed by its sender and the same at every
  process, and no two messages share one (a sender's clock grows), so two processes
  deliver two common messages in the same order, and the union of all processes'
  orders is the key order (``total``, ``total_global``), when no copy of a broadcast
  is queued twice;
* ``nothing_smaller_to_come``: every queued entry orders after the last delivery ``(t,
  p)``, ``R.q.c >= t`` for every ``c != q``, ``q``'s clock is at least ``t``, and
  ``R.q.c`` is at most ``c``'s clock. On FIFO links that lose nothing, every broadcast
  of ``c`` stamped at most ``t`` has then arrived at ``q`` (links deliver in order and
  ``c`` stamps in increasing order), every later broadcast of ``c`` will be stamped above
  ``c``'s clock, and every arrival was queued until delivered: so ``q`` had delivered
  every message ordered before ``(t, p)``, and each process's deliveries are a prefix of
  the one key order (``total_prefix``).
"""

from __future__ import annotations

from typing import Any

import z3

from ordercheck.specs.symbolic import SlotQueue, SymAction, SymState, all_zero, lex_less, target_properties, zmax
from ordercheck.specs.symbolic_exact import ExactPeers, Slot


class SymbolicLamport:
    """The encoding of a :class:`~ordercheck.specs.lamport_total.LamportTotal` instance (module doc)."""

    def __init__(self, spec: Any, *, queue_bound: int | None = None, bounded: bool = True) -> None:
        self.spec = spec
        self.n = spec.peers
        self.names = spec.names
        self.bounded = bounded
        self.capacity = queue_bound if queue_bound is not None else self.max_queue()
        fields = {"ts": "int", "src": "int", **{f"a.{d}": "bool" for d in range(self.n)}}
        self.queue = SlotQueue("q", fields, self.capacity)
        schema: dict[str, str] = {}
        for q in range(self.n):
            schema.update({f"clk.{q}": "int", f"sent.{q}": "int"})
            schema.update({f"R.{q}.{c}": "int" for c in range(self.n) if c != q})
            schema.update(self.queue.schema(q))
            schema.update({f"in.{q}.ts": "int", f"in.{q}.src": "int", f"in.{q}.ack": "bool"})
            schema.update({f"in.{q}.a.{d}": "bool" for d in range(self.n)})
            for g in ("last", "prev"):
                schema.update({f"{g}.{q}.has": "bool", f"{g}.{q}.ts": "int", f"{g}.{q}.src": "int"})
        self.schema = schema
        self.lemmas = {
            "shape": ("clocks and timestamps are naturals; slots past a queue's length are empty", self.l_shape),
            "clock_bounds": ("no queued entry, received timestamp or delivery is above its process's clock", self.l_clock),
            "received_below_sender_clock": ("nothing taken off a link c -> q is stamped above c's clock", self.l_sender),
            "queue_sorted": ("each queue is sorted by (timestamp, sender), no two entries alike", self.l_sorted),
            "acks_after_entry": ("an acknowledgement from d of a queued entry means q took something from d stamped "
                                 "above the entry", self.l_acks),
            "entries_after_last": ("every entry of a queue orders after its process's last delivery", self.l_after_last),
            "received_past_last": ("after a delivery stamped t, q took something stamped at least t off every link "
                                   "to it", self.l_past_last),
            "delivered_in_order": ("each process's last delivery orders after the one before it", self.l_order),
        }
        self.targets = {
            "delivered_in_key_order": self.lemmas["delivered_in_order"],
            "nothing_smaller_to_come": ("nothing ordered before a process's last delivery is queued or still to "
                                        "arrive from a FIFO link", self.t_nothing_smaller),
        }
        self.properties = target_properties(self.targets)  # BMC of the targets (bmc_queries)
        self.guarantees: dict[str, tuple[str, ...]] = {}
        if not spec.duplicates or spec.discard_duplicates:
            self.guarantees = {"total": ("delivered_in_key_order",), "total_global": ("delivered_in_key_order",)}
            if spec.fifo_links and not spec.lossy:
                self.guarantees["total_prefix"] = ("delivered_in_key_order", "nothing_smaller_to_come")

    def max_queue(self) -> int:
        """The most entries a queue can hold: every broadcast of the model."""
        return max(1, sum(len(plan) for plan in self.spec.plan))

    def init(self, s: SymState) -> z3.BoolRef:
        return all_zero(self.schema, s)

    @staticmethod
    def key_less(a: dict[str, Any], b: dict[str, Any]) -> z3.BoolRef:
        return lex_less([(a["ts"], b["ts"]), (a["src"], b["src"])])

    def others(self, q: int) -> list[int]:
        return [c for c in range(self.n) if c != q]

    # -- actions ------------------------------------------------------------------------

    def actions(self) -> list[SymAction]:
        out = []
        for q in range(self.n):
            a = self.names[q]
            if self.spec.plan[q]:
                out.append(SymAction(f"send {a}", self._send(q), lambda pre, post, q=q: ("send", q, pre[f"clk.{q}"] + 1)))
            for c in self.others(q):
                out.append(SymAction(f"receive {a} from {self.names[c]}", self._receive(q, c),
                                     lambda pre, post, q=q, c=c: ("receive", q, c, post[f"in.{q}.ts"]),
                                     choose=lambda s, t, q=q, c=c: self._choose_receive(s, t, q, c)))
                for i in [*range(self.capacity), None]:
                    out.append(SymAction(f"ack {a} from {self.names[c]} " + ("of no queued entry" if i is None else f"slot {i}"),
                                         self._ack(q, c, i),
                                         lambda pre, post, q=q, c=c: ("ack", q, c, post[f"in.{q}.ts"]),
                                         choose=lambda s, t, q=q, c=c, i=i: self._choose_ack(s, t, q, c, i)))
            for i in range(self.capacity):
                out.append(SymAction(f"deliver {a} slot {i}", self._deliver(q, i),
                                     lambda pre, post, q=q: ("deliver", q, post[f"last.{q}.src"], post[f"last.{q}.ts"])))
        return out

    def _send(self, q: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            clock = s[f"clk.{q}"]
            rec = {"ts": clock + 1, "src": z3.IntVal(q), **{f"a.{d}": z3.BoolVal(d == q) for d in range(self.n)}}
            upd, fits = self.queue.insert(s, q, rec, lambda e: self.key_less(e, rec))
            upd[f"clk.{q}"] = clock + 2
            upd[f"sent.{q}"] = s[f"sent.{q}"] + 1
            guard = fits
            if self.bounded:
                guard = z3.And(fits, s[f"sent.{q}"] < len(self.spec.plan[q]))
            return guard, upd

        return step

    def _fifo_arrival(self) -> bool:
        """Whether a broadcast arrives stamped above everything taken off its link before
        (FIFO links, and no copy of a broadcast queued again)."""
        spec = self.spec
        return bool(spec.fifo_links and (not spec.duplicates or spec.discard_duplicates))

    def _choose_in(self, s: SymState, t: SymState, q: int, c: int, *, above: bool) -> list[Any]:
        x = t[f"in.{q}.ts"]
        parts = [x >= 1, x <= s[f"clk.{c}"], t[f"in.{q}.src"] == c]
        if self.spec.fifo_links:
            parts.append(x > s[f"R.{q}.{c}"] if above else x >= s[f"R.{q}.{c}"])
        return parts

    def _choose_receive(self, s: SymState, t: SymState, q: int, c: int) -> z3.BoolRef:
        """A broadcast from ``c``: stamped within ``c``'s clock (above ``R.q.c`` on FIFO
        links); each acknowledgement ``q`` already holds for it came stamped above it."""
        x = t[f"in.{q}.ts"]
        parts = self._choose_in(s, t, q, c, above=True) if self._fifo_arrival() else [
            x >= 1, x <= s[f"clk.{c}"], t[f"in.{q}.src"] == c]
        parts.append(z3.Not(t[f"in.{q}.a.{q}"]))
        parts += [z3.Implies(t[f"in.{q}.a.{d}"], s[f"R.{q}.{d}"] > x) for d in self.others(q)]
        return z3.And(parts)

    def _receive(self, q: int, c: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            x = t[f"in.{q}.ts"]
            rec = {"ts": x, "src": z3.IntVal(c), **{f"a.{d}": z3.BoolVal(True) if d == q else t[f"in.{q}.a.{d}"]
                                                    for d in range(self.n)}}
            upd, fits = self.queue.insert(s, q, rec, lambda e: self.key_less(e, rec),
                                          remove=lambda e: z3.And(e["ts"] == x, e["src"] == c))
            upd.update({f"clk.{q}": zmax(s[f"clk.{q}"], x) + 2, f"R.{q}.{c}": zmax(s[f"R.{q}.{c}"], x),
                        f"in.{q}.ts": x, f"in.{q}.src": t[f"in.{q}.src"], f"in.{q}.ack": z3.BoolVal(False)})
            upd.update({f"in.{q}.a.{d}": t[f"in.{q}.a.{d}"] for d in range(self.n)})
            return fits, upd

        return step

    def _choose_ack(self, s: SymState, t: SymState, q: int, c: int, i: int | None) -> z3.BoolRef:
        """An acknowledgement from ``c``: stamped within ``c``'s clock (above ``R.q.c`` on
        FIFO links, or at least it where a link may copy it), and above the entry it
        acknowledges."""
        parts = self._choose_in(s, t, q, c, above=not self.spec.duplicates)
        if i is not None:
            parts.append(t[f"in.{q}.ts"] > self.queue.slot(s, q, i)["ts"])
        return z3.And(parts)

    def _ack(self, q: int, c: int, i: int | None) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            a = t[f"in.{q}.ts"]
            upd: dict[str, Any] = {f"clk.{q}": zmax(s[f"clk.{q}"], a) + 1, f"R.{q}.{c}": zmax(s[f"R.{q}.{c}"], a),
                                   f"in.{q}.ts": a, f"in.{q}.src": t[f"in.{q}.src"], f"in.{q}.ack": z3.BoolVal(True)}
            upd.update({f"in.{q}.a.{d}": z3.BoolVal(False) for d in range(self.n)})
            if i is None:
                return z3.BoolVal(True), upd
            upd[f"q.{q}.{i}.a.{c}"] = z3.BoolVal(True)
            return self.queue.length(s, q) > i, upd

        return step

    def _deliverable(self, s: SymState, q: int, i: int) -> z3.BoolRef:
        """The explicit ``heads`` and ``may_deliver``: slot ``i`` is a head of ``q``'s
        queue that ``q`` may deliver now."""
        spec = self.spec
        e = self.queue.slot(s, q, i)
        parts = [self.queue.length(s, q) > i]
        if spec.tiebreak_by_sender:
            parts.append(z3.BoolVal(i == 0))
        else:
            parts.append(e["ts"] == self.queue.slot(s, q, 0)["ts"])
        if spec.wait_acks:
            if spec.rule == "all_acks":
                parts += [e[f"a.{d}"] for d in range(self.n)]
            else:
                parts += [s[f"R.{q}.{c}"] > e["ts"] for c in self.others(q)]
        return z3.And(parts)

    def _deliver(self, q: int, i: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            e = self.queue.slot(s, q, i)
            upd = self.queue.remove_at(s, q, i)
            for f in ("has", "ts", "src"):
                upd[f"prev.{q}.{f}"] = s[f"last.{q}.{f}"]
            upd.update({f"last.{q}.has": z3.BoolVal(True), f"last.{q}.ts": e["ts"], f"last.{q}.src": e["src"]})
            return self._deliverable(s, q, i), upd

        return step

    # -- lemmas and targets -------------------------------------------------------------

    def _last(self, s: SymState, q: int, g: str = "last") -> dict[str, Any]:
        return {"ts": s[f"{g}.{q}.ts"], "src": s[f"{g}.{q}.src"]}

    def l_shape(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q, a in enumerate(self.names):
            n = self.queue.length(s, q)
            out += [(f"{a}'s clock and sends are naturals", z3.And(s[f"clk.{q}"] >= 0, s[f"sent.{q}"] >= 0)),
                    (f"{a}'s queue length is within its slots", z3.And(n >= 0, n <= self.capacity))]
            out += [(f"{a}'s largest timestamp from {self.names[c]} is a natural", s[f"R.{q}.{c}"] >= 0)
                    for c in self.others(q)]
            for g in ("last", "prev"):
                out.append((f"{a}'s {g} delivery has a positive timestamp and a sender",
                            z3.Implies(s[f"{g}.{q}.has"], z3.And(s[f"{g}.{q}.ts"] >= 1, s[f"{g}.{q}.src"] >= 0,
                                                                   s[f"{g}.{q}.src"] < self.n))))
            for i, (live, e) in enumerate(self.queue.live(s, q)):
                empty = z3.And(e["ts"] == 0, e["src"] == 0, *[z3.Not(e[f"a.{d}"]) for d in range(self.n)])
                out.append((f"{a}'s slot {i} holds a positive timestamp and a sender, or nothing",
                            z3.If(live, z3.And(e["ts"] >= 1, e["src"] >= 0, e["src"] < self.n), empty)))
        return out

    def l_clock(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q, a in enumerate(self.names):
            clock = s[f"clk.{q}"]
            out += [(f"{a}'s slot {i} is not above {a}'s clock", z3.Implies(live, e["ts"] <= clock))
                    for i, (live, e) in enumerate(self.queue.live(s, q))]
            out += [(f"{a}'s largest timestamp from {self.names[c]} is not above {a}'s clock", s[f"R.{q}.{c}"] <= clock)
                    for c in self.others(q)]
            out.append((f"{a}'s last delivery is not above its clock",
                        z3.Implies(s[f"last.{q}.has"], s[f"last.{q}.ts"] <= clock)))
        return out

    def l_sender(self, s: SymState) -> list[tuple[str, Any]]:
        return [(f"{self.names[q]}'s largest timestamp from {self.names[c]} is not above {self.names[c]}'s clock",
                 s[f"R.{q}.{c}"] <= s[f"clk.{c}"]) for q in range(self.n) for c in self.others(q)]

    def l_sorted(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q, a in enumerate(self.names):
            live = self.queue.live(s, q)
            for i in range(self.capacity - 1):
                out.append((f"{a}'s slot {i} orders before slot {i + 1}",
                            z3.Implies(live[i + 1][0], self.key_less(live[i][1], live[i + 1][1]))))
        return out

    def l_acks(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q, a in enumerate(self.names):
            for i, (live, e) in enumerate(self.queue.live(s, q)):
                for d in self.others(q):
                    out.append((f"an acknowledgement from {self.names[d]} of {a}'s slot {i} means {a} took something "
                                f"from {self.names[d]} stamped above it",
                                z3.Implies(z3.And(live, e[f"a.{d}"]), s[f"R.{q}.{d}"] > e["ts"])))
        return out

    def l_after_last(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for q, a in enumerate(self.names):
            last = self._last(s, q)
            for i, (live, e) in enumerate(self.queue.live(s, q)):
                out.append((f"{a}'s slot {i} orders after {a}'s last delivery",
                            z3.Implies(z3.And(live, s[f"last.{q}.has"]), self.key_less(last, e))))
        return out

    def l_past_last(self, s: SymState) -> list[tuple[str, Any]]:
        return [(f"{self.names[q]} took something stamped at least its last delivery's timestamp from {self.names[c]}",
                 z3.Implies(s[f"last.{q}.has"], s[f"R.{q}.{c}"] >= s[f"last.{q}.ts"]))
                for q in range(self.n) for c in self.others(q)]

    def l_order(self, s: SymState) -> list[tuple[str, Any]]:
        return [(f"{a}'s last delivery orders after the one before it",
                 z3.Implies(s[f"prev.{q}.has"], z3.And(s[f"last.{q}.has"],
                                                        self.key_less(self._last(s, q, "prev"), self._last(s, q)))))
                for q, a in enumerate(self.names)]

    def t_nothing_smaller(self, s: SymState) -> list[tuple[str, Any]]:
        out = self.l_after_last(s) + self.l_past_last(s) + self.l_sender(s)
        out += [(f"{a}'s clock is at least its last delivery's timestamp",
                 z3.Implies(s[f"last.{q}.has"], s[f"last.{q}.ts"] <= s[f"clk.{q}"])) for q, a in enumerate(self.names)]
        return out

    # -- readable states and the explicit side ------------------------------------------

    def format_action(self, label: tuple) -> str:
        a = self.names[label[1]]
        if label[0] == "send":
            return f"{a} broadcasts a message stamped {label[2]}"
        if label[0] == "receive":
            return f"{a} queues a broadcast from {self.names[label[2]]} stamped {label[3]}"
        if label[0] == "ack":
            return f"{a} takes an acknowledgement from {self.names[label[2]]} stamped {label[3]}"
        return f"{a} delivers {self._key(label[3], label[2])}"

    def _key(self, ts: int, src: int) -> str:
        who = self.names[src] if 0 <= src < self.n else str(src)
        return f"({ts}, {who})"

    def describe(self, values: dict[str, Any]) -> dict[str, Any]:
        lines = []
        for q, a in enumerate(self.names):
            entries = []
            for i in range(min(max(values[f"q.{q}.len"], 0), self.capacity)):
                acks = "".join(self.names[d] for d in range(self.n) if values[f"q.{q}.{i}.a.{d}"])
                entries.append(f"{self._key(values[f'q.{q}.{i}.ts'], values[f'q.{q}.{i}.src'])} acked by {acks or '-'}")
            got = ", ".join(f"{self.names[c]}:{values[f'R.{q}.{c}']}" for c in self.others(q))
            line = f"{a}: clock {values[f'clk.{q}']}; queue [{', '.join(entries)}]; largest timestamp taken from {got}"
            for g, word in (("prev", "delivery before"), ("last", "last delivery")):
                if values[f"{g}.{q}.has"]:
                    line += f"; {word} {self._key(values[f'{g}.{q}.ts'], values[f'{g}.{q}.src'])}"
            lines.append(line)
        return {"lines": lines}

    def encode(self, state: tuple, prev: tuple | None = None) -> dict[str, Any]:
        """An explicit state as variable values; ``prev = (pre_state, pre_values,
        label)`` gives the ghosts (``R``, ``in``, ``last``, ``prev``) from the step that
        reached ``state`` (see :mod:`ordercheck.specs.bss_symbolic`)."""
        from ordercheck.specs.async_peers import GHOST
        from ordercheck.specs.lamport_total import ACKS, CLOCKS, QUEUES

        n = self.n
        out: dict[str, Any] = {}
        for q in range(n):
            out[f"clk.{q}"] = state[CLOCKS][q]
            out[f"sent.{q}"] = len(state[GHOST][0][q])
            queue = state[QUEUES][q]
            out[f"q.{q}.len"] = len(queue)
            for i in range(self.capacity):
                ts, src, mid = queue[i] if i < len(queue) else (0, 0, None)
                mask = state[ACKS][q][mid] if mid is not None else 0
                out.update({f"q.{q}.{i}.ts": ts, f"q.{q}.{i}.src": src})
                out.update({f"q.{q}.{i}.a.{d}": bool(mask >> d & 1) for d in range(n)})
            ghosts = [f"R.{q}.{c}" for c in self.others(q)]
            ghosts += [f"in.{q}.ts", f"in.{q}.src", f"in.{q}.ack", *(f"in.{q}.a.{d}" for d in range(n))]
            ghosts += [f"{g}.{q}.{f}" for g in ("last", "prev") for f in ("has", "ts", "src")]
            for key in ghosts:
                out[key] = prev[1][key] if prev is not None else (False if self.schema[key] == "bool" else 0)
        if prev is None:
            return out
        pre_state, pre_values, label = prev
        kind = label[0]
        if kind in ("receive", "ack"):
            q = label[1]
            if kind == "receive":
                mid, ts = label[2], label[3]
                src = mid // self.spec.stride
                held = pre_state[ACKS][q][mid] & ~(1 << q)
            else:
                src, ts, held = label[2], label[4], 0
            out[f"R.{q}.{src}"] = max(pre_values[f"R.{q}.{src}"], ts)
            out.update({f"in.{q}.ts": ts, f"in.{q}.src": src, f"in.{q}.ack": kind == "ack"})
            out.update({f"in.{q}.a.{d}": bool(held >> d & 1) for d in range(n)})
        elif kind == "deliver":
            q, mid = label[1], label[2]
            ts, src, _mid = next(e for e in pre_state[QUEUES][q] if e[2] == mid)
            for f in ("has", "ts", "src"):
                out[f"prev.{q}.{f}"] = pre_values[f"last.{q}.{f}"]
            out.update({f"last.{q}.has": True, f"last.{q}.ts": ts, f"last.{q}.src": src})
        return out


SYMBOLIC = SymbolicLamport


class ExactLamport(ExactPeers):
    """Lamport's total order step for step, for one model's plan
    (:mod:`ordercheck.specs.symbolic_exact`): ``clock.p``; ``q``'s queue as ``inq.q.m`` with
    the entry's timestamp ``inq.q.m.ts`` (the sender is ``m``'s); ``ack.q.m.c`` (``q``
    has ``c``'s acknowledgement of ``m``); ``latest.q.c``; wire slots ``mM>q`` (the
    broadcast ``M`` to ``q``) and ``aM:c>q`` (``c``'s acknowledgement of ``M`` to ``q``),
    each with its timestamp ``ts``."""

    def wire_slots(self) -> list[Slot]:
        n, out = self.n, []
        for m in self.mids:
            p = self.msgs[m][0]
            out += [Slot(f"m{m}>{q}", p, q, {"ts": "int"}, self.mname(m)) for q in range(n) if q != p]
            out += [Slot(f"a{m}:{c}>{q}", c, q, {"ts": "int"}, f"ack({self.mname(m)})")
                    for c in range(n) for q in range(n) if q != c]
        return out

    def own_schema(self) -> dict[str, str]:
        n, out = self.n, {}
        for q in range(n):
            out[f"clock.{q}"] = "int"
            for c in range(n):
                out[f"latest.{q}.{c}"] = "int"
            for m in self.mids:
                out.update({f"inq.{q}.{m}": "bool", f"inq.{q}.{m}.ts": "int"})
                out.update({f"ack.{q}.{m}.{c}": "bool" for c in range(n)})
        return out

    def slot_of(self, src: int, dst: int, msg: Any) -> tuple[str, dict[str, int]]:
        from ordercheck.specs.lamport_total import MSG

        kind, mid, ts = msg
        return (f"m{mid}>{dst}" if kind == MSG else f"a{mid}:{src}>{dst}"), {"ts": ts}

    def encode_own(self, state: tuple, out: dict[str, Any]) -> None:
        from ordercheck.specs.lamport_total import ACKS, CLOCKS, LATEST, QUEUES

        for q in range(self.n):
            out[f"clock.{q}"] = state[CLOCKS][q]
            for c in range(self.n):
                out[f"latest.{q}.{c}"] = state[LATEST][q][c]
            for ts, _src, m in state[QUEUES][q]:
                out[f"inq.{q}.{m}"] = True
                out[f"inq.{q}.{m}.ts"] = ts
            for m in self.mids:
                for c in range(self.n):
                    out[f"ack.{q}.{m}.{c}"] = bool(state[ACKS][q][m] >> c & 1)

    def _acks_out(self, s: SymState, c: int, m: int, ts: Any, upd: dict[str, Any]) -> list[Any]:
        return [self.put(s, f"a{m}:{c}>{q}", {"ts": ts}, upd) for q in range(self.n) if q != c]

    def _seen(self, s: SymState, q: int, src: int, ts: Any, upd: dict[str, Any]) -> None:
        if self.spec.track_latest:
            old = s[f"latest.{q}.{src}"]
            upd[f"latest.{q}.{src}"] = z3.If(ts > old, ts, old)

    def protocol_actions(self) -> list[SymAction]:
        n, out = self.n, []
        for m in self.mids:
            p, dmask = self.msgs[m]

            def send(s: SymState, t: SymState, p: int = p, m: int = m) -> tuple[Any, dict[str, Any]]:
                guard, upd = self.send_app(s, p, m)
                ts = s[f"clock.{p}"] + 1
                free = [self.put(s, f"m{m}>{q}", {"ts": ts}, upd) for q in range(n) if q != p]
                free += self._acks_out(s, p, m, ts + 1, upd)
                upd.update({f"inq.{p}.{m}": z3.BoolVal(True), f"inq.{p}.{m}.ts": ts,
                            f"ack.{p}.{m}.{p}": z3.BoolVal(True), f"clock.{p}": ts + 1})
                return z3.And(guard, *free), upd

            out.append(self.action(f"send {self.mname(m)}", send, lambda pre, post, p=p, m=m, d=dmask: ("send", p, m, d)))
            for q in range(n):
                if q != p:
                    out += self._receipts(p, q, m)
                for c in range(n):
                    if c != q:
                        out.append(self._ack(c, q, m))
                out.append(self._deliver(q, m))
        return out

    def _receipts(self, p: int, q: int, m: int) -> list[SymAction]:
        key = f"m{m}>{q}"
        dup = z3.BoolVal(self.spec.discard_duplicates)

        def discard(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            upd: dict[str, Any] = {}
            self.take(s, key, upd)
            return z3.And(self.can_take(s, key), dup, s[f"ack.{q}.{m}.{q}"]), upd

        def receive(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            ts = s[f"w.{key}.ts"]
            upd: dict[str, Any] = {}
            self.take(s, key, upd)
            clock = z3.If(s[f"clock.{q}"] >= ts, s[f"clock.{q}"], ts) + 2
            self._seen(s, q, p, ts, upd)
            free = self._acks_out(s, q, m, clock, upd)
            upd.update({f"clock.{q}": clock, f"ack.{q}.{m}.{q}": z3.BoolVal(True), f"inq.{q}.{m}": z3.BoolVal(True),
                        f"inq.{q}.{m}.ts": z3.If(s[f"inq.{q}.{m}"], s[f"inq.{q}.{m}.ts"], ts)})
            return z3.And(self.can_take(s, key), z3.Not(z3.And(dup, s[f"ack.{q}.{m}.{q}"])), *free), upd

        return [
            self.action(f"discard {self.mname(m)} at {self.names[q]}", discard, lambda pre, post: ("discard", q, p, m)),
            self.action(f"receive {self.mname(m)} at {self.names[q]}", receive,
                        lambda pre, post: ("receive", q, m, pre[f"w.{key}.ts"])),
        ]

    def _ack(self, c: int, q: int, m: int) -> SymAction:
        key = f"a{m}:{c}>{q}"

        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            ts = s[f"w.{key}.ts"]
            upd: dict[str, Any] = {}
            self.take(s, key, upd)
            self._seen(s, q, c, ts, upd)
            upd.update({f"clock.{q}": z3.If(s[f"clock.{q}"] >= ts, s[f"clock.{q}"], ts) + 1,
                        f"ack.{q}.{m}.{c}": z3.BoolVal(True)})
            return self.can_take(s, key), upd

        return self.action(f"{self.names[q]} gets {self.names[c]}'s ack of {self.mname(m)}", step,
                           lambda pre, post: ("ack", q, c, m, pre[f"w.{key}.ts"]))

    def _deliver(self, q: int, m: int) -> SymAction:
        spec, n = self.spec, self.n
        sender = self.msgs[m][0]

        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            ts = s[f"inq.{q}.{m}.ts"]
            head = []
            for o in self.mids:
                if o == m:
                    continue
                ots = s[f"inq.{q}.{o}.ts"]
                if spec.tiebreak_by_sender:
                    later = z3.Or(ots > ts, z3.And(ots == ts, (self.msgs[o][0], o) > (sender, m)))
                else:
                    later = ots >= ts
                head.append(z3.Or(z3.Not(s[f"inq.{q}.{o}"]), later))
            if not spec.wait_acks:
                may = z3.BoolVal(True)
            elif spec.rule == "all_acks":
                may = z3.And([s[f"ack.{q}.{m}.{c}"] for c in range(n)])
            else:
                may = z3.And([s[f"latest.{q}.{c}"] > ts for c in range(n) if c != q])
            upd: dict[str, Any] = {f"inq.{q}.{m}": z3.BoolVal(False), f"inq.{q}.{m}.ts": z3.IntVal(0)}
            upd.update(self.deliver_app(s, q, m))
            return z3.And(s[f"inq.{q}.{m}"], may, *head), upd

        return self.action(f"deliver {self.mname(m)} at {self.names[q]}", step, lambda pre, post: ("deliver", q, m))

    def describe_own(self, values: dict[str, Any]) -> list[str]:
        lines = []
        for q, a in enumerate(self.names):
            queue = sorted((values[f"inq.{q}.{m}.ts"], m) for m in self.mids if values[f"inq.{q}.{m}"])
            lines.append(f"{a}: clock {values[f'clock.{q}']}; queue "
                         + (", ".join(f"{self.mname(m)}@{ts}" for ts, m in queue) or "empty"))
        return lines


EXACT = ExactLamport

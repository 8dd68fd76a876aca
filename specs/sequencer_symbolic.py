"""The sequencer's total order as Z3 formulas, beside the explicit :mod:`ordercheck.specs.sequencer`.

A focused encoding of the numbering and the delivery rule. Variables (``n`` peers):

* ``C``: the sequencer's counter (the next number it gives);
* ``E.q``: the next number peer ``q`` delivers (``expect``), as in the explicit spec;
* ghosts: ``D.q``, how many messages ``q`` has delivered, and ``q``'s last delivery:
  ``last.q.has``, its number ``last.q.num`` (``-1``: a message delivered without a
  number, the ``own_via_sequencer`` shortcut) and its position ``last.q.pos`` in
  ``q``'s deliveries (from 0).

Actions: ``send(p)`` (with ``own_via_sequencer`` off, ``p`` delivers its message at
once, unnumbered), ``sequence`` (``C += 1``), ``deliver(q)``: *some* numbered message
(a number below ``C``) is delivered; with ``hold_back`` only the number ``E.q``, which
``E.q`` then passes; ``skip(q)`` (``own_via_sequencer`` off): ``q`` passes ``E.q``
without delivering. Messages on channels and held back are not enumerated: the number
delivered is a nondeterministic choice, so the encoding allows every delivery the
explicit spec allows (over FIFO or unordered channels, with losses and copies) and
more; receiving into the hold-back set and discarding change none of these variables.
``tests/test_symbolic_seeds.py`` checks on the explicit state space that every
explicit step is a step of this encoding and every reachable state satisfies the lemmas.

The proof, for any number of broadcasts: ``expect_counts_deliveries`` (``E.q = D.q <=
C``) and ``delivery_by_number`` (``q``'s delivery at position ``i`` is the message
numbered ``i``). The sequencer gives each number once (its counter only grows), so
every peer's deliveries are the numbered messages 0, 1, 2... in that order: each peer's
delivery sequence is a prefix of the sequencer's one order (``total``,
``total_global``, ``total_prefix``), for models whose channels make no copies (a copy
reaching the sequencer is numbered twice, as the spec says).
"""

from __future__ import annotations

from typing import Any

import z3

from ordercheck.specs.symbolic import SymAction, SymState, target_properties
from ordercheck.specs.symbolic_exact import ExactPeers, Slot


class SymbolicSequencer:
    """The encoding of a :class:`~ordercheck.specs.sequencer.Sequencer` instance (module doc)."""

    def __init__(self, spec: Any, *, queue_bound: int | None = None, bounded: bool = True) -> None:
        self.spec = spec
        self.n = spec.peers
        self.names = spec.names
        self.bounded = bounded
        schema: dict[str, str] = {"C": "int"}
        for q in range(self.n):
            schema.update({f"sent.{q}": "int", f"E.{q}": "int", f"D.{q}": "int",
                           f"last.{q}.has": "bool", f"last.{q}.num": "int", f"last.{q}.pos": "int"})
        self.schema = schema
        self.lemmas = {
            "shape": ("counts are naturals; every number a peer expects was given or is next", self.l_shape),
            "expect_counts_deliveries": ("the next number a peer delivers is the number of its deliveries", self.l_counts),
            "delivery_by_number": ("each peer's last delivery, at position i, was the message numbered i", self.l_order),
        }
        self.targets = {"total_by_number": self.lemmas["delivery_by_number"]}
        self.properties = target_properties(self.targets)  # BMC of the targets (bmc_queries)
        self.guarantees: dict[str, tuple[str, ...]] = {}
        if not spec.duplicates:
            self.guarantees = {name: ("total_by_number",) for name in ("total", "total_global", "total_prefix")}

    def max_queue(self) -> int:
        """No queue is enumerated: 0 (any number of messages may be in flight)."""
        return 0

    def init(self, s: SymState) -> z3.BoolRef:
        parts = [s[v] == 0 for v, kind in self.schema.items() if kind == "int"]
        parts += [z3.Not(s[f"last.{q}.has"]) for q in range(self.n)]
        return z3.And(parts)

    def _delivery(self, s: SymState, q: int, num: Any) -> dict[str, Any]:
        return {f"D.{q}": s[f"D.{q}"] + 1, f"last.{q}.has": z3.BoolVal(True), f"last.{q}.num": num,
                f"last.{q}.pos": s[f"D.{q}"]}

    def actions(self) -> list[SymAction]:
        spec = self.spec
        out = []
        for p in range(self.n):
            limit = len(spec.plan[p])

            def send(s: SymState, t: SymState, p: int = p, limit: int = limit) -> tuple[Any, dict[str, Any]]:
                guard = s[f"sent.{p}"] < limit if self.bounded else z3.BoolVal(limit > 0)
                upd: dict[str, Any] = {f"sent.{p}": s[f"sent.{p}"] + 1}
                if not spec.own_via_sequencer:
                    upd.update(self._delivery(s, p, z3.IntVal(-1)))
                return guard, upd

            out.append(SymAction(f"send {self.names[p]}", send, lambda pre, post, p=p: ("send", p)))
        out.append(SymAction("sequence", lambda s, t: (z3.BoolVal(True), {"C": s["C"] + 1}), lambda pre, post: ("sequence",)))
        for q in range(self.n):
            def deliver(s: SymState, t: SymState, q: int = q) -> tuple[Any, dict[str, Any]]:
                num = t[f"last.{q}.num"]
                upd = self._delivery(s, q, num)
                if spec.hold_back:
                    upd[f"E.{q}"] = s[f"E.{q}"] + 1
                return z3.BoolVal(True), upd

            def choose(s: SymState, t: SymState, q: int = q) -> z3.BoolRef:
                num = t[f"last.{q}.num"]
                if spec.hold_back:
                    return z3.And(num == s[f"E.{q}"], num < s["C"])
                return z3.And(num >= 0, num < s["C"])

            out.append(SymAction(f"deliver {self.names[q]}", deliver,
                                 lambda pre, post, q=q: ("deliver", q, post[f"last.{q}.num"]), choose=choose))
            if spec.hold_back and not spec.own_via_sequencer:
                def skip(s: SymState, t: SymState, q: int = q) -> tuple[Any, dict[str, Any]]:
                    return s[f"E.{q}"] < s["C"], {f"E.{q}": s[f"E.{q}"] + 1}

                out.append(SymAction(f"skip {self.names[q]}", skip, lambda pre, post, q=q: ("skip", q)))
        return out

    def l_shape(self, s: SymState) -> list[tuple[str, Any]]:
        out = [("the counter is a natural", s["C"] >= 0)]
        for q, a in enumerate(self.names):
            out += [(f"{a} has sent a natural number of messages", s[f"sent.{q}"] >= 0),
                    (f"{a}'s delivery count is a natural", s[f"D.{q}"] >= 0),
                    (f"{a} expects a number already given or the next", z3.And(s[f"E.{q}"] >= 0, s[f"E.{q}"] <= s["C"])),
                    (f"{a}'s last delivery is its latest", z3.Implies(s[f"last.{q}.has"], s[f"last.{q}.pos"] == s[f"D.{q}"] - 1))]
        return out

    def l_counts(self, s: SymState) -> list[tuple[str, Any]]:
        return [(f"{a} expects number {a}'s delivery count", s[f"E.{q}"] == s[f"D.{q}"]) for q, a in enumerate(self.names)]

    def l_order(self, s: SymState) -> list[tuple[str, Any]]:
        return [(f"{a}'s last delivery is numbered with its position",
                 z3.Implies(s[f"last.{q}.has"], z3.And(s[f"last.{q}.num"] == s[f"last.{q}.pos"], s[f"last.{q}.num"] < s["C"])))
                for q, a in enumerate(self.names)]

    def format_action(self, label: tuple) -> str:
        if label[0] == "deliver":
            return f"{self.names[label[1]]} delivers the message numbered {label[2]}"
        if label[0] == "sequence":
            return "the sequencer numbers a message"
        if label[0] == "skip":
            return f"{self.names[label[1]]} passes a number"
        return f"{self.names[label[1]]} sends"

    def describe(self, values: dict[str, Any]) -> dict[str, Any]:
        lines = [f"sequencer: next number {values['C']}"]
        for q, a in enumerate(self.names):
            line = f"{a}: sent {values[f'sent.{q}']}; expects #{values[f'E.{q}']}; delivered {values[f'D.{q}']}"
            if values[f"last.{q}.has"]:
                num = values[f"last.{q}.num"]
                line += f"; last delivery (position {values[f'last.{q}.pos']}) " + (f"#{num}" if num >= 0 else "unnumbered")
            lines.append(line)
        return {"lines": lines}

    def encode(self, state: tuple, prev: tuple | None = None) -> dict[str, Any]:
        """An explicit state as variable values; ``prev = (pre_state, pre_values,
        label)`` gives the last-delivery ghost (see :mod:`ordercheck.specs.bss_symbolic`)."""
        from ordercheck.specs.async_peers import GHOST
        from ordercheck.specs.history import DELIVER, decode_event
        from ordercheck.specs.sequencer import COUNTER, EXPECT

        ghost = state[GHOST]
        out: dict[str, Any] = {"C": state[COUNTER]}
        for q in range(self.n):
            out[f"sent.{q}"] = len(ghost[0][q])
            out[f"E.{q}"] = state[EXPECT][q]
            out[f"D.{q}"] = sum(1 for code in ghost[1][q] if decode_event(code).kind == DELIVER)
            out.update({f"last.{q}.has": False, f"last.{q}.num": 0, f"last.{q}.pos": 0})
        if prev is not None:
            pre_state, pre_values, label = prev
            for q in range(self.n):
                for key in (f"last.{q}.has", f"last.{q}.num", f"last.{q}.pos"):
                    out[key] = pre_values[key]
            delivered = label[0] == "deliver" or (label[0] == "send" and not self.spec.own_via_sequencer)
            if delivered:
                q = label[1]
                out[f"last.{q}.has"] = True
                out[f"last.{q}.pos"] = pre_values[f"D.{q}"]
                out[f"last.{q}.num"] = self._number(pre_state, q, label) if label[0] == "deliver" else -1
        return out

    def _number(self, pre_state: tuple, q: int, label: tuple) -> int:
        """The number of the message ``q`` delivers by ``label`` in ``pre_state``."""
        from ordercheck.specs.async_peers import CHANS
        from ordercheck.specs.sequencer import EXPECT, HELD

        mid = label[2]
        if self.spec.hold_back:
            return pre_state[EXPECT][q]
        found = [m[0] for (src, dst), msgs in pre_state[CHANS] if dst == q for m in msgs
                 if isinstance(m, tuple) and m[1] == mid]
        held = [k for k, m in pre_state[HELD][q] if m == mid]
        return (found or held)[0]


SYMBOLIC = SymbolicSequencer


class ExactSequencer(ExactPeers):
    """The sequencer step for step, for one model's plan (:mod:`ordercheck.specs.symbolic_exact`):
    ``C`` the sequencer's counter, ``E.q`` the number ``q`` expects, ``held.q.m`` (with
    its number ``held.q.m.k``) ``q``'s hold-back set; wire slots ``m>S`` (a message on its
    way to the sequencer) and ``m>q`` (numbered, field ``k``, on its way to ``q``)."""

    def wire_slots(self) -> list[Slot]:
        S = self.n
        out = [Slot(f"{m}>S", self.msgs[m][0], S, {}, self.mname(m)) for m in self.mids]
        out += [Slot(f"{m}>{q}", S, q, {"k": "int"}, self.mname(m)) for m in self.mids for q in range(self.n)]
        return out

    def own_schema(self) -> dict[str, str]:
        out = {"C": "int"}
        for q in range(self.n):
            out[f"E.{q}"] = "int"
            for m in self.mids:
                out.update({f"held.{q}.{m}": "bool", f"held.{q}.{m}.k": "int"})
        return out

    def slot_of(self, src: int, dst: int, msg: Any) -> tuple[str, dict[str, int]]:
        if dst == self.n:
            return f"{msg}>S", {}
        return f"{msg[1]}>{dst}", {"k": msg[0]}

    def encode_own(self, state: tuple, out: dict[str, Any]) -> None:
        from ordercheck.specs.sequencer import COUNTER, EXPECT, HELD

        out["C"] = state[COUNTER]
        for q in range(self.n):
            out[f"E.{q}"] = state[EXPECT][q]
            for k, m in state[HELD][q]:
                out[f"held.{q}.{m}"] = True
                out[f"held.{q}.{m}.k"] = k

    def protocol_actions(self) -> list[SymAction]:
        spec = self.spec
        out = []
        for m in self.mids:
            p, dmask = self.msgs[m]

            def send(s: SymState, t: SymState, p: int = p, m: int = m) -> tuple[Any, dict[str, Any]]:
                guard, upd = self.send_app(s, p, m)
                free = self.put(s, f"{m}>S", {}, upd)
                if not spec.own_via_sequencer:
                    upd.update(self.deliver_app(s, p, m, after_send=True))
                return z3.And(guard, free), upd

            out.append(self.action(f"send {self.mname(m)}", send, lambda pre, post, p=p, m=m, d=dmask: ("send", p, m, d)))

            def sequence(s: SymState, t: SymState, m: int = m) -> tuple[Any, dict[str, Any]]:
                upd: dict[str, Any] = {"C": s["C"] + 1}
                self.take(s, f"{m}>S", upd)
                free = [self.put(s, f"{m}>{q}", {"k": s["C"]}, upd) for q in range(self.n)]
                return z3.And(self.can_take(s, f"{m}>S"), *free), upd

            out.append(self.action(f"sequence {self.mname(m)}", sequence,
                                   lambda pre, post, p=p, m=m: ("sequence", p, m, pre["C"])))
            for q in range(self.n):
                out += self._arrivals(q, m)
                if spec.hold_back:
                    out.append(self._from_held(q, m))
        return out

    def _early(self, q: int, m: int) -> bool:
        return not self.spec.own_via_sequencer and self.msgs[m][0] == q

    def _arrivals(self, q: int, m: int) -> list[SymAction]:
        spec, key = self.spec, f"{m}>{q}"

        def k_of(s: SymState) -> Any:
            return s[f"w.{key}.k"]

        if spec.hold_back:
            def dup(s: SymState) -> Any:
                return z3.Or(k_of(s) < s[f"E.{q}"], z3.And(s[f"held.{q}.{m}"], s[f"held.{q}.{m}.k"] == k_of(s)))
        else:
            def dup(s: SymState) -> Any:
                return z3.BoolVal(self._early(q, m))

        def discard(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            upd: dict[str, Any] = {}
            self.take(s, key, upd)
            return z3.And(self.can_take(s, key), dup(s)), upd

        def arrive(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            upd: dict[str, Any] = {}
            self.take(s, key, upd)
            if spec.hold_back:
                upd.update({f"held.{q}.{m}": z3.BoolVal(True), f"held.{q}.{m}.k": k_of(s)})
            else:
                upd.update(self.deliver_app(s, q, m))
            return z3.And(self.can_take(s, key), z3.Not(dup(s))), upd

        kind = "receive" if spec.hold_back else "deliver"
        return [
            self.action(f"discard {self.mname(m)} at {self.names[q]}", discard,
                        lambda pre, post: ("discard", q, m, pre[f"w.{key}.k"])),
            self.action(f"{kind} {self.mname(m)} at {self.names[q]}", arrive,
                        (lambda pre, post: ("receive", q, m, pre[f"w.{key}.k"])) if spec.hold_back
                        else (lambda pre, post: ("deliver", q, m))),
        ]

    def _from_held(self, q: int, m: int) -> SymAction:
        early = self._early(q, m)

        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            k = s[f"held.{q}.{m}.k"]
            first = [z3.Or(z3.Not(s[f"held.{q}.{o}"]), s[f"held.{q}.{o}.k"] > k,
                           z3.And(s[f"held.{q}.{o}.k"] == k, o > m)) for o in self.mids if o != m]
            guard = z3.And(s[f"held.{q}.{m}"], k == s[f"E.{q}"], *first)
            upd: dict[str, Any] = {f"E.{q}": k + 1, f"held.{q}.{m}": z3.BoolVal(False), f"held.{q}.{m}.k": z3.IntVal(0)}
            if not early:
                upd.update(self.deliver_app(s, q, m))
            return guard, upd

        label = ((lambda pre, post: ("skip", q, m, pre[f"held.{q}.{m}.k"])) if early
                 else (lambda pre, post: ("deliver", q, m)))
        return self.action(f"{'skip' if early else 'deliver'} {self.mname(m)} at {self.names[q]} (held)", step, label)

    def describe_own(self, values: dict[str, Any]) -> list[str]:
        lines = [f"sequencer: next number {values['C']}"]
        for q, a in enumerate(self.names):
            held = sorted((values[f"held.{q}.{m}.k"], m) for m in self.mids if values[f"held.{q}.{m}"])
            lines.append(f"{a}: expects #{values[f'E.{q}']}; held back "
                         + (", ".join(f"#{k}:{self.mname(m)}" for k, m in held) or "nothing"))
        return lines


EXACT = ExactSequencer

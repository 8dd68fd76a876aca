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

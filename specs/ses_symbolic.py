"""Schiper-Eggli-Sandoz causal delivery as Z3 formulas, beside :mod:`ordercheck.specs.ses`.

SES's guarantee is about pairs of messages: if the send of ``w`` (to ``j``) happened
before the send of ``m`` (to ``j``), ``j`` delivers ``w`` first. The encoding proves it
for one *watched* copy ``w``, chosen by the encoding at its send among all the sends
of the run; since any copy may be the watched one, what it proves holds of every copy.
Variables (``n`` peers):

* ``V.p.k``: ``p``'s vector clock, and ``S.p.d.{has,k}``: its buffer's pair for ``d``,
  as in the explicit spec; ``sent.p``: its sends so far;
* the watched copy: ``w.on`` (sent), its sender ``w.src``, destination ``w.dst``,
  timestamp ``w.t.k``, and ``w.del`` (``w.dst`` has delivered it);
* ``K.p``: the send of ``w`` is in ``p``'s causal past (``p`` sent it, or delivered it
  or a message whose causal past holds it);
* ghosts of each peer's last delivery ``last.p.*``: its sender, timestamp ``t.k``, the
  pairs it carried ``cp.d.{has,k}``, whether it was ``w`` (``isw``) or a message whose
  causal past holds ``w``'s send (``knows``), and ``wdel``: ``w.del`` just before it.

Actions: ``send(p, dests)`` (``V.p.p += 1``; the buffer gets ``(d, t)`` for each
destination), optionally watched (the copy to one destination becomes ``w``);
``arrive(p)`` (``V.p.p += 1``: a message is held back); ``deliver(p)`` and
``receive(p)`` (an arrival and its delivery in one step): *some* message, from another
peer, passing the delivery condition (``check_buffer``, ``buffer_test``), is delivered:
its buffer merged into ``S.p`` (``merge_buffer``), ``V.p := max(V.p, t)`` and ticked.
Messages in transit and held back are not enumerated: the message delivered is a
choice, so the encoding allows every delivery of the spec, over any channel, with any
number of messages in flight. The choice rests on facts of the explicit spec about a
message in flight (``tests/test_symbolic_seeds.py`` checks them on its explored
states, where every explicit step must be a step of this encoding):

* ``w`` is delivered only at ``w.dst``, from ``w.src``, with ``w.t``, and once (no
  duplicating channels);
* vector clocks: a message's ``t[k]`` is at most ``V.k.k``; a message stamped
  ``t[w.src] >= w.t[w.src]`` has ``w``'s send in its causal past (``knows``); a message
  that knows it is stamped at least ``w.t``;
* a message that knows ``w``'s send, from a sender other than ``w.dst``, carries a pair
  for ``w.dst`` at least ``w.t``, unless ``w.dst`` has already delivered ``w`` (its
  sender held such a pair when it sent it: ``buffer_names_send`` below, at the send).

The proof, for any number of messages (the textbook argument, made inductive):
``clock_below_owner`` (no ``V.p.k`` above ``V.k.k``), ``knowledge_dominates`` (``K.p``
implies ``V.p >= w.t``), ``clock_reveals_send`` (``V.p[w.src] >= w.t[w.src]`` implies
``K.p``: only knowing the send raises it), ``buffer_names_send`` (a peer other than
``w.dst`` that knows ``w``'s send holds a pair for ``w.dst`` at least ``w.t``, until
``w`` is delivered: ``merge_buffer`` passes it on), ``destination_delivers_first`` (if
``w.dst`` knows ``w``'s send, it has delivered ``w``: a message that knows it names
``w.t`` for ``w.dst``, and the delivery condition ``t <= V`` waits until ``V`` reveals the
send) and the target ``causal_delivery``: ``w.dst``'s last delivery, if it knew ``w``'s
send, came after ``w``'s delivery. With no side-channel signals (which add to causal
pasts what no vector clock sees), that is the ``causal`` property for every pair of
messages to one destination.
"""

from __future__ import annotations

from typing import Any

import z3

from ordercheck.specs.symbolic import SymAction, SymState, all_zero, target_properties, zmax
from ordercheck.specs.symbolic_exact import ExactHoldBack, zmax_list


class SymbolicSES:
    """The encoding of a :class:`~ordercheck.specs.ses.SES` instance (module doc)."""

    watch: tuple[int, int] | None = None
    """The explicit copy ``(mid, destination)`` that :meth:`encode` takes as ``w``
    (``None``: none; the faithfulness test sets it)."""

    def __init__(self, spec: Any, *, queue_bound: int | None = None, bounded: bool = True) -> None:
        self.spec = spec
        self.n = spec.peers
        self.names = spec.names
        self.bounded = bounded
        n = self.n
        schema: dict[str, str] = {}
        for p in range(n):
            schema[f"sent.{p}"] = "int"
            schema[f"K.{p}"] = "bool"
            schema.update({f"V.{p}.{k}": "int" for k in range(n)})
            for d in range(n):
                schema[f"S.{p}.{d}.has"] = "bool"
                schema.update({f"S.{p}.{d}.{k}": "int" for k in range(n)})
            schema.update({f"last.{p}.{f}": "bool" for f in ("has", "isw", "knows", "wdel")})
            schema[f"last.{p}.src"] = "int"
            schema.update({f"last.{p}.t.{k}": "int" for k in range(n)})
            for d in range(n):
                schema[f"last.{p}.cp.{d}.has"] = "bool"
                schema.update({f"last.{p}.cp.{d}.{k}": "int" for k in range(n)})
        schema.update({"w.on": "bool", "w.del": "bool", "w.src": "int", "w.dst": "int"})
        schema.update({f"w.t.{k}": "int" for k in range(n)})
        self.schema = schema
        self.lemmas = {
            "shape": ("clocks are naturals; the watched copy goes from one peer to another", self.l_shape),
            "watched_send": ("w's sender knows its send; nobody knows it before it is sent", self.l_watched),
            "clock_below_owner": ("no peer's V[k] is above k's own V[k]", self.l_owner),
            "knowledge_dominates": ("a peer that knows w's send has a clock at least w's timestamp", self.l_dominates),
            "clock_reveals_send": ("a peer whose V[w.src] reaches w's knows w's send", self.l_reveals),
            "buffer_names_send": ("a peer other than w's destination that knows w's send holds a pair for the "
                                  "destination at least w's timestamp, until w is delivered", self.l_buffer),
            "destination_delivers_first": ("if w's destination knows w's send, it has delivered w", self.l_first),
            "causal_delivery": ("w's destination delivered w before any message whose causal past holds w's send",
                                self.l_causal),
        }
        self.targets = {"causal_per_pair": self.lemmas["causal_delivery"]}
        self.properties = target_properties(self.targets)  # BMC of the targets (bmc_queries)
        self.guarantees: dict[str, tuple[str, ...]] = {}
        if spec.signals == 0 and spec.duplicates == 0:
            self.guarantees = {"causal": ("causal_per_pair",)}

    def max_queue(self) -> int:
        """No queue is enumerated: 0 (any number of messages may be in flight)."""
        return 0

    def init(self, s: SymState) -> z3.BoolRef:
        return all_zero(self.schema, s)

    # -- helpers ------------------------------------------------------------------------

    def vec(self, s: SymState, prefix: str) -> list[Any]:
        return [s[f"{prefix}.{k}"] for k in range(self.n)]

    @staticmethod
    def leq(a: list[Any], b: list[Any]) -> z3.BoolRef:
        return z3.And([x <= y for x, y in zip(a, b)])

    def at(self, index: Any, values: list[Any]) -> Any:
        """``values[index]`` for a symbolic index in ``range(n)``."""
        out = values[-1]
        for k in reversed(range(self.n - 1)):
            out = z3.If(index == k, values[k], out)
        return out

    def _masks(self, p: int) -> list[int]:
        spec = self.spec
        return sorted(set(spec.plan[p] if spec.plan is not None else spec.choices[p]))

    # -- actions ------------------------------------------------------------------------

    def actions(self) -> list[SymAction]:
        out = []
        for p in range(self.n):
            a = self.names[p]
            for mask in self._masks(p):
                dests = [d for d in range(self.n) if mask >> d & 1]
                for watched in [None, *dests]:
                    name = f"send {a} to {''.join(self.names[d] for d in dests)}"
                    if watched is not None:
                        name += f", watching the copy to {self.names[watched]}"
                    out.append(SymAction(name, self._send(p, mask, dests, watched),
                                         lambda pre, post, p=p, mask=mask: ("send", p, mask)))
            out.append(SymAction(f"arrive {a}", self._arrive(p), lambda pre, post, p=p: ("arrive", p)))
            for arrive in (False, True):
                out.append(SymAction(f"{'receive' if arrive else 'deliver'} {a}", self._deliver(p, arrive),
                                     lambda pre, post, p=p: ("deliver", p, post[f"last.{p}.src"]),
                                     choose=lambda s, t, p=p, arrive=arrive: self.choose_message(s, t, p, arrive)))
        return out

    def _send(self, p: int, mask: int, dests: list[int], watched: int | None) -> Any:
        spec = self.spec

        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            upd: dict[str, Any] = {f"sent.{p}": s[f"sent.{p}"] + 1, f"V.{p}.{p}": s[f"V.{p}.{p}"] + 1}
            stamp = [s[f"V.{p}.{k}"] + (1 if k == p else 0) for k in range(self.n)]
            for d in dests:
                upd[f"S.{p}.{d}.has"] = z3.BoolVal(True)
                upd.update({f"S.{p}.{d}.{k}": stamp[k] for k in range(self.n)})
            guard: Any = z3.BoolVal(True)
            if self.bounded:
                limit = len(spec.plan[p]) if spec.plan is not None else spec.sends
                guard = s[f"sent.{p}"] < limit
                if spec.plan is not None:  # a script fixes each send's destinations
                    picks = [i for i, m in enumerate(spec.plan[p]) if m == mask]
                    guard = z3.And(guard, z3.Or([s[f"sent.{p}"] == i for i in picks]))
            if watched is not None:
                guard = z3.And(guard, z3.Not(s["w.on"]))
                upd.update({"w.on": z3.BoolVal(True), "w.src": z3.IntVal(p), "w.dst": z3.IntVal(watched),
                            f"K.{p}": z3.BoolVal(True)})
                upd.update({f"w.t.{k}": stamp[k] for k in range(self.n)})
            return guard, upd

        return step

    def _arrive(self, p: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            return z3.BoolVal(True), {f"V.{p}.{p}": s[f"V.{p}.{p}"] + 1}

        return step

    def _msg(self, t: SymState, p: int) -> dict[str, Any]:
        """The chosen message, as the post-state's ghost of ``p``'s last delivery."""
        return {
            "src": t[f"last.{p}.src"],
            "t": self.vec(t, f"last.{p}.t"),
            "cp": [(t[f"last.{p}.cp.{d}.has"], self.vec(t, f"last.{p}.cp.{d}")) for d in range(self.n)],
            "isw": t[f"last.{p}.isw"],
            "knows": t[f"last.{p}.knows"],
        }

    def _clock_at_arrival(self, s: SymState, p: int, arrive: bool) -> list[Any]:
        return [s[f"V.{p}.{k}"] + (1 if arrive and k == p else 0) for k in range(self.n)]

    def choose_message(self, s: SymState, t: SymState, p: int, arrive: bool) -> z3.BoolRef:
        """The delivered message: from another peer, passing ``p``'s delivery condition,
        and within the facts of the module doc."""
        spec = self.spec
        n = self.n
        m = self._msg(t, p)
        wt = self.vec(s, "w.t")
        src = m["src"]
        parts: list[Any] = [src >= 0, src < n, src != p]
        parts += [x >= 0 for x in m["t"]]
        for has, vec in m["cp"]:
            parts.append(z3.If(has, z3.And([x >= 0 for x in vec]), z3.And([x == 0 for x in vec])))
        # w itself: at its destination, from its sender, with its stamp, once
        same = [m["t"][k] == wt[k] for k in range(n)]
        once = [z3.Not(s["w.del"])] if not spec.duplicates else []
        parts.append(z3.Implies(m["isw"], z3.And(s["w.on"], s["w.dst"] == p, s["w.src"] == src, *same, *once,
                                                  z3.Not(m["knows"]))))
        # vector clocks
        parts += [m["t"][k] <= s[f"V.{k}.{k}"] for k in range(n)]
        reaches = self.at(s["w.src"], m["t"]) >= self.at(s["w.src"], wt)
        parts.append(z3.Implies(z3.And(s["w.on"], z3.Not(m["isw"]), reaches), m["knows"]))
        parts.append(z3.Implies(m["knows"], z3.And(s["w.on"], self.leq(wt, m["t"]))))
        # a message that knows w's send names it for w's destination, unless w is delivered
        names = []
        for d in range(n):
            has, vec = m["cp"][d]
            names.append(z3.Implies(s["w.dst"] == d, z3.And(has, self.leq(wt, vec))))
        parts.append(z3.Implies(z3.And(m["knows"], src != s["w.dst"], z3.Not(s["w.del"])), z3.And(names)))
        # a message from w's destination that knows w's send was sent after w's delivery
        parts.append(z3.Implies(z3.And(m["knows"], src == s["w.dst"]), s["w.del"]))
        parts.append(self.deliverable(s, p, m, arrive))
        return z3.And(parts)

    def deliverable(self, s: SymState, p: int, m: dict[str, Any], arrive: bool) -> z3.BoolRef:
        """The explicit ``deliverable``, on the clock after the arrival's tick."""
        spec = self.spec
        if not spec.check_buffer:
            return z3.BoolVal(True)
        clock = self._clock_at_arrival(s, p, arrive)
        has, pair = m["cp"][p]
        if spec.buffer_test == "dominated":
            ok = self.leq(pair, clock)
        else:
            ok = z3.Not(z3.And(self.leq(clock, pair), z3.Or([c != x for c, x in zip(clock, pair)])))
        return z3.Or(z3.Not(has), ok)

    def _deliver(self, p: int, arrive: bool) -> Any:
        spec = self.spec

        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            m = self._msg(t, p)
            clock = self._clock_at_arrival(s, p, arrive)
            upd: dict[str, Any] = {}
            for k in range(self.n):
                upd[f"V.{p}.{k}"] = zmax(clock[k], m["t"][k]) + (1 if k == p else 0)
            if spec.merge_buffer:
                for d in range(self.n):
                    if d == p:
                        continue
                    mine_has, mine = s[f"S.{p}.{d}.has"], self.vec(s, f"S.{p}.{d}")
                    theirs_has, theirs = m["cp"][d]
                    upd[f"S.{p}.{d}.has"] = z3.Or(mine_has, theirs_has)
                    for k in range(self.n):
                        upd[f"S.{p}.{d}.{k}"] = z3.If(theirs_has, z3.If(mine_has, zmax(mine[k], theirs[k]), theirs[k]),
                                                      mine[k])
            upd[f"K.{p}"] = z3.Or(s[f"K.{p}"], m["knows"], m["isw"])
            upd["w.del"] = z3.Or(s["w.del"], m["isw"])
            upd[f"last.{p}.has"] = z3.BoolVal(True)
            upd[f"last.{p}.wdel"] = s["w.del"]
            for key in [f"last.{p}.src", f"last.{p}.isw", f"last.{p}.knows",
                        *(f"last.{p}.t.{k}" for k in range(self.n)),
                        *(f"last.{p}.cp.{d}.{f}" for d in range(self.n) for f in ("has", *map(str, range(self.n))))]:
                upd[key] = t[key]
            return z3.BoolVal(True), upd

        return step

    # -- lemmas -------------------------------------------------------------------------

    def _w_is(self, s: SymState, field: str, k: int) -> z3.BoolRef:
        return z3.And(s["w.on"], s[f"w.{field}"] == k)

    def l_shape(self, s: SymState) -> list[tuple[str, Any]]:
        n = self.n
        out = [("w goes from one peer to another", z3.Implies(s["w.on"], z3.And(
            s["w.src"] >= 0, s["w.src"] < n, s["w.dst"] >= 0, s["w.dst"] < n, s["w.src"] != s["w.dst"])))]
        out.append(("w's timestamp is a natural vector", z3.And([x >= 0 for x in self.vec(s, "w.t")])))
        out.append(("w is delivered only once sent", z3.Implies(s["w.del"], s["w.on"])))
        for p, a in enumerate(self.names):
            out.append((f"{a}'s clock and sends are naturals",
                        z3.And(s[f"sent.{p}"] >= 0, *[x >= 0 for x in self.vec(s, f"V.{p}")])))
            for d in range(n):
                out.append((f"{a}'s pair for {self.names[d]} is a natural vector",
                            z3.And([x >= 0 for x in self.vec(s, f"S.{p}.{d}")])))
        return out

    def l_watched(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for p, a in enumerate(self.names):
            out.append((f"{a} knows w's send only once it is sent", z3.Implies(s[f"K.{p}"], s["w.on"])))
            out.append((f"{a}'s last delivery was w or knew w's send only once w is sent",
                        z3.Implies(z3.Or(s[f"last.{p}.knows"], s[f"last.{p}.isw"]), s["w.on"])))
            out.append((f"{a}, if w's sender, knows its send", z3.Implies(self._w_is(s, "src", p), s[f"K.{p}"])))
            out.append((f"w's timestamp, if {a} sent w, counts {a}'s send",
                        z3.Implies(self._w_is(s, "src", p), z3.And(s[f"w.t.{p}"] >= 1, s[f"w.t.{p}"] <= s[f"V.{p}.{p}"]))))
        return out

    def l_owner(self, s: SymState) -> list[tuple[str, Any]]:
        return [(f"{self.names[p]}'s V[{self.names[k]}] is not above {self.names[k]}'s own",
                 s[f"V.{p}.{k}"] <= s[f"V.{k}.{k}"]) for p in range(self.n) for k in range(self.n) if k != p]

    def l_dominates(self, s: SymState) -> list[tuple[str, Any]]:
        wt = self.vec(s, "w.t")
        return [(f"{a}'s clock is at least w's timestamp if {a} knows w's send",
                 z3.Implies(s[f"K.{p}"], self.leq(wt, self.vec(s, f"V.{p}")))) for p, a in enumerate(self.names)]

    def l_reveals(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for p, a in enumerate(self.names):
            for k in range(self.n):
                out.append((f"{a} knows w's send if w is from {self.names[k]} and {a}'s V[{self.names[k]}] reaches w's",
                            z3.Implies(z3.And(self._w_is(s, "src", k), s[f"V.{p}.{k}"] >= s[f"w.t.{k}"]), s[f"K.{p}"])))
        return out

    def l_buffer(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        wt = self.vec(s, "w.t")
        for p, a in enumerate(self.names):
            for d in range(self.n):
                if d == p:
                    continue
                out.append((f"{a}, knowing w's send to {self.names[d]}, holds a pair for {self.names[d]} at least w's "
                            "timestamp, or w is delivered",
                            z3.Implies(z3.And(self._w_is(s, "dst", d), s[f"K.{p}"], z3.Not(s["w.del"])),
                                       z3.And(s[f"S.{p}.{d}.has"], self.leq(wt, self.vec(s, f"S.{p}.{d}"))))))
        return out

    def l_first(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for p, a in enumerate(self.names):
            out.append((f"{a}, if w's destination, knows w's send only once it delivered w",
                        z3.Implies(z3.And(self._w_is(s, "dst", p), s[f"K.{p}"]), s["w.del"])))
            out.append((f"{a}, if w's destination, knows w's send once it delivered w",
                        z3.Implies(z3.And(self._w_is(s, "dst", p), s["w.del"]), s[f"K.{p}"])))
        return out

    def l_causal(self, s: SymState) -> list[tuple[str, Any]]:
        return [(f"{a}'s last delivery, if {a} is w's destination and the message knew w's send, came after w's",
                 z3.Implies(z3.And(s[f"last.{p}.has"], self._w_is(s, "dst", p), s[f"last.{p}.knows"]),
                            s[f"last.{p}.wdel"])) for p, a in enumerate(self.names)]

    # -- readable states and the explicit side ------------------------------------------

    def format_action(self, label: tuple) -> str:
        a = self.names[label[1]]
        if label[0] == "send":
            return f"{a} sends to {''.join(self.names[d] for d in range(self.n) if label[2] >> d & 1)}"
        if label[0] == "arrive":
            return f"a message arrives at {a} and is held back"
        src = label[2]
        return f"{a} delivers a message from {self.names[src] if 0 <= src < self.n else src}"

    def _show(self, values: dict[str, Any], prefix: str) -> str:
        return "(" + ",".join(str(values[f"{prefix}.{k}"]) for k in range(self.n)) + ")"

    def _pairs(self, values: dict[str, Any], prefix: str) -> str:
        got = [f"{self.names[d]}:{self._show(values, f'{prefix}.{d}')}" for d in range(self.n) if values[f"{prefix}.{d}.has"]]
        return "{" + ", ".join(got) + "}"

    def describe(self, values: dict[str, Any]) -> dict[str, Any]:
        lines = []
        if values["w.on"]:
            src, dst = values["w.src"], values["w.dst"]
            who = [self.names[x] if 0 <= x < self.n else str(x) for x in (src, dst)]
            lines.append(f"watched message w: {who[0]} -> {who[1]} stamped {self._show(values, 'w.t')}"
                         + ("; delivered" if values["w.del"] else "; not delivered"))
        else:
            lines.append("watched message w: not sent yet")
        for p, a in enumerate(self.names):
            line = (f"{a}: V {self._show(values, f'V.{p}')}; S {self._pairs(values, f'S.{p}')}; "
                    f"{'knows' if values[f'K.{p}'] else 'does not know'} w's send")
            if values[f"last.{p}.has"]:
                src = values[f"last.{p}.src"]
                what = "w itself" if values[f"last.{p}.isw"] else ("knowing w's send" if values[f"last.{p}.knows"] else "")
                line += (f"; last delivered from {self.names[src] if 0 <= src < self.n else src} stamped "
                         f"{self._show(values, f'last.{p}.t')} carrying {self._pairs(values, f'last.{p}.cp')}"
                         + (f" ({what})" if what else ""))
            lines.append(line)
        return {"lines": lines}

    def encode(self, state: tuple, prev: tuple | None = None) -> dict[str, Any]:
        """An explicit state as variable values, :attr:`watch` as ``w``; ``prev =
        (pre_state, pre_values, label)`` gives the last-delivery ghosts from the step
        that reached ``state`` (see :mod:`ordercheck.specs.bss_symbolic`)."""
        from ordercheck.specs.common import message_dests, message_past
        from ordercheck.specs.history import DELIVER, decode_event
        from ordercheck.specs.holdback import BUFFERS, CHANS, GHOST, KNOW, LOCAL

        spec = self.spec
        n = self.n
        ghost = state[GHOST]
        out: dict[str, Any] = {"w.on": False, "w.del": False, "w.src": 0, "w.dst": 0}
        out.update({f"w.t.{k}": 0 for k in range(n)})
        wmid = self.watch[0] if self.watch is not None else None
        if self.watch is not None:
            wmid, wdst = self.watch
            wsrc = wmid // spec.stride
            if wmid % spec.stride < len(ghost[0][wsrc]) and message_dests(ghost, wmid, spec.stride) >> wdst & 1:
                out.update({"w.on": True, "w.src": wsrc, "w.dst": wdst})
                if prev is not None and "w.t.0" in prev[1] and prev[1]["w.on"]:
                    out.update({f"w.t.{k}": prev[1][f"w.t.{k}"] for k in range(n)})
                else:  # the send is this step: w's stamp is the sender's clock now
                    out.update({f"w.t.{k}": state[LOCAL][wsrc][0][k] for k in range(n)})
                for code in ghost[1][wdst]:
                    ev = decode_event(code)
                    if ev.kind == DELIVER and ev.arg == wmid:
                        out["w.del"] = True
        for p in range(n):
            clock, pairs = state[LOCAL][p]
            out[f"sent.{p}"] = len(ghost[0][p])
            out[f"K.{p}"] = bool(wmid is not None and out["w.on"] and state[KNOW][p] >> wmid & 1)
            out.update({f"V.{p}.{k}": clock[k] for k in range(n)})
            for d in range(n):
                out[f"S.{p}.{d}.has"] = bool(pairs[d])
                out.update({f"S.{p}.{d}.{k}": pairs[d][k] if pairs[d] else 0 for k in range(n)})
            keys = [f"last.{p}.{f}" for f in ("has", "isw", "knows", "wdel", "src")]
            keys += [f"last.{p}.t.{k}" for k in range(n)]
            keys += [f"last.{p}.cp.{d}.{f}" for d in range(n) for f in ("has", *map(str, range(n)))]
            for key in keys:
                out[key] = prev[1][key] if prev is not None else (False if self.schema[key] == "bool" else 0)
        if prev is not None:
            pre_state, pre_values, label = prev
            if label[0] in ("receive", "deliver"):
                p, mid = label[1], label[2]
                src = mid // spec.stride
                if label[0] == "receive":
                    data = next(d for (s_, d_), msgs in pre_state[CHANS] if d_ == p and s_ == src
                                for m, d in msgs if m == mid)
                else:
                    data = next(d for m, d in pre_state[BUFFERS][p] if m == mid)
                t_m, carried = data
                isw = self.watch is not None and mid == wmid and p == self.watch[1]
                # w's send is in m's causal past, or m is another copy of w's send
                knows = wmid is not None and not isw and (
                    mid == wmid or bool(message_past(pre_state[GHOST], mid, spec.stride) >> wmid & 1))
                out.update({f"last.{p}.has": True, f"last.{p}.isw": isw, f"last.{p}.knows": knows,
                            f"last.{p}.wdel": pre_values["w.del"], f"last.{p}.src": src})
                out.update({f"last.{p}.t.{k}": t_m[k] for k in range(n)})
                for d in range(n):
                    out[f"last.{p}.cp.{d}.has"] = bool(carried[d])
                    out.update({f"last.{p}.cp.{d}.{k}": carried[d][k] if carried[d] else 0 for k in range(n)})
        return out


SYMBOLIC = SymbolicSES


class ExactSES(ExactHoldBack):
    """SES step for step, for one model's plan (:mod:`ordercheck.specs.symbolic_exact`): a
    peer's state ``(V, S)`` as ``L.p.i``, ``V`` first, then per peer ``k`` a flag (``S``
    names ``k``) and a vector; a copy's data ``(t_m, S_m)`` laid out the same way."""

    def __init__(self, spec: Any) -> None:
        n = spec.peers
        self.local_width = self.data_width = n + n * (n + 1)
        super().__init__(spec)

    def _flat(self, pair: Any) -> list[int]:
        clock, pairs = pair
        out = list(clock)
        for v in pairs:
            out += [1, *v] if v else [0] * (self.n + 1)
        return out

    def flat_local(self, local: Any) -> list[int]:
        return self._flat(local)

    def flat_data(self, data: Any) -> list[int]:
        return self._flat(data)

    def _entry(self, x: list[Any], k: int) -> tuple[Any, list[Any]]:
        at = self.n + k * (self.n + 1)
        return x[at], x[at + 1 : at + 1 + self.n]

    def _join(self, clock: list[Any], entries: list[tuple[Any, list[Any]]]) -> list[Any]:
        out = list(clock)
        for flag, vec in entries:
            out += [flag, *vec]
        return out

    def _tick(self, clock: list[Any], p: int) -> list[Any]:
        return [x + 1 if k == p else x for k, x in enumerate(clock)]

    def z_stamp(self, local: list[Any], p: int, dests: list[int]) -> tuple[list[Any], list[list[Any]]]:
        n = self.n
        t = self._tick(local[:n], p)
        mine = [self._entry(local, k) for k in range(n)]
        after = [(z3.IntVal(1), t) if k in dests else mine[k] for k in range(n)]
        datas = [self._join(t, [mine[k] if k == d else after[k] for k in range(n)]) for d in dests]
        return self._join(t, after), datas

    def z_on_arrival(self, local: list[Any], p: int) -> list[Any]:
        return self._tick(local[: self.n], p) + local[self.n :]

    def z_deliverable(self, local: list[Any], p: int, src: int, data: list[Any]) -> Any:
        if not self.spec.check_buffer:
            return z3.BoolVal(True)
        n = self.n
        flag, t = self._entry(data, p)
        clock = local[:n]
        if self.spec.buffer_test == "dominated":
            ok = z3.And([a <= b for a, b in zip(t, clock)])
        else:
            ok = z3.Not(z3.And(z3.And([a <= b for a, b in zip(clock, t)]), z3.Or([a != b for a, b in zip(clock, t)])))
        return z3.Or(flag == 0, ok)

    def z_on_deliver(self, local: list[Any], p: int, src: int, data: list[Any]) -> list[Any]:
        n = self.n
        entries = [self._entry(local, k) for k in range(n)]
        if self.spec.merge_buffer:
            merged = []
            for k in range(n):
                (mf, mv), (tf, tv) = entries[k], self._entry(data, k)
                if k == p:
                    merged.append((mf, mv))
                    continue
                both = zmax_list(mv, tv)
                merged.append((z3.If(tf == 1, 1, mf),
                               [z3.If(tf == 0, a, z3.If(mf == 0, b, c)) for a, b, c in zip(mv, tv, both)]))
            entries = merged
        return self._join(self._tick(zmax_list(local[:n], data[:n]), p), entries)


EXACT = ExactSES

"""Garg's synchronous ordering (big and small messages) as Z3 formulas, beside :mod:`ordercheck.specs.synchronous`.

A run is synchronous (no crown) when its messages can be numbered so that, at every
peer, the message events (sends and receipts) come in strictly increasing number, a
message's send and receipt sharing its number: a crown ``send(m1) -> receipt(m2) ...
send(mk) -> receipt(m1)`` would need ``N(m1) < N(m2) < ... < N(m1)`` (each arrow
leaves one message's event for another's, through program order at some peer, where
numbers grow, and through messages, where they stay). The encoding numbers the
messages with a ghost counter ``G`` the way the algorithm allows: a *small* message
(to a bigger peer) when it is sent, since its receiver is passive from its grant until
the receipt; a *big* message (to a smaller peer) when it is received, since its sender
is passive from the send until the ack, so its send is still its last event.

Variables (``n`` peers): ``mode.p``, ``partner.p``, ``asking.p`` as in the explicit
spec; ``sent.p``; what is in transit, one flag per kind, each at most one by the
protocol (``rq.p``: ``p``'s request; ``pm.p``: a permission to ``p``; ``bg.p``:
``p``'s big message, to ``bd.p``; ``ak.p``: an ack to ``p``; ``sm.p``: a small message
to ``p``, numbered ``sn.p``); ghosts ``G`` and each peer's last two message events'
numbers ``last.p.{has,n}``, ``prev.p.{has,n}``.

Actions, as the explicit spec's (a step is enabled when the flag of what it takes is
set): ``request``, ``grant``, ``send`` (a big message, or a small one as the
permission is taken; without ``request_permission`` at once), ``receive`` a big
message (numbered ``G`` here, for the receiver and for the sender's send), ``ack``,
``receive`` a small message (its number ``sn``). Channels' order is not kept (the
encoding allows every step of FIFO or unordered channels); losses, copies and signals
are not encoded, and the proof claims nothing for models that allow them
(``tests/test_symbolic_seeds.py`` checks on the explicit state space that every
explicit step is a step of this encoding and every reachable state satisfies the lemmas).

The proof, for any number of messages by the model's peers: ``control`` (each flag
matches the modes: a big message travels only while its sender awaits the ack, a
small one only to a peer granted to its sender, a permission only to the peer the
granter is granted to, ...), ``big_sender_waits`` (while ``bg.p``, ``p`` awaits the
ack: it has no message event between its send and the receipt that numbers it),
``small_receiver_waits`` (while ``sm.j``, ``j`` is granted and the message is numbered
above ``j``'s last event), ``numbers_below_counter`` and the target
``numbered_in_order``: each peer's last message event is numbered above the one before
it. Each peer's recorded events are its message events in program order (a big send
is recorded at its receipt, and its sender has none in between: ``big_sender_waits``),
so no crown: ``synchronous``.
"""

from __future__ import annotations

from typing import Any

import z3

from ordercheck.specs.symbolic import SymAction, SymState, all_zero, target_properties
from ordercheck.specs.symbolic_exact import ExactPeers, Slot

ACTIVE, WAIT_ACK, GRANTED = 0, 1, 2


class SymbolicSynchronous:
    """The encoding of a :class:`~ordercheck.specs.synchronous.Synchronous` instance (module doc)."""

    def __init__(self, spec: Any, *, queue_bound: int | None = None, bounded: bool = True) -> None:
        self.spec = spec
        self.n = spec.peers
        self.names = spec.names
        self.bounded = bounded
        schema: dict[str, str] = {"G": "int"}
        for p in range(self.n):
            schema.update({f"mode.{p}": "int", f"partner.{p}": "int", f"asking.{p}": "int", f"sent.{p}": "int",
                           f"bd.{p}": "int", f"sn.{p}": "int"})
            schema.update({f"{f}.{p}": "bool" for f in ("rq", "pm", "bg", "ak", "sm")})
            for g in ("last", "prev"):
                schema.update({f"{g}.{p}.has": "bool", f"{g}.{p}.n": "int"})
        self.schema = schema
        self.lemmas = {
            "shape": ("modes, partners and numbers are in range", self.l_shape),
            "control": ("what is in transit matches the modes of its sender and receiver", self.l_control),
            "big_sender_waits": ("a big message travels only while its sender awaits the ack", self.l_big),
            "small_receiver_waits": ("a small message travels only to a peer granted to its sender, numbered above "
                                     "that peer's last event", self.l_small),
            "numbers_below_counter": ("every number given is below the counter", self.l_counter),
            "numbered_in_order": ("each peer's last message event is numbered above the one before it", self.l_order),
        }
        self.targets = {"numbered_in_order": self.lemmas["numbered_in_order"]}
        self.properties = target_properties(self.targets)  # BMC of the targets (bmc_queries)
        self.guarantees: dict[str, tuple[str, ...]] = {}
        if spec.signals == 0 and spec.duplicates == 0 and not spec.lossy:
            self.guarantees = {"synchronous": ("numbered_in_order",)}

    def max_queue(self) -> int:
        """No queue is enumerated: 0 (the protocol keeps at most one message of each kind in transit)."""
        return 0

    def init(self, s: SymState) -> z3.BoolRef:
        return all_zero(self.schema, s)

    # -- actions ------------------------------------------------------------------------

    def _may_start(self, s: SymState, p: int, d: int) -> z3.BoolRef:
        """``p`` may start a send to ``d`` (active, not asking, and the model allows it)."""
        spec = self.spec
        parts = [s[f"mode.{p}"] == ACTIVE, s[f"asking.{p}"] == 0]
        if self.bounded:
            if spec.plan is not None:
                picks = [i for i, m in enumerate(spec.plan[p]) if m == 1 << d]
                parts.append(z3.Or([s[f"sent.{p}"] == i for i in picks]) if picks else z3.BoolVal(False))
            else:
                parts.append(s[f"sent.{p}"] < spec.sends)
        return z3.And(parts)

    def _dests(self, p: int) -> list[int]:
        spec = self.spec
        masks = spec.plan[p] if spec.plan is not None else spec.choices[p]
        return sorted({d for m in masks for d in range(self.n) if m >> d & 1})

    def _number(self, s: SymState, upd: dict[str, Any], p: int, num: Any) -> None:
        """``p``'s next message event is numbered ``num``."""
        upd.update({f"prev.{p}.has": s[f"last.{p}.has"], f"prev.{p}.n": s[f"last.{p}.n"],
                    f"last.{p}.has": z3.BoolVal(True), f"last.{p}.n": num})

    def actions(self) -> list[SymAction]:
        spec = self.spec
        out = []
        for p in range(self.n):
            a = self.names[p]
            for d in self._dests(p):
                b = self.names[d]
                if d < p:
                    out.append(SymAction(f"send {a}: a big message to {b}", self._big_send(p, d),
                                         lambda pre, post, p=p, d=d: ("send", p, d)))
                elif spec.request_permission:
                    out.append(SymAction(f"request {a}: asks {b}", self._request(p, d), lambda pre, post, p=p, d=d: ("request", p, d)))
                    out.append(SymAction(f"send {a}: takes {b}'s permission, a small message to {b}", self._take(p, d),
                                         lambda pre, post, p=p, d=d: ("send", p, d)))
                else:
                    out.append(SymAction(f"send {a}: a small message to {b}", self._small_send(p, d),
                                         lambda pre, post, p=p, d=d: ("send", p, d)))
            for i in range(p):
                if spec.request_permission:
                    out.append(SymAction(f"grant {a}: to {self.names[i]}", self._grant(p, i),
                                         lambda pre, post, p=p, i=i: ("grant", p, i)))
            for i in range(p + 1, self.n):
                out.append(SymAction(f"deliver {a}: {self.names[i]}'s big message", self._big_receive(p, i),
                                     lambda pre, post, p=p, i=i: ("receive", p, i)))
            out.append(SymAction(f"ack {a}", self._ack(p), lambda pre, post, p=p: ("ack", p)))
            out.append(SymAction(f"deliver {a}: a small message", self._small_receive(p),
                                 lambda pre, post, p=p: ("receive", p, -1)))
        return out

    def _big_send(self, p: int, d: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            upd: dict[str, Any] = {f"sent.{p}": s[f"sent.{p}"] + 1, f"bg.{p}": z3.BoolVal(True), f"bd.{p}": z3.IntVal(d)}
            if self.spec.wait_for_ack:
                upd.update({f"mode.{p}": z3.IntVal(WAIT_ACK), f"partner.{p}": z3.IntVal(d)})
            return self._may_start(s, p, d), upd

        return step

    def _request(self, p: int, d: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            return self._may_start(s, p, d), {f"asking.{p}": z3.IntVal(1 + d), f"rq.{p}": z3.BoolVal(True)}

        return step

    def _small(self, s: SymState, p: int, d: int) -> dict[str, Any]:
        upd: dict[str, Any] = {f"sent.{p}": s[f"sent.{p}"] + 1, f"sm.{d}": z3.BoolVal(True), f"sn.{d}": s["G"],
                               "G": s["G"] + 1}
        self._number(s, upd, p, s["G"])
        return upd

    def _take(self, p: int, d: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            upd = self._small(s, p, d)
            upd.update({f"pm.{p}": z3.BoolVal(False), f"asking.{p}": z3.IntVal(0)})
            guard = z3.And(s[f"mode.{p}"] == ACTIVE, s[f"asking.{p}"] == 1 + d, s[f"pm.{p}"])
            if self.bounded and self.spec.plan is not None:
                picks = [i for i, m in enumerate(self.spec.plan[p]) if m == 1 << d]
                guard = z3.And(guard, z3.Or([s[f"sent.{p}"] == i for i in picks]))
            return guard, upd

        return step

    def _small_send(self, p: int, d: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            return self._may_start(s, p, d), self._small(s, p, d)

        return step

    def _grant(self, j: int, i: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            guard = z3.And(s[f"mode.{j}"] == ACTIVE, s[f"rq.{i}"], s[f"asking.{i}"] == 1 + j)
            return guard, {f"rq.{i}": z3.BoolVal(False), f"pm.{i}": z3.BoolVal(True),
                           f"mode.{j}": z3.IntVal(GRANTED), f"partner.{j}": z3.IntVal(i)}

        return step

    def _big_receive(self, j: int, i: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            upd: dict[str, Any] = {f"bg.{i}": z3.BoolVal(False), "G": s["G"] + 1}
            self._number(s, upd, j, s["G"])
            self._number(s, upd, i, s["G"])
            if self.spec.wait_for_ack:
                upd[f"ak.{i}"] = z3.BoolVal(True)
            return z3.And(s[f"mode.{j}"] == ACTIVE, s[f"bg.{i}"], s[f"bd.{i}"] == j), upd

        return step

    def _ack(self, p: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            return (z3.And(s[f"mode.{p}"] == WAIT_ACK, s[f"ak.{p}"]),
                    {f"ak.{p}": z3.BoolVal(False), f"mode.{p}": z3.IntVal(ACTIVE), f"partner.{p}": z3.IntVal(0)})

        return step

    def _small_receive(self, j: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            upd: dict[str, Any] = {f"sm.{j}": z3.BoolVal(False)}
            self._number(s, upd, j, s[f"sn.{j}"])
            if self.spec.request_permission:
                upd.update({f"mode.{j}": z3.IntVal(ACTIVE), f"partner.{j}": z3.IntVal(0)})
                return z3.And(s[f"mode.{j}"] == GRANTED, s[f"sm.{j}"]), upd
            return z3.And(s[f"mode.{j}"] == ACTIVE, s[f"sm.{j}"]), upd

        return step

    # -- lemmas -------------------------------------------------------------------------

    def _is(self, s: SymState, p: int, mode: int) -> z3.BoolRef:
        return s[f"mode.{p}"] == mode

    def l_shape(self, s: SymState) -> list[tuple[str, Any]]:
        n = self.n
        out = [("the counter is a natural", s["G"] >= 0)]
        for p, a in enumerate(self.names):
            out.append((f"{a}'s mode, partner and request are in range", z3.And(
                s[f"mode.{p}"] >= 0, s[f"mode.{p}"] <= 2, s[f"partner.{p}"] >= 0, s[f"partner.{p}"] < n,
                s[f"asking.{p}"] >= 0, s[f"asking.{p}"] <= n, s[f"asking.{p}"] != 1 + p,
                s[f"bd.{p}"] >= 0, s[f"bd.{p}"] < n, s[f"sent.{p}"] >= 0)))
            out.append((f"{a} asks only bigger peers", z3.Or(s[f"asking.{p}"] == 0, s[f"asking.{p}"] > 1 + p)))
            out.append((f"{a} is granted only to a smaller peer",
                        z3.Implies(self._is(s, p, GRANTED), s[f"partner.{p}"] < p)))
        return out

    def l_control(self, s: SymState) -> list[tuple[str, Any]]:
        spec = self.spec
        out = []
        for p, a in enumerate(self.names):
            asked = s[f"asking.{p}"]
            if spec.request_permission:
                out.append((f"{a}'s request travels only while {a} asks, and never beside a permission",
                            z3.Implies(s[f"rq.{p}"], z3.And(asked != 0, z3.Not(s[f"pm.{p}"])))))
                out.append((f"a permission travels to {a} only while {a} asks", z3.Implies(s[f"pm.{p}"], asked != 0)))
                for j in range(p + 1, self.n):
                    b = self.names[j]
                    out.append((f"a permission from {b} travels to {a} only while {a} asks {b} and {b} is granted to {a}",
                                z3.Implies(z3.And(s[f"pm.{p}"], asked == 1 + j),
                                           z3.And(self._is(s, j, GRANTED), s[f"partner.{j}"] == p, z3.Not(s[f"sm.{j}"])))))
                    out.append((f"{b}, granted to {a}, awaits its permission's taking or {a}'s small message",
                                z3.Implies(z3.And(self._is(s, j, GRANTED), s[f"partner.{j}"] == p),
                                           z3.Or(z3.And(s[f"pm.{p}"], asked == 1 + j, z3.Not(s[f"sm.{j}"])),
                                                 s[f"sm.{j}"]))))
            else:  # no request, permission or grant: small messages go at once
                out.append((f"{a} asks nobody and is granted to nobody", z3.And(
                    asked == 0, z3.Not(s[f"rq.{p}"]), z3.Not(s[f"pm.{p}"]), z3.Not(self._is(s, p, GRANTED)))))
            if spec.wait_for_ack:
                out.append((f"an ack travels to {a} only while {a} awaits it",
                            z3.Implies(s[f"ak.{p}"], z3.And(self._is(s, p, WAIT_ACK), z3.Not(s[f"bg.{p}"])))))
                out.append((f"{a} awaits an ack only for a big message in transit or received",
                            z3.Implies(self._is(s, p, WAIT_ACK), z3.Or(s[f"bg.{p}"], s[f"ak.{p}"]))))
            else:  # big messages are not acknowledged
                out.append((f"{a} awaits no ack and none travels to it",
                            z3.And(z3.Not(self._is(s, p, WAIT_ACK)), z3.Not(s[f"ak.{p}"]))))
        return out

    def l_big(self, s: SymState) -> list[tuple[str, Any]]:
        return [(f"{a}'s big message travels only while {a} awaits {a}'s ack from its destination",
                 z3.Implies(s[f"bg.{p}"], z3.And(self._is(s, p, WAIT_ACK), s[f"partner.{p}"] == s[f"bd.{p}"],
                                                  s[f"bd.{p}"] < p)))
                for p, a in enumerate(self.names)]

    def l_small(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for p, a in enumerate(self.names):
            out.append((f"a small message travels to {a} only while {a} is granted",
                        z3.Implies(s[f"sm.{p}"], self._is(s, p, GRANTED))))
            out.append((f"a small message to {a} is numbered above {a}'s last event",
                        z3.Implies(z3.And(s[f"sm.{p}"], s[f"last.{p}.has"]), s[f"last.{p}.n"] < s[f"sn.{p}"])))
        return out

    def l_counter(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for p, a in enumerate(self.names):
            out.append((f"{a}'s last event is numbered below the counter",
                        z3.Implies(s[f"last.{p}.has"], z3.And(s[f"last.{p}.n"] >= 0, s[f"last.{p}.n"] < s["G"]))))
            out.append((f"a small message to {a} is numbered below the counter",
                        z3.Implies(s[f"sm.{p}"], z3.And(s[f"sn.{p}"] >= 0, s[f"sn.{p}"] < s["G"]))))
        return out

    def l_order(self, s: SymState) -> list[tuple[str, Any]]:
        return [(f"{a}'s last message event is numbered above the one before it",
                 z3.Implies(s[f"prev.{p}.has"], z3.And(s[f"last.{p}.has"], s[f"prev.{p}.n"] < s[f"last.{p}.n"])))
                for p, a in enumerate(self.names)]

    # -- readable states and the explicit side ------------------------------------------

    def format_action(self, label: tuple) -> str:
        kind, p = label[0], self.names[label[1]]
        if kind == "send":
            return f"{p} sends a {'big' if label[2] < label[1] else 'small'} message to {self.names[label[2]]}"
        if kind == "request":
            return f"{p} asks {self.names[label[2]]} for permission"
        if kind == "grant":
            return f"{p} grants {self.names[label[2]]} permission"
        if kind == "ack":
            return f"{p} gets its ack"
        if label[2] < 0:
            return f"{p} receives a small message"
        return f"{p} receives {self.names[label[2]]}'s big message"

    def describe(self, values: dict[str, Any]) -> dict[str, Any]:
        words = {ACTIVE: "active", WAIT_ACK: "awaits an ack from", GRANTED: "granted to"}
        lines = [f"counter {values['G']}"]
        for p, a in enumerate(self.names):
            mode = values[f"mode.{p}"]
            partner = values[f"partner.{p}"]
            line = f"{a}: {words.get(mode, str(mode))}"
            if mode in (WAIT_ACK, GRANTED):
                line += f" {self.names[partner] if 0 <= partner < self.n else partner}"
            if values[f"asking.{p}"]:
                asked = values[f"asking.{p}"] - 1
                line += f", asking {self.names[asked] if 0 <= asked < self.n else asked}"
            transit = [f for f, v in (("request", "rq"), ("permission to it", "pm"), ("ack to it", "ak")) if values[f"{v}.{p}"]]
            if values[f"bg.{p}"]:
                d = values[f"bd.{p}"]
                transit.append(f"its big message to {self.names[d] if 0 <= d < self.n else d}")
            if values[f"sm.{p}"]:
                transit.append(f"a small message to it numbered {values[f'sn.{p}']}")
            if transit:
                line += "; in transit: " + ", ".join(transit)
            events = [str(values[f"{g}.{p}.n"]) for g in ("prev", "last") if values[f"{g}.{p}.has"]]
            if events:
                line += "; last events numbered " + ", ".join(events)
            lines.append(line)
        return {"lines": lines}

    def encode(self, state: tuple, prev: tuple | None = None) -> dict[str, Any]:
        """An explicit state as variable values; ``prev = (pre_state, pre_values,
        label)`` gives the numbering ghosts from the step that reached ``state``."""
        from ordercheck.specs.synchronous import ACK, CHANS, GHOST, PERMISSION, PROCS, REQUEST

        spec = self.spec
        n = self.n
        out: dict[str, Any] = {}
        ghosts = ["G", *(f"{k}.{p}" for p in range(n) for k in ("bd", "sn")),
                  *(f"{g}.{p}.{f}" for p in range(n) for g in ("last", "prev") for f in ("has", "n"))]
        for key in ghosts:
            out[key] = prev[1][key] if prev is not None else (False if self.schema[key] == "bool" else 0)
        for p in range(n):
            mode, partner, asking = state[PROCS][p]
            out.update({f"mode.{p}": mode, f"partner.{p}": partner, f"asking.{p}": asking,
                        f"sent.{p}": len(state[GHOST][0][p])})
            out.update({f"{f}.{p}": False for f in ("rq", "pm", "bg", "ak", "sm")})
        for (src, dst), msgs in state[CHANS]:
            for kind, _mid in msgs:
                if kind == REQUEST:
                    out[f"rq.{src}"] = True
                elif kind == PERMISSION:
                    out[f"pm.{dst}"] = True
                elif kind == ACK:
                    out[f"ak.{dst}"] = True
                elif dst < src:
                    out[f"bg.{src}"] = True
                else:
                    out[f"sm.{dst}"] = True
        if prev is None:
            return out
        _pre_state, pre, label = prev

        def number(p: int, num: int) -> None:
            out.update({f"prev.{p}.has": pre[f"last.{p}.has"], f"prev.{p}.n": pre[f"last.{p}.n"],
                        f"last.{p}.has": True, f"last.{p}.n": num})

        if label[0] == "send":
            p, mid, dmask = label[1], label[2], label[3]
            d = dmask.bit_length() - 1
            if d < p:
                out[f"bd.{p}"] = d
            else:
                out[f"sn.{d}"] = pre["G"]
                out["G"] = pre["G"] + 1
                number(p, pre["G"])
        elif label[0] == "deliver":
            p, mid = label[1], label[2]
            src = mid // spec.stride
            if src > p:
                out["G"] = pre["G"] + 1
                number(p, pre["G"])
                number(src, pre["G"])
            else:
                number(p, pre[f"sn.{p}"])
        return out


SYMBOLIC = SymbolicSynchronous


class ExactSynchronous(ExactPeers):
    """Synchronous ordering step for step, for one model's configuration
    (:mod:`ordercheck.specs.symbolic_exact`): each peer's ``(mode, partner, asking)`` as
    ``mode.p``, ``partner.p``, ``asking.p``; wire slots ``M>d`` (message ``M`` to ``d``:
    a send may pick its destination, recorded as ``to.M.d``), ``rP>d`` (a request),
    ``gP>d`` (a permission), ``kP>d`` (an ack); ``rk.M2.M1``: ``M1`` was in the receiver's
    knowledge or in ``M2``'s past when the receiver first delivered ``M2``, that is,
    send(``M1``) happened before the receipt of ``M2``. Its one property is ``synchronous``: that relation has no cycle (no crown)."""

    ghost_at, know_at, chans_at = 2, 3, 0
    choices_allowed = True
    property_names = ("synchronous",)

    def wire_slots(self) -> list[Slot]:
        n, out = self.n, []
        for m in self.mids:
            p = self.msgs[m][0]
            out += [Slot(f"{m}>{d}", p, d, {}, self.mname(m)) for d in self.dests(m)]
        for p in range(n):
            for d in range(n):
                if d != p:
                    out += [Slot(f"r{p}>{d}", p, d, {}, "request"), Slot(f"g{p}>{d}", p, d, {}, "permission"),
                            Slot(f"k{p}>{d}", p, d, {}, "ack")]
        return out

    def own_schema(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for p in range(self.n):
            out.update({f"mode.{p}": "int", f"partner.{p}": "int", f"asking.{p}": "int"})
        for m2 in self.mids:
            out.update({f"rk.{m2}.{m1}": "bool" for m1 in self.mids if m1 != m2})
        return out

    def slot_of(self, src: int, dst: int, msg: Any) -> tuple[str, dict[str, int]]:
        from ordercheck.specs.synchronous import ACK, APP, REQUEST

        kind, mid = msg
        if kind == APP:
            return f"{mid}>{dst}", {}
        return f"{'r' if kind == REQUEST else 'k' if kind == ACK else 'g'}{src}>{dst}", {}

    def encode_own(self, state: tuple, out: dict[str, Any]) -> None:
        from ordercheck.specs.history import DELIVER, SEND, decode_event
        from ordercheck.specs.synchronous import PROCS

        for p, (mode, partner, asking) in enumerate(state[PROCS]):
            out.update({f"mode.{p}": mode, f"partner.{p}": partner, f"asking.{p}": asking})
        sent, logs = state[self.ghost_at]
        pasts = {p * self.stride + i: past for p in range(self.n) for i, (_d, past) in enumerate(sent[p])}
        for q in range(self.n):
            know, first = 0, set()
            for code in logs[q]:
                ev = decode_event(code)
                if ev.kind == SEND:
                    know |= 1 << ev.arg
                elif ev.kind == DELIVER:
                    if ev.arg not in first:  # its first receipt (a later one changes nothing)
                        first.add(ev.arg)
                        for m1 in self.mids:
                            if m1 != ev.arg:
                                out[f"rk.{ev.arg}.{m1}"] = bool((know | pasts[ev.arg]) >> m1 & 1)
                    know |= 1 << ev.arg | pasts[ev.arg]

    def _send(self, s: SymState, p: int, m: int, d: int, upd: dict[str, Any]) -> list[Any]:
        """``p`` sends ``m`` to ``d`` (into ``upd``); the guards."""
        guard, more = self.send_app(s, p, m, 1 << d)
        upd.update(more)
        return [guard, self.put(s, f"{m}>{d}", {}, upd)]

    def protocol_actions(self) -> list[SymAction]:
        from ordercheck.specs.synchronous import ACTIVE, GRANTED, WAIT_ACK

        spec, n, out = self.spec, self.n, []
        for m in self.mids:
            p = self.msgs[m][0]
            for d in self.dests(m):
                ask = d > p and spec.request_permission
                big = d < p

                def start(s: SymState, t: SymState, p: int = p, m: int = m, d: int = d, ask: bool = ask,
                          big: bool = big) -> tuple[Any, dict[str, Any]]:
                    i = m - p * self.stride
                    guard = [s[f"sent.{p}"] == i, s[f"mode.{p}"] == ACTIVE, s[f"asking.{p}"] == 0]
                    upd: dict[str, Any] = {}
                    if ask:
                        guard.append(self.put(s, f"r{p}>{d}", {}, upd))
                        upd[f"asking.{p}"] = z3.IntVal(1 + d)
                    else:
                        guard += self._send(s, p, m, d, upd)
                        if big and spec.wait_for_ack:
                            upd.update({f"mode.{p}": z3.IntVal(WAIT_ACK), f"partner.{p}": z3.IntVal(d)})
                    return z3.And(guard), upd

                label = ((lambda pre, post, p=p, d=d: ("request", p, d)) if ask
                         else (lambda pre, post, p=p, m=m, d=d: ("send", p, m, 1 << d)))
                out.append(self.action(f"start {self.mname(m)} to {self.names[d]}", start, label))
                if ask:
                    def permitted(s: SymState, t: SymState, p: int = p, m: int = m, d: int = d) -> tuple[Any, dict[str, Any]]:
                        upd: dict[str, Any] = {f"mode.{p}": z3.IntVal(ACTIVE), f"partner.{p}": z3.IntVal(0),
                                               f"asking.{p}": z3.IntVal(0)}
                        key = f"g{d}>{p}"
                        self.take(s, key, upd)
                        guard = [self.can_take(s, key), s[f"mode.{p}"] == ACTIVE, s[f"asking.{p}"] == 1 + d]
                        guard += self._send(s, p, m, d, upd)
                        return z3.And(guard), upd

                    out.append(self.action(f"permission: send {self.mname(m)} to {self.names[d]}", permitted,
                                           lambda pre, post, p=p, m=m, d=d: ("send", p, m, 1 << d)))
                out.append(self._deliver(p, d, m))
        for p in range(n):
            for src in range(n):
                if src == p:
                    continue

                def ack(s: SymState, t: SymState, p: int = p, src: int = src) -> tuple[Any, dict[str, Any]]:
                    upd: dict[str, Any] = {f"mode.{p}": z3.IntVal(ACTIVE), f"partner.{p}": z3.IntVal(0)}
                    self.take(s, f"k{src}>{p}", upd)
                    return z3.And(self.can_take(s, f"k{src}>{p}"), s[f"mode.{p}"] == WAIT_ACK,
                                  s[f"partner.{p}"] == src), upd

                def grant(s: SymState, t: SymState, p: int = p, src: int = src) -> tuple[Any, dict[str, Any]]:
                    upd: dict[str, Any] = {f"mode.{p}": z3.IntVal(GRANTED), f"partner.{p}": z3.IntVal(src)}
                    self.take(s, f"r{src}>{p}", upd)
                    free = self.put(s, f"g{p}>{src}", {}, upd)
                    return z3.And(self.can_take(s, f"r{src}>{p}"), s[f"mode.{p}"] == ACTIVE, free), upd

                out.append(self.action(f"{self.names[p]} gets {self.names[src]}'s ack", ack,
                                       lambda pre, post, p=p, src=src: ("ack", p, src)))
                out.append(self.action(f"{self.names[p]} grants {self.names[src]}", grant,
                                       lambda pre, post, p=p, src=src: ("grant", p, src)))
        return out

    def _deliver(self, src: int, p: int, m: int) -> SymAction:
        from ordercheck.specs.synchronous import ACTIVE, GRANTED

        spec, key = self.spec, f"{m}>{p}"

        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            upd: dict[str, Any] = {}
            self.take(s, key, upd)
            guard = [self.can_take(s, key)]
            if src > p:  # a big message
                guard.append(s[f"mode.{p}"] == ACTIVE)
                if spec.wait_for_ack:
                    guard.append(self.put(s, f"k{p}>{src}", {}, upd))
            elif spec.request_permission:
                guard += [s[f"mode.{p}"] == GRANTED, s[f"partner.{p}"] == src]
                upd.update({f"mode.{p}": z3.IntVal(ACTIVE), f"partner.{p}": z3.IntVal(0)})
            else:
                guard.append(s[f"mode.{p}"] == ACTIVE)
            first = z3.Not(s[f"dl.{p}.{m}"])
            for m1 in self.mids:
                if m1 != m:
                    upd[f"rk.{m}.{m1}"] = z3.If(first, z3.Or(s[f"know.{p}.{m1}"], s[f"past.{m}.{m1}"]), s[f"rk.{m}.{m1}"])
            upd.update(self.deliver_app(s, p, m))
            return z3.And(guard), upd

        return self.action(f"deliver {self.mname(m)} at {self.names[p]}", step, lambda pre, post: ("deliver", p, m))

    def p_synchronous(self, s: SymState) -> z3.BoolRef:
        """No crown: "send(m1) happened before the receipt of m2" (``rk.m2.m1``) has no
        cycle over distinct messages (every simple cycle enumerated)."""
        from itertools import permutations

        bad = []
        for k in range(2, len(self.mids) + 1):
            for cyc in permutations(self.mids, k):
                if cyc[0] == min(cyc):
                    bad.append(z3.And([s[f"rk.{cyc[(i + 1) % k]}.{cyc[i]}"] for i in range(k)]))
        return z3.Not(z3.Or(bad)) if bad else z3.BoolVal(True)

    def describe_own(self, values: dict[str, Any]) -> list[str]:
        return [f"{a}: mode {values[f'mode.{p}']}, partner {values[f'partner.{p}']}, asking {values[f'asking.{p}']}"
                for p, a in enumerate(self.names)]


EXACT = ExactSynchronous

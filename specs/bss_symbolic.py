"""BSS causal broadcast as Z3 formulas, beside the explicit :mod:`ordercheck.specs.bss`.

A focused encoding of the receiver side, which is where BSS's guarantee is decided.
The variables of a state (``n`` the model's peers):

* ``V.p.k``: peer ``p``'s vector clock, as in the explicit spec;
* ``sent.p``: how many messages ``p`` has broadcast;
* ghosts: ``D.p.k``, how many of ``k``'s messages ``p`` has delivered, and the last
  delivery of each peer: ``last.p.has``, its sender ``last.p.src``, the stamp it
  carried ``last.p.st.k`` and ``p``'s delivery counts just before it ``last.p.pre.k``
  (``last.p.pre.p``: the messages ``p`` had sent).

Actions: ``send(p)`` (``V[p][p] += 1``) and ``deliver(p)``: *some* message, from any
other peer with any stamp that passes ``p``'s delivery condition (conditions (a) and (b)
as the model's constants say), is delivered and merged into ``V_p`` (``max`` or
``increment``). Messages in transit and held back are not enumerated: the message
delivered is a nondeterministic choice, so the encoding allows every delivery the
explicit spec allows (any channel, any number of messages in flight, losses, copies)
and more. Receiving into the hold-back buffer, losses, copies and signals change none
of these variables (they are stutter steps here). ``tests/test_symbolic_seeds.py``
checks on the explicit state space that every explicit step is a step of this
encoding, and that every reachable state satisfies the lemmas.

The proof (any number of broadcasts by the model's peers), the textbook one:

* ``clock_counts_deliveries``: ``V[p][k] = D[p][k]`` for ``k != p`` and ``V[p][p] =
  sent.p``. Delivering ``m`` from ``j`` with condition (a) (``V_m[j] = V[p][j] + 1``)
  and (b) (``V_m[k] <= V[p][k]``, ``k != j``) makes ``max(V_p, V_m)`` add one at ``j``
  only. Without (b) the merge can raise ``V[p][k]`` past ``p``'s deliveries from ``k``.
* targets ``fifo_delivery`` (``p``'s last delivery from ``j`` carried ``V_m[j] =
  D[p][j] + 1``: ``p`` delivers ``j``'s broadcasts 1, 2, 3... in order, each once) and
  ``causal_delivery`` (it carried ``V_m[k] <= D[p][k]`` for every ``k != j``: ``p`` had
  already delivered the first ``V_m[k]`` broadcasts of ``k``, or sent them, for ``k = p``).

From the targets to the ``causal`` property of the model (``guarantees``): ``V_m`` is
the sender's vector at the send, so (by ``clock_counts_deliveries`` at the sender)
``V_m[k]`` is the number of ``k``'s broadcasts the sender had delivered, which by
``fifo_delivery`` are ``k``'s first ``V_m[k]``; with broadcasts to every other peer
and no side channel, a message's causal past is its sender's earlier broadcasts and
what its sender had delivered (closed under the same rule, by induction on the run).
So each delivery comes after every delivery of its causal past. The claim is made only
for models whose peers broadcast to all others and send no signals.
"""

from __future__ import annotations

from typing import Any

import z3

from ordercheck.specs.history import DELIVER, decode_event
from ordercheck.specs.symbolic import SymAction, SymState, target_properties, zmax
from ordercheck.specs.symbolic_exact import ExactHoldBack, zmax_list


class HoldBackEncoding:
    """Shared parts of the receiver-side encodings of :mod:`ordercheck.specs.holdback` protocols
    (BSS, matrix clocks): clocks, delivery counts, the last delivery's ghost.

    A subclass names the clock variables (:meth:`clock_vars`), the stamp's
    (:meth:`stamp_vars`), and gives the send and delivery rules over them."""

    def __init__(self, spec: Any, *, queue_bound: int | None = None, bounded: bool = True) -> None:
        self.spec = spec
        self.n = spec.peers
        self.names = spec.names
        self.bounded = bounded
        self.queue_bound = queue_bound
        n = self.n
        schema: dict[str, str] = {}
        for p in range(n):
            schema[f"sent.{p}"] = "int"
            schema.update({v: "int" for v in self.clock_vars(p)})
            schema.update({f"D.{p}.{k}": "int" for k in range(n)})
            schema.update({f"last.{p}.has": "bool", f"last.{p}.src": "int"})
            schema.update({f"last.{p}.st.{c}": "int" for c in self.stamp_cells()})
            schema.update({f"last.{p}.pre.{k}": "int" for k in range(n)})
        self.schema = schema
        self.properties: dict[str, tuple[str, Any]] = {}  # a subclass gives its targets
        broadcast = spec.plan is None and spec.destinations == "others"
        self.guarantees: dict[str, tuple[str, ...]] = {}
        if broadcast and spec.signals == 0:
            self.guarantees = {"causal": ("fifo_per_peer", "causal_per_peer"), "fifo": ("fifo_per_peer",)}

    # -- what a subclass gives ----------------------------------------------------------

    def clock_vars(self, p: int) -> list[str]:
        raise NotImplementedError

    def stamp_cells(self) -> list[str]:
        raise NotImplementedError

    def count_cell(self, p: int, k: int) -> str:
        """The cell of a stamp (and of ``p``'s clock) that counts ``k``'s messages to ``p``."""
        raise NotImplementedError

    # -- shared -------------------------------------------------------------------------

    def max_queue(self) -> int:
        """No queue is enumerated: 0 (any number of messages may be in flight)."""
        return 0

    def init(self, s: SymState) -> z3.BoolRef:
        parts = [s[v] == 0 for v in self.schema if self.schema[v] == "int"]
        parts += [z3.Not(s[f"last.{p}.has"]) for p in range(self.n)]
        return z3.And(parts)

    def clock(self, s: SymState, p: int, cell: str) -> Any:
        return s[f"C.{p}.{cell}"]

    def stamp(self, t: SymState, p: int, cell: str) -> Any:
        return t[f"last.{p}.st.{cell}"]

    def choose_message(self, s: SymState, t: SymState, p: int) -> z3.BoolRef:
        """The delivered message: from another peer, with a stamp of naturals that
        passes ``p``'s delivery condition."""
        src = t[f"last.{p}.src"]
        parts = [src >= 0, src < self.n, src != p]
        parts += [self.stamp(t, p, c) >= 0 for c in self.stamp_cells()]
        parts.append(self.deliverable(s, t, p, src))
        return z3.And(parts)

    def deliverable(self, s: SymState, t: SymState, p: int, src: Any) -> z3.BoolRef:
        """The explicit spec's delivery condition, for each possible sender."""
        out = []
        for j in range(self.n):
            if j == p:
                continue
            conds = []
            if self.sender_check():
                conds.append(self.stamp(t, p, self.count_cell(p, j)) == self.clock(s, p, self.count_cell(p, j)) + 1)
            if self.others_check():
                for k in range(self.n):
                    if k != j:
                        conds.append(self.stamp(t, p, self.count_cell(p, k)) <= self.clock(s, p, self.count_cell(p, k)))
            out.append(z3.Implies(src == j, z3.And(conds) if conds else z3.BoolVal(True)))
        return z3.And(out)

    def sender_check(self) -> bool:
        raise NotImplementedError

    def others_check(self) -> bool:
        raise NotImplementedError

    def merged(self, s: SymState, t: SymState, p: int, src: Any) -> dict[str, Any]:
        """``p``'s clock cells after delivering the chosen message (default: ``max``)."""
        return {f"C.{p}.{c}": zmax(self.clock(s, p, c), self.stamp(t, p, c)) for c in self.local_cells()}

    def local_cells(self) -> list[str]:
        return self.stamp_cells()

    def actions(self) -> list[SymAction]:
        out = []
        for p in range(self.n):
            out += self.send_actions(p)
            out.append(SymAction(f"deliver {self.names[p]}", self._deliver_step(p), self._deliver_label(p),
                                 choose=lambda s, t, p=p: self.choose_message(s, t, p)))
        return out

    def send_actions(self, p: int) -> list[SymAction]:
        raise NotImplementedError

    def _deliver_step(self, p: int) -> Any:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            src = t[f"last.{p}.src"]
            upd = self.merged(s, t, p, src)
            for k in range(self.n):
                upd[f"D.{p}.{k}"] = s[f"D.{p}.{k}"] + z3.If(src == k, 1, 0)
                upd[f"last.{p}.pre.{k}"] = self.own_count(s, p) if k == p else s[f"D.{p}.{k}"]
            upd[f"last.{p}.has"] = z3.BoolVal(True)
            # the chosen message: left free in the post-state (constrained by choose_message)
            upd[f"last.{p}.src"] = src
            upd.update({f"last.{p}.st.{c}": self.stamp(t, p, c) for c in self.stamp_cells()})
            return z3.BoolVal(True), upd

        return step

    own_is_sent = True

    def own_count(self, s: SymState, p: int) -> Any:
        """What ``p`` has "delivered" of its own messages, for the last delivery's ghost:
        the messages it sent (BSS stamps count them) unless a subclass says otherwise."""
        return s[f"sent.{p}"]

    def _deliver_label(self, p: int) -> Any:
        def label(pre: dict, post: dict) -> tuple:
            return ("deliver", p, post[f"last.{p}.src"])

        return label

    def _sends_bounded(self, s: SymState, p: int) -> Any:
        if not self.bounded:
            return z3.BoolVal(True)
        limit = len(self.spec.plan[p]) if self.spec.plan is not None else self.spec.sends
        return s[f"sent.{p}"] < limit

    # -- lemmas and targets ---------------------------------------------------------------

    def l_shape(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for p in range(self.n):
            a = self.names[p]
            out.append((f"{a} has sent a natural number of messages", s[f"sent.{p}"] >= 0))
            for k in range(self.n):
                out.append((f"{a}'s delivery count from {self.names[k]} is a natural", s[f"D.{p}.{k}"] >= 0))
            out.append((f"{a} delivers nothing of its own", s[f"D.{p}.{p}"] == 0))
            out.append((f"{a}'s clock entries are naturals", z3.And([s[v] >= 0 for v in self.clock_vars(p)])))
            src = s[f"last.{p}.src"]
            out.append((f"{a}'s last delivery is from another peer",
                        z3.Implies(s[f"last.{p}.has"], z3.And(src >= 0, src < self.n, src != p))))
        return out

    def l_fifo(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for p in range(self.n):
            for j in range(self.n):
                if j == p:
                    continue
                cell = self.count_cell(p, j)
                out.append((
                    f"{self.names[p]}'s last delivery, if from {self.names[j]}, was {self.names[j]}'s next message",
                    z3.Implies(z3.And(s[f"last.{p}.has"], s[f"last.{p}.src"] == j),
                               s[f"last.{p}.st.{cell}"] == s[f"last.{p}.pre.{j}"] + 1),
                ))
        return out

    def l_causal(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for p in range(self.n):
            for j in range(self.n):
                if j == p:
                    continue
                for k in range(self.n):
                    if k == j:
                        continue
                    cell = self.count_cell(p, k)
                    out.append((
                        f"{self.names[p]}'s last delivery, if from {self.names[j]}, names no message of "
                        f"{self.names[k]} that {self.names[p]} had not delivered",
                        z3.Implies(z3.And(s[f"last.{p}.has"], s[f"last.{p}.src"] == j),
                                   s[f"last.{p}.st.{cell}"] <= s[f"last.{p}.pre.{k}"]),
                    ))
        return out

    # -- readable states and the explicit side ------------------------------------------

    def format_action(self, label: tuple) -> str:
        if label[0] == "deliver":
            return f"{self.names[label[1]]} delivers a message from {self.names[label[2]]}"
        return f"{self.names[label[1]]} sends"

    def describe(self, values: dict[str, Any]) -> dict[str, Any]:
        lines = []
        for p, a in enumerate(self.names):
            clock = self.show_clock(values, p)
            counts = ", ".join(f"{self.names[k]}:{values[f'D.{p}.{k}']}" for k in range(self.n) if k != p)
            line = f"{a}: clock {clock}; sent {values[f'sent.{p}']}; delivered {counts}"
            if values[f"last.{p}.has"]:
                src = values[f"last.{p}.src"]
                stamp = self.show_stamp(values, p)
                pre = ", ".join(f"{self.names[k]}:{values[f'last.{p}.pre.{k}']}" for k in range(self.n))
                shown = self.names[src] if 0 <= src < self.n else str(src)
                line += f"; last delivered from {shown} stamped {stamp} (delivered before it: {pre})"
            lines.append(line)
        return {"lines": lines}

    def encode(self, state: tuple, prev: tuple | None = None) -> dict[str, Any]:
        """An explicit state as variable values. ``prev = (pre_state, pre_values,
        label)`` when ``state`` follows ``pre_state`` by ``label``: the last-delivery
        ghost comes from the message the step delivered (``None``: no delivery yet)."""
        from ordercheck.specs.holdback import BUFFERS, CHANS, GHOST, LOCAL

        spec = self.spec
        ghost = state[GHOST]
        out: dict[str, Any] = {}
        for p in range(self.n):
            out[f"sent.{p}"] = len(ghost[0][p])
            out.update(self.encode_clock(state[LOCAL][p], p))
            counts = [0] * self.n
            for code in ghost[1][p]:
                ev = decode_event(code)
                if ev.kind == DELIVER:
                    counts[ev.arg // spec.stride] += 1
            out.update({f"D.{p}.{k}": counts[k] for k in range(self.n)})
            out[f"last.{p}.has"] = False
            out[f"last.{p}.src"] = 0
            out.update({f"last.{p}.st.{c}": 0 for c in self.stamp_cells()})
            out.update({f"last.{p}.pre.{k}": 0 for k in range(self.n)})
        if prev is not None:
            pre_state, pre_values, label = prev
            for p in range(self.n):
                for key in (f"last.{p}.has", f"last.{p}.src", *(f"last.{p}.st.{c}" for c in self.stamp_cells()),
                            *(f"last.{p}.pre.{k}" for k in range(self.n))):
                    out[key] = pre_values[key]
            if label[0] in ("receive", "deliver"):
                p, mid = label[1], label[2]
                data = None
                for (_src, dst), msgs in pre_state[CHANS]:
                    if dst == p:
                        data = next((d for m, d in msgs if m == mid), data)
                if label[0] == "deliver":
                    data = next(d for m, d in pre_state[BUFFERS][p] if m == mid)
                out[f"last.{p}.has"] = True
                out[f"last.{p}.src"] = mid // spec.stride
                out.update({f"last.{p}.st.{c}": v for c, v in self.encode_stamp(data).items()})
                out.update({f"last.{p}.pre.{k}": pre_values[f"sent.{p}" if k == p and self.own_is_sent else f"D.{p}.{k}"]
                            for k in range(self.n)})
        return out

    def encode_clock(self, local: tuple, p: int) -> dict[str, int]:
        raise NotImplementedError

    def encode_stamp(self, data: Any) -> dict[str, int]:
        raise NotImplementedError

    def show_clock(self, values: dict[str, Any], p: int) -> str:
        raise NotImplementedError

    def show_stamp(self, values: dict[str, Any], p: int) -> str:
        raise NotImplementedError


class SymbolicBSS(HoldBackEncoding):
    """The receiver-side encoding of a :class:`~ordercheck.specs.bss.BSS` instance (module doc)."""

    def __init__(self, spec: Any, *, queue_bound: int | None = None, bounded: bool = True) -> None:
        super().__init__(spec, queue_bound=queue_bound, bounded=bounded)
        self.lemmas = {
            "shape": ("counts are naturals; a peer's last delivery is from another peer", self.l_shape),
            "clock_counts_deliveries": (
                "V[p][k] is the number of k's messages p delivered (k != p), V[p][p] the number p sent",
                self.l_counts,
            ),
            "fifo_delivery": ("each peer's last delivery was the next message of its sender", self.l_fifo),
            "causal_delivery": (
                "each peer's last delivery named (V_m[k]) no message of another peer k it had not delivered",
                self.l_causal,
            ),
        }
        self.targets = {"fifo_per_peer": self.lemmas["fifo_delivery"], "causal_per_peer": self.lemmas["causal_delivery"]}
        self.properties = target_properties(self.targets)  # BMC of the targets (bmc_queries)

    def clock_vars(self, p: int) -> list[str]:
        return [f"C.{p}.{k}" for k in range(self.n)]

    def stamp_cells(self) -> list[str]:
        return [str(k) for k in range(self.n)]

    def count_cell(self, p: int, k: int) -> str:
        return str(k)

    def sender_check(self) -> bool:
        return bool(self.spec.condition_a)

    def others_check(self) -> bool:
        return bool(self.spec.condition_b)

    def merged(self, s: SymState, t: SymState, p: int, src: Any) -> dict[str, Any]:
        if self.spec.update == "max":
            return super().merged(s, t, p, src)
        return {f"C.{p}.{k}": self.clock(s, p, str(k)) + z3.If(src == k, 1, 0) for k in range(self.n)}

    def send_actions(self, p: int) -> list[SymAction]:
        def step(s: SymState, t: SymState) -> tuple[Any, dict[str, Any]]:
            return self._sends_bounded(s, p), {f"sent.{p}": s[f"sent.{p}"] + 1, f"C.{p}.{p}": s[f"C.{p}.{p}"] + 1}

        return [SymAction(f"send {self.names[p]}", step, lambda pre, post, p=p: ("send", p))]

    def l_counts(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for p in range(self.n):
            for k in range(self.n):
                want = s[f"sent.{p}"] if k == p else s[f"D.{p}.{k}"]
                what = "its sends" if k == p else f"its deliveries from {self.names[k]}"
                out.append((f"V[{self.names[p]}][{self.names[k]}] counts {what}", s[f"C.{p}.{k}"] == want))
        return out

    def encode_clock(self, local: tuple, p: int) -> dict[str, int]:
        return {f"C.{p}.{k}": local[k] for k in range(self.n)}

    def encode_stamp(self, data: Any) -> dict[str, int]:
        return {str(k): data[k] for k in range(self.n)}

    def show_clock(self, values: dict[str, Any], p: int) -> str:
        return "(" + ",".join(str(values[f"C.{p}.{k}"]) for k in range(self.n)) + ")"

    def show_stamp(self, values: dict[str, Any], p: int) -> str:
        return "(" + ",".join(str(values[f"last.{p}.st.{k}"]) for k in range(self.n)) + ")"


SYMBOLIC = SymbolicBSS


class ExactBSS(ExactHoldBack):
    """BSS step for step, for one model's plan (:mod:`ordercheck.specs.symbolic_exact`): the
    vector ``V_p`` as ``L.p.k``, the piggybacked ``V_m`` as ``d0..d(n-1)``."""

    def __init__(self, spec: Any) -> None:
        self.local_width = self.data_width = spec.peers
        super().__init__(spec)

    def flat_local(self, local: Any) -> list[int]:
        return list(local)

    def flat_data(self, data: Any) -> list[int]:
        return list(data)

    def z_stamp(self, local: list[Any], p: int, dests: list[int]) -> tuple[list[Any], list[list[Any]]]:
        v = [x + 1 if k == p else x for k, x in enumerate(local)]
        return v, [v] * len(dests)

    def z_deliverable(self, local: list[Any], p: int, src: int, data: list[Any]) -> Any:
        parts = []
        if self.spec.condition_a:
            parts.append(data[src] == local[src] + 1)
        if self.spec.condition_b:
            parts += [data[k] <= local[k] for k in range(self.n) if k != src]
        return z3.And(parts) if parts else z3.BoolVal(True)

    def z_on_deliver(self, local: list[Any], p: int, src: int, data: list[Any]) -> list[Any]:
        if self.spec.update == "max":
            return zmax_list(local, data)
        return [x + 1 if k == src else x for k, x in enumerate(local)]


EXACT = ExactBSS

"""Garg's matrix-clock causal ordering as Z3 formulas, beside :mod:`ordercheck.specs.matrix`.

The same receiver-side encoding as :mod:`ordercheck.specs.bss_symbolic` (see it for the variables,
the actions and why a delivered message is a nondeterministic choice), over the
matrix ``M`` of each peer: ``C.p.k_l`` is ``M_p[k, l]``, the number of messages from
``k`` to ``l`` that ``p`` knows of, and a delivered message's stamp ``W`` is
``last.p.st.k_l``.

* ``clock_counts_deliveries``: column ``p`` of ``M_p`` counts ``p``'s deliveries:
  ``M_p[k, p] = D[p][k]`` for ``k != p`` and ``M_p[p, p] = 0``. Accepting ``W`` from
  ``j`` with ``W[j, p] = M_p[j, p] + 1`` and ``W[k, p] <= M_p[k, p]`` (``k != j``) makes
  ``max(M, W)`` add one at ``[j, p]`` only, in column ``p``; without ``check_others``
  the merge can raise ``M_p[k, p]`` past ``p``'s deliveries from ``k``.
* targets ``fifo_delivery`` (the last message ``p`` accepted from ``j`` carried
  ``W[j, p] = D[p][j] + 1``) and ``causal_delivery`` (it carried ``W[k, p] <= D[p][k]``
  for ``k != j``: ``p`` had delivered every message from ``k`` to ``p`` that the sender
  knew of).

From the targets to ``causal``: ``W`` is the sender's matrix at the send, whose entry
``[k, p]`` counts the messages from ``k`` to ``p`` in the sender's causal past (the
sender's own row counts its sends; a merge takes what a delivered message knew), so
each delivery comes after every message to ``p`` in its causal past, for any
destinations, provided no side-channel signal adds to a causal past unseen.
"""

from __future__ import annotations

from typing import Any

import z3

from ordercheck.specs.bss_symbolic import HoldBackEncoding
from ordercheck.specs.symbolic import SymAction, SymState, target_properties
from ordercheck.specs.symbolic_exact import ExactHoldBack, zmax_list


class SymbolicMatrix(HoldBackEncoding):
    """The receiver-side encoding of a :class:`~ordercheck.specs.matrix.Matrix` instance (module doc)."""

    def __init__(self, spec: Any, *, queue_bound: int | None = None, bounded: bool = True) -> None:
        super().__init__(spec, queue_bound=queue_bound, bounded=bounded)
        self.guarantees = (
            {"causal": ("fifo_per_peer", "causal_per_peer"), "fifo": ("fifo_per_peer",)} if spec.signals == 0 else {}
        )
        self.lemmas = {
            "shape": ("counts are naturals; a peer's last delivery is from another peer", self.l_shape),
            "clock_counts_deliveries": ("column p of M_p counts p's deliveries from each peer", self.l_counts),
            "fifo_delivery": ("each peer's last delivery was the next message of its sender to it", self.l_fifo),
            "causal_delivery": (
                "each peer's last delivery named (W[k, p]) no message from k to p that p had not delivered",
                self.l_causal,
            ),
        }
        self.targets = {"fifo_per_peer": self.lemmas["fifo_delivery"], "causal_per_peer": self.lemmas["causal_delivery"]}
        self.properties = target_properties(self.targets)  # BMC of the targets (bmc_queries)

    own_is_sent = False  # W[p, p] counts messages from p to itself: none

    def own_count(self, s: SymState, p: int) -> Any:
        return s[f"D.{p}.{p}"]

    def clock_vars(self, p: int) -> list[str]:
        return [f"C.{p}.{c}" for c in self.stamp_cells()]

    def stamp_cells(self) -> list[str]:
        return [f"{k}_{l}" for k in range(self.n) for l in range(self.n)]  # noqa: E741

    def count_cell(self, p: int, k: int) -> str:
        return f"{k}_{p}"

    def sender_check(self) -> bool:
        return bool(self.spec.check_sender)

    def others_check(self) -> bool:
        return bool(self.spec.check_others)

    def send_actions(self, p: int) -> list[SymAction]:
        spec = self.spec
        masks = sorted({m for m in (spec.plan[p] if spec.plan is not None else spec.choices[p])})
        out = []
        for mask in masks:
            def step(s: SymState, t: SymState, mask: int = mask) -> tuple[Any, dict[str, Any]]:
                upd: dict[str, Any] = {f"sent.{p}": s[f"sent.{p}"] + 1}
                for d in range(self.n):
                    if mask >> d & 1:
                        upd[f"C.{p}.{p}_{d}"] = s[f"C.{p}.{p}_{d}"] + 1
                guard = self._sends_bounded(s, p)
                if spec.plan is not None and self.bounded:  # a script fixes each send's destinations
                    picks = [i for i, m in enumerate(spec.plan[p]) if m == mask]
                    guard = z3.And(guard, z3.Or([s[f"sent.{p}"] == i for i in picks]))
                return guard, upd

            out.append(SymAction(f"send {self.names[p]} to {mask}", step, lambda pre, post, p=p, mask=mask: ("send", p, mask)))
        return out

    def l_counts(self, s: SymState) -> list[tuple[str, Any]]:
        out = []
        for p in range(self.n):
            a = self.names[p]
            out.append((f"M_{a}[{a}, {a}] is 0", s[f"C.{p}.{p}_{p}"] == 0))
            for k in range(self.n):
                if k != p:
                    out.append((f"M_{a}[{self.names[k]}, {a}] counts {a}'s deliveries from {self.names[k]}",
                                s[f"C.{p}.{k}_{p}"] == s[f"D.{p}.{k}"]))
        return out

    def encode_clock(self, local: tuple, p: int) -> dict[str, int]:
        return {f"C.{p}.{k}_{l}": local[k][l] for k in range(self.n) for l in range(self.n)}  # noqa: E741

    def encode_stamp(self, data: Any) -> dict[str, int]:
        return {f"{k}_{l}": data[k][l] for k in range(self.n) for l in range(self.n)}  # noqa: E741

    def _show(self, values: dict[str, Any], prefix: str) -> str:
        rows = ["(" + ",".join(str(values[f"{prefix}{k}_{l}"]) for l in range(self.n)) + ")" for k in range(self.n)]  # noqa: E741
        return "[" + " ".join(rows) + "]"

    def show_clock(self, values: dict[str, Any], p: int) -> str:
        return self._show(values, f"C.{p}.")

    def show_stamp(self, values: dict[str, Any], p: int) -> str:
        return self._show(values, f"last.{p}.st.")


SYMBOLIC = SymbolicMatrix


class ExactMatrix(ExactHoldBack):
    """Matrix clocks step for step, for one model's plan (:mod:`ordercheck.specs.symbolic_exact`):
    ``M_p[k][j]`` as ``L.p.(k*n+j)``, the piggybacked matrix ``W`` likewise as ``d(k*n+j)``."""

    def __init__(self, spec: Any) -> None:
        self.local_width = self.data_width = spec.peers * spec.peers
        super().__init__(spec)

    def flat_local(self, local: Any) -> list[int]:
        return [c for row in local for c in row]

    def flat_data(self, data: Any) -> list[int]:
        return [c for row in data for c in row]

    def z_stamp(self, local: list[Any], p: int, dests: list[int]) -> tuple[list[Any], list[list[Any]]]:
        n = self.n
        m = [x + 1 if i // n == p and i % n in dests else x for i, x in enumerate(local)]
        return m, [m] * len(dests)

    def z_deliverable(self, local: list[Any], p: int, src: int, data: list[Any]) -> Any:
        n, parts = self.n, []
        if self.spec.check_sender:
            parts.append(data[src * n + p] == local[src * n + p] + 1)
        if self.spec.check_others:
            parts += [data[k * n + p] <= local[k * n + p] for k in range(n) if k != src]
        return z3.And(parts) if parts else z3.BoolVal(True)

    def z_on_deliver(self, local: list[Any], p: int, src: int, data: list[Any]) -> list[Any]:
        return zmax_list(local, data)


EXACT = ExactMatrix

"""Schiper-Eggli-Sandoz causal ordering of point-to-point messages.

Source: ``seeds/message-ordering-notes.txt``. Each peer ``i`` keeps a vector clock
``V_i`` (all zeros at first) that it increments in its own component at every send,
receive (arrival) and delivery event, and a buffer ``S_i`` of pairs ``(process,
vector)``, at most one per process, initially empty.

- Send of ``m`` from ``i`` to ``j``: ``V_i[i] += 1``; ``m`` carries the timestamp
  ``t_m = V_i`` and the contents of ``S_i`` as they were before this send; then ``i``
  records ``(j, t_m)`` in ``S_i`` (replacing an older pair for ``j``: ``t_m`` is
  later). A multicast to several destinations is one send event whose copies all carry
  the same ``t_m``; the copy to ``d`` carries ``S_i`` together with ``(d', t_m)`` for
  every other destination ``d'`` (the send to ``d'`` precedes whatever ``d`` does after
  delivering), and afterwards ``S_i`` holds ``(d, t_m)`` for each ``d``.
- Arrival of ``m`` at ``j``: ``V_j[j] += 1``. If ``m``'s buffer holds no pair for
  ``j``, ``m`` is deliverable. If it holds ``(j, t)``, some message sent to ``j`` with
  timestamp ``t`` precedes ``m``, and ``m`` is deliverable once ``t <= V_j`` (``j`` has
  seen that send); until then it is held back.
- Delivery: merge ``m``'s buffer into ``S_j`` (for each pair ``(k, t)`` with ``k != j``:
  add it, or take the componentwise maximum with ``j``'s own pair for ``k``); then
  ``V_j := max(V_j, t_m)`` and ``V_j[j] += 1``.

The notes phrase the test as "compares its own vector clock to the buffer and if it is
smaller, it is missing messages". ``buffer_test = "dominated"`` (the default) reads it as
the algorithm's published condition: deliverable iff ``t <= V_j``. ``buffer_test =
"smaller"`` takes the words literally: hold back only when ``V_j < t``, so a clock that
is merely incomparable with ``t`` lets the message through.

Ablation flags: ``check_buffer`` (deliver on arrival, ignoring the pair for ``j``) and
``merge_buffer`` (do not merge a delivered message's buffer into ``S_j``, so knowledge
of sends is not passed on transitively).

Local state per peer: ``(V, S)`` with ``S`` a tuple of ``n`` entries, each ``()`` for
no pair or a vector. A message's data: ``(t_m, S)``.
"""

from __future__ import annotations

from typing import Any

from ordercheck.checker import Constant
from ordercheck.specs.base import peer_constants
from ordercheck.specs.channels import channel_constants
from ordercheck.specs.holdback import HoldBackSpec, leq, vmax


class SES(HoldBackSpec):
    name = "ses"
    summary = "Schiper-Eggli-Sandoz causal point-to-point ordering: vector clocks and a buffer of (process, vector) pairs"
    # Channel faults (ordercheck.checker.api.faults): reordering and loss only. SES has no duplicate
    # detection: a copy passes the buffer test again and is delivered a second time, so
    # a duplicating channel would be reported as an ordering violation of the algorithm.
    tolerates = frozenset({"reordering", "loss"})
    constants = (
        *peer_constants(peers=3, sends=1, destinations="unicast"),
        *channel_constants("unordered"),
        Constant("buffer_test", str, "dominated", "hold back m while not t <= V (dominated) or only while V < t (smaller)",
                 choices=("dominated", "smaller")),
        Constant("check_buffer", bool, True, "hold back m while its buffer names a send to us not yet seen", ablation=True),
        Constant("merge_buffer", bool, True, "merge a delivered message's buffer into our own", ablation=True),
    )

    # (V, S): a vector, and per peer a vector or (); a message carries (t_m, S).
    local_shape = data_shape = ("tuple", ("byp", None), ("byp", ("byp", None)))

    def holds_back(self) -> tuple[bool, bool]:
        # The "smaller" test holds back only while V < t, which the receiver's own tick
        # on arrival mostly rules out: nothing is promised for it.
        own = self.check_buffer and self.buffer_test == "dominated"
        return own, own and self.merge_buffer

    def init_local(self, p: int) -> tuple:
        n = self.peers
        return ((0,) * n, ((),) * n)

    def stamp(self, local: tuple, p: int, dests: tuple[int, ...]) -> tuple[tuple, tuple]:
        clock, pairs = local
        t = _tick(clock, p)
        after = tuple(t if k in dests else pairs[k] for k in range(self.peers))
        data = tuple((t, tuple(pairs[k] if k == d else after[k] for k in range(self.peers))) for d in dests)
        return (t, after), data

    def on_arrival(self, local: tuple, p: int) -> tuple:
        clock, pairs = local
        return (_tick(clock, p), pairs)

    def deliverable(self, local: tuple, p: int, src: int, data: Any) -> bool:
        if not self.check_buffer:
            return True
        t = data[1][p]
        if not t:
            return True
        clock = local[0]
        if self.buffer_test == "dominated":
            return leq(t, clock)
        return not (leq(clock, t) and clock != t)

    def on_deliver(self, local: tuple, p: int, src: int, data: Any) -> tuple:
        clock, pairs = local
        t_m, carried = data
        if self.merge_buffer:
            merged = []
            for k in range(self.peers):
                mine, theirs = pairs[k], carried[k]
                if k == p or not theirs:
                    merged.append(mine)
                elif not mine:
                    merged.append(theirs)
                else:
                    merged.append(vmax(mine, theirs))
            pairs = tuple(merged)
        return (_tick(vmax(clock, t_m), p), pairs)

    def show_local(self, local: tuple) -> Any:
        clock, pairs = local
        return {"V": list(clock), "S": {self.names[k]: list(t) for k, t in enumerate(pairs) if t}}

    def show_data(self, data: Any) -> Any:
        t, pairs = data
        return {"t": list(t), "S": {self.names[k]: list(v) for k, v in enumerate(pairs) if v}}


def _tick(clock: tuple, p: int) -> tuple:
    return clock[:p] + (clock[p] + 1,) + clock[p + 1 :]


SPEC = SES

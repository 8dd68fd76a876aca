"""Causal ordering with a matrix of sent-message counts (Garg, chapter 12).

Source: ``seeds/garg-ch12-message-ordering.txt``. Each peer ``i`` keeps an ``N x N``
matrix ``M`` of ints, all zero at first.

- When ``i`` sends a message to ``j``: ``M[i, j] += 1``; the message carries ``M``
  (as ``W``). A multicast to several destinations is one send event: ``M[i, d] += 1``
  for every destination ``d``, then every copy carries the same ``M``.
- When ``i`` receives a message from ``j`` carrying ``W``, it accepts it when
  ``W[j, i] = M[j, i] + 1`` (it is the next message from ``j`` to ``i``) and
  ``W[k, i] <= M[k, i]`` for every ``k != j`` (no message from ``k`` to ``i`` that
  ``j`` knew of is still missing); otherwise the message is blocked (held back). On
  acceptance, ``M := max(M, W)`` componentwise.

Reading the seed: its condition is lost in the slide's text; what survives is the
explanation "if ``W[k, i] > M[k, i]`` then ``j`` knows of a message ``k`` has sent to
``i`` ... hence process ``i`` blocks the message", which with the send rule gives the
condition above (``k = j`` must be treated apart, since ``W[j, i]`` always exceeds
``M[j, i]`` by the message itself). The seed's other sentence, "the entry ``M[k, j]`` at
process ``i`` records the number of messages sent by ``j`` to process ``k``", has the
indices the other way round from its own send rule (``M[i, j] += 1`` when ``i`` sends to
``j``); this spec follows the send rule, under which ``M[k, j]`` counts messages from
``k`` to ``j``.

Ablation flags: ``check_others`` (the ``k != j`` part: without it the test is only
per-pair FIFO) and ``check_sender`` (the ``W[j, i] = M[j, i] + 1`` part).

Local state per peer: ``M`` as a tuple of rows. A message's data: ``W``.
"""

from __future__ import annotations

from typing import Any

from ordercheck.checker import Constant
from ordercheck.specs.base import peer_constants
from ordercheck.specs.channels import channel_constants
from ordercheck.specs.holdback import HoldBackSpec, vmax


class Matrix(HoldBackSpec):
    name = "matrix"
    summary = "Garg's matrix-clock causal ordering: M[i,j] counts messages from i to j, W[k,i] <= M[k,i] to deliver"
    # Channel faults (ordercheck.checker.api.faults): a copy fails W[j,i] = M[j,i] + 1 once the original
    # is accepted and stays blocked; a loss blocks later messages (eventual_delivery).
    tolerates = frozenset({"reordering", "loss", "duplication"})
    constants = (
        *peer_constants(peers=3, sends=1, destinations="unicast"),
        *channel_constants("unordered"),
        Constant("check_others", bool, True, "block a message from j while W[k,i] > M[k,i] for some k != j", ablation=True),
        Constant("check_sender", bool, True, "accept a message from j only if W[j,i] = M[j,i] + 1", ablation=True),
    )

    local_shape = data_shape = ("byp", ("byp", None))  # M and W, indexed by peer twice

    def holds_back(self) -> tuple[bool, bool]:
        return self.check_sender, self.check_others

    def init_local(self, p: int) -> tuple:
        n = self.peers
        return tuple((0,) * n for _ in range(n))

    def stamp(self, local: tuple, p: int, dests: tuple[int, ...]) -> tuple[tuple, tuple]:
        row = tuple(c + 1 if d in dests else c for d, c in enumerate(local[p]))
        m = local[:p] + (row,) + local[p + 1 :]
        return m, (m,) * len(dests)

    def deliverable(self, local: tuple, p: int, src: int, data: Any) -> bool:
        if self.check_sender and data[src][p] != local[src][p] + 1:
            return False
        if self.check_others:
            for k in range(self.peers):
                if k != src and data[k][p] > local[k][p]:
                    return False
        return True

    def on_deliver(self, local: tuple, p: int, src: int, data: Any) -> tuple:
        return vmax(local, data)

    def show_local(self, local: tuple) -> Any:
        return [list(row) for row in local]

    def show_data(self, data: Any) -> Any:
        return [list(row) for row in data]


SPEC = Matrix

"""Birman-Schiper-Stephenson causal broadcast with vector clocks.

Sources: ``seeds/bss-causal-fifo-total.txt`` and ``seeds/message-ordering-notes.txt``.
Each peer ``i`` keeps a vector ``V_i`` (initially zeros). To broadcast, ``i`` increments
``V_i[i]`` and piggybacks the incremented vector ``V_m`` (so ``V_m[i] - 1`` messages of
``i`` precede ``m``; the seed's worked example settles on this reading). A peer ``p``
that receives ``m`` from ``j`` delivers it only when

- (a) ``V_m[j] = V_p[j] + 1``: ``m`` is the next message ``p`` expects from ``j``
  (FIFO from ``j``), and
- (b) ``V_m[k] <= V_p[k]`` for every ``k != j``: ``p`` has delivered everything from
  the other peers that ``j`` had delivered before sending ``m``;

otherwise ``m`` waits in the hold-back buffer (:mod:`ordercheck.specs.holdback`). After a delivery
``V_p`` is updated. The bss seed's update formula is lost in its text, so both readings
in use are a constant: ``update = "max"`` (the vector-clock rule of the original paper:
``V_p := max(V_p, V_m)``) or ``"increment"`` (``V_p[j] += 1``, counting deliveries per
sender, as the notes' "numbers its broadcasts consecutively" suggests). With both
conditions on they coincide; without condition (b) they differ (see the models).

Ablation flags: ``condition_a`` and ``condition_b`` (the seed: "Forgetting condition (b)
in BSS. Without it, you only get FIFO.").

BSS is a broadcast protocol: ``destinations = "others"`` (the default) is its setting;
other destination modes are allowed so that a model can show what goes wrong when it is
used for multicast to subsets.
"""

from __future__ import annotations

from typing import Any

from ordercheck.checker import Constant
from ordercheck.specs.base import peer_constants
from ordercheck.specs.channels import channel_constants
from ordercheck.specs.holdback import HoldBackSpec, vmax


class BSS(HoldBackSpec):
    name = "bss"
    summary = "Birman-Schiper-Stephenson causal broadcast: vector clocks, conditions (a) and (b), hold-back buffer"
    # Channel faults (ordercheck.checker.api.faults): unordered channels are what the vector-clock
    # condition is for; a lost message leaves later ones held back (eventual_delivery);
    # a copy fails condition (a) once the original is delivered and is never delivered.
    tolerates = frozenset({"reordering", "loss", "duplication"})
    constants = (
        *peer_constants(peers=3, sends=1, destinations="others"),
        *channel_constants("unordered"),
        Constant("update", str, "max", "vector update on delivery: max (merge) or increment (V[j] += 1)",
                 choices=("max", "increment")),
        Constant("condition_a", bool, True, "deliver m from j only if V_m[j] = V[j] + 1 (FIFO from j)", ablation=True),
        Constant("condition_b", bool, True, "deliver m from j only if V_m[k] <= V[k] for every k != j", ablation=True),
    )

    local_shape = ("byp", None)  # V, indexed by peer
    data_shape = ("byp", None)  # V_m

    def holds_back(self) -> tuple[bool, bool]:
        return self.condition_a, self.condition_b

    def init_local(self, p: int) -> tuple:
        return (0,) * self.peers

    def stamp(self, local: tuple, p: int, dests: tuple[int, ...]) -> tuple[tuple, tuple]:
        v = local[:p] + (local[p] + 1,) + local[p + 1 :]
        return v, (v,) * len(dests)

    def deliverable(self, local: tuple, p: int, src: int, data: Any) -> bool:
        if self.condition_a and data[src] != local[src] + 1:
            return False
        if self.condition_b:
            for k in range(self.peers):
                if k != src and data[k] > local[k]:
                    return False
        return True

    def on_deliver(self, local: tuple, p: int, src: int, data: Any) -> tuple:
        if self.update == "max":
            return vmax(local, data)
        return local[:src] + (local[src] + 1,) + local[src + 1 :]



SPEC = BSS

"""Naive FIFO queues: the baseline that shows what goes wrong without an ordering scheme.

The bus1 wiki page ("Naively, one could imagine queues simply being implemented as
FIFOs") explains why this is not enough: each peer has one FIFO queue, and a multicast
visits its destinations one at a time, appending the message to each queue in turn. So
one multicast can overtake another (breaking ``total``), and a peer can receive one
copy of a multicast and send a reaction that reaches a second queue before the original
does (breaking ``causal``). Messages from one sender still arrive in send order
(``fifo`` holds), because a peer finishes one send before it starts the next.

State: ``(queues, txs, ghost, know, signals_left)``. ``queues[q]`` holds message ids in
arrival order; ``txs[p]`` is ``0`` or ``(mid, i)`` with ``i`` the next destination's
position; ``ghost`` and ``know`` are as in :mod:`ordercheck.specs.common`.
"""

from __future__ import annotations

from typing import Any

from ordercheck.checker import Property, Symmetry
from ordercheck.specs.base import PeerSpec, peer_constants
from ordercheck.specs.common import (
    ghost_event,
    ghost_send,
    ghost_signal,
    members,
    message_dests,
    message_past,
    send_options,
)
from ordercheck.specs.history import DELIVER
from ordercheck.specs.properties import LIBRARY
from ordercheck.specs.witnesses import WITNESSES


class Fifo(PeerSpec, Symmetry):
    name = "fifo"
    summary = "one FIFO queue per peer, multicast appended destination by destination"
    constants = peer_constants()
    ghost_at = 2
    txs_at = 1
    acyclic = True  # every step appends to a queue or a log, or uses up a signal
    fairness = {"append": "weak", "deliver": "weak"}

    def message_kinds(self) -> tuple[str, ...]:
        return ("append", "deliver")

    def init_states(self) -> list[tuple]:
        n = self.peers
        empty = tuple(() for _ in range(n))
        return [(empty, (0,) * n, (empty, empty), (0,) * n, self.signals)]

    def next_states(self, state: tuple) -> list[tuple[tuple, tuple]]:
        queues, txs, ghost, know, signals = state
        out: list[tuple[tuple, tuple]] = []
        n = self.peers
        for p in range(n):
            tx = txs[p]
            if tx:
                mid, i = tx
                dests = self.dest_table[message_dests(ghost, mid, self.stride)]
                d = dests[i]
                queues2 = queues[:d] + (queues[d] + (mid,),) + queues[d + 1 :]
                if i + 1 == len(dests):
                    ntx, know2 = 0, know[:p] + (know[p] | (1 << mid),) + know[p + 1 :]
                else:
                    ntx, know2 = (mid, i + 1), know
                out.append((("append", p, d, mid), (queues2, txs[:p] + (ntx,) + txs[p + 1 :], ghost, know2, signals)))
                continue
            queue = queues[p]
            if queue:
                mid = queue[0]
                k = know[p] | (1 << mid) | message_past(ghost, mid, self.stride)
                out.append(
                    (
                        ("deliver", p, mid),
                        (
                            queues[:p] + (queue[1:],) + queues[p + 1 :],
                            txs,
                            ghost_event(ghost, p, DELIVER, mid),
                            know[:p] + (k,) + know[p + 1 :],
                            signals,
                        ),
                    )
                )
            count = len(ghost[0][p])
            for dmask in send_options(self.plan, self.choices, self.sends, p, count):
                mid = p * self.stride + count
                out.append(
                    (
                        ("send", p, mid, dmask),
                        (queues, txs[:p] + ((mid, 0),) + txs[p + 1 :], ghost_send(ghost, p, mid, dmask, know[p]), know, signals),
                    )
                )
            if signals:
                for q in range(n):
                    if q != p and not txs[q]:
                        kq = know[q] | know[p]
                        out.append(
                            (
                                ("signal", p, q),
                                (queues, txs, ghost_signal(ghost, p, q), know[:q] + (kq,) + know[q + 1 :], signals - 1),
                            )
                        )
        return out

    # -- reductions: see PeerSpec. Appends to different queues commute; a configuration
    # is symmetric only when every send has one destination (appends visit peers in order).

    def actor(self, action: tuple) -> int:
        return action[1]

    def footprints(self, state: tuple) -> list[tuple[int, int, int, int]]:
        return self.peer_footprints(state, state[4])

    def tx_footprint(self, state: tuple, p: int, tx: tuple) -> tuple[int, int, int, int]:
        mid, i = tx
        v = self.var
        dests = self.dest_table[message_dests(state[2], mid, self.stride)]
        t = v["tx"][p]
        now = v["queue"][dests[i]] | t
        if i + 1 == len(dests):
            now |= v["know"][p] | v["busy"][p]
        later = now | v["know"][p] | v["busy"][p]
        for d in dests[i:]:
            later |= v["queue"][d]
        return now, now, later, later

    def whole_tx_footprint(self, p: int, dmask: int) -> int:
        v = self.var
        m = v["tx"][p] | v["busy"][p] | v["know"][p]
        for d in self.dest_table[dmask]:
            m |= v["queue"][d]
        return m

    def symmetries(self) -> list[tuple[int, ...]]:
        return self.peer_symmetries(ordered=False)

    def permute(self, state: tuple, perm: tuple[int, ...]) -> tuple:
        queues, txs, ghost, know, signals = state
        pm = self.perm_mid
        return (
            self.perm_vector(tuple(tuple(pm(m, perm) for m in q) for q in queues), perm),
            self.perm_vector(tuple(tx if not tx else (pm(tx[0], perm), tx[1]) for tx in txs), perm),
            self.perm_ghost(ghost, perm),
            self.perm_vector(tuple(self.perm_mids(k, perm) for k in know), perm),
            signals,
        )

    def properties(self) -> list[Property]:
        return [*LIBRARY, *WITNESSES, self.deadlock_free()]

    def format_action(self, action: tuple) -> str:
        if action[0] == "append":
            _, _p, d, mid = action
            return f"append {self.mname(mid)} to {self.names[d]}'s queue"
        return super().format_action(action)

    def action_site(self, action: tuple) -> tuple[str, int, int | None] | None:
        if action[0] == "append":
            return ("commit", action[2], action[3])
        return super().action_site(action)

    def describe(self, state: tuple) -> dict[str, Any]:
        queues, txs, ghost, know, signals = state
        h, messages = self.common_view(state)
        return {
            "peers": {
                name: {
                    "queue": [self.mname(m) for m in queues[p]],
                    "sending": self.mname(txs[p][0]) if txs[p] else None,
                    "delivered": [h.messages[m].name for m in h.deliveries(p)],
                    "knows": [self.mname(m) for m in members(know[p])],
                }
                for p, name in enumerate(self.names)
            },
            "messages": messages,
            "signals_left": signals,
        }


SPEC = Fifo

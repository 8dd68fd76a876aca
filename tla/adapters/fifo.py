"""The TLA+ adapter of :mod:`ordercheck.specs.fifo` (template ``fifo.tla.j2``)."""

from __future__ import annotations

from typing import Any

from ordercheck.tla.adapters.base import PeerAdapter, _seq

IDLE = {"msg": (), "i": 0}


class FifoAdapter(PeerAdapter):
    template = "fifo.tla.j2"
    protocol_module = "NaiveFifo"
    variables = ("queues", "txs", "sent", "logs", "know", "signalsLeft")
    predicates = {"eventual_delivery": "AllDelivered", "deadlock_free": "NoneInTransaction"}
    actions = {
        "append": "AppendNext(p)",
        "deliver": "Deliver(p)",
        "send": "Send(p)",
        "signal": "\\E q \\in Peers : Signal(p, q)",
    }

    def symmetry(self) -> tuple[bool, str]:
        return False, "a multicast visits its destinations in peer-id order, so permuting peers is no symmetry"

    def encode(self, state: tuple) -> dict[str, Any]:
        queues, txs, ghost, know, signals = state
        return {
            "queues": self.per_peer(queues, lambda q: tuple(self.msg(m) for m in q)),
            "txs": self.per_peer(txs, lambda t: {"msg": self.msg(t[0]), "i": t[1] + 1} if t else dict(IDLE)),
            **self.encode_ghost(ghost, know, signals),
        }

    def decode(self, values: dict[str, Any]) -> tuple:
        ghost, know, signals = self.decode_ghost(values)
        return (
            self.from_peers(values["queues"], lambda q: tuple(self.mid(m) for m in _seq(q))),
            self.from_peers(values["txs"], lambda t: 0 if t["i"] == 0 else (self.mid(t["msg"]), t["i"] - 1)),
            ghost,
            know,
            signals,
        )


ADAPTER = FifoAdapter

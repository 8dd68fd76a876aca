"""The TLA+ adapter of :mod:`ordercheck.specs.bus1` (template ``bus1.tla.j2``)."""

from __future__ import annotations

from typing import Any

from ordercheck.specs.bus1 import BLOCK
from ordercheck.tla.adapters.base import PeerAdapter, _seq

PHASES = ("blocking", "tick", "syncing", "queueing", "sync_queue")
IDLE = {"msg": (), "phase": "idle", "i": 0, "acc": 0}


class Bus1Adapter(PeerAdapter):
    template = "bus1.tla.j2"
    protocol_module = "Bus1"
    variables = ("clocks", "queues", "txs", "sent", "logs", "know", "signalsLeft")
    predicates = {"eventual_delivery": "AllDelivered", "deadlock_free": "NoneInTransaction"}
    actions = {
        "deliver": "Deliver(p)",
        "send": "Send(p)",
        "signal": "\\E q \\in Peers : Signal(p, q)",
        "block": "Block(p)",
        "tick": "Tick(p)",
        "sync": "Sync(p)",
        "queue": "Queue(p)",
        "sync_queue": "SyncQueue(p)",
    }

    def cfg_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        flags = [
            ("BlockDestinations", spec.block_destinations),
            ("SyncSender", spec.sync_sender),
            ("SyncReceiversBeforeQueueing", spec.sync_receivers_before_queueing),
            ("TiebreakBySender", spec.tiebreak_by_sender),
        ]
        return [*super().cfg_constants(), *((k, "TRUE" if v else "FALSE") for k, v in flags)]

    def symmetry(self) -> tuple[bool, str]:
        return False, "bus1 orders equal timestamps by sender id, so permuting peers is no symmetry"

    def encode(self, state: tuple) -> dict[str, Any]:
        clocks, queues, txs, ghost, know, signals = state

        def entry(e: tuple) -> dict[str, Any]:
            ts, rank, mid = e
            block = rank == BLOCK
            return {"ts": ts, "kind": "block" if block else "message", "rank": 0 if block else rank, "msg": self.msg(mid)}

        def tx(t: Any) -> dict[str, Any]:
            if not t:
                return dict(IDLE)
            mid, phase, i, acc = t
            return {"msg": self.msg(mid), "phase": PHASES[phase], "i": i + 1, "acc": acc}

        return {
            "clocks": self.per_peer(clocks, lambda c: c),
            "queues": self.per_peer(queues, lambda q: tuple(entry(e) for e in q)),
            "txs": self.per_peer(txs, tx),
            **self.encode_ghost(ghost, know, signals),
        }

    def decode(self, values: dict[str, Any]) -> tuple:
        def entry(e: dict[str, Any]) -> tuple:
            return (e["ts"], BLOCK if e["kind"] == "block" else e["rank"], self.mid(e["msg"]))

        def tx(t: dict[str, Any]) -> Any:
            if t["phase"] == "idle":
                return 0
            return (self.mid(t["msg"]), PHASES.index(t["phase"]), t["i"] - 1, t["acc"])

        ghost, know, signals = self.decode_ghost(values)
        return (
            self.from_peers(values["clocks"], int),
            self.from_peers(values["queues"], lambda q: tuple(entry(e) for e in _seq(q))),
            self.from_peers(values["txs"], tx),
            ghost,
            know,
            signals,
        )


ADAPTER = Bus1Adapter

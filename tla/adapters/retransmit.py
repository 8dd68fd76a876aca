"""The TLA+ adapter of :mod:`ordercheck.specs.retransmit` (template ``retransmit.tla.j2``)."""

from __future__ import annotations

from typing import Any

from ordercheck.tla.adapters.base import PeerAdapter, _seq

A, B = 0, 1


class RetransmitAdapter(PeerAdapter):
    template = "retransmit.tla.j2"
    protocol_module = "Retransmit"
    mc_about = "the sending peer and the receiving one"
    variables = ("toReceiver", "toSender", "current", "started", "expected", "sent", "logs", "know")
    predicates = {"eventual_delivery": "AllDelivered"}
    actions = {
        "send": "Send",
        "transmit": "Transmit",
        "receive": "Receive",
        "acknowledged": "Acknowledged",
        "lose": "Lose",
    }

    def context(self) -> dict[str, Any]:
        return {"peers": list(self.names)}

    def mc_definitions(self) -> list[tuple[str, str]]:
        return [("MCSender", self.names[A]), ("MCReceiver", self.names[B])]

    def cfg_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        return [*((n, n) for n in self.names), ("Sender", "<- MCSender"), ("Receiver", "<- MCReceiver"),
                ("Sends", str(spec.sends)), ("ReceiveFairness", f'"{spec.receive_fairness}"')]

    def fairness(self) -> list[dict[str, str]]:
        return []  # written out in the template, with ReceiveFairness choosing WF or SF

    def encode(self, state: tuple) -> dict[str, Any]:
        chans, (k, started), expected, ghost, know = state
        channels = dict(chans)
        ghost_values = self.encode_ghost(ghost, know, 0)
        del ghost_values["signalsLeft"]
        return {
            "toReceiver": tuple(self.msg(m // 2) for m in channels.get((A, B), ())),
            "toSender": tuple(self.msg(m // 2) for m in channels.get((B, A), ())),
            "current": k + 1,
            "started": bool(started),
            "expected": expected,
            **ghost_values,
        }

    def decode(self, values: dict[str, Any]) -> tuple:
        ghost, know, _ = self.decode_ghost({**values, "signalsLeft": 0})
        chans = []
        to_b = tuple(2 * self.mid(m) for m in _seq(values["toReceiver"]))
        to_a = tuple(2 * self.mid(m) + 1 for m in _seq(values["toSender"]))
        if to_b:
            chans.append(((A, B), to_b))
        if to_a:
            chans.append(((B, A), to_a))
        return (tuple(sorted(chans)), (values["current"] - 1, int(values["started"])), values["expected"], ghost, know)


ADAPTER = RetransmitAdapter

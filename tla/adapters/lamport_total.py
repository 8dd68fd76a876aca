"""The TLA+ adapter of :mod:`ordercheck.specs.lamport_total` (template ``lamport_total.tla.j2``)."""

from __future__ import annotations

from typing import Any

from ordercheck.tla.adapters.async_peers import AsyncAdapter, StampedAdapter


class LamportTotalAdapter(StampedAdapter):
    template = "lamport_total.tla.j2"
    protocol_module = "LamportTotalOrder"
    self_channels = False
    variables = (*AsyncAdapter.shared_variables, "clocks", "queues", "acks", "latest")
    kinds = ("msg", "ack")
    actions = {
        **AsyncAdapter.send_action,
        "discard": "Discard(p)",
        "receive": "Receive(p)",
        "ack": "Ack(p)",
        "deliver": "Deliver(p)",
        **AsyncAdapter.shared_actions,
    }

    def cfg_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        flags = [
            ("WaitAcks", spec.wait_acks),
            ("TiebreakBySender", spec.tiebreak_by_sender),
            ("DiscardDuplicates", spec.discard_duplicates),
        ]
        return [*super().cfg_constants(), ("Rule", f'"{spec.rule}"'), *((k, "TRUE" if v else "FALSE") for k, v in flags)]

    def encode(self, state: tuple) -> dict[str, Any]:
        clocks, queues, acks, latest = state[5:]
        real = self.real_messages()
        return {
            **self.encode_shared(state),
            "clocks": self.per_peer(clocks, int),
            "queues": self.per_peer(queues, lambda qu: frozenset((ts, self.msg(mid)) for ts, _src, mid in qu)),
            "acks": self.per_peer(acks, lambda a: {self.msg(m): self.peer_set(a[m]) for m in real}),
            "latest": self.per_peer(latest, lambda row: self.per_peer(row, int)),
        }

    def decode(self, values: dict[str, Any]) -> tuple:
        n = len(self.peers)
        nmsgs = n * self.stride

        def acks(func: Any) -> tuple:
            row = [0] * nmsgs
            for msg, peers in (func.items() if isinstance(func, dict) else ()):
                row[self.mid(msg)] = self.peer_mask(peers)
            return tuple(row)

        def queue(entries: frozenset) -> tuple:
            return tuple(sorted((ts, self.mid(m) // self.stride, self.mid(m)) for ts, m in entries))

        return (
            *self.decode_shared(values),
            self.from_peers(values["clocks"], int),
            self.from_peers(values["queues"], queue),
            self.from_peers(values["acks"], acks),
            self.from_peers(values["latest"], lambda row: self.from_peers(row, int)),
        )


ADAPTER = LamportTotalAdapter

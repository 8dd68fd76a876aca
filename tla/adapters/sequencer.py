"""The TLA+ adapter of :mod:`ordercheck.specs.sequencer` (template ``sequencer.tla.j2``)."""

from __future__ import annotations

from typing import Any

from ordercheck.tla.adapters.async_peers import AsyncAdapter
from ordercheck.tla.values import ModelValue

SEQUENCER = ModelValue("S")


class SequencerAdapter(AsyncAdapter):
    template = "sequencer.tla.j2"
    protocol_module = "SequencerTotalOrder"
    self_channels = False
    variables = (*AsyncAdapter.shared_variables, "counter", "expect", "held")
    actions = {
        **AsyncAdapter.send_action,
        "sequence": "SequenceMsg(p)",
        "discard": "Discard(p)",
        "receive": "Receive(p)",
        "deliver": "Deliver(p)",
        "skip": "Deliver(p)",
        **AsyncAdapter.shared_actions,
    }

    def __init__(self, spec: Any) -> None:
        super().__init__(spec)
        self.procs = (*self.peers, SEQUENCER)
        self.proc_ids = {p: i for i, p in enumerate(self.procs)}

    def cfg_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        return [
            *super().cfg_constants(),
            ("S", "S"),
            ("HoldBack", "TRUE" if spec.hold_back else "FALSE"),
            ("OwnViaSequencer", "TRUE" if spec.own_via_sequencer else "FALSE"),
        ]

    def wire(self, msg: Any) -> Any:
        if isinstance(msg, tuple):
            return (msg[0], self.msg(msg[1]))
        return self.msg(msg)

    def unwire(self, value: Any) -> Any:
        if isinstance(value[0], int):
            return (value[0], self.mid(value[1]))
        return self.mid(value)

    def encode(self, state: tuple) -> dict[str, Any]:
        counter, expect, held = state[5:]
        return {
            **self.encode_shared(state),
            "counter": counter,
            "expect": self.per_peer(expect, int),
            "held": self.per_peer(held, lambda h: frozenset(self.wire(x) for x in h)),
        }

    def decode(self, values: dict[str, Any]) -> tuple:
        return (
            *self.decode_shared(values),
            values["counter"],
            self.from_peers(values["expect"], int),
            self.from_peers(values["held"], lambda h: tuple(sorted(self.unwire(x) for x in h))),
        )


ADAPTER = SequencerAdapter

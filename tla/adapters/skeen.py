"""The TLA+ adapter of :mod:`ordercheck.specs.skeen` (template ``skeen.tla.j2``)."""

from __future__ import annotations

from typing import Any

from ordercheck.tla.adapters.async_peers import AsyncAdapter, StampedAdapter


class SkeenAdapter(StampedAdapter):
    template = "skeen.tla.j2"
    protocol_module = "Skeen"
    self_channels = False
    variables = (*AsyncAdapter.shared_variables, "clocks", "waiting", "queues")
    kinds = ("msg", "propose", "final")
    actions = {
        **AsyncAdapter.send_action,
        "discard": "Discard(p)",
        "propose": "Propose(p)",
        "collect": "Collect(p)",
        "finalise": "Finalise(p)",
        "final": "Final(p)",
        "deliver": "Deliver(p)",
        **AsyncAdapter.shared_actions,
    }

    def cfg_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        flags = [
            ("TakeMax", spec.take_max),
            ("WaitForUndeliverable", spec.wait_for_undeliverable),
            ("TiebreakBySender", spec.tiebreak_by_sender),
            ("DiscardDuplicates", spec.discard_duplicates),
        ]
        return [
            *super().cfg_constants(),
            *((k, "TRUE" if v else "FALSE") for k, v in flags),
            ("MutantFinal", f'"{spec.mutant_final}"'),
        ]

    def encode(self, state: tuple) -> dict[str, Any]:
        clocks, waiting, queues = state[5:]
        return {
            **self.encode_shared(state),
            "clocks": self.per_peer(clocks, int),
            "waiting": self.per_peer(
                waiting, lambda ws: frozenset((self.msg(m), self.peer_set(left), acc) for m, left, acc in ws)
            ),
            "queues": self.per_peer(queues, lambda qu: frozenset((ts, self.msg(m), bool(ok)) for ts, m, ok in qu)),
        }

    def decode(self, values: dict[str, Any]) -> tuple:
        return (
            *self.decode_shared(values),
            self.from_peers(values["clocks"], int),
            self.from_peers(
                values["waiting"],
                lambda ws: tuple(sorted((self.mid(m), self.peer_mask(left), acc) for m, left, acc in ws)),
            ),
            self.from_peers(
                values["queues"], lambda qu: tuple(sorted((ts, self.mid(m), int(ok)) for ts, m, ok in qu))
            ),
        )


ADAPTER = SkeenAdapter

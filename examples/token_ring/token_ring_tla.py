"""The TLA+ adapter of the token ring (template ``token_ring.tla.j2`` beside it).

It says what the exporter needs: the template, its variables, which TLA+ action
mirrors each action label (for fairness), the constants of the TLC configuration, and
how a Python state and a TLA+ state translate into each other (so that TLC's traces
read back as ours and ours replay in TLC).
"""

from __future__ import annotations

from typing import Any

from ordercheck.tla.adapters.async_peers import AsyncAdapter

APP, TOKEN = 0, 1


class TokenRingAdapter(AsyncAdapter):
    template = "token_ring.tla.j2"
    variables = (*AsyncAdapter.shared_variables, "holder", "number", "expect", "held")
    actions = {
        **AsyncAdapter.send_action,
        "pass": "Pass(p)",
        "take": "TakeToken(p)",
        "receive": "Receive(p)",
        "deliver": "Deliver(p)",
        **AsyncAdapter.shared_actions,
    }

    def cfg_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        return [*super().cfg_constants(), ("HoldBack", "TRUE" if spec.hold_back else "FALSE")]

    def wire(self, msg: tuple) -> tuple:
        kind, number, mid = msg
        return ("token", number, 0) if kind == TOKEN else ("app", number, self.msg(mid))

    def unwire(self, value: tuple) -> tuple:
        kind, number, m = value
        return (TOKEN, number, 0) if kind == "token" else (APP, number, self.mid(m))

    def encode(self, state: tuple) -> dict[str, Any]:
        holder, number, expect, held = state[5:]
        return {
            **self.encode_shared(state),
            "holder": self.peers[holder] if holder >= 0 else "none",
            "number": number,
            "expect": self.per_peer(expect, int),
            "held": self.per_peer(held, lambda h: frozenset((k, self.msg(m)) for k, m in h)),
        }

    def decode(self, values: dict[str, Any]) -> tuple:
        holder = values["holder"]
        return (
            *self.decode_shared(values),
            self.ids[holder] if holder != "none" else -1,
            values["number"],
            self.from_peers(values["expect"], int),
            self.from_peers(values["held"], lambda h: tuple(sorted((k, self.mid(m)) for k, m in h))),
        )


ADAPTER = TokenRingAdapter

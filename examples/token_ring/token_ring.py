"""Total-order broadcast with a circulating token: the tutorial's protocol.

Peers a, b, c... sit on a ring. One token goes round it, carrying the next sequence
number. Only the peer holding the token may broadcast: it stamps the message with the
token's number, sends it to every peer (itself included), and increments the number.
Receivers hold messages back and deliver them in sequence-number order. Passing the
token is a message too, to the next peer on the ring.

- ``send(p, m)``: the token holder broadcasts ``m`` stamped with the token's number;
- ``pass(p, q)``: the holder puts the token on the channel to its successor ``q``;
- ``take(q, p)``: ``q`` takes the token off the channel from ``p`` and holds it;
- ``receive(q, m)``: ``q`` takes ``m`` off a channel into its hold-back buffer;
- ``deliver(q, m)``: ``q`` delivers the held-back message numbered ``expect[q]``.

Ablation ``hold_back``: deliver each message on arrival instead (``receive`` is then
a delivery). The token never stops going round, so the state graph has cycles, and
eventual delivery needs fairness: a peer must not neglect a message waiting for it
(``fair = false`` drops that assumption, to show what it is for).
"""

from __future__ import annotations

from typing import Any

from ordercheck import (
    CHANS,
    AsyncPeerSpec,
    Constant,
    Fields,
    broadcast_constants,
    channel_constants,
)
from ordercheck.specs.properties import LIBRARY

APP, TOKEN = 0, 1  # wire messages: (APP, number, message id) and (TOKEN, number, 0)


# AsyncPeerSpec is the model plus the optional protocols checker.Rendering (the hooks
# under "presentation"), checker.PartialOrder and checker.Symmetry (derived by the base).
class TokenRing(AsyncPeerSpec):
    name = "token_ring"
    summary = "total-order broadcast: the holder of a circulating token numbers its messages"
    broadcast = True  # every message goes to every peer, its sender included
    constants = (
        *broadcast_constants(peers=3, sends=1),
        *channel_constants("unordered"),
        Constant("hold_back", bool, True, "deliver in sequence-number order, holding early arrivals back", ablation=True),
        Constant("fair", bool, True, "peers do not neglect a message waiting for them (weak fairness of receive, deliver)"),
    )
    tolerates = frozenset({"reordering"})  # unordered channels; no loss, no copies
    fairness = {"receive": "weak", "deliver": "weak"}
    own_fields = Fields("holder", "number", "expect", "held")
    # holder: the peer holding the token, or -1 while it travels; number: the token's
    # next sequence number; expect[q]: the number q delivers next; held[q]: q's
    # held-back messages as sorted (number, message id) pairs.

    def configure(self) -> None:
        if not self.fair:
            self.fairness = {}  # no fairness at all: a run may pass the token round for ever

    def init_rest(self) -> tuple:
        n = self.peers
        return self.own_fields.new(holder=0, number=0, expect=(0,) * n, held=((),) * n)

    def may_send(self, state: tuple, p: int) -> bool:
        return self.own(state).holder == p  # only the token holder broadcasts

    def on_send(self, state: tuple, p: int, mid: int, dmask: int) -> tuple:
        number = self.own(state).number
        chans = state[CHANS]
        for q in range(self.peers):
            chans = self.chan.send(chans, p, q, (APP, number, mid))
        return self.with_own(state[:CHANS] + (chans,) + state[CHANS + 1 :], number=number + 1)

    def protocol_steps(self, state: tuple) -> list[tuple[tuple, tuple]]:
        out: list[tuple[tuple, tuple]] = []
        own = self.own(state)
        chans = state[CHANS]
        if own.holder >= 0:
            p = own.holder
            q = (p + 1) % self.peers
            label = ("pass", p, q)
            passed = self.chan.send(chans, p, q, (TOKEN, own.number, 0))
            out.append((label, self.with_own(self._chans(state, passed), holder=-1)))
        for src, dst, msg, rest in self.receipts(chans):
            kind, number, mid = msg
            if kind == TOKEN:
                label = ("take", dst, src)
                out.append((label, self.with_own(self._chans(state, rest), holder=dst, number=number)))
            elif self.hold_back:
                label = ("receive", dst, mid)
                held = own.held[:dst] + (tuple(sorted(own.held[dst] + ((number, mid),))),) + own.held[dst + 1 :]
                out.append((label, self.with_own(self._chans(state, rest), held=held)))
            else:  # the ablation: deliver on arrival
                label = ("receive", dst, mid)
                out.append((label, self.deliver(self._chans(state, rest), dst, mid)))
        for q in range(self.peers):
            held = own.held[q]
            if held and held[0][0] == own.expect[q]:
                number, mid = held[0]
                label = ("deliver", q, mid)
                after = self.with_own(
                    state,
                    expect=own.expect[:q] + (number + 1,) + own.expect[q + 1 :],
                    held=own.held[:q] + (held[1:],) + own.held[q + 1 :],
                )
                out.append((label, self.deliver(after, q, mid)))
        return out

    def _chans(self, state: tuple, chans: tuple) -> tuple:
        return state[:CHANS] + (chans,) + state[CHANS + 1 :]

    def properties(self) -> list:
        return list(LIBRARY)

    # -- presentation: checker.Rendering's hooks (the base inherits the protocol) ---------

    def internal_messages(self, action: tuple) -> list[tuple[str, int, int, str]]:
        if action[0] == "pass":
            return [("send", action[1], action[2], "token")]
        if action[0] == "take":
            return [("receive", action[1], action[2], "token")]
        return []

    def format_wire(self, msg: tuple) -> str:
        kind, number, mid = msg
        return f"token #{number}" if kind == TOKEN else f"#{number}:{self.mname(mid)}"

    def format_action(self, action: tuple) -> str:
        kind = action[0]
        if kind == "pass":
            return f"{self.names[action[1]]} passes the token to {self.names[action[2]]}"
        if kind == "take":
            return f"{self.names[action[1]]} takes the token from {self.names[action[2]]}"
        if kind == "receive":
            verb = "holds back" if self.hold_back else "receives and delivers"
            return f"{self.names[action[1]]} {verb} {self.mname(action[2])}"
        if kind == "deliver":
            return f"{self.names[action[1]]} delivers {self.mname(action[2])}"
        if kind == "send":
            return f"{self.names[action[1]]} broadcasts {self.mname(action[2])}"
        return super().format_action(action)

    def describe(self, state: tuple) -> dict[str, Any]:
        view = self.base_view(state)
        own = self.own(state)
        view["token"] = {"holder": self.names[own.holder] if own.holder >= 0 else "in transit", "number": own.number}
        view["peers"] = {
            name: {"expect": own.expect[q], "held_back": [f"#{k}:{self.mname(m)}" for k, m in own.held[q]]}
            for q, name in enumerate(self.names)
        }
        return view


SPEC = TokenRing

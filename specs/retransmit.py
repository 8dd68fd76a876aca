"""Stop-and-wait retransmission over lossy channels: the livelock that needs fairness.

Peer a sends ``sends`` messages to peer b, one at a time. It transmits the current
message and waits; when neither the message nor its acknowledgement is in transit (the
timeout), it transmits again. b delivers a message the first time it arrives and
acknowledges every copy; a moves to the next message when the acknowledgement for the
current one arrives. The channels are lossy (:mod:`ordercheck.specs.channels`), and losing a
message is never a fair obligation.

Whether every message is eventually delivered depends on the fairness of receiving.
Under weak fairness (``receive_fairness = "weak"``) the loop "transmit, lose, transmit,
lose..." is fair: b's receive is enabled only now and then, never continuously, so weak
fairness does not force it, and the message stays undelivered for ever. Under strong
fairness, an action enabled infinitely often must be taken, which rules that loop out.
No run of this spec ever stops with a message undelivered (a can always retransmit), so
only a check on cycles, not on terminal states, can see the difference.

State: ``(chans, sender, expected, ghost, know)``. ``chans`` holds data ``2 * seq`` on
a->b and acknowledgements ``2 * seq + 1`` on b->a; ``sender`` is ``(k, started)``, the
current message's number and whether its send has begun; ``expected`` is the number of
the next message b will deliver; ``ghost`` and ``know`` are as in :mod:`ordercheck.specs.common`.
"""

from __future__ import annotations

from typing import Any

from ordercheck.checker import Action, Constant, Property, Rendering, Spec
from ordercheck.specs.channels import Channels
from ordercheck.specs.common import ghost_event, ghost_send
from ordercheck.specs.history import DELIVER, History
from ordercheck.specs.properties import LIBRARY

A, B = 0, 1


class Retransmit(Spec, Rendering):
    name = "retransmit"
    summary = "stop-and-wait retransmission over lossy channels (a livelock under weak fairness)"
    # Channel faults (ordercheck.checker.api.faults): the channels always lose messages (no constant
    # asks for it); retransmission is the protocol's answer.
    tolerates = frozenset({"loss"})
    constants = (
        Constant("sends", int, 1, "messages a sends to b", minimum=1, maximum=4),
        Constant(
            "receive_fairness",
            str,
            "strong",
            "fairness of receiving a message or an acknowledgement",
            choices=("weak", "strong"),
        ),
    )
    fairness = {"send": "weak", "transmit": "weak", "receive": "strong", "acknowledged": "strong"}

    def setup(self) -> None:
        self.names = ("a", "b")
        self.stride = self.sends
        self.chan = Channels(ordered=True, lossy=True)

    def action_kinds(self) -> tuple[str, ...]:
        """Every step of the exchange: a starts a message and transmits it, b receives it
        and a the acknowledgement; the channels may lose either."""
        return ("send", "transmit", "receive", "acknowledged", "lose")

    def fairness_class(self, action: Action) -> tuple[str, tuple] | None:
        kind = self.fairness.get(action[0])
        if kind is None:
            return None
        if action[0] in ("receive", "acknowledged"):
            kind = self.receive_fairness
        return kind, tuple(action[:2])

    def init_states(self) -> list[tuple]:
        empty = ((), ())
        return [((), (0, 0), 0, (empty, empty), (0, 0))]

    def next_states(self, state: tuple) -> list[tuple[Action, tuple]]:
        chans, (k, started), expected, ghost, know = state
        out: list[tuple[Action, tuple]] = []
        if k < self.sends and not started:
            out.append(
                (("send", A, k, 1 << B), (chans, (k, 1), expected, ghost_send(ghost, A, k, 1 << B, know[A]), know))
            )
        if k < self.sends and started and not chans:
            # Timeout: nothing of the current exchange is in transit.
            out.append((("transmit", A, k), (self.chan.send(chans, A, B, 2 * k), (k, 1), expected, ghost, know)))
        for _src, dst, msg, rest in self.chan.receivable(chans):
            seq = msg // 2
            if dst == B:
                g, kn = ghost, know
                nxt = expected
                if seq == expected:
                    g = ghost_event(ghost, B, DELIVER, seq)
                    kn = (know[A], know[B] | (1 << seq) | ghost[0][A][seq][1])
                    nxt = expected + 1
                acked = self.chan.send(rest, B, A, 2 * seq + 1)
                out.append((("receive", B, seq), (acked, (k, started), nxt, g, kn)))
            else:
                if seq == k:
                    sender, kn = (k + 1, 0), (know[A] | (1 << k), know[B])
                else:
                    sender, kn = (k, started), know
                out.append((("acknowledged", A, seq), (rest, sender, expected, ghost, kn)))
        for src, _dst, msg, rest in self.chan.losses(chans):
            out.append((("lose", src, msg), (rest, (k, started), expected, ghost, know)))
        return out

    def history_key(self, state: tuple) -> Any:
        return state[3]

    def history(self, state: tuple) -> History:
        sent, logs = state[3]
        return History.from_raw(self.names, sent, logs, self.stride)

    def properties(self) -> list[Property]:
        return list(LIBRARY)

    def format_action(self, action: Action) -> str:
        kind, who, arg = action[0], self.names[action[1]], action[2]
        if kind == "send":
            return f"a starts sending a{arg + 1} to b"
        if kind == "transmit":
            return f"a transmits a{arg + 1}"
        if kind == "receive":
            return f"b receives a copy of a{arg + 1} and acknowledges it"
        if kind == "acknowledged":
            return f"a receives the acknowledgement of a{arg + 1}"
        if kind == "lose":
            what = f"a{arg // 2 + 1}" if arg % 2 == 0 else f"the acknowledgement of a{arg // 2 + 1}"
            return f"the channel from {who} loses {what}"
        return super().format_action(action)

    def describe(self, state: tuple) -> dict[str, Any]:
        chans, (k, started), expected, _ghost, _know = state
        transit = []
        for (src, _dst), msgs in chans:
            for m in msgs:
                transit.append(f"a{m // 2 + 1}" if src == A else f"ack a{m // 2 + 1}")
        return {
            "a": {"current": f"a{k + 1}" if k < self.sends else None, "started": bool(started)},
            "b": {"delivered": [f"a{i + 1}" for i in range(expected)]},
            "in_transit": transit,
        }


SPEC = Retransmit

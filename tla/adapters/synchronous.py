"""The TLA+ adapter of :mod:`ordercheck.specs.synchronous` (template ``synchronous.tla.j2``).

Channels are ``chans[<<p, q>>]`` over every ordered pair of two peers (no self-channels): a sequence for FIFO
channels, a bag (each distinct message in transit -> its number of copies, no zero
counts) for unordered ones. A message in transit is ``<<kind, msg>>``: ``<<"message",
<<p, k>>>>`` for an application message, ``<<"request", <<>>>>`` (and ``"permission"``,
``"ack"``) for a control one. A peer's ``(mode, partner, asking)`` becomes three
variables, with the model value ``NoPeer`` where Python has no partner or no request.
"""

from __future__ import annotations

from typing import Any

from ordercheck.specs.synchronous import ACK, ACTIVE, APP, GRANTED, PERMISSION, REQUEST, WAIT_ACK
from ordercheck.tla.adapters.base import PeerAdapter, _seq
from ordercheck.tla.values import ModelValue

KINDS = {APP: "message", REQUEST: "request", PERMISSION: "permission", ACK: "ack"}
KIND_CODES = {v: k for k, v in KINDS.items()}
MODES = {ACTIVE: "active", WAIT_ACK: "awaits_ack", GRANTED: "granted"}
MODE_CODES = {v: k for k, v in MODES.items()}
NO_PEER = ModelValue("NoPeer")


class SynchronousAdapter(PeerAdapter):
    template = "synchronous.tla.j2"
    protocol_module = "SynchronousOrdering"
    variables = ("chans", "mode", "partner", "asking", "sent", "logs", "know", "signalsLeft", "dupsLeft")
    predicates = {"eventual_delivery": "AllDelivered", "deadlock_free": "NoneWaiting"}
    actions = {
        "request": "Request(p)",
        "send": "Send(p)",
        "grant": "Grant(p)",
        "ack": "Ack(p)",
        "deliver": "Deliver(p)",
        "signal": "\\E q \\in Peers : Signal(p, q)",
        "lose": "\\E pq \\in Pairs : Lose(pq)",
        "duplicate": "\\E pq \\in Pairs : Duplicate(pq)",
    }

    def fairness(self) -> list[dict[str, str]]:
        """The spec's fairness, and taking a granted permission: Python labels that step
        ``send`` like starting a send (optional), so its ``fairness`` cannot name it, and
        its checker forces it only by never stopping a run while a step is enabled; the
        module, which has no such assumption, states it as weak fairness of
        ``TakePermission(p)``."""
        return [*super().fairness(),
                {"label": "send (taking a granted permission)", "kind": "weak", "formula": "TakePermission(p)",
                 "prefix": "WF"}]

    def __init__(self, spec: Any) -> None:
        super().__init__(spec)
        self.ordered: bool = spec.net.ordered

    def context(self) -> dict[str, Any]:
        return {**super().context(), "ordered": self.ordered}

    def cfg_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        flags = [("RequestPermission", spec.request_permission), ("WaitForAck", spec.wait_for_ack), ("Lossy", spec.lossy)]
        return [
            *super().cfg_constants(),
            ("NoPeer", "NoPeer"),
            ("FifoChannels", "TRUE" if self.ordered else "FALSE"),
            *((k, "TRUE" if v else "FALSE") for k, v in flags),
            ("Duplicates", str(spec.duplicates)),
        ]

    def symmetry(self) -> tuple[bool, str]:
        return False, "a message is big or small by the peers' ids, so permuting peers is no symmetry"

    # -- the codec ----------------------------------------------------------------------

    def transit(self, msg: tuple) -> tuple:
        kind, mid = msg
        return (KINDS[kind], self.msg(mid) if kind == APP else ())

    def untransit(self, value: tuple) -> tuple:
        kind = KIND_CODES[value[0]]
        return (kind, self.mid(value[1]) if kind == APP else 0)

    def encode_chans(self, chans: tuple) -> dict:
        content = dict(chans)
        out: dict = {}
        for i, p in enumerate(self.peers):
            for j, q in enumerate(self.peers):
                if i == j:
                    continue  # no peer sends to itself: no self-channels
                msgs = content.get((i, j), ())
                if self.ordered:
                    out[(p, q)] = tuple(self.transit(m) for m in msgs)
                else:
                    bag: dict = {}
                    for m in msgs:
                        key = self.transit(m)
                        bag[key] = bag.get(key, 0) + 1
                    out[(p, q)] = bag
        return out

    def decode_chans(self, value: dict) -> tuple:
        out = []
        for (p, q), content in value.items():
            if self.ordered:
                msgs = tuple(self.untransit(x) for x in _seq(content))
            else:
                bag = content if isinstance(content, dict) else {}  # TLC prints an empty bag as <<>>
                msgs = tuple(sorted(self.untransit(x) for x, n in bag.items() for _ in range(n)))
            if msgs:
                out.append(((self.ids[p], self.ids[q]), msgs))
        return tuple(sorted(out))

    def encode(self, state: tuple) -> dict[str, Any]:
        chans, procs, ghost, know, signals, dups = state
        return {
            "chans": self.encode_chans(chans),
            "mode": self.per_peer(procs, lambda s: MODES[s[0]]),
            "partner": self.per_peer(procs, lambda s: NO_PEER if s[0] == ACTIVE else self.peers[s[1]]),
            "asking": self.per_peer(procs, lambda s: self.peers[s[2] - 1] if s[2] else NO_PEER),
            **self.encode_ghost(ghost, know, signals),
            "dupsLeft": dups,
        }

    def decode(self, values: dict[str, Any]) -> tuple:
        ghost, know, signals = self.decode_ghost(values)
        procs = tuple(
            (
                MODE_CODES[values["mode"][p]],
                0 if values["partner"][p] == NO_PEER else self.ids[values["partner"][p]],
                0 if values["asking"][p] == NO_PEER else 1 + self.ids[values["asking"][p]],
            )
            for p in self.peers
        )
        return (self.decode_chans(values["chans"]), procs, ghost, know, signals, values["dupsLeft"])


ADAPTER = SynchronousAdapter

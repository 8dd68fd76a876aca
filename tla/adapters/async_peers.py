"""The shared adapter of specs on :mod:`specs.async_peers` (template piece ``_channels.tla.j2``).

Such a state starts ``(ghost, know, signals_left, duplicates_left, chans, ...)``. The
TLA+ module keeps ``chans`` as a function from every pair of processes to its channel:
a sequence for FIFO channels, a bag (message -> number of copies) for unordered ones.
Subclasses say how a process number and a wire message look in TLA+ (:meth:`proc`,
:meth:`wire`) and back, and encode their own state items.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tla.adapters.base import PeerAdapter, _seq
from tla.values import ModelValue


class AsyncAdapter(PeerAdapter):
    """A :class:`PeerAdapter` with the channels and the duplication budget."""

    shared_variables = ("sent", "logs", "know", "signalsLeft", "chans", "dupsLeft")
    predicates = {"eventual_delivery": "AllDelivered"}
    send_action = {"send": "\\E D \\in SendOptions(p) : Send(p, D)"}
    shared_actions = {
        "signal": "\\E q \\in Peers : Signal(p, q)",
        "lose": "\\E pq \\in Pairs : Lose(pq)",
        "duplicate": "\\E pq \\in Pairs : Duplicate(pq)",
    }

    def __init__(self, spec: Any) -> None:
        super().__init__(spec)
        self.ordered: bool = spec.chan.ordered
        self.procs: tuple[ModelValue, ...] = self.peers
        self.proc_ids = {p: i for i, p in enumerate(self.procs)}

    def context(self) -> dict[str, Any]:
        spec: Any = self.spec
        script = None
        if spec.plan is not None:
            script = [(self.names[p], [self._set_text(m) for m in masks]) for p, masks in enumerate(spec.plan) if masks]
        # A broadcast spec has no destination mode: its plan sends to the whole group.
        destinations = getattr(spec, "destinations", "others")
        return {"peers": list(self.names), "script": script, "destinations": destinations, "ordered": self.ordered}

    def cfg_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        return [
            *super().cfg_constants(),
            ("Lossy", "TRUE" if spec.lossy else "FALSE"),
            ("Duplicates", str(spec.duplicates)),
        ]

    # -- wire messages: subclasses ------------------------------------------------------

    def wire(self, msg: Any) -> Any:
        """A Python wire message as a TLA+ value."""
        raise NotImplementedError

    def unwire(self, value: Any) -> Any:
        """A TLA+ wire message as the Python one."""
        raise NotImplementedError

    # -- channels both ways ----------------------------------------------------------------

    def encode_chans(self, chans: tuple) -> dict[tuple, Any]:
        contents = dict(chans)
        out: dict[tuple, Any] = {}
        for i, src in enumerate(self.procs):
            for j, dst in enumerate(self.procs):
                msgs = contents.get((i, j), ())
                if self.ordered:
                    out[(src, dst)] = tuple(self.wire(m) for m in msgs)
                else:
                    out[(src, dst)] = dict(Counter(self.wire(m) for m in msgs))
        return out

    def decode_chans(self, value: dict) -> tuple:
        out = []
        for (src, dst), chan in value.items():
            if self.ordered:
                msgs = tuple(self.unwire(m) for m in _seq(chan))
            else:
                bag = chan if isinstance(chan, dict) else {}
                msgs = tuple(sorted(self.unwire(m) for m, n in bag.items() for _ in range(n)))
            if msgs:
                out.append(((self.proc_ids[src], self.proc_ids[dst]), msgs))
        return tuple(sorted(out))

    def encode_shared(self, state: tuple) -> dict[str, Any]:
        ghost, know, signals, dups, chans = state[:5]
        return {**self.encode_ghost(ghost, know, signals), "chans": self.encode_chans(chans), "dupsLeft": dups}

    def decode_shared(self, values: dict[str, Any]) -> tuple:
        ghost, know, signals = self.decode_ghost(values)
        return (ghost, know, signals, values["dupsLeft"], self.decode_chans(values["chans"]))

    def real_messages(self) -> list[int]:
        """Message ids of the messages the model can send (the TLA+ ``Messages``)."""
        spec: Any = self.spec
        out = []
        for p in range(len(self.names)):
            count = len(spec.plan[p]) if spec.plan is not None else spec.sends
            out.extend(p * self.stride + k for k in range(count))
        return out


class StampedAdapter(AsyncAdapter):
    """An :class:`AsyncAdapter` whose wire messages are ``(kind, mid, timestamp)``;
    ``kinds`` names each kind number as the TLA+ string it is there."""

    kinds: tuple[str, ...] = ()

    def wire(self, msg: tuple) -> tuple:
        kind, mid, ts = msg
        return (self.kinds[kind], self.msg(mid), ts)

    def unwire(self, value: tuple) -> tuple:
        kind, msg, ts = value
        return (self.kinds.index(kind), self.mid(msg), ts)

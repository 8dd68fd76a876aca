"""The TLA+ adapter shared by the hold-back specs (:mod:`ordercheck.specs.holdback`: BSS, SES,
matrix clocks), whose templates include ``_holdback.tla.j2``.

A copy in transit or held back, Python ``(mid, data)``, is the TLA+ pair
``<<<<p, k>>, data>>``; control data and per-peer algorithm state are tuples of ints
(vectors indexed by peer id) on both sides, so they carry over unchanged. A FIFO
channel is a sequence; an unordered channel and a hold-back buffer, sorted tuples in
Python, are bags (functions from copies to their counts).
"""

from __future__ import annotations

from typing import Any

from ordercheck.tla.adapters.base import PeerAdapter, _seq


def _bag(value: Any) -> dict:
    """A TLC bag; TLC prints the empty bag as ``<<>>``."""
    return value if isinstance(value, dict) else {}


class HoldBackAdapter(PeerAdapter):
    """The adapter of a :class:`ordercheck.specs.holdback.HoldBackSpec`: it encodes the whole state
    (channels, buffers, per-peer algorithm state, ghost history); subclasses set
    ``template`` and give their flags in :meth:`algorithm_constants`."""

    variables = ("chans", "buffers", "local", "sent", "logs", "know", "signalsLeft", "dupsLeft")
    predicates = {"eventual_delivery": "AllDelivered"}
    actions = {
        "receive": "Receive(p)",
        "buffer": "Buffer(p)",
        "deliver": "Deliver(p)",
        "send": "Send(p)",
        "signal": "\\E q \\in Peers : Signal(p, q)",
        "lose": "Lose",
        "duplicate": "Duplicate",
    }

    def context(self) -> dict[str, Any]:
        return {**super().context(), "channel": self.spec.channel}  # type: ignore[attr-defined]

    def algorithm_constants(self) -> list[tuple[str, str]]:
        """The spec's own constants, as ``(TLA+ name, value)``."""
        return []

    def cfg_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        return [
            *super().cfg_constants(),
            ("FifoChannels", _bool(spec.channel == "fifo")),
            ("Lossy", _bool(spec.lossy)),
            ("Duplicates", str(spec.duplicates)),
            *self.algorithm_constants(),
        ]

    def symmetry(self) -> tuple[bool, str]:
        return False, "vectors are indexed by peer id, which permuting the peers' model values does not rename"

    # -- states ---------------------------------------------------------------------------

    def copy(self, item: tuple) -> tuple:
        """A Python copy in transit or held back, ``(mid, data)``, as ``<<<<p, k>>, data>>``."""
        mid, data = item
        return (self.msg(mid), data)

    def item(self, copy: tuple) -> tuple:
        """A decoded TLA+ copy as the Python ``(mid, data)`` (the inverse of :meth:`copy`)."""
        msg, data = copy
        return (self.mid(msg), _tuples(data))

    def bag(self, items: tuple) -> dict:
        """A sorted tuple of Python copies as a TLA+ bag: copy -> how many times it occurs."""
        out: dict[tuple, int] = {}
        for it in items:
            c = self.copy(it)
            out[c] = out.get(c, 0) + 1
        return out

    def items(self, bag: dict) -> tuple:
        """A decoded TLA+ bag as the sorted tuple of Python copies (the inverse of :meth:`bag`)."""
        return tuple(sorted(self.item(c) for c, n in bag.items() for _ in range(n)))

    def encode(self, state: tuple) -> dict[str, Any]:
        chans, buffers, local, ghost, know, signals, dups = state
        fifo = self.spec.channel == "fifo"  # type: ignore[attr-defined]
        by_link = dict(chans)
        n = len(self.peers)
        links = {}
        for s in range(n):
            for d in range(n):
                if s != d:
                    msgs = by_link.get((s, d), ())
                    links[(self.peers[s], self.peers[d])] = (
                        tuple(self.copy(m) for m in msgs) if fifo else self.bag(msgs)
                    )
        return {
            "chans": links,
            "buffers": self.per_peer(buffers, self.bag),
            "local": self.per_peer(local, lambda x: x),
            **self.encode_ghost(ghost, know, signals),
            "dupsLeft": dups,
        }

    def decode(self, values: dict[str, Any]) -> tuple:
        fifo = self.spec.channel == "fifo"  # type: ignore[attr-defined]
        chans = []
        for (s, d), v in values["chans"].items():
            msgs = tuple(self.item(c) for c in _seq(v)) if fifo else self.items(_bag(v))
            if msgs:
                chans.append(((self.ids[s], self.ids[d]), msgs))
        ghost, know, signals = self.decode_ghost(values)
        return (
            tuple(sorted(chans)),
            self.from_peers(values["buffers"], lambda b: self.items(_bag(b))),
            self.from_peers(values["local"], _tuples),
            ghost,
            know,
            signals,
            values["dupsLeft"],
        )


def _tuples(value: Any) -> Any:
    """A TLC value of nested sequences of ints as nested tuples (TLC may print an empty
    sequence as an empty function)."""
    if isinstance(value, dict):
        value = _seq(value)
    if isinstance(value, tuple):
        return tuple(_tuples(v) for v in value)
    return value


def _bool(flag: bool) -> str:
    return "TRUE" if flag else "FALSE"

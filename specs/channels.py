"""Message transport between peers, as one reusable piece.

A model constant picks the semantics: ``fifo`` (per-pair FIFO queues) or ``unordered``
(a per-pair multiset), each optionally ``lossy`` (a message in transit may vanish) and
``duplicating`` (a message in transit may be copied, up to a budget the spec keeps).
Channels are kept in canonical form so that equal contents hash equally: a sorted tuple
of ``((src, dst), messages)`` pairs with empty channels left out, and for an unordered
channel the messages sorted.

Messages are any state-vocabulary values (ints or tuples of ints); the messages of one
unordered channel must be mutually comparable (give them one shape, e.g. ``(kind, mid,
payload)``), since they are kept sorted. Every successor function yields each distinct
successor once: taking, losing or copying one of two equal neighbouring messages gives
the same channels, so only the first is offered. Specs build on this: a spec's own
queues (bus1's timestamp-ordered queue, a hold-back buffer) sit on top.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ordercheck.checker import Constant

Chans = tuple  # tuple[tuple[tuple[int, int], tuple[Any, ...]], ...]

EMPTY: Chans = ()


def channel_constants(ordering: str = "fifo") -> tuple[Constant, ...]:
    """The constants that choose channel semantics, for a spec's ``constants``. Each
    asks for a channel fault (``channel = "unordered"``: reordering, ``lossy``: loss,
    ``duplicates``: duplication) that a spec must list in its ``tolerates`` or its
    ``breaks_under`` before a model may use it (:mod:`ordercheck.checker.api.faults`)."""
    return (
        Constant("channel", str, ordering, "per-pair channel ordering: fifo or unordered", choices=("fifo", "unordered"),
                 fault="reordering", fault_values=("unordered",)),
        Constant("lossy", bool, False, "a message in transit may be lost", fault="loss"),
        Constant("duplicates", int, 0, "how many times in a run a message in transit may be duplicated", minimum=0, maximum=4,
                 fault="duplication"),
    )


@dataclass(frozen=True)
class Channels:
    """Channel semantics; the channel contents themselves live in the spec's state."""

    ordered: bool = True
    lossy: bool = False

    @classmethod
    def from_spec(cls, spec: Any) -> Channels:
        """The semantics a spec's :func:`channel_constants` chose (``duplicates`` is a
        budget the spec keeps in its state and spends on :meth:`duplications`)."""
        return cls(ordered=spec.channel == "fifo", lossy=spec.lossy)

    def send(self, chans: Chans, src: int, dst: int, msg: Any) -> Chans:
        """``chans`` with ``msg`` put in transit from ``src`` to ``dst``."""
        key = (src, dst)
        out = []
        placed = False
        for k, msgs in chans:
            if k == key:
                msgs = msgs + (msg,) if self.ordered else tuple(sorted(msgs + (msg,)))
                placed = True
            out.append((k, msgs))
        if not placed:
            out.append((key, (msg,)))
            out.sort()
        return tuple(out)

    def receivable(self, chans: Chans, dst: int | None = None) -> Iterator[tuple[int, int, Any, Chans]]:
        """Each message that can be taken off a channel now, with the channels after.

        Yields ``(src, dst, msg, rest)``: the head of each FIFO channel, or each distinct
        message of an unordered one; only channels into ``dst`` when given.
        """
        for i, (key, msgs) in enumerate(chans):
            if dst is not None and key[1] != dst:
                continue
            if self.ordered:
                yield key[0], key[1], msgs[0], _without(chans, i, msgs[1:])
            else:
                prev = None
                for j, msg in enumerate(msgs):
                    if msg == prev:
                        continue
                    prev = msg
                    yield key[0], key[1], msg, _without(chans, i, msgs[:j] + msgs[j + 1 :])

    def losses(self, chans: Chans) -> Iterator[tuple[int, int, Any, Chans]]:
        """With ``lossy``: each message that may vanish now (any message in transit)."""
        if not self.lossy:
            return
        for i, (key, msgs) in enumerate(chans):
            prev = None
            for j, msg in enumerate(msgs):
                if msg == prev:
                    continue
                prev = msg
                yield key[0], key[1], msg, _without(chans, i, msgs[:j] + msgs[j + 1 :])

    def duplications(self, chans: Chans) -> Iterator[tuple[int, int, Any, Chans]]:
        """Each message that may be copied now; the copy travels right behind it."""
        for i, (key, msgs) in enumerate(chans):
            prev = None
            for j, msg in enumerate(msgs):
                if msg == prev:
                    continue
                prev = msg
                copied = msgs[: j + 1] + (msg,) + msgs[j + 1 :]
                yield key[0], key[1], msg, _without(chans, i, copied)

    @staticmethod
    def in_transit(chans: Chans) -> int:
        """How many messages are in transit, over every channel."""
        return sum(len(m) for _k, m in chans)

    @staticmethod
    def between(chans: Chans, src: int, dst: int) -> tuple[Any, ...]:
        """The messages in transit from ``src`` to ``dst`` (in order for FIFO)."""
        for key, msgs in chans:
            if key == (src, dst):
                return msgs
        return ()


def _without(chans: Chans, i: int, msgs: tuple) -> Chans:
    """``chans`` with channel ``i``'s messages replaced (dropped when empty)."""
    if msgs:
        return chans[:i] + ((chans[i][0], msgs),) + chans[i + 1 :]
    return chans[:i] + chans[i + 1 :]

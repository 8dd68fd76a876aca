"""Witnesses that an ordering property is at stake: ``sometimes`` properties over the history.

Public API: a spec of your own on :class:`ordercheck.specs.base.PeerSpec`,
:class:`ordercheck.specs.async_peers.AsyncPeerSpec` or :class:`ordercheck.specs.holdback.HoldBackSpec` (which
lists them already) offers them with one line, ``return [*LIBRARY, *WITNESSES]`` in
``properties()``, and a model names one as ``[evidence]``: ``fifo = { witness =
"fifo_race" }`` with ``fifo_race = "holds"`` in ``[expect]``.

A model that expects an ordering property to hold must show that its configuration is
one where the property could fail (see ``docs/reference/evidence.md``). A witness shows it by
reaching the situation the property constrains; the checker reports the run that
reaches it. Each witness here is *stable*: once a history has the situation, every
longer history has it too, so partial-order reduction keeps it without visibility.

- ``fifo_race``: a sender sends ``m2`` to ``q`` while an earlier message ``m1`` of its
  own to ``q`` may still be undelivered there: ``q``'s delivery of ``m1`` (if any) does
  not happen before the send of ``m2``. FIFO delivery is what orders the two at ``q``.
- ``causal_race``: a causal chain across senders reaches one destination: ``m1``
  happened before ``m2``, they have different senders, both are addressed to ``q``,
  and ``q``'s delivery of ``m1`` does not happen before the send of ``m2``. Causal
  delivery is what orders them at ``q``.
- ``total_race``: two peers both deliver the same two concurrent messages (neither
  happened before the other), so nothing but a total-order protocol makes the two
  peers agree on their order.

"Happens before" is the history's (program order, each send to each delivery of its
message, side-channel signals; :func:`ordercheck.specs.history.event_graph`). A protocol's own
control messages (acknowledgements, permissions) are not in the history, so for a
protocol whose sender waits for an acknowledgement before its next send these
witnesses would overstate the race; such models carry a mutant as evidence instead.

:data:`WITNESSES_FOR` says which witness may stand as evidence for which property.
"""

from __future__ import annotations

from collections.abc import Iterator

from ordercheck.checker import Property
from ordercheck.specs.history import DELIVER, DROP, History, event_graph


def _consumed_at(h: History) -> list[dict[int, int]]:
    """Per peer, message id -> index in its log of its first delivery or drop."""
    out: list[dict[int, int]] = []
    for log in h.logs:
        first: dict[int, int] = {}
        for i, (kind, arg) in enumerate(log):
            if (kind == DELIVER or kind == DROP) and arg not in first:
                first[arg] = i
        out.append(first)
    return out


class _Reach:
    """Happened-before between the events of one history, computed on demand."""

    def __init__(self, h: History) -> None:
        self.succ, self.send_at = event_graph(h)
        self._from: dict[tuple[int, int], set[tuple[int, int]]] = {}

    def before(self, event: tuple[int, int], mid: int) -> bool:
        """Whether ``event`` happened before the send of message ``mid``."""
        goal = self.send_at.get(mid)
        if goal is None:
            return False
        seen = self._from.get(event)
        if seen is None:
            seen = {event}
            todo = [event]
            while todo:
                node = todo.pop()
                for child in self.succ.get(node, ()):
                    if child not in seen:
                        seen.add(child)
                        todo.append(child)
            self._from[event] = seen
        return goal in seen


def _races(h: History, pairs: Iterator[tuple[int, int]]) -> tuple[int, int, int] | None:
    """The first ``(m1, m2, q)`` of ``pairs`` (``m1`` to precede ``m2``) with ``q``
    addressed by both and ``q``'s delivery of ``m1`` not happening before ``m2``'s send."""
    consumed = _consumed_at(h)
    reach: _Reach | None = None
    for m1, m2 in pairs:
        a, b = h.messages[m1], h.messages[m2]
        for q in sorted(a.dests & b.dests):
            at = consumed[q].get(m1) if q < len(consumed) else None
            if at is None:
                return m1, m2, q
            if reach is None:
                reach = _Reach(h)
            if not reach.before((q, at), m2):
                return m1, m2, q
    return None


def fifo_race(h: History) -> str | None:
    """A sender sends m2 to q while its earlier m1 to q may still be undelivered at q."""
    by_sender: dict[int, list[int]] = {}
    for m in sorted(h.messages):
        by_sender.setdefault(h.messages[m].sender, []).append(m)

    def pairs() -> Iterator[tuple[int, int]]:
        for mids in by_sender.values():
            mids.sort(key=lambda m: h.messages[m].seq)
            for j, m2 in enumerate(mids):
                for m1 in mids[:j]:
                    yield m1, m2

    found = _races(h, pairs())
    if found is None:
        return None
    m1, m2, q = found
    a, b = h.messages[m1], h.messages[m2]
    return (
        f"{h.name(b.sender)} sent {b.name} to {h.name(q)} while its earlier {a.name}, also addressed to "
        f"{h.name(q)}, was not yet known to be delivered there"
    )


def causal_race(h: History) -> str | None:
    """A causal chain across senders reaches one destination q: m1 happened before m2,
    different senders, both addressed to q, and m2 is sent while m1 may still be
    undelivered at q."""

    def pairs() -> Iterator[tuple[int, int]]:
        for m2 in sorted(h.messages):
            msg = h.messages[m2]
            for m1 in sorted(msg.past):
                if m1 in h.messages and h.messages[m1].sender != msg.sender:
                    yield m1, m2

    found = _races(h, pairs())
    if found is None:
        return None
    m1, m2, q = found
    a, b = h.messages[m1], h.messages[m2]
    chain = h.happened_before_path(m1, m2)
    why = f" ({', '.join(chain)})" if chain else ""
    return (
        f"{b.name} is sent to {h.name(q)} while {a.name}, which happened before it{why} and is also "
        f"addressed to {h.name(q)}, was not yet known to be delivered there"
    )


def total_race(h: History) -> str | None:
    """Two peers both deliver the same two concurrent messages."""
    delivered = [set(h.deliveries(q)) for q in range(len(h.peers))]
    for p in range(len(delivered)):
        for q in range(p + 1, len(delivered)):
            common = sorted(delivered[p] & delivered[q])
            for i, m1 in enumerate(common):
                for m2 in common[i + 1 :]:
                    a, b = h.messages.get(m1), h.messages.get(m2)
                    if a is None or b is None or m1 in b.past or m2 in a.past:
                        continue
                    return (
                        f"peers {h.name(p)} and {h.name(q)} both delivered {a.name} and {b.name}, "
                        "which are concurrent (neither happened before the other)"
                    )
    return None


FIFO_RACE = Property.sometimes(
    "fifo_race", fifo_race, over="history", doc=fifo_race.__doc__ or "", stable=True, changed_by=("send",)
)
CAUSAL_RACE = Property.sometimes(
    "causal_race", causal_race, over="history", doc=causal_race.__doc__ or "", stable=True, changed_by=("send",)
)
TOTAL_RACE = Property.sometimes(
    "total_race", total_race, over="history", doc=total_race.__doc__ or "", stable=True, changed_by=("deliver",)
)

WITNESSES: tuple[Property, ...] = (FIFO_RACE, CAUSAL_RACE, TOTAL_RACE)
"""The witnesses every peer spec exposes beside the ordering library."""

WITNESSES_FOR: dict[str, tuple[str, ...]] = {
    "fifo": ("fifo_race",),
    "causal": ("causal_race",),
    "total": ("total_race",),
    "total_global": ("total_race",),
    "total_prefix": ("total_race",),
    "global_lock": ("fifo_race", "causal_race", "total_race"),
}
"""Which witness may stand for which property: the witness's situation is one where a
violation of the property is possible. A broken ``fifo``, ``causal`` or pairwise
``total`` is also a broken ``global_lock``, and a broken ``total`` is also a broken
``total_global`` and ``total_prefix``. ``integrity`` and ``synchronous`` have no
witness here: their evidence is a mutant."""

__all__ = ["CAUSAL_RACE", "FIFO_RACE", "TOTAL_RACE", "WITNESSES", "WITNESSES_FOR", "causal_race", "fifo_race", "total_race"]

"""Small helpers the specs share: peer names, bitmasks, tuple updates, destination sets."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from ordercheck.checker import ConstantError
from ordercheck.specs.history import SEND, SIGNAL_IN, SIGNAL_OUT, encode_event

PEER_NAMES = "abcdefghijklmnopqrstuvwxyz"


def peer_names(n: int) -> tuple[str, ...]:
    """``a``, ``b``, ``c``... for ``n`` peers."""
    return tuple(PEER_NAMES[:n])


def replace(t: tuple, i: int, value: Any) -> tuple:
    """``t`` with item ``i`` replaced."""
    out = list(t)  # cheaper than joining the slices around it
    out[i] = value
    return tuple(out)


def mask_of(items: Sequence[int]) -> int:
    m = 0
    for i in items:
        m |= 1 << i
    return m


def members(mask: int) -> tuple[int, ...]:
    """The set bits of ``mask``, lowest first."""
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return tuple(out)


def names_of(mask: int, names: Sequence[str]) -> str:
    return ",".join(names[i] for i in members(mask))


def destination_choices(peers: int, sender: int, mode: str) -> tuple[int, ...]:
    """Destination masks a sender may choose: ``others`` (everyone else at once),
    ``unicast`` (one other peer) or ``subsets`` (any non-empty subset of the others)."""
    others = [q for q in range(peers) if q != sender]
    if mode == "others":
        return (mask_of(others),)
    if mode == "unicast":
        return tuple(1 << q for q in others)
    if mode == "subsets":
        out = []
        for k in range(1, len(others) + 1):
            for combo in combinations(others, k):
                out.append(mask_of(combo))
        return tuple(out)
    raise ConstantError("destinations", f"unknown mode {mode!r}")


def parse_script(script: dict, peers: int, field: str = "script") -> tuple[tuple[int, ...], ...]:
    """A per-peer script of sends from a model table.

    ``script = { a = ["bc", "c"], b = ["a"] }``: peer a first sends to b and c, then to
    c alone; peer b sends once, to a. Returns, per peer, its destination masks in order.
    """
    names = peer_names(peers)
    out: list[tuple[int, ...]] = [() for _ in range(peers)]
    for who, sends in script.items():
        if who not in names:
            raise ConstantError(field, f"names peer {who!r}, but the peers are {', '.join(names)}")
        if not isinstance(sends, list) or not all(isinstance(s, str) for s in sends):
            raise ConstantError(f"{field}.{who}", 'expected a list of destination strings such as ["bc", "a"]')
        p = names.index(who)
        masks = []
        for dests in sends:
            if not dests:
                raise ConstantError(f"{field}.{who}", "a send needs at least one destination")
            mask = 0
            for ch in dests:
                if ch not in names:
                    raise ConstantError(f"{field}.{who}", f"destination {ch!r} is not a peer ({', '.join(names)})")
                if ch == who:
                    raise ConstantError(f"{field}.{who}", f"peer {who} cannot send to itself")
                mask |= 1 << names.index(ch)
            masks.append(mask)
        out[p] = tuple(masks)
    return tuple(out)


# -- the ghost history most specs keep: ``ghost = (sent, logs)`` ----------------------
# ``sent[p]`` holds ``(dests_mask, past_mask)`` per message p sent; ``logs[p]`` its
# encoded events (see ordercheck.specs.history). Knowledge (``know[p]``, a bitmask of message ids)
# lives beside the ghost in the state so that the ghost changes only when the history
# an observer sees changes.


def ghost_send(ghost: tuple, p: int, mid: int, dmask: int, past: int) -> tuple:
    """``p`` starts sending message ``mid`` to ``dmask`` with causal past ``past``."""
    sent, logs = ghost
    return (
        replace(sent, p, (*sent[p], (dmask, past))),
        replace(logs, p, (*logs[p], encode_event(SEND, mid))),
    )


def ghost_event(ghost: tuple, p: int, kind: int, arg: int) -> tuple:
    """``p`` logs one event (a delivery, a drop, a failure...)."""
    sent, logs = ghost
    return (sent, replace(logs, p, (*logs[p], encode_event(kind, arg))))


def ghost_signal(ghost: tuple, p: int, q: int) -> tuple:
    """``p`` sends a side-channel signal that ``q`` receives."""
    sent, logs = ghost
    logs = list(logs)
    logs[p] = logs[p] + (encode_event(SIGNAL_OUT, q),)
    logs[q] = logs[q] + (encode_event(SIGNAL_IN, p),)
    return (sent, tuple(logs))


def message_past(ghost: tuple, mid: int, stride: int) -> int:
    """The causal past of message ``mid`` as a bitmask."""
    return ghost[0][mid // stride][mid % stride][1]


def message_dests(ghost: tuple, mid: int, stride: int) -> int:
    return ghost[0][mid // stride][mid % stride][0]


def send_options(plan, choices, sends: int, p: int, count: int) -> tuple[int, ...]:
    """The destination masks peer ``p`` may send to next, having sent ``count``."""
    if plan is not None:
        return plan[p][count : count + 1]
    if count < sends:
        return choices[p]
    return ()


def settled_delivery(spec: Any, state: tuple, succ: Sequence[tuple[tuple, Any]]) -> int | None:
    """The position in ``succ`` of the first ``deliver`` step whose peer's queue head is
    settled (``spec.settled(state, peer)``): the solo step of Lamport's and Skeen's
    specs (:meth:`ordercheck.checker.api.reductions.PartialOrder.solo_step`), or ``None``."""
    for i, (label, _t) in enumerate(succ):
        if label[0] == "deliver" and spec.settled(state, label[1]):
            return i
    return None

"""The ordering properties every spec shares, decided on a :class:`History`.

Each check returns ``None`` when the history satisfies the property and otherwise one
sentence naming the messages and peers involved. The names are the contract of
DESIGN.md and ``docs/reference/properties.md``: ``fifo``, ``causal``, ``integrity``,
``total``, ``total_global``, ``total_prefix``, ``global_lock``, ``eventual_delivery``,
``synchronous``.

``fifo`` and ``causal`` are safety properties of every prefix, as the literature states
them: when a peer delivers m2, every message that must precede m2 there and is addressed
to it has already been delivered there (or dropped there with a reason, as a protocol
may do); otherwise the run is violated at that delivery, whether or not the predecessor
arrives later. That the predecessor arrives at all is ``eventual_delivery``'s business.
``integrity`` says each message is delivered at most once at each peer, only at its
destinations and only after it was sent; the total-order properties read each peer's
*first* delivery of a message, so a repeated delivery is integrity's alone.
"""

from __future__ import annotations

from ordercheck.checker import Property
from ordercheck.checker.monitors import MONITORS as ALL_MONITORS
from ordercheck.checker.monitors import check
from ordercheck.checker.monitors.crown import Synchronous
from ordercheck.checker.monitors.delivery import EventualDelivery
from ordercheck.checker.monitors.integrity import Integrity
from ordercheck.checker.monitors.lock import GlobalLock
from ordercheck.checker.monitors.order import Fifo
from ordercheck.checker.monitors.spec_past import CausalPast
from ordercheck.checker.monitors.total import Total, TotalGlobal, TotalPrefix
from ordercheck.checker.monitors.violation import Violation
from ordercheck.specs.history import History, HistoryLog, history_log

MONITORS: dict[str, type] = {**ALL_MONITORS, "causal": CausalPast}
"""The monitor deciding each library property: :data:`ordercheck.checker.monitors.MONITORS`, but
``causal`` reads the spec's own causal pasts (``ordercheck.checker.monitors.spec_past.CausalPast``)."""


def _ids(mask: int) -> list[int]:
    """The ids of the set bits of ``mask``, smallest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _and_list(names: list[str]) -> str:
    """``a1``, ``a1 and b1``, ``a1, a2 and b1``."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def first_violation(h: History, prop: str | type) -> tuple[HistoryLog, Violation] | None:
    """The first violation of property ``prop`` (a name of :data:`MONITORS` or a monitor
    class) on the history laid out as a log (:func:`~ordercheck.specs.history.history_log`),
    with that log; ``None`` when the history satisfies it. For an ``eventually``
    property, what is outstanding at the end."""
    log = history_log(h)
    found = check(log, MONITORS[prop] if isinstance(prop, str) else prop)
    return (log, found) if found is not None else None


def _sentence(h: History, cls: type) -> str | None:
    found = first_violation(h, cls)
    return None if found is None else found[1].sentence


def fifo(h: History) -> str | None:
    """FIFO delivery: when a peer ``q`` delivers ``m2``, every message that ``m2``'s sender
    sent before ``m2`` (a smaller ``seq``) and addressed to ``q`` has already been
    delivered at ``q``, or dropped there with a reason. Violated at the delivery of
    ``m2`` otherwise, whether or not the earlier message is delivered later
    (``ordercheck.checker.monitors.order.Fifo`` decides it)."""
    return _sentence(h, Fifo)


def causal(h: History) -> str | None:
    """Causal delivery: when a peer ``q`` delivers ``m2``, every message in ``m2``'s causal
    past (it happened before ``m2``: program order, deliveries and side-channel signals)
    that is addressed to ``q`` has already been delivered at ``q``, or dropped there with
    a reason. Violated at the delivery of ``m2`` otherwise, whether or not the earlier
    message is delivered later (``ordercheck.checker.monitors.spec_past.CausalPast`` decides
    it, with the spec's own causal pasts)."""
    return _sentence(h, CausalPast)


def total(h: History) -> str | None:
    """Pairwise total order: any two peers that both delivered ``m1`` and ``m2`` delivered
    them in the same order (each peer's first delivery of each counts). Says nothing of
    messages only one of the two delivered, so it allows gaps (:func:`total_prefix`) and
    cycles through three or more peers (:func:`total_global`)."""
    return _sentence(h, Total)


def total_global(h: History) -> str | None:
    """Global total order: the union of all peers' delivery orders (m1 before m2 when some
    peer delivered m1 before m2, first deliveries only) is acyclic, so one sequence of
    all messages agrees with every peer. Stronger than :func:`total`: it also forbids a
    cycle such as a1 -> c1 -> b1 -> a1 spread over three peers, each pair agreeing."""
    return _sentence(h, TotalGlobal)


def total_prefix(h: History) -> str | None:
    """Prefix (gap-free) total order: for any two peers, the messages addressed to both,
    in the order each delivered them (first deliveries), form two sequences one of which
    is a prefix of the other. So neither skips a message the other delivered before a
    common later one ("a2 without a1" against "a1 then a2" breaks it)."""
    return _sentence(h, TotalPrefix)


def integrity(h: History) -> str | None:
    """Integrity: each message is delivered at most once at each peer, only at its
    destinations, and only after it was sent. Drops count as deliveries here: a peer
    consumes a message (delivers or drops it) at most once, and only if addressed to it.
    "After it was sent": the message's send is in its sender's log, and happened-before
    (program order, each send to each delivery or drop of its message, each signal to its
    receipt) has no cycle, so no delivery precedes its own send (the history is laid out
    in happened-before order where it has no cycle, so the log's order tells)."""
    return _sentence(h, Integrity)


def global_lock(h: History) -> str | None:
    """The run could have happened with one global lock: DESIGN.md's graph (each peer's
    program order, each signal to its receipt, each send to each delivery of its message,
    and for each receiving queue send(m1) -> send(m2) when it consumed m1 and next m2, and
    its last consumed message's send before the send of every message still waiting for
    it) is acyclic (``ordercheck.checker.monitors.lock.GlobalLock`` decides it)."""
    return _sentence(h, GlobalLock)


def synchronous(h: History) -> str | None:
    """No crown: "send(m1) happened before the receipt of m2" is acyclic over distinct
    messages, so the run could have happened with every message instantaneous
    (``ordercheck.checker.monitors.crown.Synchronous`` decides it)."""
    return _sentence(h, Synchronous)


def eventual_delivery(h: History) -> str | None:
    """What is still undelivered: every message to a live destination must be delivered
    or dropped with a reason. ``None`` once nothing is outstanding."""
    return _sentence(h, EventualDelivery)


# Which appended events can change a verdict (Property.changed_by). fifo, causal and the
# total orders compare deliveries, and a message's causal past and destinations are
# fixed when it is sent, so only a delivery can break them (a drop only satisfies later
# deliveries; a new message's send adds a message nobody has delivered). integrity also
# reads drops. In global_lock's graph a new message's send, and a signal's two events,
# are new nodes with edges only into them (program order, the signal's own edge,
# "waiting" edges to the new send) and so cannot close a cycle; deliveries and drops add
# queue edges between old nodes.
_DELIVERIES = ("deliver",)
FIFO = Property.always(
    "fifo", fifo, over="history", doc=fifo.__doc__ or "", stable=True, changed_by=_DELIVERIES, monitor=Fifo,
)
CAUSAL = Property.always(
    "causal", causal, over="history", doc=causal.__doc__ or "", stable=True, changed_by=_DELIVERIES, monitor=CausalPast,
)
INTEGRITY = Property.always(
    "integrity", integrity, over="history", doc=integrity.__doc__ or "", stable=True, changed_by=("deliver", "drop"),
    monitor=Integrity,
)
TOTAL = Property.always(
    "total", total, over="history", doc=total.__doc__ or "", stable=True, changed_by=_DELIVERIES, monitor=Total,
)
TOTAL_GLOBAL = Property.always(
    "total_global", total_global, over="history", doc=total_global.__doc__ or "", stable=True, changed_by=_DELIVERIES,
    monitor=TotalGlobal,
)
TOTAL_PREFIX = Property.always(
    "total_prefix", total_prefix, over="history", doc=total_prefix.__doc__ or "", stable=True, changed_by=_DELIVERIES,
    monitor=TotalPrefix,
)
GLOBAL_LOCK = Property.always(
    "global_lock", global_lock, over="history", doc=global_lock.__doc__ or "", stable=True,
    changed_by=("deliver", "drop", "fail", "restart"), monitor=GlobalLock,
)
EVENTUAL_DELIVERY = Property.eventually(
    "eventual_delivery",
    eventual_delivery,
    over="history",
    doc="every message sent to a live destination is eventually delivered or dropped with a reason",
    monitor=EventualDelivery,
)
SYNCHRONOUS = Property.always(
    "synchronous", synchronous, over="history", doc=synchronous.__doc__ or "", monitor=Synchronous,
)

# The always-properties above but synchronous are ``stable``: a history only grows (logs
# are appended to, messages added), and each violation names events already in it, which
# stay. fifo and causal: the delivery made while a predecessor was unconsumed stays where
# it is; integrity: a repeat, a misaddressed delivery and a happened-before cycle stay
# (a delivery of a message never sent is the one exception in principle, but a spec's
# history introduces a message together with its send, so it cannot arise in a search);
# the total orders: two first deliveries in conflicting orders stay so; global_lock: an
# edge to a still-waiting message becomes a path through the deliveries that follow.
# Partial-order reduction relies on this (ordercheck.checker.engine.reduce).

LIBRARY: tuple[Property, ...] = (
    FIFO, CAUSAL, INTEGRITY, TOTAL, TOTAL_GLOBAL, TOTAL_PREFIX, GLOBAL_LOCK, EVENTUAL_DELIVERY, SYNCHRONOUS,
)
"""The shared ordering properties, in the order reports list them."""

__all__ = [
    "LIBRARY",
    "MONITORS",
    "causal",
    "eventual_delivery",
    "fifo",
    "first_violation",
    "global_lock",
    "integrity",
    "synchronous",
    "total",
    "total_global",
    "total_prefix",
]

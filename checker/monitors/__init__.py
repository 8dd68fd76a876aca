"""The ordering properties as monitors: each property defined once, decided event by event.

See :mod:`ordercheck.checker.monitors.base` for the contract. ``validate``, the model checker and
the implementation harness all decide properties through these monitors.
:data:`MONITORS` names every monitor class, in the order reports list the properties;
:func:`check_log` runs some of them over a whole log.
"""

from __future__ import annotations

from collections.abc import Sequence

from ordercheck.checker.monitors.base import Monitor
from ordercheck.checker.monitors.crown import Synchronous
from ordercheck.checker.monitors.delivery import EventualDelivery
from ordercheck.checker.monitors.integrity import Integrity
from ordercheck.checker.monitors.lock import GlobalLock
from ordercheck.checker.monitors.log import Log
from ordercheck.checker.monitors.order import Causal, Fifo, happened_before
from ordercheck.checker.monitors.total import Total, TotalGlobal, TotalPrefix
from ordercheck.checker.monitors.violation import Violation

MONITORS: dict[str, type[Monitor]] = {
    "fifo": Fifo,
    "causal": Causal,
    "integrity": Integrity,
    "total": Total,
    "total_global": TotalGlobal,
    "total_prefix": TotalPrefix,
    "global_lock": GlobalLock,
    "synchronous": Synchronous,
    "eventual_delivery": EventualDelivery,
}
"""Every property monitor, by name, in the order reports list them."""


def check(log: Log, name: str | type[Monitor]) -> Violation | None:
    """Property ``name`` (a name of :data:`MONITORS`, or a monitor class) on the whole
    of ``log``: every event stepped through a fresh monitor, then
    :meth:`~ordercheck.checker.monitors.base.Monitor.end`; the first violation, or ``None`` if the
    property holds."""
    monitor = (MONITORS[name] if isinstance(name, str) else name)(log)
    found = monitor.run(0, len(log.kind))
    return found if found is not None else monitor.end()


def check_log(log: Log, names: Sequence[str]) -> dict[str, Violation | None]:
    """Each property of ``names`` on ``log``: its first violation, or ``None`` if it holds."""
    return {name: check(log, name) for name in names}


__all__ = [
    "MONITORS", "Causal", "EventualDelivery", "Fifo", "GlobalLock", "Integrity", "Log", "Monitor", "Synchronous", "Total",
    "TotalGlobal", "TotalPrefix", "Violation", "check", "check_log", "happened_before",
]

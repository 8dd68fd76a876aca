"""The properties ``validate`` checks on logs, by name, and running them.

Each check reads a :class:`~checker.validate.log.Log` in time that grows near-linearly
with it and returns the first :class:`~checker.validate.violation.Violation` or
``None``. The definitions are the property library's (:mod:`specs.properties`); the
algorithms are written for logs of millions of events (see each module).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from checker.validate.causal_order import causal, fifo
from checker.validate.delivery import eventual_delivery
from checker.validate.global_lock import global_lock
from checker.validate.integrity import integrity
from checker.validate.log import Log
from checker.validate.synchronous import synchronous
from checker.validate.total_order import total, total_global, total_prefix
from checker.validate.violation import Violation

Check = Callable[[Log], Violation | None]

CHECKS: dict[str, Check] = {
    "fifo": fifo,
    "causal": causal,
    "integrity": integrity,
    "total": total,
    "total_global": total_global,
    "total_prefix": total_prefix,
    "global_lock": global_lock,
    "synchronous": synchronous,
    "eventual_delivery": eventual_delivery,
}
"""Every property ``validate`` knows, in the order reports list them."""

DEFAULT = ("fifo", "causal", "integrity", "total")
"""What ``validate`` checks when ``--properties`` is not given (and no model is)."""


class UnknownProperty(ValueError):
    """A property name ``validate`` does not know; the message lists the known ones."""


def parse_properties(text: str) -> list[str]:
    """Property names from ``fifo,causal,...`` (spaces allowed, repeats dropped, order
    kept). Raises :class:`UnknownProperty` for a name not in :data:`CHECKS`."""
    names: list[str] = []
    for part in text.split(","):
        name = part.strip()
        if not name:
            continue
        if name not in CHECKS:
            raise UnknownProperty(f"unknown property {name!r} (known: {', '.join(CHECKS)})")
        if name not in names:
            names.append(name)
    if not names:
        raise UnknownProperty(f"no property named (known: {', '.join(CHECKS)})")
    return names


def check_log(log: Log, props: Sequence[str]) -> dict[str, Violation | None]:
    """Each property of ``props`` on ``log``: its first violation, or ``None`` if it holds."""
    return {name: CHECKS[name](log) for name in props}

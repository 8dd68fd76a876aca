"""The properties ``validate`` checks on logs, by name, and running them.

Each check reads a :class:`~checker.validate.log.Log` in time that grows near-linearly
with it and returns the first :class:`~checker.validate.violation.Violation` or
``None``. The definitions are the property library's (:mod:`specs.properties`); the
algorithms are written for logs of millions of events (see each module).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from checker.monitors import MONITORS
from checker.monitors import check as _check
from checker.monitors.log import Log
from checker.monitors.violation import Violation

Check = Callable[[Log], Violation | None]


def _bound(name: str) -> Check:
    def run(log: Log) -> Violation | None:
        return _check(log, name)
    return run


CHECKS: dict[str, Check] = {name: _bound(name) for name in MONITORS}
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

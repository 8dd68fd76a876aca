"""The properties ``validate`` checks on logs, by name: the command line's side of them.

Each property is decided by its monitor (:mod:`ordercheck.checker.monitors`, the one definition of
each rule, shared with the model checker); :data:`CHECKS` gives each name a function
that runs the monitor over a whole :class:`~ordercheck.checker.monitors.log.Log` and returns the
first :class:`~ordercheck.checker.monitors.violation.Violation` or ``None``. This module adds what
the command line needs: the default set and the parsing of ``--properties``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ordercheck.checker.monitors import MONITORS, check, check_log
from ordercheck.checker.monitors.log import Log
from ordercheck.checker.monitors.violation import Violation

__all__ = ["CHECKS", "DEFAULT", "Check", "UnknownProperty", "check_log", "parse_properties"]

Check = Callable[[Log], Violation | None]

CHECKS: dict[str, Check] = {name: partial(check, name=name) for name in MONITORS}
"""Every property ``validate`` knows, in the order reports list them (that of
:data:`~ordercheck.checker.monitors.MONITORS`): name -> the check of a whole log."""

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

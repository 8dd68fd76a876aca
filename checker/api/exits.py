"""A run's exit code 0 is earned by printing its verdicts.

A command that checks something (``check``, ``simulate``, ``ablate``, ``matrix``,
``sweep``, ``prove``, ``validate``, ``tlc``) ends through :func:`exit_after_verdicts` once it has
printed its verdict table. The command group (:class:`ordercheck.checker.cli.app.OrdercheckGroup`)
turns any other way such a command ends with exit code 0 (a ``sys.exit(0)`` from a spec's
code that nothing else caught, a command that returned before its table) into exit code
5 with one line: a run that printed no verdicts never passes.
"""

from __future__ import annotations

import sys
from typing import NoReturn

_printed = False


def exit_after_verdicts(code: int) -> NoReturn:
    """Record that the verdicts were printed, then exit with ``code``."""
    global _printed
    _printed = True
    sys.exit(code)


def verdicts_printed() -> bool:
    """Whether :func:`exit_after_verdicts` was called since :func:`reset`."""
    return _printed


def reset() -> None:
    """Forget (the command group calls it as each command starts)."""
    global _printed
    _printed = False

"""The ``ordercheck`` command line, the top layer: it may import everything below it,
and nothing imports it.

:mod:`~checker.cli.app` holds the command group (:func:`main`, re-exported here: the
console script and ``from checker.cli import main`` use it) and adds each command
group's module: :mod:`~checker.cli.check`, :mod:`~checker.cli.reports`,
:mod:`~checker.cli.matrix`, :mod:`~checker.cli.prove`, :mod:`~checker.cli.sweep` and
:mod:`~checker.cli.tla`. What they share is in :mod:`~checker.cli.common`.
"""

from checker.cli.app import main

__all__ = ["main"]

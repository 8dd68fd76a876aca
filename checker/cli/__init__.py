"""The ``ordercheck`` command line, the top layer: it may import everything below it,
and nothing imports it.

:mod:`~ordercheck.checker.cli.app` holds the command group (:func:`main`, re-exported here: the
console script and ``from ordercheck.checker.cli import main`` use it) and adds each command
group's module: :mod:`~ordercheck.checker.cli.check`, :mod:`~ordercheck.checker.cli.reports`,
:mod:`~ordercheck.checker.cli.matrix`, :mod:`~ordercheck.checker.cli.prove`, :mod:`~ordercheck.checker.cli.sweep` and
:mod:`~ordercheck.checker.cli.tla`. What they share is in :mod:`~ordercheck.checker.cli.common`.
"""

from ordercheck.checker.cli.app import main

__all__ = ["main"]

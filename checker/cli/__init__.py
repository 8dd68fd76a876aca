"""The ``ordercheck`` command line: :mod:`~checker.cli.main` holds the command group and
adds one module's commands per command group. The top layer: it may import everything
below it, and nothing imports it."""

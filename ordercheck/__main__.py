"""``python -m ordercheck``: the ``ordercheck`` command."""

from ordercheck.checker.cli.app import main

if __name__ == "__main__":  # pragma: no cover
    main(prog_name="ordercheck")

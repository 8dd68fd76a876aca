"""``python -m ordercheck.checker.cli``: the ``ordercheck`` command."""

from ordercheck.checker.cli.app import main

if __name__ == "__main__":  # pragma: no cover
    main()

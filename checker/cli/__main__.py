"""``python -m checker.cli``: the ``ordercheck`` command."""

from checker.cli.app import main

if __name__ == "__main__":  # pragma: no cover
    main()

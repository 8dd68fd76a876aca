"""Run import-linter (``lint-imports``) on ordercheck as installed: one package, ``ordercheck``.

In the repository the sub-packages are the top-level folders ``checker/``, ``specs/``,
``reports/`` and ``tla/`` beside ``ordercheck/__init__.py`` (pyproject.toml maps them), but
import-linter reads a package from one folder. This lays that folder out in a temporary
directory (``ordercheck/`` with a link to each sub-package) and runs ``lint-imports`` there
with the repository's contract. Arguments are passed on (``--no-logo``, ``--verbose``).

Usage: python .ci/lint_imports.py [ROOT] [lint-imports options]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

SUBPACKAGES = ("checker", "specs", "reports", "tla")


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent
    if argv and not argv[0].startswith("-"):
        root = Path(argv.pop(0)).resolve()
    with tempfile.TemporaryDirectory(prefix="ordercheck-lint-") as tmp:
        package = Path(tmp) / "ordercheck"
        package.mkdir()
        (package / "__init__.py").symlink_to(root / "ordercheck" / "__init__.py")
        for name in SUBPACKAGES:
            (package / name).symlink_to(root / name, target_is_directory=True)
        env = dict(os.environ, PYTHONPATH=tmp)
        lint = Path(sys.executable).with_name("lint-imports")
        return subprocess.run([str(lint), str(root / "pyproject.toml"), *argv], cwd=tmp, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

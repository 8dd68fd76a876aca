"""The git commit a model file was checked at, for the results that describe it.

A result records the ``HEAD`` commit of the git checkout that holds its model file
(:class:`ordercheck.checker.api.result.Provenance`), so a report or a JUnit file says which
revision of the models it judged. :func:`git_commit` asks ``git rev-parse HEAD`` in the
model file's directory, with a timeout; no git, no checkout, a checkout without a commit
or a git that does not answer in time all give ``None``, never an error. The command
reads the repository's configuration and refs only: it runs no hook and no filter.
"""

from __future__ import annotations

import os
import re
import subprocess
from functools import lru_cache
from pathlib import Path

GIT_TIMEOUT = 5.0
"""Seconds ``git rev-parse`` may take before the commit is left out."""

_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def git_commit(model_path: str | Path) -> str | None:
    """The ``HEAD`` commit of the git checkout holding ``model_path``, or ``None``
    (see the module docstring). Asked once per directory in a process."""
    path = Path(model_path)
    if not path.is_file():
        return None
    return _commit_of(str(path.resolve().parent))


@lru_cache(maxsize=64)
def _commit_of(directory: str) -> str | None:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    env.pop("GIT_DIR", None)  # the checkout holding the model, not one the caller's environment names
    env.pop("GIT_WORK_TREE", None)
    try:
        done = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "HEAD"], cwd=directory, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):  # no git, no such directory, too slow
        return None
    sha = done.stdout.decode("ascii", "replace").strip()
    return sha if done.returncode == 0 and _SHA.fullmatch(sha) else None

"""Which exit codes each command can return, as docs/reference/exit-codes.md lists them.

:data:`COMMAND_EXITS` is the table the reference page's "Exit codes:" lines must match
(tests/test_faults_overwrite.py compares them, and every code the sources use must be in
the page's table). With the environment variable :data:`STRICT` set (the test suite
sets it), a command that ends with a code not in its row here ends instead with
:data:`UNDECLARED` and a line naming the command and the code, so that a code added to
the code but not to the table (and so not to the page) fails the tests that reach it.
"""

from __future__ import annotations

import os

from ordercheck.checker.api.result import (
    EXIT_BOUND,
    EXIT_ENGINE,
    EXIT_INPUT,
    EXIT_MISMATCH,
    EXIT_OK,
    EXIT_OS,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    EXIT_SPEC,
)

EVERY_COMMAND = frozenset({EXIT_OK, EXIT_INPUT, EXIT_BOUND, EXIT_OS, EXIT_SIGINT, EXIT_SIGTERM})
"""What any command can return: 0; 2 for a usage error or bad input; 3 when memory runs
out (:mod:`ordercheck.checker.cli.faults`); 6 for an operating-system error; 130 and 143 for SIGINT
and SIGTERM."""

_LOADS_SPEC = frozenset({EXIT_SPEC})  # a spec's code leaving at import or in a hook: exit 5

COMMAND_EXITS: dict[str, frozenset[int]] = {
    "check": EVERY_COMMAND | _LOADS_SPEC | {EXIT_MISMATCH, EXIT_ENGINE},
    "simulate": EVERY_COMMAND | _LOADS_SPEC | {EXIT_MISMATCH},
    "list": EVERY_COMMAND,
    "ablate": EVERY_COMMAND | _LOADS_SPEC | {EXIT_ENGINE},
    "matrix": EVERY_COMMAND | _LOADS_SPEC | {EXIT_MISMATCH},
    "prove": EVERY_COMMAND | _LOADS_SPEC | {EXIT_MISMATCH},
    "sweep": EVERY_COMMAND | _LOADS_SPEC | {EXIT_MISMATCH, EXIT_ENGINE},
    "report": EVERY_COMMAND,
    "graph": EVERY_COMMAND | _LOADS_SPEC,
    "export-tla": EVERY_COMMAND | _LOADS_SPEC,
    "tlc": EVERY_COMMAND | _LOADS_SPEC | {EXIT_MISMATCH},
    "validate": EVERY_COMMAND | _LOADS_SPEC | {EXIT_MISMATCH, EXIT_ENGINE},
    "generate-logs": EVERY_COMMAND | _LOADS_SPEC,
    "new": EVERY_COMMAND,
    "run": EVERY_COMMAND | _LOADS_SPEC | {EXIT_MISMATCH, EXIT_ENGINE},  # 5: --model's spec
}
"""Each command's exit codes (docs/reference/exit-codes.md, "By command")."""

STRICT = "ORDERCHECK_STRICT_EXIT_CODES"
"""The environment variable that turns on :func:`undeclared`'s check."""

UNDECLARED = 70
"""The exit code (``EX_SOFTWARE``) of a command that would have ended with a code its
row of :data:`COMMAND_EXITS` does not list, under :data:`STRICT` only."""


def undeclared(command: str | None, code: object) -> str | None:
    """Under :data:`STRICT`: the line to print when ``command`` ends with ``code`` and
    its row of :data:`COMMAND_EXITS` does not list it; ``None`` otherwise."""
    if not os.environ.get(STRICT) or command is None or command not in COMMAND_EXITS:
        return None
    number = 0 if code is None else code if isinstance(code, int) else 1  # sys.exit("text") exits 1
    if number in COMMAND_EXITS[command]:
        return None
    return (f"ordercheck: internal error: {command} ended with exit code {number}, which "
            "ordercheck.checker.cli.exitcodes.COMMAND_EXITS (and docs/reference/exit-codes.md) does not list for it")

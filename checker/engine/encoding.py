"""A compact byte encoding of states, for shipping them between processes and machines.

States are built from ints, bools, tuples and frozensets (see :mod:`ordercheck.checker.api.spec`).
:func:`encode` writes them with :mod:`marshal` format version 2: it has no
back-references (those came with version 3), so equal states always give equal bytes,
and it reads back in any CPython of the same minor version (marshal's format may change
between Python versions, so every process that exchanges encoded states must run the
same Python version; the Spark engine's executors do). A decoded state is equal to the
original and has the same fingerprint.
"""

from __future__ import annotations

import marshal

from ordercheck.checker.api.spec import State

VERSION = 2


def encode(state: State) -> bytes:
    """The bytes of ``state``; equal states give equal bytes."""
    return marshal.dumps(state, VERSION)


def decode(data: bytes) -> State:
    """The state :func:`encode` wrote into ``data``."""
    return marshal.loads(data)

"""Stopping a run on SIGINT or SIGTERM.

The command line installs :func:`handling_signals` around a command. A signal then
raises :class:`Interrupted` at once, so the search unwinds through its ``finally``
blocks: worker processes are stopped and joined, temporary files removed, and a
checkpoint written when one was asked for (:mod:`checker.engine.levels`). The command line
prints how to resume and exits with the conventional code, 128 plus the signal's
number (130 for SIGINT, 143 for SIGTERM).

Where an exception at an arbitrary point would leave a protocol half-done (a message
half-written to a worker's pipe), the search runs in :func:`deferred` mode: a signal
is only recorded there, and the search calls :func:`poll` where stopping is safe (after
each unit of work, a few milliseconds apart). A second signal in deferred mode raises
at once.

Worker processes call :func:`worker_signals`: they ignore SIGINT (a Ctrl-C reaches the
whole process group, and the parent decides) and die on SIGTERM. They exit on their
own when their parent dies, SIGKILL included, because they read from a pipe whose
only writer was the parent: the read ends with end-of-file (see :mod:`checker.engine.shards`).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """The run received SIGINT or SIGTERM (a :class:`BaseException`, like
    :class:`KeyboardInterrupt`, so that no ``except Exception`` swallows it). Never the
    spec's (:func:`checker.api.spec_errors.left_spec_code`)."""

    ordercheck_signal = True  # checker.api.spec_errors.ORDERCHECK_SIGNAL

    def __init__(self, signum: int, safe: bool = False) -> None:
        self.signum = int(signum)
        self.safe = safe  # raised by poll(), where the search's state is consistent
        self.checkpoint: str | None = None  # where the search saved its progress, if it did
        super().__init__(self.name)

    @property
    def name(self) -> str:
        """``SIGINT`` or ``SIGTERM``."""
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """128 plus the signal's number: 130 for SIGINT, 143 for SIGTERM."""
        return 128 + self.signum


_received: int | None = None
_deferring = 0


def _handler(signum: int, _frame: Any) -> None:
    global _received
    if _deferring and _received is None:
        _received = signum
        return
    _received = signum
    raise Interrupted(signum)


@contextmanager
def handling_signals() -> Iterator[None]:
    """Turn SIGINT and SIGTERM into :class:`Interrupted` inside the block (main thread
    only; elsewhere the block runs unchanged). The previous handlers come back after."""
    global _received, _deferring
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    _received, _deferring = None, 0
    for s in SIGNALS:
        signal.signal(s, _handler)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        _received, _deferring = None, 0


def installed() -> bool:
    """Whether :func:`handling_signals` is in force."""
    return signal.getsignal(signal.SIGTERM) is _handler


@contextmanager
def deferred() -> Iterator[None]:
    """Inside the block a first signal is only recorded, for :func:`poll` to raise."""
    defer()
    try:
        yield
    finally:
        undefer()
    poll()


def defer() -> None:
    """Enter deferred mode (see :func:`deferred`); pair with :func:`undefer`."""
    global _deferring
    _deferring += 1


def undefer() -> None:
    """Leave deferred mode."""
    global _deferring
    _deferring = max(_deferring - 1, 0)


def poll() -> None:
    """Raise :class:`Interrupted` if a signal arrived while deferred."""
    if _received is not None and installed():
        raise Interrupted(_received, safe=True)


def pending() -> int | None:
    """The signal received and not yet raised, if any."""
    return _received if installed() else None


def worker_signals() -> None:
    """In a forked worker: ignore SIGINT, die on SIGTERM (undo the parent's handlers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

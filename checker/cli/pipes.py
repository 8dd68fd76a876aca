"""A standard output whose reader may go away (``ordercheck check models/ | head``).

When the reader of a pipe exits, writing to it fails with ``EPIPE``. A run should not
end in a traceback for that, nor stop before writing the files it was asked for: the
printing stops quietly, the rest of the command goes on, and its exit code is the one
it would have had. :func:`quiet_closed_stdout` puts a :class:`QuietStdout` in place of
``sys.stdout`` for the duration of a command.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


class QuietStdout(io.TextIOWrapper):
    """A text stream over the real standard output that, once the pipe is closed,
    sends everything to ``/dev/null`` instead of raising :class:`BrokenPipeError`."""

    closed_pipe = False

    def _silence(self) -> None:
        self.closed_pipe = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.buffer.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except BrokenPipeError:
            self._silence()
            return len(text)

    def flush(self) -> None:
        try:
            super().flush()
        except BrokenPipeError:
            self._silence()
            try:
                super().flush()
            except OSError:
                pass


@contextmanager
def quiet_closed_stdout() -> Iterator[None]:
    """Inside the block, a closed standard output swallows what is printed."""
    real = sys.stdout
    try:
        buffer = real.buffer
        buffer.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        yield  # not a real file (a test's capture): nothing to guard
        return
    real.flush()
    guard = QuietStdout(buffer, encoding=real.encoding, errors=real.errors, line_buffering=real.line_buffering)
    sys.stdout = guard
    try:
        yield
    finally:
        try:
            guard.flush()
        finally:
            guard.detach()  # the buffer stays open, owned by the original stream
            sys.stdout = real

"""The lock a run holds on a model's checkpoint directory.

Two runs writing checkpoints into one directory would replace each other's ``CURRENT``
and remove each other's levels. So a run takes, before its search starts, an exclusive
``flock`` on the file ``LOCK`` inside the model's checkpoint directory
(:func:`ordercheck.checker.engine.checkpoints.checkpoint_dir`) and holds it until the check ends
(under the command line, until the command ends). The file records the holder's pid,
host and start time (one JSON line). A second run is refused with
:class:`CheckpointBusy` (exit code 2) naming the holder's pid and host.

The lock is the kernel's: it goes with the process that holds it, however that ends
(SIGKILL included), so a ``LOCK`` file left by a process that is gone is no lock and
the next run takes it over. On a file system that has no locks (``flock`` fails with
``ENOLCK``), a warning says so and the run goes on unlocked. The file itself stays (removing it could let two runs
lock two different files); it is emptied when its holder lets go. Within one process
the lock is re-entrant (the command line takes it for the whole command and the search
again for itself), and processes forked by the search (its workers) close their copy
at once, so that only the run's own process holds it.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ordercheck.checker.api.errors import InputError

LOCK = "LOCK"
"""The lock file's name inside a model's checkpoint directory."""


class CheckpointBusy(InputError):
    """Another run holds the checkpoint directory's lock."""


_HELD: dict[str, list[int]] = {}  # lock file (real path) -> [descriptor, count]


def _forget_in_child() -> None:
    for fd, _count in _HELD.values():
        try:
            os.close(fd)  # the parent's lock stays: it holds its own descriptor
        except OSError:
            pass
    _HELD.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def holder(path: Path) -> str:
    """Who holds the lock file ``path`` as it records it (``pid 123 on host h since
    2026-01-01T10:00:00Z``), or ``an unknown process`` when the record cannot be read."""
    try:
        with open(path, "rb") as fh:
            record = json.loads(fh.read(4096).decode("utf-8"))
        pid, host, since = int(record["pid"]), str(record["host"])[:100], str(record["since"])[:40]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return "an unknown process"
    return f"pid {pid} on host {host} since {since}"


def acquire(ckpt: str | os.PathLike[str]) -> None:
    """Take the lock of the checkpoint directory ``ckpt`` (which exists), or once more
    if this process holds it; :class:`CheckpointBusy` when another process holds it.
    An operating-system error names the lock file (exit code 6)."""
    path = Path(ckpt) / LOCK
    key = os.path.realpath(path)
    if key in _HELD:
        _HELD[key][1] += 1
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):  # a file system without locks
            print(f"ordercheck: warning: {ckpt}: the checkpoint directory cannot be locked ({exc.strerror}); "
                  "make sure no other run uses it at the same time", file=sys.stderr, flush=True)
            _HELD[key] = [os.open(path, os.O_RDONLY | os.O_CLOEXEC), 1]
            return
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise CheckpointBusy(
            str(ckpt), "--checkpoint",
            f"in use by another run ({holder(path)}); wait for it to end, or give this run another "
            "--checkpoint directory",
        ) from None
    try:
        record = {"pid": os.getpid(), "host": socket.gethostname(),
                  "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode("utf-8"), 0)
    except OSError as exc:
        os.close(fd)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    _HELD[key] = [fd, 1]


def release(ckpt: str | os.PathLike[str]) -> None:
    """Let go of the lock taken by :func:`acquire` (the last release of this process
    empties the file and closes it, which frees the lock)."""
    key = os.path.realpath(Path(ckpt) / LOCK)
    entry = _HELD.get(key)
    if entry is None:
        return
    entry[1] -= 1
    if entry[1] > 0:
        return
    del _HELD[key]
    try:
        os.ftruncate(entry[0], 0)
    except OSError:
        pass
    os.close(entry[0])


@contextmanager
def holding(ckpt: str | os.PathLike[str] | None) -> Iterator[None]:
    """Hold the lock of ``ckpt`` for the block (nothing when ``ckpt`` is ``None``)."""
    if ckpt is None:
        yield
        return
    acquire(ckpt)
    try:
        yield
    finally:
        release(ckpt)


def held(ckpt: str | os.PathLike[str]) -> bool:
    """Whether this process holds the lock of ``ckpt``."""
    return os.path.realpath(Path(ckpt) / LOCK) in _HELD

"""A level's frontier: chunks of states, in memory or spilled to a file.

The level engine (:mod:`ordercheck.checker.engine.levels`) appends the next level's states a chunk at a
time and reads the current level back in the same order. A :class:`Frontier` keeps its
first ``raw`` states as Python objects (cheap to read back), encodes the rest with
``pickle`` (which shares repeated sub-tuples within a chunk: about 80 bytes per bus1
state), and once it holds more than ``spill_after`` states moves every chunk to an
append-only file of length-prefixed records in ``spill_dir`` (TLC keeps its state
queue on disk in the same way). A spilled level costs no memory beyond the chunk being
written and the chunk being read; the file is read back sequentially, once per level,
and deleted when the level is done.

Those chunks and files are the run's own: written and read back by the same process,
the files in a directory private to it (:func:`own_spill_dir`, or ``--spill-dir``),
never read as input. A spilled file is created (``mkstemp``: mode 0600, a new name) and
then only ever reached through the descriptor that created it, for reading as for
writing: never reopened by its name, which another process could have replaced in a
shared ``--spill-dir``, so what is read back is what this process wrote. What a
checkpoint keeps of a frontier (:meth:`Frontier.dump`, :meth:`Frontier.load`) is
another format, one a crafted file cannot turn into code:
each chunk is JSON (:func:`encode_json`, :func:`decode_json`; see
docs/reference/checkpoints.md).
"""

from __future__ import annotations

import io
import json
import marshal
import os
import pickle
import shutil
import struct
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

_LENGTH = struct.Struct("<Q")


SPILL_PREFIX = "ordercheck-frontier-"


def temp_root() -> str:
    """The temporary directory, found without writing to it.

    The standard library finds it, the first time, by creating, writing and removing a
    randomly named file there; a process killed in between leaves that file behind. This
    takes the same candidates in the same order ($TMPDIR, $TEMP, $TMP, then the system's
    usual places) and keeps the first writable directory, falling back to the standard
    library's probe (and its error) only when none is."""
    if tempfile.tempdir is not None:
        return tempfile.tempdir
    candidates = [os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")]
    for d in [*candidates, "/tmp", "/var/tmp", "/usr/tmp"]:
        if d and os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK):
            return os.path.abspath(d)
    return tempfile.gettempdir()


def own_spill_dir(prefix: str = SPILL_PREFIX) -> str:
    """A new private directory (mode 0700) in the temporary directory for a search's
    spilled levels (or, with another ``prefix``, another run's scratch files), named
    after this process; those with the same prefix that a process no longer running
    left are removed first."""
    root = temp_root()
    for stale in Path(root).glob(f"{prefix}*-*"):
        pid = stale.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=root)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def encode(states: Sequence[Any]) -> bytes:
    """One chunk of states as bytes."""
    return pickle.dumps(list(states), pickle.HIGHEST_PROTOCOL)


def decode(chunk: bytes | list) -> list:
    """The states of a chunk, encoded or not."""
    return chunk if isinstance(chunk, list) else pickle.loads(chunk)


class UnwritableState(ValueError):
    """A state a checkpoint cannot hold (a value outside ints, bools, tuples and
    frozensets); the message names its type."""


def _json_default(value: Any) -> Any:
    if isinstance(value, frozenset):
        return {"set": list(value)}
    raise UnwritableState(f"a state holds a value of type {type(value).__name__}, which a checkpoint cannot hold "
                          "(states hold ints, bools, tuples and frozensets)")


_ENCODER = json.JSONEncoder(default=_json_default, separators=(",", ":"), check_circular=False, allow_nan=False)


def encode_json(states: Sequence[Any]) -> bytes:
    """A chunk of states as a checkpoint keeps it: the UTF-8 JSON of a list with one
    entry per state, where an int is a number, a bool ``true`` or ``false``, a tuple an
    array of its items and a frozenset ``{"set": [items]}``. :class:`UnwritableState`
    for a state holding an object JSON has no form for; a str, a float or ``None``
    (outside a state's vocabulary, :func:`ordercheck.checker.engine.fingerprint.check_vocabulary`)
    is written as JSON writes it, and :func:`decode_json` refuses it."""
    try:
        text = _ENCODER.encode(list(states))
    except (TypeError, ValueError) as exc:  # a NaN inside a state, an int too long to write
        if isinstance(exc, UnwritableState):
            raise
        raise UnwritableState(f"a state cannot be written ({exc})") from None
    return text.encode("utf-8")


def _state(value: Any) -> Any:
    kind = type(value)
    if kind is int or kind is bool:
        return value
    if kind is list:
        return tuple([v if type(v) is int else _state(v) for v in value])
    if kind is dict and len(value) == 1 and type(value.get("set")) is list:
        return frozenset([v if type(v) is int else _state(v) for v in value["set"]])
    found = _JSON_NAMES.get(kind, "an object other than a set")
    raise ValueError(f"holds {found}, not a state value (ints, bools, arrays and sets)")


_JSON_NAMES = {str: "a string", float: "a number with a fraction", type(None): "null"}


def decode_json(data: bytes) -> list:
    """The states of a chunk :func:`encode_json` wrote. Anything but that JSON (another
    value, a str, a float, an object other than ``{"set": [...]}``, nesting deeper than
    Python's recursion limit) raises :class:`ValueError` saying what was found; nothing
    in the data is ever executed or looked up by name."""
    try:
        chunk = json.loads(data.decode("utf-8"))
        if type(chunk) is not list:
            raise ValueError("is not a list of states")
        return [s if type(s) is int else _state(s) for s in chunk]
    except RecursionError:
        raise ValueError("is nested too deeply to be a state") from None
    except UnicodeDecodeError:
        raise ValueError("is not UTF-8 JSON") from None


def write_record(fh: BinaryIO, data: bytes) -> None:
    """Append one length-prefixed record."""
    fh.write(_LENGTH.pack(len(data)))
    fh.write(data)


def read_records(fh: BinaryIO) -> Iterator[bytes]:
    """The records of a file written by :func:`write_record`, in order; a length
    beyond the end of the file is refused (:class:`ValueError`) before anything is
    allocated for it."""
    try:
        size: int | None = os.fstat(fh.fileno()).st_size
    except (AttributeError, OSError, ValueError):  # not a file: no size to check against
        size = None
    while True:
        head = fh.read(_LENGTH.size)
        if not head:
            return
        if len(head) < _LENGTH.size:
            raise ValueError("truncated frontier record header")
        (n,) = _LENGTH.unpack(head)
        if size is not None and n > size - fh.tell():
            raise ValueError(f"truncated frontier record (it claims {n:,} bytes)")
        data = fh.read(n)
        if len(data) < n:
            raise ValueError("truncated frontier record")
        yield data


class _OwnFile(io.RawIOBase):
    """Reads the file behind descriptor ``fd`` from its start at an offset of its own
    (``pread``): reading leaves the writer's position alone and never goes through the
    file's name. Closing it leaves ``fd`` open."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._at = 0

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_SET:
            self._at = offset
        elif whence == os.SEEK_CUR:
            self._at += offset
        else:
            self._at = os.fstat(self._fd).st_size + offset
        return self._at

    def tell(self) -> int:
        return self._at

    def readinto(self, buffer: Any) -> int:
        data = os.pread(self._fd, len(buffer), self._at)
        buffer[: len(data)] = data
        self._at += len(data)
        return len(data)


class Frontier:
    """The states of one BFS level, as chunks in insertion order.

    ``raw``: how many states stay Python objects before chunks are encoded.
    ``spill_after``: past this many states every chunk lives in a file under
    ``spill_dir`` (``None``: never spill; ``0``: spill from the first chunk), named
    ``prefix`` and a unique ending. A subclass changes what a chunk is through
    :meth:`size` and :meth:`encode_chunk` (:class:`RankedFrontier`).
    """

    def __init__(self, spill_dir: str | Path | None = None, *, raw: int = 0, spill_after: int | None = None,
                 prefix: str = "frontier-") -> None:
        self.spill_dir = Path(spill_dir) if spill_dir is not None else None
        self.raw = raw
        self.spill_after = spill_after if self.spill_dir is not None else None
        self.prefix = prefix
        self.chunks: list[Any] = []
        self.states = 0
        self.sizes: list[int] = []  # states per chunk
        self.path: Path | None = None
        self._fh: BinaryIO | None = None

    def __len__(self) -> int:
        """Number of states."""
        return self.states

    def __bool__(self) -> bool:
        return self.states > 0

    @property
    def spilled(self) -> bool:
        return self.path is not None

    @staticmethod
    def size(chunk: Any) -> int:
        """The number of states in ``chunk`` (a list of states here)."""
        return len(chunk)

    @staticmethod
    def encode_chunk(chunk: Any) -> bytes:
        """``chunk`` as the bytes of one record (:func:`encode` here)."""
        return encode(chunk)

    def append(self, states: Any) -> None:
        """Add a chunk (a list of states, in order)."""
        n = self.size(states)
        if not n:
            return
        if self.path is None and self.spill_after is not None and self.states + n > self.spill_after:
            self._spill()
        if self._fh is not None:  # spilled: appended through the descriptor that made the file
            write_record(self._fh, self.encode_chunk(states))
        elif self.states < self.raw:
            self.chunks.append(states)
        else:
            self.chunks.append(self.encode_chunk(states))
        self.states += n
        self.sizes.append(n)

    def _spill(self) -> None:
        assert self.spill_dir is not None
        self.spill_dir.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=self.prefix, suffix=".bin", dir=self.spill_dir)
        self.path = Path(name)
        self._fh = os.fdopen(fd, "wb", buffering=1 << 20)
        for chunk in self.chunks:
            write_record(self._fh, chunk if isinstance(chunk, bytes) else self.encode_chunk(chunk))
        self.chunks = []

    def seal(self) -> Frontier:
        """Finish writing (flush the file); the frontier can then be read, and still be
        appended to."""
        if self._fh is not None:
            self._fh.flush()
        return self

    def __iter__(self) -> Iterator[Any]:
        """The chunks in order (as appended, or encoded bytes: :func:`decode` reads a
        list of states from either)."""
        if self._fh is None:
            yield from self.chunks
            return
        self.seal()
        with io.BufferedReader(_OwnFile(self._fh.fileno()), buffer_size=1 << 20) as fh:
            yield from read_records(fh)

    def discard(self) -> None:
        """Drop the states (and delete the file)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if self.path is not None:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
            self.path = None
        self.chunks = []
        self.states = 0
        self.sizes = []

    def dump(self, fh: BinaryIO) -> None:
        """Write every chunk as a record of :func:`encode_json` (a checkpoint's
        ``frontier.bin``); :class:`UnwritableState` for a state it cannot hold."""
        for chunk in self:
            write_record(fh, encode_json(decode(chunk)))

    @classmethod
    def load(cls, fh: BinaryIO, spill_dir: str | Path | None = None, *, spill_after: int | None = None) -> Frontier:
        """A frontier from records written by :meth:`dump` (:func:`decode_json`);
        :class:`ValueError` names the record that is not one."""
        out = cls(spill_dir, raw=0, spill_after=spill_after)
        try:
            for i, data in enumerate(read_records(fh)):
                try:
                    states = decode_json(data)
                except ValueError as exc:
                    raise ValueError(f"record {i + 1} {exc}") from None
                out.append(states)
        except BaseException:
            out.discard()
            raise
        return out.seal()


class RankedFrontier(Frontier):
    """A shard worker's share of a level (:mod:`ordercheck.checker.engine.shards`): chunks of
    states with their ranks in the level, ``(ranks, states)`` (an ``int64`` array and a
    list). An encoded chunk is the ``marshal`` (version 4) of the ranks' bytes and the
    states; :meth:`decode_chunk` reads either form back."""

    @staticmethod
    def size(chunk: tuple[np.ndarray, list]) -> int:
        """The number of states in ``chunk``."""
        return len(chunk[1])

    @staticmethod
    def encode_chunk(chunk: tuple[np.ndarray, list]) -> bytes:
        """``chunk`` as one record's bytes."""
        ranks, states = chunk
        return marshal.dumps((np.ascontiguousarray(ranks, dtype=np.int64).tobytes(), states), 4)

    @staticmethod
    def decode_chunk(chunk: tuple[np.ndarray, list] | bytes) -> tuple[np.ndarray, list]:
        """The ranks and the states of a chunk, encoded or not."""
        if not isinstance(chunk, bytes):
            return chunk
        ranks, states = marshal.loads(chunk)
        return np.frombuffer(ranks, dtype=np.int64), states


def remove_spilled(spill_dir: str | Path | None, prefix: str) -> None:
    """Delete the files in ``spill_dir`` whose names begin with ``prefix`` (those of
    frontiers that were not discarded: a worker that was killed, or exits at once)."""
    if spill_dir is None:
        return
    for path in Path(spill_dir).glob(f"{prefix}*"):
        try:
            path.unlink()
        except OSError:
            pass

"""A level's frontier: chunks of states, in memory or spilled to a file.

The level engine (:mod:`checker.engine.levels`) appends the next level's states a chunk at a
time and reads the current level back in the same order. A :class:`Frontier` keeps its
first ``raw`` states as Python objects (cheap to read back), encodes the rest with
``pickle`` (which shares repeated sub-tuples within a chunk: about 80 bytes per bus1
state), and once it holds more than ``spill_after`` states moves every chunk to an
append-only file of length-prefixed records in ``spill_dir`` (TLC keeps its state
queue on disk in the same way). A spilled level costs no memory beyond the chunk being
written and the chunk being read; the file is read back sequentially, once per level,
and deleted when the level is done.
"""

from __future__ import annotations

import os
import pickle
import shutil
import struct
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

_LENGTH = struct.Struct("<Q")


SPILL_PREFIX = "ordercheck-frontier-"


def own_spill_dir() -> str:
    """A new private directory in the temporary directory for a search's spilled levels,
    named after this process; those a killed process left are removed first."""
    tmp = Path(tempfile.gettempdir())
    for stale in tmp.glob(f"{SPILL_PREFIX}*-*"):
        pid = stale.name[len(SPILL_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"{SPILL_PREFIX}{os.getpid()}-")


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


def write_record(fh: BinaryIO, data: bytes) -> None:
    """Append one length-prefixed record."""
    fh.write(_LENGTH.pack(len(data)))
    fh.write(data)


def read_records(fh: BinaryIO) -> Iterator[bytes]:
    """The records of a file written by :func:`write_record`, in order."""
    while True:
        head = fh.read(_LENGTH.size)
        if not head:
            return
        if len(head) < _LENGTH.size:
            raise ValueError("truncated frontier record header")
        (n,) = _LENGTH.unpack(head)
        data = fh.read(n)
        if len(data) < n:
            raise ValueError("truncated frontier record")
        yield data


class Frontier:
    """The states of one BFS level, as chunks in insertion order.

    ``raw``: how many states stay Python objects before chunks are encoded.
    ``spill_after``: past this many states every chunk lives in a file under
    ``spill_dir`` (``None``: never spill; ``0``: spill from the first chunk).
    """

    def __init__(self, spill_dir: str | Path | None = None, *, raw: int = 0, spill_after: int | None = None) -> None:
        self.spill_dir = Path(spill_dir) if spill_dir is not None else None
        self.raw = raw
        self.spill_after = spill_after if self.spill_dir is not None else None
        self.chunks: list[bytes | list] = []
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

    def append(self, states: list) -> None:
        """Add a chunk (a list of states, in order)."""
        if not states:
            return
        if self.path is None and self.spill_after is not None and self.states + len(states) > self.spill_after:
            self._spill()
        if self._fh is not None:
            write_record(self._fh, encode(states))
        elif self.states < self.raw:
            self.chunks.append(states)
        else:
            self.chunks.append(encode(states))
        self.states += len(states)
        self.sizes.append(len(states))

    def _spill(self) -> None:
        assert self.spill_dir is not None
        self.spill_dir.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix="frontier-", suffix=".bin", dir=self.spill_dir)
        self.path = Path(name)
        self._fh = os.fdopen(fd, "wb", buffering=1 << 20)
        for chunk in self.chunks:
            write_record(self._fh, chunk if isinstance(chunk, bytes) else encode(chunk))
        self.chunks = []

    def seal(self) -> Frontier:
        """Finish writing (flush the file); the frontier can then be read."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        return self

    def __iter__(self) -> Iterator[bytes | list]:
        """The chunks in order (lists, or encoded bytes for :func:`decode`)."""
        if self.path is None:
            yield from self.chunks
            return
        self.seal()
        with open(self.path, "rb", buffering=1 << 20) as fh:
            yield from read_records(fh)

    def discard(self) -> None:
        """Drop the states (and delete the file)."""
        self.seal()
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
        """Write every chunk, encoded, as records (for checkpoints)."""
        for chunk in self:
            write_record(fh, chunk if isinstance(chunk, bytes) else encode(chunk))

    @classmethod
    def load(cls, fh: BinaryIO, spill_dir: str | Path | None = None, *, spill_after: int | None = None) -> Frontier:
        """A frontier from records written by :meth:`dump`."""
        out = cls(spill_dir, raw=0, spill_after=spill_after)
        for data in read_records(fh):
            states = pickle.loads(data)
            out.append(states)
        return out.seal()

"""Worker processes that expand a level's chunks, for the merging search of
:mod:`checker.engine.levels` when it is called with ``workers`` > 1. The engine's
entry point, :func:`checker.engine.bfs.search`, no longer does: every run with workers
has :mod:`checker.engine.shards`, the cycle proviso included.

Each worker has a pipe of its own; chunk ``i`` of a level goes to worker ``i mod N``
and its expansion is read back from that worker in turn, so the results arrive in the
level's order with no lock shared between processes. (A ``multiprocessing.Pool``
shares one locked queue each way: a worker killed while it held a lock stops every
other worker, and the pool's own shutdown, for ever.) A worker that ends in the
middle of the search closes its pipe, and the next read from it is a
:class:`~checker.engine.shards.WorkerLost`; a worker whose main process ended (SIGKILL
included) reads end of file and exits at once.

Each worker drains its pipe into a queue on a thread of its own, so the main process
never waits to hand over a chunk while the worker waits to hand back a result.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from checker.engine.interrupts import worker_signals
from checker.engine.shards import WorkerLost

IN_FLIGHT = 2
"""Chunks handed to each worker ahead of the one being read back."""


def _drain(conn: Any, inbox: queue.SimpleQueue) -> None:
    """A worker's thread: every chunk into ``inbox``; end of file (the main process
    closed its end, or ended) exits the worker at once."""
    while True:
        try:
            item = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        inbox.put(item)


def _serve(me: int, ends: list[tuple[Any, Any]], setup: Callable[[], Callable[[Any], Any]]) -> None:
    """A worker's life: keep its own end, answer each chunk with its expansion (or the
    exception that expanding it raised)."""
    worker_signals()
    conn = ends[me][1]
    for w, (parent_end, child_end) in enumerate(ends):
        parent_end.close()
        if w != me:
            child_end.close()
    inbox: queue.SimpleQueue = queue.SimpleQueue()
    threading.Thread(target=_drain, args=(conn, inbox), daemon=True).start()
    work = setup()
    while True:
        chunk = inbox.get()
        try:
            reply: tuple = ("ok", work(chunk))
        except BaseException as exc:  # handed back and raised by the main process
            try:
                pickle.loads(pickle.dumps(exc))
            except Exception:
                exc = RuntimeError(f"worker failed: {exc!r}")
            reply = ("error", exc)
        try:
            conn.send(reply)
        except OSError:
            os._exit(0)


class ChunkPool:
    """``workers`` forked processes, each running ``setup()`` once and then the function
    it returns on every chunk handed to it (see the module docstring)."""

    def __init__(self, workers: int, setup: Callable[[], Callable[[Any], Any]]) -> None:
        ctx = multiprocessing.get_context("fork")
        ends = [ctx.Pipe() for _ in range(workers)]
        self.procs: list[Any] = []
        self.conns = [parent_end for parent_end, _child in ends]
        self.sent = self.received = 0
        try:
            for me in range(workers):
                proc = ctx.Process(target=_serve, args=(me, ends, setup), daemon=True)
                proc.start()
                self.procs.append(proc)
        except OSError as exc:  # e.g. too many processes: stop those already started
            self.close()
            raise OSError(exc.errno, f"{exc.strerror} (starting {workers} worker processes)") from None
        finally:
            for _parent, child_end in ends:
                child_end.close()

    def pids(self) -> list[int]:
        """The worker processes' ids."""
        return [p.pid for p in self.procs if p.pid is not None]

    def map(self, chunks: Iterable[Any]) -> Iterator[Any]:
        """Each chunk's result, in the order of ``chunks``; a worker's exception is raised
        here, and a worker that ended is a :class:`~checker.engine.shards.WorkerLost`.
        Results of an earlier map that was not read to its end are dropped first."""
        while self.received < self.sent:
            self._receive()
        workers = len(self.conns)
        source = iter(chunks)
        exhausted = False
        while True:
            while not exhausted and self.sent < self.received + IN_FLIGHT * workers:
                try:
                    chunk = next(source)
                except StopIteration:
                    exhausted = True
                    break
                self._send(self.sent % workers, chunk)
                self.sent += 1
            if self.received == self.sent:
                return
            yield self._receive()

    def _receive(self) -> Any:
        w = self.received % len(self.conns)
        try:
            kind, value = self.conns[w].recv()
        except (EOFError, OSError):
            raise WorkerLost(w, self.procs[w]) from None
        self.received += 1
        if kind == "error":
            raise value
        return value

    def _send(self, w: int, chunk: Any) -> None:
        try:
            self.conns[w].send(chunk)
        except OSError:  # the worker is gone
            raise WorkerLost(w, self.procs[w]) from None

    def close(self) -> None:
        """Stop every worker: closing its pipe ends it; one that does not end is killed."""
        for conn in self.conns:
            conn.close()
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.exitcode is None:
                proc.kill()
                proc.join()

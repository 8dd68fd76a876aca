"""Parallel workers that keep their share of the frontier ("lanes").

With ``--workers N`` the level engine (:mod:`checker.engine.levels`) starts N worker
processes. Each holds some *segments* of the current level, as Python objects in its
own memory, and does everything that needs a state: it expands its segments in units of
at most ``chunk`` states, fingerprints the successors, checks the open properties on
them (with their parent, exactly as the merging process would) and on terminal
states, and keeps the successors until told which of them are new. The merging
process sees only fingerprints, action positions, successor counts and findings: it
inserts the fingerprints into the store in the order of the level, and answers each
unit with the positions of its new successors. The worker keeps those as a segment of
the next level, or, when its share of the next level is ahead of another worker's by a
chunk or more, sends them over to be adopted there. A state therefore crosses a process
boundary only when the shares are rebalanced.

The level's order is the order of its segments, which is the order in which the units
that produced them were merged; each worker expands its segments in that order and the
merging process consumes units in that order, so numbering, counts and
counterexamples are those of a single process. A thread of the merging process drains
each worker's pipe, so a worker never waits for the merge; the merge writes to a worker
directly, and a worker reads its messages after each unit.

A worker holds its segments as objects up to ``raw_limit`` states and encodes the rest
with ``marshal`` (version 4: quicker both ways than ``pickle`` for these tuples). Its
share of a level is not spilled to disk: a run that needs its frontier on disk runs
with one worker, or with ``--spill-dir`` (see :mod:`checker.engine.levels`).
"""

from __future__ import annotations

import marshal
import multiprocessing
import pickle
import queue
import signal
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from checker.api.errors import EngineError
from checker.api.spec import Property
from checker.engine.evaluate import Evaluator
from checker.engine.fingerprint import check_vocabulary
from checker.engine.frontier import encode, write_record
from checker.engine.interrupts import worker_signals
from checker.engine.memory import current_rss, peak_rss, reset_peak
from checker.engine.reduce import Expander

VOCABULARY_CHECKS = 1000
"""How many successors each worker checks for states outside the vocabulary."""


class _Stop(Exception):
    """The merging process is done with this worker."""


class WorkerLost(EngineError):
    """A worker process ended in the middle of a search (killed, by a person or the
    system's out-of-memory killer, or crashed): the engine failed (exit code 4), and
    the search is not repeated to look for a spec's exception (:mod:`checker.engine.diagnose`)."""

    def __init__(self, w: int, proc: Any) -> None:
        proc.join(timeout=1)  # its pipe closed as it died: its status follows
        code = proc.exitcode
        if code is not None and code < 0:
            how = f"killed by {signal.Signals(-code).name}"
        else:
            how = "its pipe closed" if code is None else f"exit status {code}"
        super().__init__("local", f"worker process {w} ended in the middle of the search ({how}); run again "
                         "(with more memory, or fewer --workers, if the system's out-of-memory killer ended it)")


def _lane(conn: Any, expander: Expander, props: Sequence[Property], chunk: int, raw_limit: int,
          inherited: Sequence[Any] = (), keep_level: bool = False) -> None:
    """A worker's loop (see the module docstring): serve messages until ``stop``.

    ``inherited``: the merging process's ends of the pipes, which the fork copied here;
    closed at once, so that this worker's reads end (and the worker exits) when the
    merging process dies, however it dies. ``keep_level``: keep the current level's
    segments until the level ends, so that an interrupted level can still be dumped
    for a checkpoint (:meth:`Lanes.abort`)."""
    worker_signals()
    for end in inherited:
        end.close()
    try:
        _Lane(conn, expander, props, chunk, raw_limit, keep_level).run()
    except (_Stop, EOFError, BrokenPipeError, KeyboardInterrupt):
        pass
    except BaseException as exc:  # reported to the merging process, which raises it
        try:
            pickle.loads(pickle.dumps(exc))  # it must come back as itself
        except Exception:
            exc = RuntimeError(f"worker failed: {exc!r}")
        conn.send(("error", exc))


class _Lane:
    def __init__(self, conn: Any, expander: Expander, props: Sequence[Property], chunk: int, raw_limit: int,
                 keep_level: bool = False) -> None:
        self.conn = conn
        self.keep_level = keep_level
        self.current: dict[int, list | bytes] = {}  # the level's expanded segments (keep_level)
        self.expander = expander
        self.evaluator = Evaluator(expander.spec, props)
        self.history_key = expander.spec.history_key if self.evaluator.uses_history else None
        self.chunk = chunk
        self.raw_limit = raw_limit
        self.raw = 0  # states held as objects
        self.segments: dict[int, list | bytes] = {}
        self.pending: dict[int, list] = {}  # unit -> its successors, until the merge answers
        self.units = 0
        self.inbox: deque = deque()  # messages read while expanding, for the main loop
        self.vocabulary_left = VOCABULARY_CHECKS
        reset_peak()
        self.rss = current_rss()  # at the start, shared pages with the merging process included

    def run(self) -> None:
        while True:
            msg = self.inbox.popleft() if self.inbox else self.conn.recv()
            kind = msg[0]
            if kind == "stop":
                raise _Stop
            if kind == "level":
                self.level(msg[1], msg[2])
            elif kind == "abort":
                self.abort()
            else:
                self.control(msg)

    def abort(self) -> None:
        """The merging process gave up the level: drop what awaits its answer."""
        self.pending.clear()
        self.conn.send(("aborted",))

    def control(self, msg: tuple) -> None:
        kind = msg[0]
        if kind == "keep" or kind == "ship":
            _kind, unit, positions, seg = msg
            succ = self.pending.pop(unit)
            if seg is None:
                return
            states = [succ[i] for i in np.frombuffer(positions, dtype=np.int32).tolist()]
            if kind == "ship":
                self.conn.send(("shipped", seg, marshal.dumps(states, 4)))
            else:
                self.store(seg, states)
        elif kind == "adopt":
            _kind, seg, blob = msg
            self.segments[seg] = blob
        elif kind == "dump":
            self.conn.send(("dumped", [self.encoded(seg) for seg in msg[1]]))
        elif kind == "peak":
            self.conn.send(("peak", max(peak_rss() - self.rss, 0)))
        else:
            raise ValueError(f"unknown message {kind!r}")

    def store(self, seg: int, states: list) -> None:
        if self.raw + len(states) > self.raw_limit:
            self.segments[seg] = marshal.dumps(states, 4)
        else:
            self.segments[seg] = states
            self.raw += len(states)

    def encoded(self, seg: int) -> bytes:
        states = self.segments[seg] if seg in self.segments else self.current[seg]
        return states if isinstance(states, bytes) else marshal.dumps(states, 4)

    def level(self, segs: Sequence[int], open_names: frozenset[str]) -> None:
        evaluator = self.evaluator
        for name in list(evaluator.open):
            if name not in open_names:
                evaluator.decide(name)
        self.current = {}
        for seg in segs:
            states = self.segments.pop(seg)
            if self.keep_level:
                self.current[seg] = states
            if isinstance(states, bytes):
                states = marshal.loads(states)
            else:
                self.raw -= len(states)
            for i in range(0, len(states), self.chunk):
                unit = self.units
                self.units += 1
                succ, result = self.expand(states[i : i + self.chunk])
                self.pending[unit] = succ
                self.conn.send(("unit", unit, *result))
                while self.conn.poll():
                    msg = self.conn.recv()
                    if msg[0] == "stop":
                        raise _Stop  # the search ended early
                    if msg[0] == "abort":
                        self.abort()
                        return
                    if self.inbox or msg[0] == "level":
                        self.inbox.append(msg)  # for after this level, in order
                    else:
                        self.control(msg)

    def expand(self, states: list) -> tuple[list, tuple]:
        """Expand ``states``: successors, and what the merging process needs of them."""
        expander = self.expander
        evaluator = self.evaluator
        history_key = self.history_key
        _owner, pos, succ, counts, _reduced = expander.expand(states)
        fps = expander.fingerprints(succ)
        problem = None
        if self.vocabulary_left > 0:
            for t in succ[: self.vocabulary_left]:
                problem = check_vocabulary(t)
                if problem:
                    break
            self.vocabulary_left -= len(succ)
        on_succ: dict[int, list[tuple[str, str]]] = {}
        on_terminal: dict[int, list[tuple[str, str]]] = {}
        checks = bool(evaluator.state_checks or evaluator.history_checks)
        terminal = bool(evaluator.terminal_state or evaluator.terminal_history)
        offset = 0
        for k, n in enumerate(counts):
            s = states[k]
            if n == 0:
                if terminal:
                    found = evaluator.on_terminal(s, history_key(s) if history_key else None)
                    if found:
                        on_terminal[k] = found
                continue
            if checks:
                parent_key = history_key(s) if history_key else None
                for j in range(offset, offset + n):
                    t = succ[j]
                    found = evaluator.on_state(t, history_key(t) if history_key else None, parent_key)
                    if found:
                        on_succ[j] = found
            offset += n
        result = (
            np.asarray(pos, dtype=np.int64),
            np.asarray(counts, dtype=np.int64),
            fps,
            on_succ,
            on_terminal,
            problem,
            expander.take_fired(),
        )
        return succ, result


def _receiver(conn: Any, inbox: queue.SimpleQueue) -> None:
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            inbox.put(("eof",))
            return
        except MemoryError as exc:  # stops the search as its memory bound (checker.engine.budget)
            inbox.put(("error", exc))
            return
        except Exception as exc:  # a message that cannot be read ends the search
            inbox.put(("error", RuntimeError(f"a worker's message could not be read: {exc!r}")))
            return
        inbox.put(msg)


class Lanes:
    """The merging process's handle on its worker processes."""

    def __init__(self, workers: int, expander: Expander, props: Sequence[Property], chunk: int, raw_limit: int,
                 keep_level: bool = False) -> None:
        ctx = multiprocessing.get_context("fork")
        self.chunk = chunk
        self.conns: list[Any] = []
        self.procs: list[Any] = []
        self.threads: list[threading.Thread] = []
        self.seg = 0  # the next segment number
        self.shipping: dict[int, int] = {}  # segment -> worker to adopt it, awaiting its owner's reply
        self.owed = [0] * workers  # "shipped" replies each worker still owes
        self.inboxes: list[queue.SimpleQueue] = []
        try:
            for _ in range(workers):
                parent, child = ctx.Pipe()
                self.conns.append(parent)
                proc = ctx.Process(target=_lane, args=(child, expander, props, chunk, raw_limit, list(self.conns),
                                                       keep_level), daemon=True)
                proc.start()
                child.close()
                self.procs.append(proc)
        except OSError as exc:  # e.g. too many open files: stop the workers already started
            self.close()
            raise OSError(exc.errno, f"{exc.strerror} (starting {workers} worker processes)") from None
        # Threads start once every process is forked (a fork copies no thread). A
        # receiver per worker drains its pipe, so a worker never waits for this process
        # to read (it may run ahead of the merge by up to a level). This process writes
        # to a worker directly: a full pipe holds it up only until the worker, which
        # never waits on this process, reads its messages after its current unit.
        for parent in self.conns:
            inbox: queue.SimpleQueue = queue.SimpleQueue()
            thread = threading.Thread(target=_receiver, args=(parent, inbox), daemon=True)
            thread.start()
            self.threads.append(thread)
            self.inboxes.append(inbox)

    @property
    def workers(self) -> int:
        return len(self.conns)

    def send(self, w: int, msg: tuple) -> None:
        try:
            self.conns[w].send(msg)
        except (BrokenPipeError, ConnectionResetError):  # the worker is gone
            raise WorkerLost(w, self.procs[w]) from None

    def _read(self, w: int) -> tuple | None:
        """Worker ``w``'s next message; ``None`` for a shipped segment (handed on)."""
        msg = self.inboxes[w].get()
        kind = msg[0]
        if kind == "eof":
            raise WorkerLost(w, self.procs[w])
        if kind == "shipped":
            _kind, seg, blob = msg
            self.owed[w] -= 1
            self.send(self.shipping.pop(seg), ("adopt", seg, blob))
            return None
        if kind == "error":
            raise msg[1]
        return msg

    def recv(self, w: int) -> tuple:
        """The next unit (or dump) from worker ``w``, forwarding shipped segments."""
        while True:
            msg = self._read(w)
            if msg is not None:
                return msg

    def settle(self) -> None:
        """Wait until every shipped segment has been handed to its new worker."""
        for w in range(self.workers):
            while self.owed[w]:
                msg = self._read(w)
                if msg is not None:
                    raise RuntimeError(f"worker process {w} sent {msg[0]!r} while segments were being moved")

    def run(self, level: LaneLevel, open_names: frozenset[str]) -> Iterator[tuple]:
        """Expand ``level``: its units' results in the level's order, as
        ``(worker, unit, positions, counts, fingerprints, on_succ, on_terminal, problem, fired)``."""
        for w in range(self.workers):
            self.send(w, ("level", [seg for seg, owner, _n in level.order if owner == w], open_names))
        for _seg, w, n in level.order:
            for _part in range(-(-n // self.chunk)):
                msg = self.recv(w)
                if msg[0] != "unit":
                    raise RuntimeError(f"worker process {w} sent {msg[0]!r} instead of a unit")
                yield (w, *msg[1:])

    def pids(self) -> list[int]:
        """The worker processes' ids."""
        return [p.pid for p in self.procs if p.pid is not None]

    def abort(self) -> None:
        """Give up the level being expanded: every worker drops its unanswered units,
        and the replies in flight are read and dropped, so that the level's segments can
        still be dumped (the workers keep them with ``keep_level``)."""
        for w in range(self.workers):
            self.send(w, ("abort",))
        for w in range(self.workers):
            while True:
                msg = self.inboxes[w].get()
                if msg[0] == "aborted":
                    break
                if msg[0] == "eof":
                    raise WorkerLost(w, self.procs[w])
                if msg[0] == "error":
                    raise msg[1]
        self.shipping.clear()
        self.owed = [0] * self.workers

    def peak_bytes(self) -> int:
        """The workers' peak resident memory beyond what they had when they started."""
        total = 0
        for w in range(self.workers):
            self.send(w, ("peak",))
            while True:
                msg = self.recv(w)
                if msg[0] == "peak":
                    total += msg[1]
                    break
        return total

    def close(self) -> None:
        for w in range(len(self.procs)):
            try:
                self.send(w, ("stop",))
            except (OSError, WorkerLost):  # the worker is gone already
                pass
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
                proc.join()
        for thread in self.threads:
            thread.join(timeout=5)
        for conn in self.conns:
            conn.close()


class LaneLevel:
    """A level held by the workers: its segments in order, ``(segment, worker, states)``.

    Duck-typed as a :class:`~checker.engine.frontier.Frontier` for the level engine."""

    def __init__(self, lanes: Lanes) -> None:
        self.lanes = lanes
        self.order: list[tuple[int, int, int]] = []
        self.share = [0] * lanes.workers
        self.states = 0

    def __len__(self) -> int:
        return self.states

    def __bool__(self) -> bool:
        return self.states > 0

    def _place(self, owner: int | None, n: int) -> tuple[int, int]:
        lanes = self.lanes
        seg = lanes.seg
        lanes.seg += 1
        least = min(range(lanes.workers), key=self.share.__getitem__)
        dest = owner if owner is not None and self.share[owner] - self.share[least] < lanes.chunk else least
        self.order.append((seg, dest, n))
        self.share[dest] += n
        self.states += n
        return seg, dest

    def append(self, states: list) -> None:
        """Add states held by this process (initial states, a resumed checkpoint)."""
        if states:
            seg, dest = self._place(None, len(states))
            self.lanes.send(dest, ("adopt", seg, marshal.dumps(list(states), 4)))

    def keep(self, w: int, unit: int, taken: np.ndarray) -> None:
        """Answer worker ``w``'s ``unit``: its successors at positions ``taken`` are new."""
        lanes = self.lanes
        if not len(taken):
            lanes.send(w, ("keep", unit, b"", None))
            return
        seg, dest = self._place(w, len(taken))
        positions = taken.astype(np.int32).tobytes()
        if dest == w:
            lanes.send(w, ("keep", unit, positions, seg))
        else:
            lanes.shipping[seg] = dest
            lanes.owed[w] += 1
            lanes.send(w, ("ship", unit, positions, seg))

    def seal(self) -> LaneLevel:
        self.lanes.settle()
        return self

    def discard(self) -> None:
        self.order = []
        self.share = [0] * self.lanes.workers
        self.states = 0

    def dump(self, fh: Any) -> None:
        """Write the level as :class:`~checker.engine.frontier.Frontier` records (checkpoints)."""
        lanes = self.lanes
        lanes.settle()
        blobs: dict[int, bytes] = {}
        for w in range(lanes.workers):
            mine = [seg for seg, owner, _n in self.order if owner == w]
            lanes.send(w, ("dump", mine))
            msg = lanes.recv(w)
            if msg[0] != "dumped":
                raise RuntimeError(f"worker process {w} sent {msg[0]!r} instead of its segments")
            blobs.update(zip(mine, msg[1]))
        for seg, _w, _n in self.order:
            write_record(fh, encode(marshal.loads(blobs[seg])))

"""Worker processes that each own a shard of the visited set (``--workers N``).

With N workers every 64-bit fingerprint has an owner, :func:`owner_of` (its high bits
scaled to N). Worker ``w`` keeps, for the states it owns, their fingerprints (a
:class:`~ordercheck.checker.engine.table.FingerprintTable`) and their parent links (state number,
parent number, action position); and it holds a share of the level being searched, as
states. A level runs in every worker at once:

1. *expand*: a worker expands its share of the level, checks its terminal states,
   keeps the successors, and gives each an *order key*: its parent's rank in the level
   (its position in the level's order) times 2**16 plus its position among the
   parent's successors;
2. *exchange*: each successor's fingerprint, key and action position goes to the
   fingerprint's owner (numpy arrays gathered into batches, never states; through a
   pipe per pair of workers, each drained by a thread of its reader, so no send waits
   on a busy worker);
3. *dedup*: an owner drops the fingerprints already in its table (visited at an
   earlier level) and, among equal ones of this level, keeps the smallest key: the
   successor a single process meets first;
4. *check*: each owner tells every worker which of the successors it generated are new
   (:class:`~ordercheck.checker.engine.messages.Won`: their keys, worker to worker, once
   per level), and each worker checks the open properties on those, beside their
   parents (:meth:`_Shard.check`). It then reports the level to the main process: the
   parents' successor counts, the findings by key and its new states' keys, sorted.

With partial-order reduction's cycle proviso, *rounds* (:meth:`_Shard.rounds`) come
between the exchange and the report: a successor carries a flag saying whether its
parent's expansion was reduced, owners and generators name the reduced parents that
must be expanded fully (a successor visited before, or one that a parent of smaller
rank, or the parent itself, generated too), the main process names the new ones to
all, their holders expand them fully and send the successors they add, and so on
until a round names none. A fully expanded parent's successors are keyed by their
positions in the full expansion.

The main process (:mod:`ordercheck.checker.engine.sharded`) sees keys, per-parent successor
counts and findings, never a state or a fingerprint. From the sorted keys of all
workers it numbers the next level (a new state's rank is its key's position among
them), decides where the level ends (a bound, every property decided) and tells each
worker how many of the level's new states are kept, with the ranks of those it owns
and of those it generated (*commit*): owners store theirs with numbers and parent
links, generators hold theirs as their share of the next level, and a worker holding
more than its share ships the excess (the one time states cross between workers). The
main process does not wait for the commit: it sends the next level at once, a worker
commits before it starts it (a command that comes while the commit waits for shipped
states is held until the commit is done), and the commit's answer
(:class:`~ordercheck.checker.engine.messages.Committed`) is read before the worker's
next one. One round trip a level, then.

For a spec that declares ``acyclic`` (where the search notices edges that can close a
cycle), a worker also keeps an edge log (:class:`~ordercheck.checker.engine.edges.EdgeLog`,
numbered): at the commit, the states it stores, with their numbers, and the edges it
took in the level (each successor it generated, and those a full expansion of the
proviso added, as the parent's number and the successor's fingerprint, at the depth
bound too). It reports the bytes the log will grow by with the level; the main process
tells it at the commit whether to log the level or to drop the log (its memory budget
refused the growth), and asks for the log (:class:`~ordercheck.checker.engine.messages.Log`)
after the search (and for a checkpoint). Shards restored from a checkpoint take its
log, if it carries one (:class:`~ordercheck.checker.engine.messages.Logs`), and keep none
otherwise.

A share is a :class:`~ordercheck.checker.engine.frontier.RankedFrontier`: chunks of states with
their ranks, as objects up to :data:`RAW_STATES`, then encoded, and past the threshold
of :class:`Spill` in a file of the worker's own in the spill directory (read back chunk
by chunk when the level is expanded). The level's share is kept until the level
commits (an abort gives it back, a checkpoint gathers it) and its file is deleted then;
a worker deletes its files when it ends, and the main process those of a worker that
was killed. The successors of the level being searched stay in memory.
Numbering, counts, verdicts and counterexamples are therefore those of one process,
for any number of workers.

A worker exits when its pipe from the main process reaches end of file: the main
process is gone, however it ended (every worker closes the pipe ends not its own, so
nothing else holds that pipe open).

Every wait on a worker ends. A worker sends a heartbeat
(:class:`~ordercheck.checker.engine.messages.Beat`) from a thread of its own every few seconds; a
thread of the main process kills one silent for :data:`HEARTBEAT_SECONDS`
(``ORDERCHECK_HEARTBEAT_TIMEOUT``), so that a reply awaited, a send into its full pipe or
the stop ends with :class:`WorkerLost` naming it. An abort at a stop waits the stop's
grace (:func:`~ordercheck.checker.engine.interrupts.stop_grace`) and kills the workers that have
not answered (stuck in a step of the spec's code); one whose message the main process
could not read is not waited for at all.
"""

from __future__ import annotations

import fcntl
import marshal
import multiprocessing
import os
import pickle
import queue
import secrets
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any, TypeVar

import numpy as np

from ordercheck.checker.api.errors import EngineError
from ordercheck.checker.api.spec import Property
from ordercheck.checker.engine import rules
from ordercheck.checker.engine.edges import EdgeLog
from ordercheck.checker.engine.evaluate import Evaluator
from ordercheck.checker.engine.fingerprint import check_vocabulary
from ordercheck.checker.engine.frontier import RankedFrontier, remove_spilled
from ordercheck.checker.engine.interrupts import DEFAULT_GRACE, seconds_from_env, stop_grace, worker_signals
from ordercheck.checker.engine.memory import current_rss, peak_rss, reset_peak
from ordercheck.checker.engine.messages import (
    Abort,
    Aborted,
    Adopt,
    Batch,
    Beat,
    Commit,
    Committed,
    Done,
    Dump,
    Dumped,
    Ended,
    Failed,
    Keep,
    Level,
    LevelReport,
    Links,
    Log,
    Logged,
    Logs,
    More,
    Paths,
    Peak,
    PeakReport,
    Round,
    Settle,
    Ship,
    Stop,
    Won,
)
from ordercheck.checker.engine.reduce import Expander
from ordercheck.checker.engine.rules import KEY_BITS, PHASES, VOCABULARY_CHECKS
from ordercheck.checker.engine.table import FingerprintTable, GrowArray

R = TypeVar("R")

ANSWER_SECONDS = 60.0
"""How long the main process waits for a worker's answer to a command that needs no
search (an abort, parent links, its peak memory) before it kills the worker and ends
the run with :class:`WorkerLost`."""

STORE_SECONDS = 600.0
"""The same for the answers whose work grows with the shard (a commit, a checkpoint's
dump)."""

HEARTBEAT_ENV = "ORDERCHECK_HEARTBEAT_TIMEOUT"
"""The environment variable that sets :data:`HEARTBEAT_SECONDS` (seconds)."""

HEARTBEAT_SECONDS = 60.0
"""A worker sends the main process a :class:`~ordercheck.checker.engine.messages.Beat` from a
thread of its own every eighth of this (at most every 2 s), whatever its search does;
one the main process has heard nothing from for this long while it waits for it
(stopped by SIGSTOP, hung outside Python) is killed and the run ends with
:class:`WorkerLost` (exit code 4). A stop of the main process itself (Ctrl-Z) does not
count, nor does the time its reader spends on one long message (the others' heartbeats
wait in their pipes meanwhile): the silence is measured while the main process can
hear."""

EXPAND_UNIT = 1024
"""States a worker expands before it reads its messages again."""

SEND_BATCH = 16_384
"""Successors gathered for another worker before they are sent as one batch."""

RAW_STATES = 500_000
"""States of its share of a level a worker keeps as objects; past this it keeps them
``marshal``-encoded (version 4) until their level comes
(:class:`~ordercheck.checker.engine.frontier.RankedFrontier`)."""


PIPE_BYTES = 16 << 20
"""The room the kernel's buffers of the pipes between workers may take together: each
pipe gets its share, from 64 KiB (the usual default) up to 1 MiB (:func:`pipe_room`).
A quarter of Linux's usual soft limit on a user's pipe buffers (64 MiB,
``/proc/sys/fs/pipe-user-pages-soft``), past which the user's new pipes get small
buffers: a search leaves the user's other programs most of it."""


def pipe_room(workers: int) -> int:
    """Each pipe's buffer between ``workers`` workers: :data:`PIPE_BYTES` over the
    pipes, a power of two from 64 KiB to 1 MiB."""
    share = PIPE_BYTES // max(workers * (workers - 1), 1)
    return max(1 << 16, min(1 << 20, 1 << max(share.bit_length() - 1, 0)))


def widen(conn: Any, size: int) -> None:
    """Ask the kernel for a pipe buffer of ``size`` bytes behind ``conn`` (Linux; where
    it refuses, or elsewhere, the pipe keeps its own). A batch of successors larger than
    the buffer blocks its sender until the receiving worker's reader thread has read it
    all, and that thread waits for the interpreter's lock while its worker expands."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux's
    if setsize is None:
        return
    try:
        fcntl.fcntl(conn.fileno(), setsize, size)
    except OSError:
        pass


def owner_of(fps: np.ndarray, workers: int) -> np.ndarray:
    """The owning worker of each fingerprint of ``fps`` (``uint64``): its high 32 bits
    scaled to ``workers``. The tables probe with the low bits, which stay uniform in a
    shard."""
    return ((fps >> np.uint64(32)) * np.uint64(workers) >> np.uint64(32)).astype(np.int64)


@dataclass(frozen=True)
class Spill:
    """Where the workers keep their shares of a level: past ``after`` states (``None``:
    never; ``0``: from the first state) a worker's share goes to a file of its own in
    ``dir``, named by :meth:`prefix`; ``token`` tells one search's files from
    another's."""

    dir: str | None = None
    after: int | None = None
    token: str = field(default_factory=lambda: f"{os.getpid()}-{secrets.token_hex(4)}")

    def prefix(self, worker: int | None = None) -> str:
        """The start of the names of worker ``worker``'s files (of every worker's: ``None``)."""
        return f"share-{self.token}-" + ("" if worker is None else f"w{worker}-")


class WorkerLost(EngineError):
    """A worker process ended in the middle of a search (killed, by a person or the
    system's out-of-memory killer, or crashed), or one that did not answer in time and
    was killed (:meth:`Shards.gather`): the engine failed (exit code 4).

    One that was killed by a signal is not searched again for a spec's exception. One
    that ended by itself with an exit status (``exited``) may have been ended by the
    spec's code (``os._exit`` in ``next_states``): the main process searches again
    (:mod:`ordercheck.checker.engine.diagnose`), and the run ends with the spec's error (exit code 5)
    where the search finds it, with this one (exit code 4) where not."""

    def __init__(self, w: int, proc: Any, why: str | None = None) -> None:
        proc.join(timeout=1)  # its pipe closed as it died: its status follows
        code = proc.exitcode
        self.worker = w
        self.why = why
        self.exited = why is None and code is not None and code >= 0
        if why is not None:
            how = why
        elif code is not None and code < 0:
            how = f"killed by {signal.Signals(-code).name}"
        else:
            how = "its pipe closed" if code is None else f"exit status {code}"
        if why is not None:  # it went silent or did not stop, and was killed: no advice about memory
            advice = ("it was killed on purpose, not for memory: run again, and if it happens again look for what "
                      "holds it (a spec step that never returns, SIGSTOP, a swapping machine); the waits are "
                      "ORDERCHECK_HEARTBEAT_TIMEOUT and ORDERCHECK_STOP_GRACE")
        else:
            advice = "run again (with more memory, or fewer --workers, if the system's out-of-memory killer ended it)"
        super().__init__("local", f"worker process {w} ended in the middle of the search ({how}); {advice}")


class SpecLeftWorker(RuntimeError):
    """A worker's search ended by a way out that is not an exception (``sys.exit``, a
    :class:`KeyboardInterrupt`, another :class:`BaseException`), raised in the spec's
    code: the main process searches again to find where (:mod:`ordercheck.checker.engine.diagnose`)."""


class _Stop(Exception):
    """The main process is done with this worker."""


class _Aborted(Exception):
    """The main process gave up the level being searched."""


def _receive(conns: list[Any], ctrl: Any, inbox: queue.SimpleQueue, leave: Any) -> None:
    """A worker's thread: drain every pipe into ``inbox``, so that a writer never waits
    on a reader busy with its own work. End of file on ``ctrl`` means the main process
    is gone, however it ended: the worker deletes its spilled files (``leave()``) and
    exits at once (its work has no one to go to, and a peer may be waiting to write to
    it). A peer's end of file closes its pipe."""
    live = list(conns)
    try:
        while live:
            for conn in wait(live):
                try:
                    msg = conn.recv()
                except (EOFError, OSError):
                    live.remove(conn)
                    if conn is ctrl:
                        leave()
                        os._exit(0)
                    continue
                inbox.put(msg)
    except BaseException as exc:  # a message that cannot be read ends the search, saying why
        inbox.put(Failed(RuntimeError(f"this worker's reader could not read a message: {exc!r}")))


class _Locked:
    """A worker's pipe to the main process, written by its search and its heartbeat
    thread: one message at a time."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.lock = threading.Lock()

    def send(self, message: Any) -> None:
        with self.lock:
            self.conn.send(message)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def _beat(ctrl: _Locked, every: float) -> None:
    """A worker's heartbeat thread: a :class:`~ordercheck.checker.engine.messages.Beat` every
    ``every`` seconds until the pipe closes."""
    while True:
        time.sleep(every)
        try:
            ctrl.send(Beat())
        except (OSError, ValueError):
            return


def _worker(me: int, pipes: dict[str, Any], expander: Expander, props: Sequence[Property], spill: Spill,
            beat: float = HEARTBEAT_SECONDS / 8, log: bool = False) -> None:
    """A worker's life: close the pipe ends that are not its own, then serve the main
    process until ``stop`` or end of file (see the module docstring), keeping an edge
    log with ``log``; its spilled files go when it ends."""
    worker_signals()
    ctrl = pipes["ctrl"][me][1]
    ins = {v: r for (v, w), (r, _wr) in pipes["peer"].items() if w == me}
    outs = {w: wr for (v, w), (_r, wr) in pipes["peer"].items() if v == me}
    mine = {id(ctrl), *(id(c) for c in ins.values()), *(id(c) for c in outs.values())}
    for pair in (*pipes["ctrl"], *pipes["peer"].values()):
        for end in pair:
            if id(end) not in mine:
                end.close()
    inbox: queue.SimpleQueue = queue.SimpleQueue()
    prefix = spill.prefix(me)

    def leave() -> None:
        remove_spilled(spill.dir, prefix)

    threading.Thread(target=_receive, args=([ctrl, *ins.values()], ctrl, inbox, leave), daemon=True).start()
    ctrl = _Locked(ctrl)
    threading.Thread(target=_beat, args=(ctrl, beat), daemon=True).start()
    try:
        _Shard(me, len(pipes["ctrl"]), ctrl, outs, inbox, expander, props, spill, log).run()
    except (_Stop, EOFError, BrokenPipeError):
        pass
    except BaseException as exc:  # reported to the main process, which raises it
        # A worker ignores SIGINT (worker_signals), so a KeyboardInterrupt here, like a
        # SystemExit or any other BaseException, is the spec's: the main process gets an
        # Exception that it diagnoses (ordercheck.checker.engine.diagnose), never a SystemExit(0)
        # that would end it as if the run had passed.
        if not isinstance(exc, Exception):
            exc = SpecLeftWorker(f"{type(exc).__name__}({exc})")
        try:
            pickle.loads(pickle.dumps(exc))  # it must come back as itself
        except Exception:
            exc = RuntimeError(f"worker failed: {exc!r}")
        try:
            ctrl.send(Failed(exc))
        except OSError:
            pass
    finally:
        leave()


class _Shard:
    """One worker's shard: its table, parent links, share of the level and the level's
    candidates, and with ``log`` its edge log (see the module docstring)."""

    def __init__(self, me: int, workers: int, ctrl: Any, outs: dict[int, Any], inbox: queue.SimpleQueue,
                 expander: Expander, props: Sequence[Property], spill: Spill | None = None,
                 log: bool = False) -> None:
        self.me = me
        self.spill = spill or Spill()
        self.workers = workers
        self.ctrl = ctrl
        self.outs = outs
        self.inbox = inbox
        self.expander = expander
        self.evaluator = Evaluator(expander.spec, props)
        self.history_key = expander.spec.history_key if self.evaluator.uses_history else None
        self.table = FingerprintTable(1 << 12)
        self.nums = GrowArray(np.int64, 1 << 12)  # state numbers, ascending
        self.parents = GrowArray(np.int64, 1 << 12)
        self.actions = GrowArray(np.uint16, 1 << 12)
        # the states this shard stores and the edges it takes (ordercheck.checker.engine.edges)
        self.log: EdgeLog | None = EdgeLog(numbered=True) if log else None
        self.level_edges: list[tuple[np.ndarray, np.ndarray]] = []  # the level's edges: (source ranks, target fps)
        self.frontier = self.share()  # chunks (ranks, states), ascending ranks within a chunk
        self.seq = 0  # the level being searched
        self.started: RankedFrontier | None = None  # the level's share while it is searched
        self.proviso = expander.red.proviso  # partial-order reduction's cycle proviso: rounds per level
        self.candidates: list[tuple] = []
        self.units: list[tuple] = []
        self.outbox: dict[int, list[tuple]] = {}
        self.boxed: dict[int, int] = {}
        self.new: tuple | None = None
        self.won: tuple | None = None
        self.early: list[Batch | Done | Won] = []  # peers' messages for a level not started here yet
        self.shipped: list[Ship] = []  # states shipped here before the commit's message came
        self.searching = False  # in the middle of a level (from its command to its report)
        self.dones = 0  # the peers' ends of rounds of the level being searched
        self.won_keys: list[np.ndarray] = []
        self.wons = 0
        self.commit_s = 0.0  # the last commit's seconds, reported with the next level
        self.held: list = []  # commands that came while a commit waited for shipped states
        self.vocabulary_left = VOCABULARY_CHECKS
        reset_peak()
        self.rss = current_rss()

    # -- the main loop ------------------------------------------------------------------

    def run(self) -> None:
        """Serve the main process's commands, one at a time, until :class:`Stop`."""
        commands = {
            Level: lambda m: self.level(m.seq, m.open_names, m.at_bound, m.chunk),
            Commit: lambda m: self.commit(m.kept, m.next_start, m.level_start, m.ranks, m.made, m.ship, m.expect,
                                          m.log),
            Abort: lambda m: self.give_up(),
            Adopt: lambda m: self.adopt(m.fps, m.nums, m.parents, m.actions, m.paired),
            Logs: lambda m: self.take_log(m.numbers, m.fps, m.sources, m.targets),
            Keep: lambda m: self.keep(m.ranks, m.states),
            Dump: lambda m: self.dump(),
            Paths: lambda m: self.links(m.numbers),
            Peak: lambda m: self.ctrl.send(PeakReport(max(peak_rss() - self.rss, 0), self.nbytes())),
            Log: lambda m: self.ctrl.send(Logged(self.log.part() if self.log is not None else None)),
        }
        idle = tuple(commands)
        while True:
            msg = self.held.pop(0) if self.held else self.serve(idle)
            try:
                commands[type(msg)](msg)
            except _Aborted:
                self.ctrl.send(Aborted())

    def serve(self, wanted: tuple[type, ...] = (), until: Callable[[], bool] | None = None,
              block: bool = True, hold: bool = False) -> Any:
        """The one dispatch of a worker's messages: take messages in until one of a
        ``wanted`` type comes (returned), ``until()`` holds or, without ``block``, none is
        left (``None``). On the way, a peer's :class:`~ordercheck.checker.engine.messages.Batch`,
        :class:`~ordercheck.checker.engine.messages.Done` or :class:`~ordercheck.checker.engine.messages.Won`
        of the level being searched is taken in, one of a later level kept for it, one of
        an earlier (aborted) level dropped; a :class:`~ordercheck.checker.engine.messages.Ship` is
        kept for the commit. :class:`Stop` ends the worker; :class:`Abort` in the middle
        of a level gives it up (:class:`_Aborted`); with ``hold`` (a commit waiting for
        shipped states: the main process does not wait for the commit) any other command
        is held for :meth:`run`, without it refused."""
        inbox = self.inbox
        while until is None or not until():
            try:
                msg = inbox.get(block)
            except queue.Empty:
                return None
            kind = type(msg)
            if kind is Batch or kind is Done or kind is Won or kind is Ship:
                self.peer(msg)
                continue
            if kind in wanted:
                return msg
            if kind is Stop:
                raise _Stop
            if hold and kind is not Abort and kind is not Failed:
                self.held.append(msg)
                continue
            if kind is Abort and self.searching:
                self.give_up()
            if kind is Failed:
                raise msg.error
            raise RuntimeError(f"message {kind.__name__} " + ("in the middle of a level" if self.searching else "here"))
        return None

    def peer(self, msg: Batch | Done | Won | Ship) -> None:
        """Another worker's message (see :meth:`serve`)."""
        kind = type(msg)
        if kind is Ship:
            self.shipped.append(msg)  # for the commit (it may come before the commit's message)
        elif msg.seq == self.seq and self.searching:
            if kind is Batch:
                self.take(msg.fps, msg.keys, msg.pos, msg.worker, msg.from_reduced)
            elif kind is Won:
                self.won_keys.append(msg.keys)
                self.wons += 1
            else:
                self.dones += 1
        elif msg.seq > self.seq:
            self.early.append(msg)

    def give_up(self) -> None:
        """The level was given up (:class:`~ordercheck.checker.engine.messages.Abort`): hold its
        states again; the main process is told (:class:`~ordercheck.checker.engine.messages.Aborted`)."""
        self.searching = False
        self.restore()
        raise _Aborted

    def restore(self) -> None:
        """The level was given up: drop its candidates, hold its states again."""
        self.candidates = []
        self.units = []
        self.level_edges = []
        self.won_keys = []
        self.wons = 0
        self.outbox = {}
        self.boxed = {}
        self.new = None
        self.won = None
        if self.started is not None:
            self.frontier.discard()  # nothing was committed to it
            self.frontier, self.started = self.started, None

    def share(self) -> RankedFrontier:
        """An empty share of a level: in memory, or in this worker's own files under the
        spill directory past its threshold."""
        spill = self.spill
        return RankedFrontier(spill.dir, raw=RAW_STATES, spill_after=spill.after, prefix=spill.prefix(self.me))

    def nbytes(self) -> int:
        return self.table.nbytes + self.nums.nbytes + self.parents.nbytes + self.actions.nbytes

    # -- states given by the main process -----------------------------------------------

    def adopt(self, fps: np.ndarray, nums: np.ndarray, parents: np.ndarray, actions: np.ndarray,
              paired: bool = False) -> None:
        """Take fingerprints (initial states, a checkpoint's) and parent links; the edge
        log takes the states where they are ``paired`` (see
        :class:`~ordercheck.checker.engine.messages.Adopt`) and is dropped where not."""
        if self.log is not None:
            if paired:
                self.log.add_states(fps, nums)
            else:
                self.log = None  # a checkpoint's states came by edges not logged
        self.table.reserve(len(self.table) + len(fps))
        self.table.insert(fps)
        order = np.argsort(nums, kind="stable")
        self.nums.extend(nums[order])
        self.parents.extend(parents[order])
        self.actions.extend(actions[order])

    def take_log(self, numbers: np.ndarray, fps: np.ndarray, sources: np.ndarray, targets: np.ndarray) -> None:
        """Keep an edge log again from a checkpoint's part (see
        :class:`~ordercheck.checker.engine.messages.Logs`)."""
        self.log = EdgeLog(numbered=True)
        self.log.add_states(fps, numbers)
        self.log.add_edges(sources, targets)

    def keep(self, ranks: np.ndarray, states: list) -> None:
        """Add states of the level to come (ascending ranks within a piece)."""
        self.frontier.append((ranks, states))

    def dump(self) -> None:
        """Send the shard as a checkpoint needs it: fingerprints, parent links, and the
        level's states with their ranks."""
        pieces = [RankedFrontier.decode_chunk(c) for c in self.frontier]
        ranks = np.concatenate([r for r, _s in pieces]) if pieces else np.zeros(0, dtype=np.int64)
        states: list = []
        for _r, s in pieces:
            states.extend(s)
        self.ctrl.send(Dumped(self.table.values(), self.nums.view().copy(), self.parents.view().copy(),
                              self.actions.view().copy(), ranks, marshal.dumps(states, 4)))

    def links(self, numbers: np.ndarray) -> None:
        """The parent links this shard holds of ``numbers``: ``(found, parents, actions)``."""
        nums = self.nums.view()
        at = np.minimum(np.searchsorted(nums, numbers), max(len(nums) - 1, 0))
        found = nums[at] == numbers if len(nums) else np.zeros(len(numbers), dtype=bool)
        parents = np.where(found, self.parents.view()[at] if len(nums) else 0, -1)
        actions = np.where(found, self.actions.view()[at] if len(nums) else 0, 0)
        self.ctrl.send(Links(found, parents, actions))

    # -- a level ------------------------------------------------------------------------

    def level(self, seq: int, open_names: frozenset[str], at_bound: bool, chunk: int) -> None:
        """Expand this worker's share of level ``seq`` (keeping the successors here),
        route their fingerprints, take in those it owns, and report to the main process
        (see the module docstring)."""
        self.seq = seq
        self.at_bound = at_bound
        self.chunk = chunk
        self.candidates = []  # (fps, keys, pos, generator[, from a reduced parent]) of successors this worker owns
        self.won_keys: list[np.ndarray] = []  # the keys of new states generated here, from each owner
        self.wons = 0  # the owners' answers (Won) of the level taken in
        self.level_edges = []
        self.outbox: dict[int, list[tuple]] = {}  # successors gathered for each other worker
        self.boxed: dict[int, int] = {}  # how many, by worker
        # (parents, successors, parent of each, keys, positions, parents' ranks)
        # per unit expanded
        self.units: list[tuple] = []
        self.round = 0  # the cycle proviso's round (see rounds())
        self.triggered: list[np.ndarray] = []  # ranks of reduced parents to expand fully
        self.evaluated = 0  # candidates already looked at for triggers
        self.full = np.zeros(0, dtype=np.int64)  # the level's parents expanded fully by the proviso, sorted
        self.added: dict[int, int] = {}  # successors a full expansion added, by parent rank
        self.fired: dict[int, Counter] = {}  # actions fired, by chunk of the level
        self.rank_at: np.ndarray | None = None  # the ranks of the parents in the units (expand_fully)
        self.back_rank = -1  # the first parent with a successor visited before this level
        self.unvisited_rank = -1  # at the depth bound: the first parent with an unvisited successor
        self.times = dict.fromkeys(PHASES, 0.0)
        self.times["dedup"], self.commit_s = self.commit_s, 0.0  # the previous level's commit
        self.dones = 0
        evaluator = self.evaluator
        for name in list(evaluator.open):
            if name not in open_names:
                evaluator.decide(name)
        self.searching = True
        early, self.early = self.early, []
        for msg in early:
            self.peer(msg)
        all_ranks: list[np.ndarray] = []
        all_counts: list[np.ndarray] = []
        terminal: dict[int, list] = {}
        fired = self.fired
        problem = None
        clock = time.perf_counter
        frontier, self.frontier = self.frontier.seal(), self.share()
        self.started = frontier  # kept until the level commits (a checkpoint may need it)
        for piece in frontier:  # read back chunk by chunk, from memory or the share's file
            began = clock()
            ranks, states = RankedFrontier.decode_chunk(piece)
            self.times["expand"] += clock() - began
            blocks = ranks // chunk
            cuts = np.flatnonzero(np.diff(blocks)) + 1  # each unit in one chunk of the level
            starts = [0, *cuts.tolist(), len(ranks)]
            for a, b in zip(starts, starts[1:]):
                for i in range(a, b, EXPAND_UNIT):
                    j = min(i + EXPAND_UNIT, b)
                    counts, found_here, why = self.expand(states[i:j], ranks[i:j], terminal)
                    problem = problem or why
                    all_ranks.append(ranks[i:j])
                    all_counts.append(counts)
                    fired.setdefault(int(blocks[i]), Counter()).update(found_here)
                    self.drain()
        self.exchanged()
        if self.proviso:
            problem = self.rounds() or problem
        began = clock()
        new_keys, grow, makers = self.new_states()
        self.times["dedup"] += clock() - began
        self.announce(new_keys, makers)
        findings, why = self.check()
        problem = problem or why
        ranks_a = np.concatenate(all_ranks) if all_ranks else np.zeros(0, dtype=np.int64)
        counts_a = np.concatenate(all_counts) if all_counts else np.zeros(0, dtype=np.int64)
        if self.added:
            grown = np.fromiter(self.added.keys(), dtype=np.int64, count=len(self.added))
            order = np.argsort(ranks_a, kind="stable")
            counts_a[order[np.searchsorted(ranks_a[order], grown)]] += np.fromiter(
                self.added.values(), dtype=np.int64, count=len(self.added))
        self.searching = False
        log_grow = 0 if self.log is None else self.log.growth(len(new_keys), sum(len(e[1]) for e in self.level_edges))
        self.ctrl.send(LevelReport(ranks_a, counts_a, terminal, {b: dict(c) for b, c in fired.items()}, problem,
                                   new_keys, self.back_rank, self.unvisited_rank, grow, self.times, log_grow,
                                   findings))

    def exchanged(self) -> None:
        """Send what is gathered for the other workers and the end of this round; take
        in theirs up to the end of the round from every one (the batches' tests against
        the table count as deduplication, not exchange)."""
        began, taken = time.perf_counter(), self.times["dedup"]
        for w, conn in self.outs.items():
            self.flush(w)
            conn.send(Done(self.seq, self.me))
        target = (self.round + 1) * (self.workers - 1)
        self.serve(until=lambda: self.dones >= target)
        self.times["exchange"] += time.perf_counter() - began - (self.times["dedup"] - taken)

    # -- the cycle proviso ----------------------------------------------------------------

    def rounds(self) -> str | None:
        """The cycle proviso (:func:`ordercheck.checker.engine.rules.must_expand_fully`, the rule
        one process applies too), in rounds: a parent whose expansion was reduced is
        expanded fully when two of its successors are equal, or one of them was visited
        at an earlier level or is a successor (as finally expanded) of a parent of
        smaller rank (the cycle proviso never runs at a depth bound:
        :class:`~ordercheck.checker.engine.loop.LevelLoop` refuses it). Each round every worker
        applies the rule to the successors it owns and reports the parents it names
        (:meth:`triggers`; :meth:`route` and :meth:`take` apply it as successors are
        dropped, as equal or visited before) and the
        main process names the new ones to all; their holders expand them fully and
        send the successors they add (:meth:`expand_fully`). Full parents only grow, so
        the rounds end, at the least set meeting the rule; that set is the sequential
        decision, since a parent's decision depends on smaller ranks only. Returns a
        problem (or ``None``)."""
        problem = None
        self.base_units = len(self.units)  # the units of the level's own parents
        while True:
            self.ctrl.send(Round(self.triggers()))
            msg = self.serve((More, Settle))
            if type(msg) is Settle:
                return problem
            self.round += 1
            problem = self.expand_fully(msg.ranks) or problem
            self.exchanged()

    def triggers(self) -> np.ndarray:
        """The ranks of reduced parents that this worker's candidates since the last
        call show to need a full expansion: those seen by :meth:`take` and
        :meth:`route`, and each reduced successor with the fingerprint of one from a
        parent of no greater rank (the same parent: two equal successors)."""
        found = self.triggered
        self.triggered = []
        pieces = self.candidates[self.evaluated :]
        self.evaluated = len(self.candidates)
        if pieces and any(c[4].any() for c in self.candidates):
            cands = self.candidates
            fps = np.concatenate([c[0] for c in cands])
            ranks = np.concatenate([c[1] for c in cands]) >> KEY_BITS
            from_reduced = np.concatenate([c[4] for c in cands])
            if len(pieces) < len(cands):  # only the fingerprints of the new candidates can trigger more
                look = np.isin(fps, np.concatenate([p[0] for p in pieces]))
                fps, ranks, from_reduced = fps[look], ranks[look], from_reduced[look]
            found.append(rules.must_expand_fully(fps, ranks, from_reduced))
        return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)

    def expand_fully(self, ranks: np.ndarray) -> str | None:
        """Expand fully the parents of ``ranks`` held here (named by the main process,
        each once): their successors' keys become their positions (a full expansion's
        order), and the successors at the positions the reduced expansion left out are
        kept and routed as new candidates. Returns a problem (or ``None``)."""
        began = time.perf_counter()
        self.full = np.union1d(self.full, ranks)
        units = self.units[: self.base_units]
        if self.rank_at is None:
            self.rank_at = np.concatenate([u[5] for u in units]) if units else np.zeros(0, dtype=np.int64)
            self.rank_order = np.argsort(self.rank_at, kind="stable")
            self.unit_ends = np.cumsum([len(u[5]) for u in units])
        rank_at, order = self.rank_at, self.rank_order
        at = np.searchsorted(rank_at[order], ranks)
        held = at < len(rank_at)
        held[held] = rank_at[order[at[held]]] == ranks[held]
        expander = self.expander
        problem = None
        out_fps: list[np.ndarray] = []
        out_keys: list[np.ndarray] = []
        out_pos: list[np.ndarray] = []
        for r, i in zip(ranks[held].tolist(), order[at[held]].tolist()):
            u = int(np.searchsorted(self.unit_ends, i, side="right"))
            states, succ, owner, keys, pos, _ranks = units[u]
            k = i - (int(self.unit_ends[u - 1]) if u else 0)
            mine = np.flatnonzero(owner == k)
            full, fresh = expander.complete(states[k], pos[mine].tolist())
            keys[mine] = (r << KEY_BITS) | pos[mine]  # positions in the full expansion
            self.fired.setdefault(r // self.chunk, Counter()).update(expander.take_fired())
            if not fresh:
                continue
            if len(full) > 0x10000:
                problem = problem or "more than 65535 enabled actions in one state"
            new_succ = [full[j] for j in fresh]
            new_pos = np.asarray(fresh, dtype=np.int64)
            new_keys = (r << KEY_BITS) | new_pos
            self.added[r] = self.added.get(r, 0) + len(fresh)
            self.units.append(([states[k]], new_succ, np.zeros(len(fresh), dtype=np.int64), new_keys, new_pos, np.asarray([r])))
            out_fps.append(expander.fingerprints(new_succ))
            out_keys.append(new_keys)
            out_pos.append(new_pos)
        self.times["expand"] += time.perf_counter() - began
        if out_fps:
            fps, keys = np.concatenate(out_fps), np.concatenate(out_keys)
            if self.log is not None:
                self.level_edges.append((keys >> KEY_BITS, fps))
            self.route(fps, keys, np.concatenate(out_pos), np.zeros(len(fps), dtype=bool))
        return problem

    def drain(self) -> None:
        """Take in the messages that came while expanding (the batches' tests against
        the table count as deduplication, not exchange)."""
        began, taken = time.perf_counter(), self.times["dedup"]
        self.serve(block=False)
        self.times["exchange"] += time.perf_counter() - began - (self.times["dedup"] - taken)

    def expand(self, states: list, ranks: np.ndarray, terminal: dict[int, list]) -> tuple[np.ndarray, dict, str | None]:
        """Expand ``states`` (their ranks ``ranks``), check terminal states, keep the
        successors and route their fingerprints. Returns the successor counts, the
        actions fired and a problem (or ``None``)."""
        clock = time.perf_counter
        t0 = clock()
        expander, evaluator, history_key = self.expander, self.evaluator, self.history_key
        owner, pos, succ, counts, reduced = expander.expand(states)
        fps = expander.fingerprints(succ)
        counts_a = np.asarray(counts, dtype=np.int64)
        pos_a = np.asarray(pos, dtype=np.int64)
        n = len(succ)
        starts = np.repeat(np.cumsum(counts_a) - counts_a, counts_a)
        sources = np.repeat(ranks, counts_a)
        keys = (sources << KEY_BITS) | (np.arange(n, dtype=np.int64) - starts)
        if self.log is not None and n:
            self.level_edges.append((sources, fps))  # every edge taken, at the depth bound too
        fired = expander.take_fired()
        t1 = clock()
        problem = None
        if n and int(pos_a.max()) > 0xFFFF:
            problem = "more than 65535 enabled actions in one state"
        if (evaluator.terminal_state or evaluator.terminal_history) and 0 in counts:
            for k, c in enumerate(counts):
                if c == 0:
                    s = states[k]
                    found = evaluator.on_terminal(s, history_key(s) if history_key else None)
                    if found:
                        terminal[int(ranks[k])] = found
        t2 = clock()
        self.times["expand"] += t1 - t0
        self.times["check"] += t2 - t1
        if n:
            owner_a = np.asarray(owner, dtype=np.int64)
            if not self.at_bound:
                self.units.append((states, succ, owner_a, keys, pos_a, ranks))
            from_reduced = np.repeat(np.asarray(reduced, dtype=bool), counts_a) if self.proviso else None
            self.route(fps, keys, pos_a, from_reduced)
        return counts_a, fired, problem

    def route(self, fps: np.ndarray, keys: np.ndarray, pos: np.ndarray, from_reduced: np.ndarray | None = None) -> None:
        """Send each successor's fingerprint, key and action position (and with the
        cycle proviso, ``from_reduced``: whether its parent's expansion is reduced) to its owner
        (the first of equal fingerprints only: its key is the smallest; a reduced parent
        of another is then one the proviso expands fully, see :meth:`rounds`)."""
        began = time.perf_counter()
        _u, first = np.unique(fps, return_index=True)
        if len(first) < len(fps):
            first.sort()
            if from_reduced is not None:  # the dropped ones: keys ascend, so the first of each is the smallest
                self.triggered.append(rules.must_expand_fully(fps, keys >> KEY_BITS, from_reduced))
                from_reduced = from_reduced[first]
            fps, keys, pos = fps[first], keys[first], pos[first]
        owners = owner_of(fps, self.workers)
        order = np.argsort(owners.astype(np.int16) if self.workers < 1 << 15 else owners, kind="stable")  # radix
        bounds = np.searchsorted(owners[order], np.arange(self.workers + 1)).tolist()
        # in owner order once; each owner's part is a slice (keys still ascend in it)
        columns = (fps[order], keys[order], pos[order].astype(np.uint16)) + (
            () if from_reduced is None else (from_reduced[order],))
        mine = None
        for w in range(self.workers):
            a, b = bounds[w], bounds[w + 1]
            if a == b:
                continue
            part = tuple(c[a:b] for c in columns)
            if w == self.me:
                mine = part
            else:
                self.outbox.setdefault(w, []).append(part)
                self.boxed[w] = held = self.boxed.get(w, 0) + b - a
                if held >= SEND_BATCH:
                    self.flush(w)
        self.times["exchange"] += time.perf_counter() - began
        if mine is not None:
            self.take(mine[0], mine[1], mine[2], self.me, *mine[3:])

    def flush(self, w: int) -> None:
        """Send the successors gathered for worker ``w`` as one batch."""
        box = self.outbox.pop(w, [])
        self.boxed.pop(w, None)
        if box:
            self.outs[w].send(Batch(self.seq, self.me, *(np.concatenate([p[i] for p in box]) for i in range(len(box[0])))))

    def take(self, fps: np.ndarray, keys: np.ndarray, pos: np.ndarray, maker: int,
             from_reduced: np.ndarray | None = None) -> None:
        """A batch of successors this worker owns, generated by worker ``maker``: drop
        those visited before this level (with the cycle proviso, ``from_reduced`` marks
        those of reduced parents: one visited before has its parent expanded fully, see
        :meth:`rounds`)."""
        began = time.perf_counter()
        seen = self.table.contains(fps)
        keep = None
        if seen.any():
            first = int(keys[seen].min() >> KEY_BITS)
            if self.back_rank < 0 or first < self.back_rank:
                self.back_rank = first
            if from_reduced is not None:
                self.triggered.append(rules.must_expand_fully(fps, keys >> KEY_BITS, from_reduced, seen))
            keep = ~seen
        if self.at_bound:
            fresh = keys if keep is None else keys[keep]
            if len(fresh):
                first = int(fresh.min() >> KEY_BITS)
                if self.unvisited_rank < 0 or first < self.unvisited_rank:
                    self.unvisited_rank = first
        if not self.at_bound:
            if keep is not None:
                fps, keys, pos = fps[keep], keys[keep], pos[keep]
                if from_reduced is not None:
                    from_reduced = from_reduced[keep]
            self.candidates.append((fps, keys, pos, maker) if from_reduced is None
                                   else (fps, keys, pos, maker, from_reduced))
        self.times["dedup"] += time.perf_counter() - began

    def new_states(self) -> tuple[np.ndarray, int, np.ndarray]:
        """The level's new states of this shard, in key order: the smallest key of each
        fingerprint. Returns their keys, the bytes the shard's arrays must grow by to
        store them, and the worker that generated each."""
        cands = self.candidates
        self.candidates = []
        if not cands or self.at_bound:
            self.new = (np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint16))
            return self.new[1], 0, np.zeros(0, dtype=np.int64)
        fps = np.concatenate([c[0] for c in cands])
        keys = np.concatenate([c[1] for c in cands])
        pos = np.concatenate([c[2] for c in cands])
        makers = np.repeat(np.asarray([c[3] for c in cands], dtype=np.int64), [len(c[0]) for c in cands])
        if len(self.full):  # keys from parents expanded fully later: their positions (see expand_fully)
            ranks = keys >> KEY_BITS
            keys = np.where(np.isin(ranks, self.full), (ranks << KEY_BITS) | pos.astype(np.int64), keys)
        order = np.argsort(keys, kind="stable")
        _u, first = np.unique(fps[order], return_index=True)
        chosen = order[np.sort(first)]  # one per fingerprint, the smallest key, in key order
        self.new = (fps[chosen], keys[chosen], pos[chosen])
        n = len(chosen)
        grow = _growth(len(self.table.slots), len(self.table) + n) + sum(
            a.growth(len(a) + n) for a in (self.nums, self.parents, self.actions))
        return self.new[1], grow, makers[chosen]

    def announce(self, keys: np.ndarray, makers: np.ndarray) -> None:
        """Tell every worker which of the successors it generated are new states owned
        here (``keys``, ascending, generated by ``makers``), and take in the other
        owners' answers: afterwards :attr:`won_keys` holds the keys of every new state
        generated here."""
        began = time.perf_counter()
        for w, conn in self.outs.items():
            conn.send(Won(self.seq, self.me, keys[makers == w]))
        self.won_keys.append(keys[makers == self.me])
        self.serve(until=lambda: self.wons >= self.workers - 1)
        self.times["exchange"] += time.perf_counter() - began

    def keep_log(self, log: bool, fps: np.ndarray, numbers: np.ndarray, level_start: int) -> None:
        """Log the states stored at a commit (``fps``, numbered ``numbers``) and the
        level's edges, or drop the log (``log`` false: the main process's memory budget
        refused its growth)."""
        edges, self.level_edges = self.level_edges, []
        if self.log is None:
            return
        if not log:
            self.log = None
            return
        self.log.add_states(fps, numbers)
        for sources, targets in edges:
            self.log.add_edges(level_start + sources, targets)

    def check(self) -> tuple[dict[int, list], str | None]:
        """Check the open properties on the successors generated here that are new
        states (:attr:`won_keys`, from their owners), with their parents, and hold them
        for the commit in key order. Returns the findings by key and a problem (or
        ``None``)."""
        began = time.perf_counter()
        won = np.sort(np.concatenate(self.won_keys), kind="stable") if self.won_keys else np.zeros(0, dtype=np.int64)
        self.won_keys = []
        evaluator, history_key = self.evaluator, self.history_key
        units = self.units
        offsets = np.cumsum([0, *(len(u[3]) for u in units)])
        keys = np.concatenate([u[3] for u in units]) if units else np.zeros(0, dtype=np.int64)
        order = np.argsort(keys, kind="stable")  # a share's ranks need not ascend (shipped states)
        at = np.searchsorted(keys[order], won)
        if len(won) and (at.max() >= len(keys) or not (keys[order][at] == won).all()):
            raise RuntimeError("an owner named as new a successor this worker did not generate")
        at = order[at]
        unit_of = np.searchsorted(offsets, at, side="right") - 1
        local = at - offsets[unit_of] if len(won) else at
        checks = bool(evaluator.state_checks or evaluator.history_checks)
        findings: dict[int, list] = {}
        states: list = []
        problem = None
        append = states.append
        for key, u, j in zip(won.tolist(), unit_of.tolist(), local.tolist()):
            parents, succ, owner, _keys, _pos, _ranks = units[u]
            t = succ[j]
            append(t)
            if self.vocabulary_left > 0:
                self.vocabulary_left -= 1
                problem = problem or check_vocabulary(t)
            if checks:
                s = parents[owner[j]]
                found = evaluator.on_state(t, history_key(t) if history_key else None,
                                           history_key(s) if history_key else None)
                if found:
                    findings[key] = found
        self.units = []
        self.won = (won, states)
        self.times["check"] += time.perf_counter() - began
        return findings, problem

    def commit(self, kept: int, next_start: int, level_start: int, ranks: np.ndarray, made: np.ndarray,
               ship: Sequence[tuple[int, int]] = (), expect: int = 0, log: bool = False) -> None:
        """Store the new states this worker owns whose rank (``ranks``, by key order) is
        below ``kept``, and hold those it generated (ranked ``made``, by key order) below
        ``kept`` as its share of the next level, less the ``ship`` ones (``(worker, how
        many)``, taken evenly across its ranks) that go to a worker with a smaller share;
        take in ``expect`` states shipped here. With ``log`` the edge log takes the
        states stored and the level's edges (sources numbered from ``level_start``);
        without, it is dropped. The seconds it takes are reported with the next level's
        deduplication."""
        began = time.perf_counter()
        ranks, made = ranks.astype(np.int64), made.astype(np.int64)  # sent as 32-bit where they fit
        fps, keys, pos = self.new if self.new is not None else (np.zeros(0, dtype=np.uint64),) + (
            np.zeros(0, dtype=np.int64),) * 2
        self.new = None
        if self.started is not None:
            self.started.discard()  # the level is done: its share (and file) goes
            self.started = None
        take = np.flatnonzero(ranks < kept)
        if len(take):
            self.table.reserve(len(self.table) + len(take))
            self.table.insert(fps[take])
            self.nums.extend(next_start + ranks[take])
            self.parents.extend(level_start + (keys[take] >> KEY_BITS))
            self.actions.extend(pos[take])
        self.keep_log(log, fps[take], next_start + ranks[take], level_start)
        won_keys, states = self.won if self.won is not None else (np.zeros(0, dtype=np.int64), [])
        self.won = None
        if len(made) != len(won_keys):
            raise RuntimeError(f"the main process ranked {len(made):,} new states generated here, "
                               f"which generated {len(won_keys):,}")
        won_ranks = made
        n = int(np.searchsorted(won_ranks, kept))
        won_ranks, states = won_ranks[:n], states[:n]
        gone = sum(c for _w, c in ship)
        if gone:
            picked = (np.arange(gone, dtype=np.int64) * n) // gone  # spread over the ranks
            stay = np.ones(n, dtype=bool)
            stay[picked] = False
            start = 0
            for w, c in ship:
                part = picked[start : start + c].tolist()
                start += c
                self.outs[w].send(Ship(self.seq, won_ranks[part], marshal.dumps([states[i] for i in part], 4)))
            keep = np.flatnonzero(stay)
            won_ranks, states = won_ranks[keep], [states[i] for i in keep.tolist()]
        for i in range(0, len(states), 1 << 14):
            self.keep(won_ranks[i : i + (1 << 14)], states[i : i + (1 << 14)])
        got = 0
        while got < expect:
            self.serve(until=lambda: bool(self.shipped), hold=True)
            msg = self.shipped.pop(0)
            if msg.seq != self.seq:
                raise RuntimeError(f"states shipped for level {msg.seq} while level {self.seq} commits")
            self.keep(msg.ranks, marshal.loads(msg.blob))
            got += len(msg.ranks)
        self.commit_s += time.perf_counter() - began
        self.ctrl.send(Committed())


def _growth(size: int, count: int) -> int:
    """Bytes a fingerprint table of ``size`` slots allocates to hold ``count``."""
    if count * 4 <= size * 3:
        return 0
    while count * 4 > size * 3:
        size *= 2
    return size * 8


class Shards:
    """The main process's handle on its shard workers: start them, talk to them, stop
    them (see the module docstring)."""

    def __init__(self, workers: int, expander: Expander, props: Sequence[Property], spill: Spill | None = None,
                 log: bool = False) -> None:
        self.spill = spill = spill or Spill()
        self.silence = seconds_from_env(HEARTBEAT_ENV, HEARTBEAT_SECONDS)
        self.grace = stop_grace()
        beat = min(self.silence / 8, 2.0)
        ctx = multiprocessing.get_context("fork")
        self.procs: list[Any] = []
        self.conns: list[Any] = []
        pipes: dict[str, Any] = {"ctrl": [], "peer": {}}
        try:
            for _ in range(workers):
                pipes["ctrl"].append(ctx.Pipe())
            room = pipe_room(workers)
            for v in range(workers):
                for w in range(workers):
                    if v != w:
                        pipes["peer"][(v, w)] = pair = ctx.Pipe(duplex=False)  # (read end for w, write end for v)
                        widen(pair[1], room)
            for me in range(workers):
                proc = ctx.Process(target=_worker, args=(me, pipes, expander, props, spill, beat, log), daemon=True)
                proc.start()
                self.procs.append(proc)
        except OSError as exc:  # e.g. too many open files: stop the workers already started
            self._close_ends(pipes)
            self.conns = [pair[0] for pair in pipes["ctrl"]]
            self.close()
            raise OSError(exc.errno, f"{exc.strerror} (starting {workers} worker processes)") from None
        self.conns = [pair[0] for pair in pipes["ctrl"]]
        self._close_ends(pipes)
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.early: list[tuple[int, Any]] = []  # messages taken in before their gather (see _gather)
        self.heard = [time.monotonic()] * workers  # when each worker's last message came
        self.reading: tuple[int, float] | None = None  # (worker, since when) of a message being read
        self.unread: set[int] = set()  # workers whose pipe is no longer read (a message lost)
        self.lost: dict[int, str] = {}  # workers killed for their silence, and why
        self.closing = threading.Event()
        self.monitor = threading.Thread(target=self._watch, daemon=True)
        self.monitor.start()
        self.thread = threading.Thread(target=self._receive_all, daemon=True)
        self.thread.start()

    @staticmethod
    def _close_ends(pipes: dict[str, Any]) -> None:
        """Close the workers' pipe ends in this process (its own ends stay open)."""
        for _parent, child in pipes["ctrl"]:
            child.close()
        for pair in pipes["peer"].values():
            for end in pair:
                end.close()

    def _receive_all(self) -> None:
        """Drain every worker's pipe into :attr:`inbox` as ``(worker, message)``, noting
        when each was last heard from (:attr:`heard`; a heartbeat goes no further). A
        worker whose message could not be read is no longer read (:attr:`unread`): its
        pipe is out of step."""
        live = dict(enumerate(self.conns))
        index = {id(c): w for w, c in live.items()}
        heard = self.heard
        while live:
            for conn in wait(list(live.values())):
                w = index[id(conn)]
                began = time.monotonic()
                self.reading = (w, began)
                try:
                    msg = conn.recv()
                except (EOFError, OSError):
                    del live[w]
                    self.inbox.put((w, Ended()))
                    continue
                except MemoryError as exc:  # stops the search as its memory bound (ordercheck.checker.engine.budget)
                    self.inbox.put((w, Failed(exc)))  # queued before the worker is marked (see _gather)
                    self.unread.add(w)
                    del live[w]
                    continue
                except Exception as exc:
                    self.inbox.put((w, Failed(RuntimeError(f"a message of worker process {w} could not be read: {exc!r}"))))
                    self.unread.add(w)
                    del live[w]
                    continue
                finally:
                    self.reading = None
                now = time.monotonic()
                if now - began > self.silence / 8:  # a long message: the others could not be heard
                    heard[:] = [max(h, now) for h in heard]
                heard[w] = now
                if type(msg) is not Beat:
                    self.inbox.put((w, msg))

    @property
    def workers(self) -> int:
        return len(self.conns)

    def pids(self) -> list[int]:
        """The worker processes' ids."""
        return [p.pid for p in self.procs if p.pid is not None]

    def send(self, w: int, msg: tuple) -> None:
        """Send worker ``w`` a command (:data:`ordercheck.checker.engine.messages.COMMANDS`)."""
        try:
            self.conns[w].send(msg)
        except (BrokenPipeError, ConnectionResetError):  # the worker is gone
            raise self._lost(w) from None

    def _lost(self, w: int) -> WorkerLost:
        """The error for worker ``w``, whose pipe closed. A worker whose peer died exits
        cleanly when writing to it fails, and its end of file can come first: if ``w``
        exited with status 0, the worker that did not (killed by a signal, or a non-zero
        status) is the one named, once the others' ends are known (up to a second)."""
        proc = self.procs[w]
        proc.join(timeout=1)
        if self.lost.get(w) is None and proc.exitcode == 0:
            deadline = time.monotonic() + 1.0
            for v, other in enumerate(self.procs):
                if v == w:
                    continue
                other.join(timeout=max(deadline - time.monotonic(), 0.0))
                if other.exitcode not in (None, 0):
                    return WorkerLost(v, other, self.lost.get(v))
        return WorkerLost(w, proc, self.lost.get(w))

    def broadcast(self, msg: tuple) -> None:
        """Send every worker the command ``msg``."""
        for w in range(self.workers):
            self.send(w, msg)

    def gather(self, kind: type[R], wait_hook: Callable[[], None] | None = None,
               timeout: float | None = ANSWER_SECONDS) -> list[R]:
        """The one dispatch of the workers' replies: one ``kind`` reply from every worker,
        by worker. A worker's error (:class:`~ordercheck.checker.engine.messages.Failed`) is raised
        here, a worker that ended is a :class:`WorkerLost` (its pipe's end of file comes
        after anything it sent), and so is one that has not answered ``timeout`` seconds
        after the wait began: it is killed. ``wait_hook`` is called about every 50 ms
        while waiting (it may raise to stop the wait): a level's work (``timeout``
        ``None``) takes as long as the spec makes it, so there the wait ends at a
        worker's answer, error or end, or when the hook raises (the time limit, a
        signal, the memory budget). A reply of another kind is an error; a worker's
        message that comes after its reply, before every other worker has replied (the
        next level's, after a commit's :class:`~ordercheck.checker.engine.messages.Committed`),
        is kept for the next gather."""
        return self._gather(kind, wait_hook, timeout, skip=False)

    def _gather(self, kind: type[R], wait_hook: Callable[[], None] | None, timeout: float | None,
                skip: bool) -> list[R]:
        """:meth:`gather`; with ``skip``, replies of other kinds are dropped (an abort's
        wait: what was on its way when the level was given up)."""
        got: list[Any] = [None] * self.workers
        left = self.workers
        poll = 0.05 if wait_hook is not None or timeout is None else min(timeout, 0.5)
        deadline = None if timeout is None else time.monotonic() + timeout
        self.answered: set[int] = set()
        if self.unread:  # its answer cannot come; why, if not yet raised, is queued
            self._queued_failure()
            raise self.unresponsive(min(self.unread), 0.0, kind, "a message from it could not be read, so it "
                                    "was out of step and was killed")
        early, self.early = self.early, []
        try:
            while left:
                item = early.pop(0) if early else self._next(poll)
                if item is None:
                    if deadline is not None and time.monotonic() > deadline:
                        raise self.unresponsive(got.index(None), timeout or 0.0, kind)
                    if wait_hook is not None:
                        wait_hook()
                    continue
                w, msg = item
                if type(msg) is Ended:
                    raise self._lost(w)
                if type(msg) is Failed:
                    raise msg.error
                if got[w] is not None and not skip:  # its next message, sent before the others answered
                    self.early.append(item)
                    continue
                if type(msg) is not kind or got[w] is not None:
                    if skip:
                        continue
                    raise RuntimeError(f"worker process {w} sent {type(msg).__name__} instead of {kind.__name__}")
                got[w] = msg
                self.answered.add(w)
                left -= 1
        finally:
            self.early = early + self.early  # in the order they came
        return got

    def _queued_failure(self) -> None:
        """Raise the error of a message that could not be read, if it is still queued:
        the reader can fail between two gathers (the main process does not wait for a
        commit's answers), and then the failure, a :class:`MemoryError` above all (a
        stop at the memory bound), is raised as it would have been inside a gather."""
        while True:
            try:
                self.early.append(self.inbox.get_nowait())
            except queue.Empty:
                break
        for i, (_w, msg) in enumerate(self.early):
            if type(msg) is Failed:
                del self.early[i]
                raise msg.error

    def _next(self, seconds: float) -> tuple[int, Any] | None:
        """The next ``(worker, message)``, or ``None`` after ``seconds``."""
        try:
            return self.inbox.get(timeout=seconds)
        except queue.Empty:
            return None

    def _watch(self) -> None:
        """The main process's watch on its workers (a thread): a worker it has heard
        nothing from, not even a heartbeat, for :attr:`silence` seconds is killed, so
        that every wait on it (a reply, a send into its full pipe, the stop) ends with
        :class:`WorkerLost` naming it. While a message is being read, the others'
        silences are counted once it is read (they could not be heard meanwhile), but the
        message itself must arrive within :attr:`silence` seconds: a worker stopped half-way
        through writing one would otherwise hold the reader, and the search, for ever.
        Time this process itself spent stopped (Ctrl-Z) does not count."""
        step = min(self.silence / 4, 0.5)
        last = resumed = time.monotonic()
        while not self.closing.wait(step):
            now = time.monotonic()
            if now - last > step + self.silence / 4:  # this process was stopped: a fresh start
                self.heard[:] = [max(h, now) for h in self.heard]
                resumed = now
            last = now
            reading = self.reading
            if reading is not None:
                w, began = reading
                if w not in self.lost and now - max(began, resumed) > self.silence and not self.closing.is_set():
                    self._kill(w, f"its message stopped half-way: nothing more came for {self.silence:g} s "
                                  "(stopped or hung) and it was killed")
                continue
            for w in range(len(self.procs)):
                if w not in self.lost and now - self.heard[w] > self.silence and not self.closing.is_set():
                    self._kill(w, f"it sent nothing, not even a heartbeat, for {self.silence:g} s "
                                  "(stopped or hung) and was killed")

    def _kill(self, w: int, why: str) -> None:
        """Kill worker ``w`` for ``why`` (its silence), from the watch thread."""
        self.lost[w] = why
        try:
            os.kill(self.procs[w].pid, signal.SIGKILL)  # not reaped before close(): the pid is its own
        except (OSError, TypeError):
            pass

    def unresponsive(self, w: int, seconds: float, kind: type, why: str | None = None) -> WorkerLost:
        """Kill worker ``w``, which has not sent its ``kind`` within ``seconds``: the
        error that ends the search."""
        proc = self.procs[w]
        proc.kill()  # a stopped process ignores SIGTERM until it is continued
        proc.join(timeout=5)
        if why is None and kind is Aborted:
            why = f"it did not stop within {seconds:g} s (stuck in a step of the spec's code?) and was killed"
        return WorkerLost(w, proc, why or f"it sent no {kind.__name__} within {seconds:g} s and was killed")

    def abort(self, timeout: float = ANSWER_SECONDS) -> None:
        """Give up the level being searched: every worker drops its candidates and keeps
        its share of the level (the shards are as at the level's start). A worker that
        does not confirm within ``timeout`` seconds (one whose pipe is no longer read
        at once) is killed (:class:`WorkerLost`), and so is every other that has not
        confirmed by then."""
        for w in range(self.workers):
            if w not in self.unread:
                try:
                    self.send(w, Abort())
                except WorkerLost:
                    pass  # its end of file is awaited below
        try:
            self._gather(Aborted, None, timeout, skip=True)
        except WorkerLost:
            for w, proc in enumerate(self.procs):  # the others that did not confirm either
                if proc.is_alive() and w not in self.answered:
                    proc.kill()
            raise

    def close(self) -> None:
        """Stop the workers (each deletes its spilled files as it ends), kill those that
        do not end within the stop's grace (:func:`~ordercheck.checker.engine.interrupts.stop_grace`),
        and delete the files of any that could not."""
        if getattr(self, "monitor", None) is not None:
            self.closing.set()
            self.monitor.join()
        for w, proc in enumerate(self.procs):
            if w in getattr(self, "unread", ()):
                proc.kill()  # out of step: it is not told
                continue
            try:
                self.send(w, Stop())
            except (OSError, IndexError, WorkerLost):  # the worker is gone already
                pass
        deadline = time.monotonic() + getattr(self, "grace", DEFAULT_GRACE)
        for proc in self.procs:
            proc.join(timeout=max(deadline - time.monotonic(), 0.0))
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)
        if getattr(self, "thread", None) is not None:
            self.thread.join(timeout=5)  # it ends at the workers' end of file: then no wait() sees a closed pipe
        for conn in self.conns:
            conn.close()
        remove_spilled(self.spill.dir, self.spill.prefix())  # those of a worker that was killed

"""The messages between the main process and the shard workers, one type per kind.

:mod:`ordercheck.checker.engine.shards` and :mod:`ordercheck.checker.engine.sharded` exchange these over
``multiprocessing`` pipes (which pickle them, as they do any object sent through a
pipe; nothing read from a file is ever unpickled). Each side dispatches on the type in
one place: a worker in :meth:`ordercheck.checker.engine.shards._Shard.next_message`, the main
process in :meth:`ordercheck.checker.engine.shards.Shards.gather`.

The main process sends a worker the *commands* (:data:`COMMANDS`), the workers send
one another :class:`Batch`, :class:`Done` and :class:`Ship`, and a worker answers the
main process with the *replies* (the types below :class:`Failed`). A command that
comes while a worker is in the middle of a level is refused (a :class:`RuntimeError`
reported as :class:`Failed`), except :class:`Abort` and :class:`Stop`, and between the
rounds of the cycle proviso :class:`More` and :class:`Settle`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# -- the main process to a worker ---------------------------------------------------------


class Level(NamedTuple):
    """Search level ``seq``: expand the share, route, take, report (:class:`LevelReport`)."""

    seq: int
    open_names: frozenset[str]
    at_bound: bool
    chunk: int


class More(NamedTuple):
    """The cycle proviso's next round: expand these parents (ranks) fully where held."""

    ranks: np.ndarray


class Settle(NamedTuple):
    """The cycle proviso's rounds are over: report the level."""


class Check(NamedTuple):
    """Check the new states generated here (``keys``, ascending), numbered ``ranks`` in
    the next level; answered by :class:`Checked`."""

    keys: np.ndarray
    ranks: np.ndarray


class Commit(NamedTuple):
    """Keep the level's new states of rank below ``kept`` (answered by :class:`Committed`;
    see :meth:`ordercheck.checker.engine.shards._Shard.commit`)."""

    kept: int
    next_start: int
    level_start: int
    ranks: np.ndarray
    ship: list[tuple[int, int]]
    expect: int
    log: bool = False  # the edge log goes on (False: it is dropped, or was never kept)


class Abort(NamedTuple):
    """Give the level being searched up (answered by :class:`Aborted`)."""


class Adopt(NamedTuple):
    """Take these fingerprints and parent links (initial states, a checkpoint's).
    ``paired``: ``fps[i]`` is the fingerprint of state ``nums[i]`` (the initial states',
    logged in the edge log); a checkpoint's go to their owners and its links by number
    apart, and a shard restored from one keeps no edge log."""

    fps: np.ndarray
    nums: np.ndarray
    parents: np.ndarray
    actions: np.ndarray
    paired: bool = False


class Keep(NamedTuple):
    """Hold these states, ranked ``ranks``, as part of the share of the level to come."""

    ranks: np.ndarray
    states: list


class Dump(NamedTuple):
    """Send the shard for a checkpoint (answered by :class:`Dumped`)."""


class Paths(NamedTuple):
    """Send the parent links held of ``numbers`` (answered by :class:`Links`)."""

    numbers: np.ndarray


class Peak(NamedTuple):
    """Send the peak memory and the shard's bytes (answered by :class:`PeakReport`)."""


class Log(NamedTuple):
    """Send the edge log (answered by :class:`Logged`)."""


class Stop(NamedTuple):
    """The main process is done with this worker."""


COMMANDS = (Level, More, Settle, Check, Commit, Abort, Adopt, Keep, Dump, Paths, Peak, Log, Stop)
"""What the main process sends a worker."""

# -- a worker to another ------------------------------------------------------------------


class Batch(NamedTuple):
    """Successors of level ``seq`` for their owner: fingerprints, order keys, action
    positions and, with the cycle proviso, whether each one's parent was reduced."""

    seq: int
    fps: np.ndarray
    keys: np.ndarray
    pos: np.ndarray
    from_reduced: np.ndarray | None = None


class Done(NamedTuple):
    """Worker ``worker`` sent everything of the current round of level ``seq``."""

    seq: int
    worker: int


class Ship(NamedTuple):
    """States of the next level moved to balance the shares (``marshal``-encoded)."""

    seq: int
    ranks: np.ndarray
    blob: bytes


# -- a worker to the main process ---------------------------------------------------------


class Failed(NamedTuple):
    """The worker's search raised ``error`` (or a message could not be read)."""

    error: BaseException


class Beat(NamedTuple):
    """The worker is alive: sent every few seconds by a thread of its own, whatever its
    search is doing (see :data:`ordercheck.checker.engine.shards.HEARTBEAT_ENV`)."""


class Ended(NamedTuple):
    """The worker's pipe reached end of file (the main process's reader says so)."""


class LevelReport(NamedTuple):
    """A level searched: per-parent successor counts (by rank), terminal findings by rank,
    coverage by chunk, a problem, the new states' sorted keys, the first ranks with an
    edge back / an unvisited successor at the depth bound (-1: none), the bytes the
    shard must grow by, the timed phases, the bytes its edge log grows by to log the
    level (at most)."""

    ranks: np.ndarray
    counts: np.ndarray
    terminal: dict[int, list]
    fired: dict[int, dict[str, int]]
    problem: str | None
    keys: np.ndarray
    back_rank: int
    unvisited_rank: int
    grow: int
    times: dict[str, float]
    log_grow: int = 0


class Round(NamedTuple):
    """A cycle proviso round: the parents (ranks) found to need a full expansion."""

    parents: np.ndarray


class Checked(NamedTuple):
    """The findings on the new states by key, a problem, the seconds spent."""

    findings: dict[int, list]
    problem: str | None
    seconds: float


class Committed(NamedTuple):
    """The level is stored here; the seconds spent."""

    seconds: float


class Aborted(NamedTuple):
    """The level is given up here."""


class Dumped(NamedTuple):
    """The shard for a checkpoint: fingerprints, links, the level's ranks and states."""

    fps: np.ndarray
    nums: np.ndarray
    parents: np.ndarray
    actions: np.ndarray
    ranks: np.ndarray
    blob: bytes


class Links(NamedTuple):
    """The parent links asked for: which were found here, their parents and actions."""

    found: np.ndarray
    parents: np.ndarray
    actions: np.ndarray


class PeakReport(NamedTuple):
    """The worker's peak memory above its start and its shard's bytes."""

    peak: int
    nbytes: int


class Logged(NamedTuple):
    """The shard's edge log: its states (numbers, fingerprints) and the edges its
    worker took (source numbers, target fingerprints); ``None`` when it keeps none."""

    part: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None

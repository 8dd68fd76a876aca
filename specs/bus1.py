"""bus1's message ordering, as the bus1 wiki page describes it.

Source: ``shared/seeds/bus1-message-ordering.txt`` ("Message ordering", T. Gundersen).
Every peer owns one queue with a Lamport clock. A message transaction from peer ``p``
to destinations ``D`` is a sequence of steps, each atomic under one queue's lock:

1. ``block``: for each destination ``d`` (in peer order), block ``d``'s queue at its
   current clock and collect the maximum of those clocks ("Blocking the queue").
2. ``tick``: synchronise the sender's clock to that maximum and tick it; the new value
   is the message's timestamp ("Synchronizing the clocks").
3. ``sync``: synchronise every destination's clock to the timestamp; all of them before
   any message is queued ("it is crucial to first synchronize all the clocks").
4. ``queue``: on each destination, queue the message and remove the block.

A peer dequeues (``deliver``) the first entry of its queue when that entry is a message
not preceded by a block. Messages order by (timestamp, sender id); a block at clock
``t`` orders after every message with timestamp ``t`` already on the queue. A peer is
one thread: it starts sends, delivers and signals only between its own transactions.
``signal(p, q)`` is a side-channel signal outside the bus, bounded by ``signals``.

Ablation flags (each ``false`` is a mutant): ``block_destinations``, ``sync_sender``,
``sync_receivers_before_queueing`` (when off, each destination is synced and queued in
one step, the order the wiki warns against) and ``tiebreak_by_sender`` (when off, equal
timestamps are ordered by arrival at the queue).

State: ``(clocks, queues, txs, ghost, know, signals_left)``. ``queues[q]`` is a tuple of
entries ``(ts, rank, mid)``; ``rank`` is the sender id for a message (``0`` when ties go
by arrival) and :data:`BLOCK` for a block, whose ``mid`` is its transaction's message.
``txs[p]`` is ``0`` when ``p`` is idle, else ``(mid, phase, i, acc)`` with ``acc`` the
maximum clock seen while blocking, then the timestamp. ``ghost = (sent, logs)`` is the
history (see :mod:`ordercheck.specs.history`); ``know[p]`` is ``p``'s causal past as a bitmask.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import Any

from ordercheck.checker import Constant, Property, Symmetry
from ordercheck.specs.base import PeerSpec, peer_constants
from ordercheck.specs.common import ghost_event, ghost_send, ghost_signal, members, message_past
from ordercheck.specs.history import DELIVER
from ordercheck.specs.properties import LIBRARY
from ordercheck.specs.witnesses import WITNESSES

BLOCK = 1 << 20  # rank of a block: after every message with the same timestamp

# Transaction phases.
BLOCKING, TICK, SYNCING, QUEUEING, SYNC_QUEUE = 0, 1, 2, 3, 4

CLOCKS, QUEUES, TXS, GHOST, KNOW, SIGNALS = range(6)


def _put(values: tuple, i: int, value: Any) -> tuple:
    """``values`` with item ``i`` replaced (cheaper than slicing and concatenating)."""
    out = list(values)
    out[i] = value
    return tuple(out)


class Bus1(PeerSpec, Symmetry):
    name = "bus1"
    summary = "bus1's ordering algorithm from the wiki: per-queue Lamport clocks, blocks, multicast"
    constants = (
        *peer_constants(),
        Constant("block_destinations", bool, True, "block each destination before taking the timestamp", ablation=True),
        Constant("sync_sender", bool, True, "sync the sender to the blocks' maximum before ticking", ablation=True),
        Constant(
            "sync_receivers_before_queueing",
            bool,
            True,
            "sync every destination before queueing on any",
            ablation=True,
        ),
        Constant("tiebreak_by_sender", bool, True, "order equal timestamps by sender id", ablation=True),
    )

    ghost_at = GHOST
    txs_at = TXS
    acyclic = True  # every step advances a transaction, a log, or uses up a signal
    # Every peer keeps running: a started transaction completes and a ready message is
    # received. Starting a send and signalling stay optional.
    fairness = {k: "weak" for k in ("block", "tick", "sync", "queue", "sync_queue", "deliver")}

    def message_kinds(self) -> tuple[str, ...]:
        # Every send goes through its blocking phase (a no-op without block_destinations).
        commit = ("sync", "queue") if self.sync_receivers_before_queueing else ("sync_queue",)
        return ("block", "tick", *commit, "deliver")

    def configure(self) -> None:
        self._memo: tuple[object, tuple[str | None, str | None]] = ((), (None, None))
        self._fp_cache: dict[tuple, tuple[int, int, int, int, int, int]] = {}
        self.everyone = (1 << self.peers) - 1

    # -- states -----------------------------------------------------------------------

    def init_states(self) -> list[tuple]:
        n = self.peers
        empty = tuple(() for _ in range(n))
        ghost = (empty, empty)
        return [((0,) * n, empty, (0,) * n, ghost, (0,) * n, self.signals)]

    def dests(self, mask: int) -> tuple[int, ...]:
        return self.dest_table[mask]

    def next_states(self, state: tuple) -> list[tuple[tuple, tuple]]:
        return self.next_states_of(state, self.everyone)

    def next_states_of(self, state: tuple, processes: int) -> list[tuple[tuple, tuple]]:
        clocks, queues, txs, ghost, know, signals = state
        sent = ghost[0]
        out: list[tuple[tuple, tuple]] = []
        n = self.peers
        send_table = self.send_table
        for p in self.dest_table[processes & self.everyone]:
            tx = txs[p]
            if tx:
                out.append(self._step(state, p, tx))
                continue
            # Idle peer: deliver, start a send, or signal.
            queue = queues[p]
            if queue and queue[0][1] != BLOCK:
                mid = queue[0][2]
                k = know[p] | (1 << mid) | message_past(ghost, mid, self.stride)
                out.append(
                    (
                        ("deliver", p, mid),
                        (
                            clocks,
                            _put(queues, p, queue[1:]),
                            txs,
                            ghost_event(ghost, p, DELIVER, mid),
                            _put(know, p, k),
                            signals,
                        ),
                    )
                )
            count = len(sent[p])
            options = send_table[p]
            for dmask in options[count] if count < len(options) else ():
                mid = p * self.stride + count
                tx = (mid, BLOCKING, 0, 0)
                out.append(
                    (
                        ("send", p, mid, dmask),
                        (clocks, queues, _put(txs, p, tx), ghost_send(ghost, p, mid, dmask, know[p]), know, signals),
                    )
                )
            if signals:
                for q in range(n):
                    if q == p or txs[q]:
                        continue
                    kq = know[q] | know[p]
                    out.append(
                        (
                            ("signal", p, q),
                            (clocks, queues, txs, ghost_signal(ghost, p, q), _put(know, q, kq), signals - 1),
                        )
                    )
        return out

    def _step(self, state: tuple, p: int, tx: tuple) -> tuple[tuple, tuple]:
        """The next step of ``p``'s transaction."""
        clocks, queues, txs, ghost, know, signals = state
        mid, phase, i, acc = tx
        stride = self.stride
        dmask = ghost[0][p][mid % stride][0]
        dests = self.dest_table[dmask]
        if phase == BLOCKING:
            d = dests[i]
            c = clocks[d]
            if self.block_destinations:
                q = list(queues[d])
                insort(q, (c, BLOCK, mid))
                queues = _put(queues, d, tuple(q))
            acc = c if c > acc else acc
            ntx = (mid, TICK, 0, acc) if i + 1 == len(dests) else (mid, BLOCKING, i + 1, acc)
            return ("block", p, d, mid), (clocks, queues, _put(txs, p, ntx), ghost, know, signals)
        if phase == TICK:
            base = clocks[p]
            if self.sync_sender and acc > base:
                base = acc
            ts = base + 1
            nxt = SYNCING if self.sync_receivers_before_queueing else SYNC_QUEUE
            clocks = _put(clocks, p, ts)
            return ("tick", p, mid), (clocks, queues, _put(txs, p, (mid, nxt, 0, ts)), ghost, know, signals)
        d = dests[i]
        last = i + 1 == len(dests)
        if phase == SYNCING:
            if clocks[d] < acc:
                clocks = _put(clocks, d, acc)
            ntx = (mid, QUEUEING, 0, acc) if last else (mid, SYNCING, i + 1, acc)
            return ("sync", p, d, mid), (clocks, queues, _put(txs, p, ntx), ghost, know, signals)
        # QUEUEING, or SYNC_QUEUE in the mutant that syncs each destination just before queueing.
        label = "queue"
        if phase == SYNC_QUEUE:
            label = "sync_queue"
            if clocks[d] < acc:
                clocks = _put(clocks, d, acc)
        queues = _put(queues, d, self._enqueue(queues[d], acc, p, mid))
        if last:
            ntx = 0
            know = _put(know, p, know[p] | (1 << mid))
        else:
            ntx = (mid, phase, i + 1, acc)
        return (label, p, d, mid), (clocks, queues, _put(txs, p, ntx), ghost, know, signals)

    def _enqueue(self, queue: tuple, ts: int, sender: int, mid: int) -> tuple:
        q = [e for e in queue if not (e[1] == BLOCK and e[2] == mid)]
        if self.tiebreak_by_sender:
            insort(q, (ts, sender, mid))
        else:
            # Equal timestamps keep their order of arrival: after every message with the
            # same timestamp, before any block at it.
            q.insert(bisect_left(q, (ts, BLOCK, -1)), (ts, 0, mid))
        return tuple(q)

    # -- reductions ---------------------------------------------------------------------
    # Symmetry: none while equal timestamps are ordered by sender id (renaming peers
    # would reorder them), nor for multicasts (destinations are visited in peer order);
    # see PeerSpec.peer_symmetries. Partial-order reduction: each step takes one queue's
    # lock and touches that queue and its clock only; steps on different queues commute.

    def actor(self, action: tuple) -> int:
        return action[1]

    def footprints(self, state: tuple) -> list[tuple[int, int, int, int, int, int]]:
        return self.peer_footprints(state, state[SIGNALS])

    def _step_footprint(self, p: int, phase: int, d: int, last: bool) -> tuple[int, int, int]:
        """Reads, writes and updates (``clock := max(clock, ts)``) of one step."""
        v = self.var
        t = v["tx"][p]
        if phase == BLOCKING:
            seen = v["clock"][d] | v["seen"][d]  # another peer's clock: see tx_footprint
            if self.block_destinations:
                return seen | v["queue"][d] | t, v["queue"][d] | t, 0
            return seen | t, t, 0
        if phase == TICK:
            return v["clock"][p] | t, v["clock"][p] | t, 0
        if phase == SYNCING:
            return t, t, v["clock"][d]
        r = w = v["queue"][d] | t
        u = v["clock"][d] if phase == SYNC_QUEUE else 0
        if last:
            r |= v["know"][p]
            w |= v["know"][p] | v["busy"][p]
        return r, w, u

    def tx_footprint(self, state: tuple, p: int, tx: tuple) -> tuple[int, int, int, int, int, int]:
        """``p``'s next step and the rest of its transaction. Syncs are updates (they
        commute with each other); a sync to a timestamp its clock already reaches does
        nothing, and since clocks never go back it never will, so once the timestamp is
        known such syncs are left out. A sync that the destination's own pending tick
        absorbs (see ``_absorbed``) updates only the destination's clock as other peers
        read it (``seen``), not as the destination itself reads it (``clock``). Queueing
        a message behind its own block and blocking a queue nothing can overtake drop the
        queue (see ``_queue_commutes``, ``_block_commutes``); they still update
        ``insert``, which nothing reads but properties reading queues see."""
        mid, phase, i, acc = tx
        dmask = state[GHOST][0][p][mid % self.stride][0]
        key = (p, dmask, phase, i)  # not the message id: unicast sends vary their destination
        base = self._fp_cache.get(key)
        if base is None:
            base = self._fp_cache[key] = self._tx_footprint(p, dmask, phase, i)
        nr, nw, lr, lw, nu, lu = base
        if phase >= SYNCING or phase == BLOCKING:
            dests = self.dest_table[dmask]
            d = dests[i]
            if phase == SYNCING or phase == SYNC_QUEUE:
                clocks, txs = state[CLOCKS], state[TXS]
                clock, seen = self.var["clock"], self.var["seen"]
                lu = 0
                for e in dests[i:]:
                    if clocks[e] < acc:
                        lu |= seen[e] if self._absorbed(clocks[e], txs[e], acc) else clock[e]
                nu = lu & (clock[d] | seen[d])
            if (phase == QUEUEING and self._queue_commutes(state, p, mid, d, acc)) or (
                phase == BLOCKING and self._block_commutes(state, d)
            ):
                queue = self.var["queue"][d]
                if nw & queue:  # still a change to the queue, for properties that read it
                    nu |= self.var["insert"][d]
                nr &= ~queue
                nw &= ~queue
        return nr, nw, lr, lw, nu, lu

    def _tx_footprint(self, p: int, dmask: int, phase: int, i: int) -> tuple[int, int, int, int, int, int]:
        dests = self.dest_table[dmask]
        last = len(dests) - 1
        steps = []
        if phase == BLOCKING:
            steps += [(BLOCKING, d, False) for d in dests[i:]]
        if phase in (BLOCKING, TICK):
            steps.append((TICK, p, False))
            if self.sync_receivers_before_queueing:
                steps += [(SYNCING, d, False) for d in dests] + [(QUEUEING, d, k == last) for k, d in enumerate(dests)]
            else:
                steps += [(SYNC_QUEUE, d, k == last) for k, d in enumerate(dests)]
        elif phase == SYNCING:
            steps += [(SYNCING, d, False) for d in dests[i:]] + [(QUEUEING, d, k == last) for k, d in enumerate(dests)]
        else:
            steps += [(phase, d, k == last) for k, d in enumerate(dests) if k >= i]
        nr, nw, nu = self._step_footprint(p, *steps[0])
        lr, lw, lu = nr, nw, nu
        for st in steps[1:]:
            r, w, u = self._step_footprint(p, *st)
            lr |= r
            lw |= w
            lu |= u
        return nr, nw, lr, lw, nu, lu

    def _absorbed(self, clock: int, tx: tuple | int, ts: int) -> bool:
        """Whether a sync of a peer ``e`` (clock ``clock``, transaction ``tx``) to ``ts``
        commutes with everything ``e`` itself may do from now on, whatever other peers
        do first. With ``sync_sender``, when ``e`` has not ticked yet (blocking, or
        about to tick) and ``ts <= max(clock, acc)``: ``e``'s tick sets its clock and
        timestamp to ``max(clock, acc) + 1``, and a sync before it makes that
        ``max(clock, ts, acc) + 1``, the same; a sync after it finds the clock beyond
        ``ts`` and does nothing. Clock and ``acc`` only grow until the tick (other peers
        only raise the clock; ``acc`` is ``e``'s own), so the inequality holds after any
        steps of others. No other step of ``e`` reads its own clock (blocks and syncs
        touch the destinations' clocks; deliveries and queueing no clock), and the
        transactions ``e`` starts later find its clock at or beyond its timestamp, so
        past ``ts``. Other peers' blocks still read the synced value: the sync updates
        ``seen``, which they read."""
        return self.sync_sender and bool(tx) and tx[1] <= TICK and ts <= max(clock, tx[3])

    def _queue_commutes(self, state: tuple, p: int, mid: int, d: int, ts: int) -> bool:
        """Whether queueing ``mid`` on ``d`` commutes with everything others may do to
        ``d``'s queue first: with the tie-break by sender id, entries are kept sorted,
        so inserts and block removals commute with each other; and ``d`` can take
        entries only from in front of ``mid``'s own block, which sorts before the message
        (its timestamp is later), so deliveries commute with it too."""
        if not self.tiebreak_by_sender:
            return False
        for bts, rank, owner in state[QUEUES][d]:
            if rank == BLOCK and owner == mid:
                return ts > bts
        return False

    def _block_commutes(self, state: tuple, d: int) -> bool:
        """Whether blocking ``d``'s queue commutes with everything others may do to that
        queue first. The block goes in at ``d``'s clock, behind every message no later
        than it; blocks sort among all entries by timestamp whatever the tie-break, so
        inserts commute. If no message on the queue is ahead of ``d``'s clock, the block
        lands behind everything ``d`` could take, and a message someone else queues
        later is either behind a sync of ``d``'s clock (a clock write, already a conflict
        of the block's footprint) or no later than the clock, so ahead of the block."""
        clock = state[CLOCKS][d]
        return all(ts <= clock for ts, rank, _m in state[QUEUES][d] if rank != BLOCK)

    def reduction_key(self, state: tuple) -> tuple:
        """Per peer, what :meth:`footprints` and the owners of the successors depend
        on: for a peer inside a transaction (one step enabled) its destinations, phase,
        index and sends started, and what :meth:`tx_footprint` reads of the rest of the
        state (for a sync phase, which destinations left are behind the timestamp and
        which of those absorb the sync, :meth:`_absorbed`; for
        blocking, :meth:`_block_commutes`; for queueing, :meth:`_queue_commutes`); for an
        idle peer its sends started and whether its head can be delivered (``2`` when it
        is also :meth:`head_stable`); and whether signals are left (each idle peer may
        signal each other idle peer). Hot, so those helpers are inlined here; the tests
        compare the key with freshly computed footprints."""
        clocks, queues, txs, ghost, _know, signals = state
        sent = ghost[0]
        stride = self.stride
        dest_table = self.dest_table
        by_sender = self.tiebreak_by_sender
        sync_sender = self.sync_sender
        key: list = [signals > 0]
        for p, tx in enumerate(txs):
            outbox = sent[p]
            if tx:
                mid, phase, i, acc = tx
                dmask = outbox[mid % stride][0]
                refined = 0
                if phase == SYNCING or phase == SYNC_QUEUE:
                    # Per destination left: behind the timestamp (1), and then whether
                    # its own pending tick absorbs the sync (2, see _absorbed).
                    for e in dest_table[dmask][i:]:
                        if clocks[e] < acc:
                            te = txs[e]
                            absorbed = sync_sender and te and te[1] <= TICK and acc <= max(clocks[e], te[3])
                            refined |= (2 if absorbed else 1) << (2 * e)
                elif phase == QUEUEING:
                    if by_sender:
                        for bts, rank, owner in queues[dest_table[dmask][i]]:
                            if owner == mid and rank == BLOCK:
                                refined = acc > bts
                                break
                elif phase == BLOCKING:
                    d = dest_table[dmask][i]
                    clock = clocks[d]
                    refined = 1
                    for ts, rank, _m in queues[d]:
                        if ts > clock and rank != BLOCK:
                            refined = 0
                            break
                key.append((dmask, phase, i, len(outbox), refined))
            else:
                queue = queues[p]
                if queue and queue[0][1] != BLOCK:
                    key.append((len(outbox), 2 if self.head_stable(state, p) else 1))
                else:
                    key.append((len(outbox), 0))
        return tuple(key)

    def head_stable(self, state: tuple, p: int) -> bool:
        """With ``sync_sender``, every timestamp a transaction takes exceeds the clock it
        saw when blocking each destination, and clocks never go back. So when ``p``'s
        head ``H`` is a message no later than ``p``'s clock, later blocks on ``p`` (at
        ``p``'s clock or beyond) and later messages (timestamps above it) land behind
        ``H``; only transactions already past ``p``'s block need their timestamp (or
        its lower bound, ``acc + 1``) compared with ``H``."""
        if not self.sync_sender:
            return False
        clocks, queues, txs, ghost = state[CLOCKS], state[QUEUES], state[TXS], state[GHOST]
        queue = queues[p]
        if not queue or queue[0][1] == BLOCK:
            return False
        head = queue[0]
        if head[0] > clocks[p]:
            return False
        for r, tx in enumerate(txs):
            if r == p or not tx:
                continue
            mid, phase, i, acc = tx
            dests = self.dest_table[ghost[0][r][mid % self.stride][0]]
            if p not in dests:
                continue
            k = dests.index(p)
            if phase == BLOCKING and k >= i:
                continue
            if phase in (BLOCKING, TICK):
                if acc + 1 <= head[0]:
                    return False
                continue
            if phase in (QUEUEING, SYNC_QUEUE) and k < i:
                continue  # already queued on p
            if self.tiebreak_by_sender:
                if (acc, r, mid) < head:
                    return False
            elif acc < head[0]:
                return False
        return True

    def whole_tx_footprint(self, p: int, dmask: int) -> int:
        v = self.var
        m = v["clock"][p] | v["tx"][p] | v["busy"][p] | v["know"][p]
        for d in self.dest_table[dmask]:
            m |= v["clock"][d] | v["seen"][d] | v["queue"][d]
        return m

    def symmetries(self) -> list[tuple[int, ...]]:
        return self.peer_symmetries(ordered=self.tiebreak_by_sender)

    def permute(self, state: tuple, perm: tuple[int, ...]) -> tuple:
        clocks, queues, txs, ghost, know, signals = state
        pm = self.perm_mid
        nq = []
        for q in queues:
            entries = [(ts, rank, pm(mid, perm)) for ts, rank, mid in q]
            # Canonical order: by timestamp, messages (arrival order) before blocks, blocks by id.
            entries.sort(key=lambda e: (e[0], e[1] == BLOCK, e[2] if e[1] == BLOCK else 0))
            nq.append(tuple(entries))
        ntx = tuple(tx if not tx else (pm(tx[0], perm), *tx[1:]) for tx in txs)
        return (
            self.perm_vector(clocks, perm),
            self.perm_vector(tuple(nq), perm),
            self.perm_vector(ntx, perm),
            self.perm_ghost(ghost, perm),
            self.perm_vector(tuple(self.perm_mids(k, perm) for k in know), perm),
            signals,
        )

    # -- history and properties -----------------------------------------------------

    def properties(self) -> list[Property]:
        return [
            *LIBRARY,
            *WITNESSES,
            Property.always(
                "message_after_block", self._message_after_block, doc=_doc_after_block, reads=("queue", "tx")
            ),
            Property.always("ready_is_final", self._ready_is_final, doc=_doc_ready_final, reads=("queue", "tx")),
            Property.always(
                "entries_behind_clock", self._entries_behind_clock, doc=_doc_behind_clock, reads=("clock", "queue")
            ),
            Property.sometimes("waits_behind_block", self._waits_behind_block, doc=_doc_waits, reads=("queue",)),
            Property.sometimes("equal_timestamps", self._equal_timestamps, doc=_doc_equal, reads=("queue",)),
            self.deadlock_free(),
        ]

    def _transaction_findings(self, state: tuple) -> tuple[str | None, str | None]:
        """What the two transaction invariants find on ``state``: ``message_after_block``'s
        sentence and ``ready_is_final``'s (``None`` where it holds), each the first in
        the order of the peers, then of the destinations.

        Both read the transactions that have their timestamp and the destinations they
        have not queued on yet, so one pass over those answers both; they ask on the
        same state in turn, so the last answer is kept. Each finding needs an entry at
        the timestamp or later on the destination's queue (its own block, or the head),
        so a queue whose last entry is earlier is passed over.
        """
        last, found = self._memo
        if last is state:
            return found
        after = final = None
        sent, queues = state[GHOST][0], state[QUEUES]
        stride, dest_table = self.stride, self.dest_table
        blocks, tiebreak = self.block_destinations, self.tiebreak_by_sender
        for p, tx in enumerate(state[TXS]):
            if not tx or tx[1] < SYNCING:
                continue
            mid, phase, i, ts = tx
            dests = dest_table[sent[p][mid % stride][0]]
            rank = p if tiebreak else 0
            for d in dests if phase == SYNCING else dests[i:]:  # the destinations not yet queued
                q = queues[d]
                if not q or q[-1][0] < ts:
                    continue  # a queue is sorted by timestamp: no entry at ts or later, no finding
                if after is None and blocks:  # its own block on d: the timestamp must be after it
                    for bts, brank, owner in q:
                        if owner == mid and brank == BLOCK and ts <= bts:
                            after = (
                                f"{self.mname(mid)} got timestamp {ts}, not after its own block at "
                                f"{bts} on {self.names[d]}'s queue"
                            )
                            break
                if final is None and q and q[0][1] != BLOCK:  # d's head may be dequeued now
                    hts, hrank, hmid = q[0]
                    if (ts, rank) < (hts, hrank):
                        final = (
                            f"{self.names[d]} may dequeue {self.mname(hmid)} (timestamp {hts}) although "
                            f"{self.mname(mid)} (timestamp {ts}) will be queued before it"
                        )
        found = (after, final)
        self._memo = (state, found)
        return found

    def _message_after_block(self, state: tuple) -> str | None:
        return self._transaction_findings(state)[0]

    def _ready_is_final(self, state: tuple) -> str | None:
        return self._transaction_findings(state)[1]

    def _entries_behind_clock(self, state: tuple) -> str | None:
        clocks, queues = state[CLOCKS], state[QUEUES]
        for q, queue in enumerate(queues):
            if queue and queue[-1][0] > clocks[q]:
                ts, rank, mid = next(e for e in queue if e[0] > clocks[q])
                what = "a block" if rank == BLOCK else self.mname(mid)
                return f"{self.names[q]}'s queue holds {what} at {ts}, ahead of its clock {clocks[q]}"
        return None

    def _waits_behind_block(self, state: tuple) -> str | None:
        for q, queue in enumerate(state[QUEUES]):
            if queue and queue[0][1] == BLOCK and any(e[1] != BLOCK for e in queue):
                waiting = next(e for e in queue if e[1] != BLOCK)
                return (
                    f"{self.mname(waiting[2])} waits on {self.names[q]}'s queue behind the block of "
                    f"{self.mname(queue[0][2])}"
                )
        return None

    def _equal_timestamps(self, state: tuple) -> str | None:
        for q, queue in enumerate(state[QUEUES]):
            msgs = [e for e in queue if e[1] != BLOCK]
            for a, b in zip(msgs, msgs[1:]):
                if a[0] == b[0]:
                    return (
                        f"{self.mname(a[2])} and {self.mname(b[2])} share timestamp {a[0]} on "
                        f"{self.names[q]}'s queue"
                    )
        return None

    # -- presentation -------------------------------------------------------------------

    def format_action(self, action: tuple) -> str:
        kind, p, *rest = action
        who = self.names[p]
        if kind == "block":
            d, mid = rest
            return f"block {self.names[d]}'s queue for {self.mname(mid)}"
        if kind == "tick":
            return f"{who} ticks its clock for {self.mname(rest[0])}"
        if kind == "sync":
            d, mid = rest
            return f"sync {self.names[d]}'s clock to {self.mname(mid)}"
        if kind in ("queue", "sync_queue"):
            d, mid = rest
            verb = "sync and queue" if kind == "sync_queue" else "queue"
            return f"{verb} {self.mname(mid)} on {self.names[d]}"
        return super().format_action(action)

    def action_site(self, action: tuple) -> tuple[str, int, int | None] | None:
        """A block is staged on the destination's queue, a queueing commits there; without
        ``block_destinations`` a block step only reads the destination's clock, a step
        of the sender's transaction that puts nothing on any queue."""
        kind, p, *rest = action
        if kind == "block":
            if not self.block_destinations:
                return ("step", p, rest[1])
            return ("stage", rest[0], rest[1])
        if kind in ("queue", "sync_queue"):
            return ("commit", rest[0], rest[1])
        if kind == "sync":
            return ("step", rest[0], rest[1])
        if kind == "tick":
            return ("step", p, rest[0])
        return super().action_site(action)

    def describe(self, state: tuple) -> dict[str, Any]:
        clocks, queues, txs, ghost, know, signals = state
        h, messages = self.common_view(state)
        peers = {}
        for p, name in enumerate(self.names):
            entries = []
            for ts, rank, mid in queues[p]:
                if rank == BLOCK:
                    entries.append(f"block@{ts}({self.mname(mid)})")
                else:
                    entries.append(f"{self.mname(mid)}@{ts}")
            tx = txs[p]
            if tx:
                mid, phase, i, acc = tx
                step = ["blocking", "tick", "syncing", "queueing", "sync+queue"][phase]
                tx_text = f"{self.mname(mid)}: {step}" + (f" (ts {acc})" if phase >= SYNCING else "")
            else:
                tx_text = None
            peers[name] = {
                "clock": clocks[p],
                "queue": entries,
                "transaction": tx_text,
                "delivered": [h.messages[m].name for m in h.deliveries(p)],
                "knows": [self.mname(m) for m in members(know[p])],
            }
        return {
            "peers": peers,
            "messages": messages,
            "signals_left": signals,
        }


_doc_after_block = "a transaction's timestamp is after each of its own blocks (the wiki: a message is placed after its block)"
_doc_ready_final = (
    "an unblocked message at the head of a queue stays ahead of every message still to be queued there "
    "(the wiki: if the first message is not blocked, it is ready to be dequeued)"
)
_doc_behind_clock = "no entry on a queue is ahead of that queue's clock"
_doc_waits = "a message waits on a queue behind a block"
_doc_equal = "two messages with the same timestamp sit on one queue, so the tie-break decides"


SPEC = Bus1

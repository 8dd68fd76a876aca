"""bus1's message ordering as the kernel code implements it (``github.com/bus1/bus1``).

This models ``ipc/bus1/`` at commit ``20ee2f737ee187f369e9bc7e654d03ab2467ed44``: the
queue (``util/queue.[ch]``, see :mod:`ordercheck.specs.bus1_queue`), transactions (``tx.c``),
nodes and handles (``handle.c``), message staging and installation (``message.c``) and
the ioctls that drive them (``peer.c``). Each action is one critical section of the code
and its label names the C function it models:

=============================  ==========================================================
label                          models
=============================  ==========================================================
``bus1_peer_ioctl_send``       peer.c:bus1_peer_ioctl_send prologue with
                               message.c:bus1_factory_instantiate (no liveness check)
``bus1_handle_acquire``        message.c:bus1_message_stage (payload handles) ->
                               handle.c:bus1_handle_acquire_locked/bus1_handle_splice,
                               with tx.c:bus1_tx_join for late joiners (J1 stage async,
                               J2/J3 sync + queue.c:bus1_queue_commit_synthetic)
``bus1_message_stage``         message.c:bus1_message_stage -> tx.c:bus1_tx_stage_sync
                               -> queue.c:bus1_queue_stage on the destination
``bus1_handle_destroy_locked`` peer.c:bus1_peer_ioctl_nodes_destroy and peer.c:
                               bus1_peer_flush step 1: handle.c:bus1_handle_destroy_locked
                               for each node under the owner's lock (anchor staged,
                               holders postponed)
``bus1_tx_stage_sync``         tx.c:bus1_tx_commit stage round (one postponed node)
``bus1_queue_tick``            tx.c:bus1_tx_commit: sync the origin to the running max,
                               tick it by 2: the commit timestamp; seal
``bus1_queue_sync``            tx.c:bus1_tx_commit sync round (one destination)
``bus1_queue_commit_staged``   tx.c:bus1_tx_commit commit round (one entry)
``bus1_handle_release``        handle.c:bus1_handle_release_slow ->
                               bus1_handle_queue_release -> queue.c:
                               bus1_queue_commit_unstaged (release notification)
``bus1_peer_flush``            peer.c:bus1_peer_flush step 3: release all user handles
``bus1_queue_flush``           peer.c:bus1_peer_flush step 4: queue.c:bus1_queue_flush
``bus1_peer_peek``             peer.c:bus1_peer_peek: one dropped entry (flushed, not
                               public, or not live by handle.c:bus1_handle_is_live_at) or
                               one notification delivered
``bus1_peer_ioctl_recv``       peer.c:bus1_peer_ioctl_recv of a data message: peek,
                               message.c:bus1_message_install (is_live_at per payload
                               handle at the message's timestamp), queue.c:bus1_queue_remove
``bus1_peer_transfer``         peer.c:bus1_peer_transfer (BUS1_CMD_HANDLE_TRANSFER)
``bus1_peer_disconnect``       peer.c:bus1_peer_disconnect: bus1_active_deactivate; the
                               cleanup (a reset's flush) follows once drained
=============================  ==========================================================

Constants: ``peers``, ``nodes`` (each node's owner), ``handles`` (initial remote holders),
``fresh`` (nodes created by their owner's first send) and ``script`` (each peer's
operations, see :mod:`ordercheck.specs.bus1_impl_script`), which bounds the sends, destructions,
releases, transfers, signals, resets and disconnects of a run. Variants of the code:
``liveness`` (the code's rule or the full-key fix), ``addresses`` (the handles' address
order), ``refs`` (references approximated by the holder, or counted as the code does),
``acquire`` (payload handles in one step, or one step each),
``locks`` with ``stage_lock``/``install_lock`` (the lock-level mode of
:mod:`ordercheck.specs.bus1_locks`, and the two missing locks added), ``ties`` and ``mutant``.
``transfer = "steps"`` and, at lock level, ``owner_gone_steps`` split steps the code does not
make atomic (findings J and H). Candidate fixes, one switch each: ``liveness = "key"``
(finding C), ``flush_front`` (E), ``join_failure = "invalid"`` (F), ``synthetic_tie =
"flipped"`` (D), ``stage_lock`` (A), ``install_lock`` (B), ``join_sealed = "wait"`` (G),
``acquire_owner = "pinned"`` (H), ``transfer_check = "join"`` (I and J), ``stale_handle =
"invalid"`` (K).

Modelling choices (each keeps the code's behaviour on ordering):

* Group tags are transaction pointers in the code (stack addresses, arbitrary); here each
  transaction has a rank and, with ``ties = "all"``, the initial states hold every
  permutation of the ranks, so both orders of every tie are explored. Release
  notifications use the owner peer as group, ranked after every transaction (or among
  them, with ``ties = "with_release"``). Node addresses (the third key) are a constant:
  handle ``(p, n)`` is ``1 + p * nodes + n`` (``addresses = "ascending"``) or the reverse
  order; message entries come after (they never tie with each other or with handles).
* ``bus1_peer_ioctl_recv`` is one step: between its peek and its remove nothing can be
  inserted before ``front`` nor remove it (only this peer removes; the local lock
  serialises it), and a payload handle's destruction entry read by ``is_live_at`` is
  either after the message whatever its state or already committed, so reading it at
  the peek gives the same answer (message.c reads it unlocked; see the findings).
* Payload handles of one message are acquired in one step (``acquire = "together"``) or one
  step each (``acquire = "each"``, and at lock level, one section each);
  staging a data message is atomic under the destination's lock (the code stages without
  that lock: ``locks = true`` explores that data race).
* With ``refs = "holder"`` a handle's strong references are approximated by its holder:
  the release notification is queued when the last remote holder lets go; ``refs =
  "counted"`` counts the references of messages in flight as well, and the user's
  (``n_user``: a handle received twice needs two releases).
* History: a destruction is recorded as a transaction of the owner (a message) addressed
  to the owner and every holder when it starts (``bus1_handle_destroy_locked``'s map; late
  joiners are not destinations: the abstract side has no such holders, and a failed join owes
  nothing in the history: what it breaks, the handle properties say); receiving a destroy
  notification is delivering it (a late joiner's adds the destruction to its causal past
  only), and a notification dropped by peek or flush is a drop with its reason, as are data messages dropped by peek (``REASONS``). A user that receives
  ``BUS1_HANDLE_INVALID`` has observed the destruction, so it joins that peer's causal
  past. Release notifications are not in the history.

State (tuples of ints only): ``(queues, handles, nodes, txs, pcs, ghost, drops, know,
notes, valid, dequeued, bad, ranks)``:

* ``queues[p]``: :data:`ordercheck.specs.bus1_queue.Queue` ``(clock, flush, leftmost, front, entries)``;
* ``handles[p * N + n]``: ``(state, ts, group)`` of peer ``p``'s handle to node ``n`` (the
  anchor when ``p`` owns ``n``); ``state`` is NONE, ATTACHED (in the node's map, not yet
  handed to the user), PUBLIC or RELEASED; ``ts``/``group`` are its queue node's, kept
  after dequeue as the code keeps them;
* ``nodes[n]``: DESTROYED | RELEASED | WEAK0 | ABSENT flag bits (``ordercheck.specs.bus1_impl_defs``);
* ``txs[p]``: ``0`` or ``(phase, mid, i, ts, async_ts, T, group, sync, async, postponed)``;
* ``pcs[p]``: operations started; ``ghost``/``drops``/``know``: the history
  (:mod:`ordercheck.specs.history`) with drop reasons and causal knowledge;
* ``notes[p]``/``valid[p]``: nodes whose destroy notification ``p`` received, nodes it
  holds a valid handle to (ghosts for the handle properties);
* ``dequeued[p]``: the last key ``p`` dequeued (ghost for ``dequeue_increasing``);
* then, with ``locks = true``, ``locks`` and ``threads`` (:mod:`ordercheck.specs.bus1_locks`), and with
  ``refs = "counted"``, ``refs[p * N + n]``: the references of messages in flight, and
  ``users[p * N + n]``: the user references (the code's ``n_user``);
* ``bad``: ``(property bits, WARN bits)``: per-transition checks made in
  :meth:`next_states` (clock monotonicity, insertion before ``front``, the destruction
  rules, every ``WARN_ON`` of the code). A transition that breaks one sets its bit in the
  successor, and the matching invariant reports it: the engine has no action
  properties, and keeping the previous clocks in every state instead would multiply
  the states for no gain.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

from ordercheck.checker import Constant, ConstantError, Property
from ordercheck.specs import bus1_locks
from ordercheck.specs import bus1_queue as bq
from ordercheck.specs.base import PeerSpec
from ordercheck.specs.bus1_impl_defs import (  # noqa: F401  (re-exported: the adapter and tests read them here)
    ACQ,
    ATTACHED,
    B_CLOCK,
    B_DEQUEUE,
    B_DEST,
    B_FRONT,
    B_HANDLE,
    B_JOINFAIL,
    B_LEAK,
    B_LOCKDEP,
    B_MAPRACE,
    B_OWNER,
    B_RELEASE,
    B_SPLIT,
    B_UAF,
    B_WARN,
    B_WINDOW,
    B_WRITERS,
    BAD,
    COMMIT,
    DEQ,
    DRAIN,
    DROPS,
    F_ABSENT,
    F_CLEARED,
    F_DESTROYED,
    F_RELEASED,
    F_WALK,
    F_WEAK0,
    FLUSH,
    GHOST,
    KNOW,
    LD_ACQ_HOLDER,
    LD_ACQ_OWNER,
    LD_DESTROY,
    LD_FLUSH_RELEASE,
    LD_LIVE,
    LD_QUEUE_RELEASE,
    LD_TX_JOIN,
    LD_TX_JOIN_ORIGIN,
    LD_TX_STAGE,
    LOCKDEP_SITES,
    LOCKS,
    NODES,
    NONE,
    NOTES,
    PCS,
    PHASES,
    POSTPONED,
    PUBLIC,
    R_DESTROYED,
    R_FLUSHED,
    R_NOT_PUBLIC,
    RANKS,
    REASONS,
    REFS,
    RELEASE_ALL,
    RELEASED,
    SEAL,
    STAGE,
    SYNC,
    THREADS,
    TXS,
    USERS,
    VALID,
    XFER,
    H,
    Q,
)
from ordercheck.specs.bus1_impl_script import DISCONNECT, FLUSHING, RELEASE, SEND, SIGNAL, TRANSFER, Op, parse_script
from ordercheck.specs.common import ghost_event, ghost_send, ghost_signal, members, message_past, peer_names
from ordercheck.specs.history import DELIVER, DROP, History
from ordercheck.specs.properties import LIBRARY
from ordercheck.specs.witnesses import WITNESSES

FRONT_WARNS = bq.W_BEFORE_FRONT | bq.W_SYNTH_FRONT | bq.W_STAGE_FRONT


class Bus1Impl(PeerSpec):
    name = "bus1_impl"
    summary = "bus1 as the kernel code implements it: staging/commit queues, destruction, handles, reset"
    constants = (
        Constant("peers", int, 2, "number of peers, named a, b, c, ...", minimum=2, maximum=4),
        Constant("nodes", str, "ab", 'owner of each node: "ab" is node 0 owned by a, node 1 by b'),
        Constant("handles", list, [], 'initial remote holders per node: ["b", ""] gives b a handle to node 0'),
        Constant("fresh", list, [], "nodes that do not exist at the start: the owner's first send naming one "
                 "creates it (bus1_handle_import of a new local ID)"),
        Constant("script", dict, {}, 'operations per peer, e.g. { a = ["send 1 +0"], b = ["destroy 1"] }'),
        Constant(
            "ties",
            str,
            "all",
            "group order of transactions: all permutations, fixed, or with_release (all permutations of the "
            "transactions' and the release notifications' groups together; otherwise release notifications rank last)",
            choices=("all", "fixed", "with_release"),
        ),
        Constant(
            "mutant",
            str,
            "none",
            "a deliberately broken variant for testing the checks: none, no_staging (entries "
            "are inserted committed at the commit timestamp: no blocks), lock2_unordered (locks mode: "
            "bus1_mutex_lock2 takes its two locks in argument order, not by address), or one_user_ref "
            "(counted refs: a user release lets go of the handle whatever n_user says, the approximation "
            "of one user reference per handle), or shared_unserialized (shared_groups: the peers that share a "
            "group tag run their operations concurrently, which one thread cannot)",
            choices=("none", "no_staging", "lock2_unordered", "one_user_ref", "shared_unserialized"),
        ),
        Constant(
            "liveness",
            str,
            "code",
            "the liveness rule of bus1_handle_is_live_at: code (handle.c:641, timestamps only: live iff "
            "ts <= the destruction's timestamp) or key (the fix: live iff the entry's full queue key "
            "(ts, group, address) is at most the destruction entry's)",
            choices=("code", "key"),
        ),
        Constant(
            "addresses",
            str,
            "ascending",
            "memory order of the handles' queue nodes (the queue's third sort key, deciding ties of one "
            "transaction's entries on one queue): ascending or descending in (peer, node)",
            choices=("ascending", "descending"),
        ),
        Constant(
            "locks",
            bool,
            False,
            "lock-level mode (specs/bus1_locks.py): every mutex_lock of a data lock is an action, each "
            "critical section's body runs at its release, and unlocked accesses are split into their loads "
            "and stores",
        ),
        Constant(
            "stage_lock",
            bool,
            False,
            "locks mode: message.c:472 stages a data message under the destination's data lock (the fix for "
            "the unlocked staging; the code takes no lock there)",
        ),
        Constant(
            "refs",
            str,
            "holder",
            "references of remote handles: holder (attached while a message carrying it or its user holds "
            "it, released at the first release) or counted (as handle.c keeps n_weak/n_strong: each message "
            "in flight holds a reference to its payload handle at its destination, given up when the "
            "message is installed, dropped or flushed; the user's references (n_user) are counted too, one per "
            "installed or transferred handle, one less per release; a user release leaves the handle attached while "
            "such references remain)",
            choices=("holder", "counted"),
        ),
        Constant(
            "acquire",
            str,
            "together",
            "how a send acquires its payload handles at each destination (message.c:bus1_message_stage "
            "calls bus1_handle_acquire per handle, each under lock2(holder, owner)): together (one step for "
            "all) or each (one step per handle, other peers' steps between them; the lock-level mode always "
            "takes them one by one)",
            choices=("together", "each"),
        ),
        Constant(
            "flush_front",
            bool,
            False,
            "the fix for finding E: bus1_queue_flush recomputes front from the leftmost entry left (the code "
            "sets front = NULL, queue.c:116, and never recomputes it)",
        ),
        Constant(
            "join_failure",
            str,
            "stale",
            "what a failed bus1_tx_join leaves (finding F): stale (the code, handle.c:300-303: the handle keeps "
            "timestamp 0 and bus1_handle_is_live_at answers live for ever) or invalid (the fix: the handle "
            "records the destruction's timestamp, so a message ordered after it reads BUS1_HANDLE_INVALID)",
            choices=("stale", "invalid"),
        ),
        Constant(
            "synthetic_tie",
            str,
            "code",
            "the address test of bus1_queue_commit_synthetic on a (timestamp, group) tie with the leftmost entry "
            "(finding D): code (node < t, queue.c:350) or flipped (node > t)",
            choices=("code", "flipped"),
        ),
        Constant(
            "transfer",
            str,
            "atomic",
            "BUS1_CMD_HANDLE_TRANSFER (peer.c:455-531): atomic (one step) or steps (the bus1_handle_is_live check, "
            "peer.c:472, then the acquire and its join, peer.c:518, a step later: other peers run between them, "
            "while the two peers' local locks, peer.c:463, keep the target from running an ioctl)",
            choices=("atomic", "steps"),
        ),
        Constant(
            "shared_groups",
            str,
            "",
            "peers driven by one thread, e.g. \"ab\" (empty: every peer has its own): their transactions "
            "share one group tag, the address of the struct bus1_tx on that thread's stack, which every "
            "ioctl of the thread reuses (queue.h assumes tags are not reused), and their operations run one "
            "at a time",
        ),
        Constant(
            "install_lock",
            bool,
            False,
            "locks mode: message.c:522 checks each payload handle's liveness under the receiver's data lock "
            "(what handle.c:626 asserts; the code takes no lock there)",
        ),
        Constant(
            "transfer_check",
            str,
            "bit",
            "how BUS1_CMD_HANDLE_TRANSFER decides that the handle is invalid (findings I and J): bit (the code, "
            "peer.c:472: bus1_handle_is_live tests the DESTROYED bit, set when a destruction starts, before the "
            "acquire) or join (the fix: the target's handle is acquired first, joining a destruction in progress, "
            "and the transfer answers INVALID only if the node is destroyed and the target's handle did not join "
            "it, a failed or impossible join; that handle is released again)",
            choices=("bit", "join"),
        ),
        Constant(
            "owner_gone_steps",
            bool,
            False,
            "locks mode, finding H followed past its assertions: the anchor's release walks the node's map, "
            "resets it and sets RELEASED in three steps under the owner's lock (handle.c:450-459), and a join "
            "without the origin's lock (tx.c:226-241) tests SEALED in one step and pushes onto tx->async and "
            "stages in the next; a splice during the walk (map_one_writer), into the reset map (no_leaked_pin), "
            "or a push onto a transaction that has returned (no_use_after_free) is flagged",
        ),
        Constant(
            "join_sealed",
            str,
            "synthetic",
            "a handle acquired while its node's destruction is sealed and not yet committed (tx.c:238-243, case "
            "J2, finding G): synthetic (the code: bus1_tx_join commits a synthetic notification at the commit "
            "timestamp at once, before the destruction's sync round has finished) or wait (the candidate fix: the "
            "acquire waits until the commit round has committed the anchor, and then joins as J3; at lock level "
            "the acquire section takes no lock meanwhile, and drops its locks if it finds the destruction sealed "
            "under them)",
            choices=("synthetic", "wait"),
        ),
        Constant(
            "stale_handle",
            str,
            "live",
            "a handle attached to a node already released (handle.c:349-353: a stale handle, never in the map, "
            "joining nothing): live (the code: its timestamp stays 0, so bus1_handle_is_live_at answers live for "
            "ever, although the node was destroyed before the release) or invalid (the fix: it records the "
            "destruction's timestamp, so a message ordered after the destruction reads BUS1_HANDLE_INVALID)",
            choices=("live", "invalid"),
        ),
        Constant(
            "acquire_owner",
            str,
            "active",
            "locks mode (finding H): how bus1_handle_acquire_slow finds the owner to lock: active (the code, "
            "handle.c:416: bus1_handle_acquire_owner, no owner once the anchor's n_weak is 0 or the owner is "
            "deactivated, while bus1_handle_acquire_locked still treats the owner as present until RELEASED is "
            "set) or pinned (the fix: the owner is locked unless the anchor's n_weak is 0, a disconnecting owner "
            "included, its memory pinned by the anchor's weak reference, and bus1_handle_acquire_locked treats an "
            "owner it did not lock as released: the handle is attached stale, outside the map)",
            choices=("active", "pinned"),
        ),
    )
    ghost_at = GHOST
    txs_at = TXS

    # -- setup ------------------------------------------------------------------------

    def setup(self) -> None:
        n = self.peers
        self.names = peer_names(n)
        owners = []
        for i, ch in enumerate(self.nodes):
            if ch not in self.names:
                raise ConstantError("nodes", f"node {i} is owned by {ch!r}, which is not a peer ({', '.join(self.names)})")
            owners.append(self.names.index(ch))
        if not 1 <= len(owners) <= 4:
            raise ConstantError("nodes", "give between 1 and 4 nodes")
        self.owners = tuple(owners)
        self.n_nodes = len(owners)
        if len(self.handles) > self.n_nodes:
            raise ConstantError("handles", f"{len(self.handles)} entries for {self.n_nodes} nodes")
        holders = [0] * self.n_nodes
        for i, who in enumerate(self.handles):
            if not isinstance(who, str):
                raise ConstantError("handles", f"entry {i} must be a string of peer names")
            for ch in who:
                if ch not in self.names:
                    raise ConstantError("handles", f"entry {i}: {ch!r} is not a peer")
                if self.names.index(ch) == owners[i]:
                    raise ConstantError("handles", f"entry {i}: {ch} owns node {i}; list only remote holders")
                holders[i] |= 1 << self.names.index(ch)
        self.holders = tuple(holders)
        fresh = []
        for i, node in enumerate(self.fresh):
            if isinstance(node, bool) or not isinstance(node, int) or not 0 <= node < self.n_nodes:
                raise ConstantError("fresh", f"entry {i}: {node!r} is not a node number (0..{self.n_nodes - 1})")
            if holders[node]:
                raise ConstantError("fresh", f"node {node} does not exist at the start, so nobody holds it (handles)")
            fresh.append(node)
        self.fresh_nodes = tuple(sorted(set(fresh)))
        self.ops = parse_script(self.script, self.names, self.owners, self.holders, self.fresh_nodes)
        # Message-producing operations: their ids (sender * stride + seq) and group slots.
        self.msg_ops: list[list[Op]] = [[op for op in ops if op.makes_message] for ops in self.ops]
        self.stride = max(1, max(len(m) for m in self.msg_ops))
        self.plan = None
        self.choices = None
        self.tx_slots = [(p, k) for p in range(n) for k in range(len(self.msg_ops[p]))]
        self.n_tx = len(self.tx_slots)
        self.mbase = 1 + n * self.n_nodes
        self.dest_table = tuple(members(mask) for mask in range(1 << n))
        if self.stage_lock and not self.locks:
            raise ConstantError("stage_lock", "takes effect in the lock-level mode only: set locks = true")
        if self.install_lock and not self.locks:
            raise ConstantError("install_lock", "takes effect in the lock-level mode only: set locks = true")
        if self.acquire == "each" and self.locks:
            raise ConstantError("acquire", "the lock-level mode acquires payload handles one by one already: "
                                "leave acquire = \"together\" with locks = true")
        if self.mutant == "no_staging" and self.locks:
            raise ConstantError("mutant", "no_staging is a mutant of the default mode: set locks = false")
        if self.mutant == "one_user_ref" and self.refs != "counted":
            raise ConstantError("mutant", "one_user_ref is a mutant of the counted references: set refs = \"counted\"")
        if self.mutant == "lock2_unordered" and not self.locks:
            raise ConstantError("mutant", "lock2_unordered takes effect in the lock-level mode only: set locks = true")
        self.release_owners = tuple(sorted({o for o in self.owners})) if self.ties == "with_release" else ()
        shared = []
        for ch in self.shared_groups:
            if ch not in self.names or self.names.index(ch) in shared:
                raise ConstantError("shared_groups", f"{ch!r} is not a peer, or is named twice ({', '.join(self.names)})")
            shared.append(self.names.index(ch))
        if len(shared) == 1:
            raise ConstantError("shared_groups", "name at least two peers (one peer's transactions never overlap)")
        if self.transfer == "steps" and self.locks:
            raise ConstantError("transfer", "not modelled at lock level: leave transfer = \"atomic\" with locks = true")
        if self.owner_gone_steps and not self.locks:
            raise ConstantError("owner_gone_steps", "takes effect in the lock-level mode only: set locks = true")
        if self.acquire_owner == "pinned" and not self.locks:
            raise ConstantError("acquire_owner", "takes effect in the lock-level mode only (atomic sections "
                                "always lock the owner): set locks = true")
        if shared and self.locks:
            raise ConstantError("shared_groups", "not modelled at lock level: leave it empty with locks = true")
        if self.mutant == "shared_unserialized" and not shared:
            raise ConstantError("mutant", "shared_unserialized needs shared_groups")
        self.shared = tuple(sorted(shared))
        slots = [i for i, (p, _k) in enumerate(self.tx_slots) if p in self.shared]
        self.shared_slot = slots[0] if slots else -1
        self.refs_at = REFS + 2 if self.locks else REFS  # after LOCKS and THREADS in locks mode

    # -- encoding helpers ---------------------------------------------------------------

    def hidx(self, p: int, node: int) -> int:
        return p * self.n_nodes + node

    def haddr(self, p: int, node: int) -> int:
        """The address of ``p``'s handle to ``node`` (its queue node), by the ``addresses`` order."""
        i = p * self.n_nodes + node
        return 1 + i if self.addresses == "ascending" else self.peers * self.n_nodes - i

    def hsplit(self, addr: int) -> tuple[int, int]:
        """The (peer, node) of the handle at ``addr``: the inverse of :meth:`haddr`."""
        i = addr - 1 if self.addresses == "ascending" else self.peers * self.n_nodes - addr
        return divmod(i, self.n_nodes)

    def msg_addr(self, mid: int, d: int, flipped: bool = False) -> int:
        """The address of message ``mid``'s entry on ``d``: in message order, or (``flipped``, a
        queue of ``shared_groups`` whose entries may tie) in the reverse order; either way above
        every handle's, and :meth:`msg_of` reads ``mid`` back."""
        key = 2 * self.peers * self.stride - 1 - mid if flipped else mid
        return self.mbase + key * self.peers + d

    def msg_of(self, addr: int) -> int:
        """The message of the entry at ``addr`` (the inverse of :meth:`msg_addr`)."""
        key = (addr - self.mbase) // self.peers
        big = self.peers * self.stride
        return key if key < big else 2 * big - 1 - key

    def flipped(self, ranks: tuple, d: int) -> bool:
        """With ``shared_groups``: whether the message entries on ``d`` are at addresses in the
        reverse of message order (the last element of ``ranks`` holds one bit per peer; the
        initial states hold both orders for every queue two of the thread's peers send to)."""
        return bool(self.shared) and bool(ranks[-1] >> d & 1)

    def both_orders(self) -> list[int]:
        """With ``shared_groups``: the queues two of the thread's peers send to, whose message
        entries start in either address order (the initial states hold both: :meth:`flipped`)."""
        return [d for d in range(self.peers) if sum(1 for p in self.shared if any(
            self.owners[node] == d for op in self.msg_ops[p] if op.kind == SEND for node in op.nodes)) > 1]

    def op_of(self, mid: int) -> Op:
        return self.msg_ops[mid // self.stride][mid % self.stride]

    def msg_node_at(self, mid: int, d: int) -> int:
        """The destination node on peer ``d`` of data message ``mid``."""
        return next(n for n in self.op_of(mid).nodes if self.owners[n] == d)

    def group_of(self, ranks: tuple, mid: int) -> int:
        """The group tag of message ``mid``'s transaction: its rank, or with ``shared_groups`` the
        one tag of its thread's transactions."""
        p, k = mid // self.stride, mid % self.stride
        if p in self.shared:
            return ranks[self.shared_slot]
        return ranks[self.tx_slots.index((p, k))]

    def serialized(self, txs: Any, p: int) -> bool:
        """Whether ``p`` must wait: another peer of its thread (``shared_groups``) is inside an
        operation, and one thread runs one ioctl at a time."""
        if p not in self.shared or self.mutant == "shared_unserialized":
            return False
        return any(txs[r] for r in self.shared if r != p)

    def release_group(self, owner: int, ranks: tuple = ()) -> int:
        """The group tag of ``owner``'s release notifications (the owner peer in the code): after
        every transaction, or ranked among them by ``ranks`` with ``ties = "with_release"``."""
        if self.release_owners:
            return ranks[self.n_tx + self.release_owners.index(owner)]
        return self.n_tx + 1 + owner

    # -- states -------------------------------------------------------------------------

    def init_states(self) -> list[tuple]:
        n, nn = self.peers, self.n_nodes
        handles = []
        for p in range(n):
            for node in range(nn):
                held = (self.owners[node] == p and node not in self.fresh_nodes) or self.holders[node] >> p & 1
                handles.append((PUBLIC if held else NONE, 0, 0))
        valid = tuple(sum(1 << node for node in range(nn) if handles[p * nn + node][0] == PUBLIC) for p in range(n))
        empty = tuple(() for _ in range(n))
        base = [
            tuple(bq.EMPTY for _ in range(n)),
            tuple(handles),
            tuple(F_ABSENT if node in self.fresh_nodes else 0 for node in range(nn)),
            (0,) * n,
            (0,) * n,
            (empty, empty),
            (),
            (0,) * n,
            (0,) * n,
            valid,
            tuple(() for _ in range(n)),
            (0, 0),
            (),
        ]
        ids = tuple(range(1, self.n_tx + len(self.release_owners) + 1))
        orders = permutations(ids) if self.ties != "fixed" else [ids]
        if self.shared:  # message address orders per queue: both, where two of the thread's peers send
            both = self.both_orders()
            masks = [sum(1 << d for i, d in enumerate(both) if m >> i & 1) for m in range(1 << len(both))]
            orders = [(*r, m) for r in orders for m in masks]
        if self.locks:
            base += [(0,) * n, ((),) * n]
        if self.refs == "counted":
            base.append((0,) * (n * nn))
            base.append(tuple(1 if self.holders[node] >> p & 1 else 0 for p in range(n) for node in range(nn)))
        out = []
        for ranks in orders:
            s = list(base)
            s[RANKS] = tuple(ranks)
            out.append(tuple(s))
        return out

    # -- the world: a mutable copy of a state for one step ------------------------------

    def next_states(self, state: tuple) -> list[tuple[tuple, tuple]]:
        if self.locks:
            return bus1_locks.next_states(self, state)
        out = []
        for p in range(self.peers):
            tx = state[TXS][p]
            if tx:
                if tx[0] == DRAIN and not self.drained(state, p):
                    continue
                if self.join_sealed == "wait" and self.waits_for_commit(state, p):
                    continue
                w = World(self, state)
                w.actor = p
                label = w.tx_step(p)
                out.append((label, w.freeze(state)))
                continue
            if self.shared and self.serialized(state[TXS], p):
                continue
            if self.transfer == "steps" and any(tx and tx[0] == XFER and tx[2] == p for tx in state[TXS]):
                continue  # a transfer to p holds p's local lock (peer.c:463)
            q = state[Q][p]
            if q[3] and bq.find(q[4], q[3]) >= 0 and not self.gone(state[PCS], state[TXS], p):
                w = World(self, state)
                w.actor = p
                label = w.peek(p)
                out.append((label, w.freeze(state)))
            if state[PCS][p] < len(self.ops[p]):
                op = self.ops[p][state[PCS][p]]
                if op.kind in (SIGNAL, TRANSFER) and state[TXS][op.target]:
                    continue  # the signalled peer takes it between its own transactions
                if op.waits and not self.holds(state, p, op.waits):
                    continue  # the user has not received the handle yet
                if op.kind == TRANSFER and self.join_sealed == "wait" and self.transfer == "atomic" \
                        and not (self.transfer_check == "bit" and state[NODES][op.nodes[0]] & F_DESTROYED) \
                        and self.sealed_join(state, op.target, op.nodes[0]):
                    continue  # (a transfer answered INVALID by the DESTROYED bit acquires nothing: no wait)
                w = World(self, state)
                w.actor = p
                label = w.start(p)
                out.append((label, w.freeze(state)))
        return out

    def sealed_join(self, state: tuple, d: int, node: int) -> bool:
        """Whether acquiring ``d``'s handle to ``node`` now would join a sealed destruction whose
        commit round has not reached the anchor (tx.c:226-243, case J2)."""
        owner = self.owners[node]
        if owner == d or state[H][self.hidx(d, node)][0] in (ATTACHED, PUBLIC):
            return False
        if not state[NODES][node] & F_DESTROYED or state[NODES][node] & F_RELEASED:
            return False
        tx = state[TXS][owner]
        return bool(state[H][self.hidx(owner, node)][1] & 1 and tx and tx[5])

    def waits_for_commit(self, state: tuple, p: int) -> bool:
        """``join_sealed = "wait"`` (the candidate fix for G): whether ``p``'s next step, an acquire
        of payload handles (or a transfer's acquire), would join a sealed destruction (J2); it waits
        until the destruction's commit round has committed the anchor (then it joins as J3)."""
        tx = state[TXS][p]
        if tx[0] == XFER:
            return self.sealed_join(state, tx[2], tx[1])
        if tx[0] != ACQ:
            return False
        op = self.op_of(tx[1])
        d = self.owners[tuple(reversed(op.nodes))[tx[2]]]
        if self.acquire == "each":
            nodes: tuple = (op.payload[tx[9][0] if tx[9] else 0],)
        else:
            nodes = op.payload
        return any(self.sealed_join(state, d, h) for h in nodes)

    def drained(self, state: tuple, p: int) -> bool:
        """bus1_active_drain of ``p``: no other peer's transaction holds an active reference to
        ``p``, i.e. has an entry for ``p`` not yet committed (a send's destination pinned from
        bus1_peer_new_message to its commit, tx.c:356; a postponed or joined holder likewise)."""
        for r, tx in enumerate(state[TXS]):
            if r == p or not tx:
                continue
            phase, mid, i, _ts, _ats, _T, _grp, sync, asyn, post = tx
            if phase == XFER:
                continue  # a transfer holds no entry (the acquire pins no queue)
            if phase == ACQ:
                post = ()  # while acquiring, post holds the next payload handle's index, not an entry
            if any(self.entry_peer(a) == p for a in sync + asyn + post if a):
                return False
            op = self.op_of(mid)
            if op.kind == SEND and phase in (ACQ, STAGE):
                if any(self.owners[n] == p for n in tuple(reversed(op.nodes))[i:]):
                    return False
        return True

    def gone(self, pcs: Any, txs: Any, p: int) -> bool:
        """Whether ``p`` has started ``BUS1_CMD_PEER_DISCONNECT`` (deactivated: bus1_peer_acquire fails)."""
        ops = self.ops[p]
        if not ops or ops[-1].kind != DISCONNECT:
            return False
        return pcs[p] == len(ops) or (pcs[p] == len(ops) - 1 and bool(txs[p]))

    def world(self, state: tuple) -> World:
        """A mutable copy of ``state`` for one step (the lock-level mode's steps use it)."""
        return World(self, state)

    def action_kinds(self) -> tuple[str, ...]:
        """The action names this configuration's scripts make possible (coverage warns of any
        that never fires): the steps every send, destruction, reset, release, transfer,
        disconnect and signal goes through, and at lock level the lock and unlocked steps."""
        kinds = [op.kind for ops in self.ops for op in ops]
        sends = SEND in kinds
        payload = any(op.payload for ops in self.ops for op in ops)
        destroys = any(k in ("destroy", *FLUSHING) for k in kinds)
        out: list[str] = []
        if sends:
            out += ["bus1_peer_ioctl_send", "bus1_message_stage"]
        if payload:
            out.append("bus1_handle_acquire")
        if destroys:
            out.append("bus1_handle_destroy_locked")
        if sends or destroys:
            out += ["bus1_queue_tick", "bus1_queue_sync", "bus1_queue_commit_staged"]
        if destroys or RELEASE in kinds or (self.locks and sends):
            out.append("bus1_peer_peek")  # notifications (and drops); at lock level every receive
        if sends:
            out.append("bus1_peer_ioctl_recv")
        if any(k in FLUSHING for k in kinds):
            out += ["bus1_peer_flush", "bus1_queue_flush"]
        if DISCONNECT in kinds:
            out.append("bus1_peer_disconnect")
        if RELEASE in kinds:
            out.append("bus1_handle_release")
        if TRANSFER in kinds:
            out.append("bus1_peer_transfer")
        if SIGNAL in kinds:
            out.append("signal")
        if self.locks:
            out.append("mutex_lock")
            if sends and not self.stage_lock:
                out.append("bus1_queue_stage")
            if payload and not self.install_lock:
                out.append("bus1_handle_is_live_at")
        return tuple(out)

    def holds(self, state: tuple, p: int, nodes: tuple[int, ...]) -> bool:
        """Whether ``p``'s user holds a handle to each of ``nodes`` (received, valid)."""
        return all(state[H][self.hidx(p, node)][0] == PUBLIC for node in nodes)

    def finished(self, state: tuple) -> bool:
        if self.locks:
            return not any(state[TXS]) and not any(state[THREADS])
        return not any(state[TXS])

    def _deadlock(self, state: tuple) -> str | None:
        if self.locks:
            return bus1_locks.stuck(self, state)
        return super()._deadlock(state)

    # -- history ------------------------------------------------------------------------

    def history_key(self, state: tuple) -> Any:
        return (state[GHOST], state[DROPS])

    def history(self, state: tuple) -> History:
        sent, logs = state[GHOST]
        drops = {(q, mid): REASONS[r] for q, mid, r in state[DROPS]}
        return History.from_raw(self.names, sent, logs, self.stride, drops=drops)

    # -- properties -----------------------------------------------------------------------

    def properties(self) -> list[Property]:
        return [
            *LIBRARY,
            *WITNESSES,
            self.deadlock_free(),
            Property.always("clock_parity", self._clock_parity, doc=_DOCS["clock_parity"]),
            Property.always("clock_monotonic", self._bit(B_CLOCK, "clock_monotonic"), doc=_DOCS["clock_monotonic"]),
            Property.always("staging_bounds", self._staging_bounds, doc=_DOCS["staging_bounds"]),
            Property.always("front_consistent", self._front_consistent, doc=_DOCS["front_consistent"]),
            Property.always("front_linked", self._front_linked, doc=_DOCS["front_linked"]),
            Property.always("no_insert_before_front", self._bit(B_FRONT, "no_insert_before_front"),
                            doc=_DOCS["no_insert_before_front"]),
            Property.always("dequeue_increasing", self._bit(B_DEQUEUE, "dequeue_increasing"),
                            doc=_DOCS["dequeue_increasing"]),
            Property.always("no_warn", self._bit(B_WARN, "no_warn"), doc=_DOCS["no_warn"]),
            Property.always("delivered_iff_before_destroy", self._bit(B_DEST, "delivered_iff_before_destroy"),
                            doc=_DOCS["delivered_iff_before_destroy"]),
            Property.always("owner_no_message_after_destroy", self._bit(B_OWNER, "owner_no_message_after_destroy"),
                            doc=_DOCS["owner_no_message_after_destroy"]),
            Property.always("handle_valid_iff_before_destroy", self._bit(B_HANDLE, "handle_valid_iff_before_destroy"),
                            doc=_DOCS["handle_valid_iff_before_destroy"]),
            Property.eventually("valid_handle_notified", self._valid_handle_notified,
                                doc=_DOCS["valid_handle_notified"]),
            Property.eventually("queue_drained", self._queue_drained, doc=_DOCS["queue_drained"]),
            Property.sometimes("late_join", self._late_join, doc=_DOCS["late_join"]),
            Property.sometimes("destroy_notified", self._destroy_notified, doc=_DOCS["destroy_notified"]),
            *(self._lock_properties() if self.locks else ()),
            *([Property.always("release_when_unreferenced", self._bit(B_RELEASE, "release_when_unreferenced"),
                               doc=_DOCS["release_when_unreferenced"])] if self.refs == "counted" else []),
            *([Property.sometimes("acquire_split", self._split, doc=_DOCS["acquire_split"])]
              if self.acquire == "each" else []),
            *([Property.sometimes("group_tie", self._group_tie, doc=_DOCS["group_tie"])] if self.shared else []),
            *([Property.always(name, self._bit(bit, name), doc=_DOCS[name])
               for name, bit in (("map_one_writer", B_MAPRACE), ("no_leaked_pin", B_LEAK),
                                 ("no_use_after_free", B_UAF))] if self.owner_gone_steps else []),
        ]

    def _group_tie(self, state: tuple) -> str | None:
        for p, q in enumerate(state[Q]):
            msgs = [e for e in q[4] if e[2] >= self.mbase and not e[0] & 1]  # committed: staging ties are moot
            for i, e in enumerate(msgs):
                for f in msgs[i + 1:]:
                    if e[:2] == f[:2]:
                        return (f"{self.names[p]}'s queue holds {self.entry_name(e[2])} and {self.entry_name(f[2])} "
                                f"at one timestamp {e[0]} with one group tag")
        return None

    def _split(self, state: tuple) -> str | None:
        if state[BAD][0] & B_SPLIT:
            return "a destruction started between two payload-handle acquisitions of one message"
        return None

    def _lock_properties(self) -> list[Property]:
        return [
            Property.always("one_writer", lambda s: bus1_locks.one_writer(self, s), doc=_DOCS["one_writer"]),
            Property.always("lockdep_held", lambda s: bus1_locks.lockdep_held(self, s), doc=_DOCS["lockdep_held"]),
            Property.sometimes("install_window", lambda s: bus1_locks.install_window(self, s),
                               doc=_DOCS["install_window"]),
        ]

    def _bit(self, bit: int, name: str):
        def check(state: tuple) -> str | None:
            bits, warns = state[BAD]
            if not bits & bit:
                return None
            text = _DOCS[name]
            if bit == B_WARN or bit == B_FRONT:
                fired = [bq.WARN_NAMES[w] for w in sorted(bq.WARN_NAMES) if warns & w]
                return f"broken: {text} (WARN_ON fired: {'; '.join(fired)})"
            return f"broken: {text} (see the trace's last step)"

        return check

    def _clock_parity(self, state: tuple) -> str | None:
        for p, (clock, flush, _l, _f, entries) in enumerate(state[Q]):
            if clock & 1 or flush & 1:
                return f"{self.names[p]}'s clock {clock} or flush {flush} is odd"
            for e in entries:
                if e[0] == 0:
                    return f"{self.names[p]}'s queue holds an unstamped entry {e}"
        return None

    def _staging_bounds(self, state: tuple) -> str | None:
        for p, (clock, _fl, _l, _f, entries) in enumerate(state[Q]):
            for ts, _g, addr in entries:
                if ts > clock + 1 or (not ts & 1 and ts > clock):
                    return f"{self.names[p]}'s queue holds {self.entry_name(addr)} at {ts}, beyond its clock {clock}"
        for tx in state[TXS]:
            if tx and tx[5]:
                for addr in tx[7]:
                    owner = self.entry_peer(addr)
                    k = bq.key_of(state[Q][owner][4], addr)
                    if k is not None and k[0] & 1 and k[0] >= tx[5]:
                        return f"{self.entry_name(addr)} is staged at {k[0]}, not below its commit timestamp {tx[5]}"
        return None

    def _front_consistent(self, state: tuple) -> str | None:
        for p, (_c, _fl, left, front, entries) in enumerate(state[Q]):
            want_left = entries[0][2] if entries else 0
            want_front = want_left if entries and not entries[0][0] & 1 else 0
            if left != want_left or front != want_front:
                return (
                    f"{self.names[p]}'s cached pointers are leftmost={self.entry_name(left)}, front="
                    f"{self.entry_name(front)}, but its tree says leftmost={self.entry_name(want_left)}, "
                    f"front={self.entry_name(want_front)}"
                )
        return None

    def _front_linked(self, state: tuple) -> str | None:
        for p, (_c, _fl, _left, front, entries) in enumerate(state[Q]):
            if front and bq.key_of(entries, front) is None:
                return (f"{self.names[p]}'s front points at {self.entry_name(front)}, which is no longer in its tree: "
                        "bus1_queue_peek returns a removed entry")
        return None

    def _valid_handle_notified(self, state: tuple) -> str | None:
        for p in range(self.peers):
            for node in members(state[VALID][p]):
                if not state[NODES][node] & F_DESTROYED or state[NOTES][p] >> node & 1:
                    continue
                if state[H][self.hidx(p, node)][0] == PUBLIC:
                    return (
                        f"{self.names[p]} holds a valid handle to node {node}, which is destroyed, and never "
                        "receives its destroy notification"
                    )
        return None

    def _queue_drained(self, state: tuple) -> str | None:
        for p, q in enumerate(state[Q]):
            if q[4]:
                what = ", ".join(self.entry_name(e[2]) + f"@{e[0]}" for e in q[4])
                return f"the run ends with {what} on {self.names[p]}'s queue, never dequeued (front is {self.entry_name(q[3])})"
        return None

    def _destroy_notified(self, state: tuple) -> str | None:
        for p in range(self.peers):
            for node in members(state[NOTES][p]):
                return f"{self.names[p]} has received the destroy notification of node {node}"
        return None

    def _late_join(self, state: tuple) -> str | None:
        if state[BAD][0] & B_JOINFAIL:
            return "a handle attached after its node's destruction failed to join it (and reads INVALID)"
        for p in range(self.peers):
            for node in range(self.n_nodes):
                owner = self.owners[node]
                _st, ts, grp = state[H][self.hidx(p, node)]
                running = state[TXS][owner] and state[TXS][owner][6] == grp
                if owner != p and grp and ts == 0 and state[NODES][node] & F_DESTROYED and not running:
                    return f"{self.names[p]}'s handle to destroyed node {node} failed to join its destruction"
        return None

    # -- presentation -------------------------------------------------------------------

    def entry_peer(self, addr: int) -> int:
        if addr >= self.mbase:
            return (addr - self.mbase) % self.peers
        return self.hsplit(addr)[0]

    def entry_name(self, addr: int) -> str:
        if not addr:
            return "NULL"
        if addr >= self.mbase:
            mid, d = self.msg_of(addr), (addr - self.mbase) % self.peers
            return f"{self.mname(mid)}->n{self.msg_node_at(mid, d)}"
        p, node = self.hsplit(addr)
        return f"notify({self.names[p]},n{node})"

    def mname(self, mid: int) -> str:
        op = self.op_of(mid)
        base = f"{self.names[mid // self.stride]}{mid % self.stride + 1}"
        if op.kind == SEND:
            return base
        return f"{base}[{op.kind} {','.join('n' + str(x) for x in op.nodes)}]"

    def format_action(self, action: tuple) -> str:
        name, p, *rest = action
        who = self.names[p]
        args = ", ".join(str(a) for a in rest)
        if name in ("bus1_peer_ioctl_send", "bus1_handle_destroy_locked"):
            dests = ",".join(self.names[d] for d in members(rest[1])) or "nobody"
            return f"{name}: {who} starts {self.mname(rest[0])} to {dests}"
        if name == "bus1_queue_tick":
            return f"{name}: {who} seals {self.mname(rest[0])} at commit timestamp {rest[1]}"
        if name == "bus1_queue_sync":
            return f"{name}: {self.mname(rest[0])} syncs {rest[1]}'s clock to {rest[2]}"
        if name in ("bus1_message_stage", "bus1_tx_stage_sync"):
            return f"{name}: {self.mname(rest[0])} staged on {rest[1]} for {rest[2]}"
        if name == "bus1_queue_commit_staged":
            return f"{name}: {self.mname(rest[0])} commits {rest[2]} on {rest[1]}"
        if name == "bus1_handle_acquire":
            return f"{name}: {self.mname(rest[0])} attaches {rest[1]}'s payload handle: {rest[2]}"
        if name == "bus1_peer_peek":
            return f"{name}: {who} {' '.join(str(a) for a in rest)}"
        if name in ("bus1_message_stage",
                    "bus1_tx_stage_sync", "bus1_queue_tick", "bus1_queue_sync", "bus1_queue_commit_staged",
                    "bus1_peer_flush", "bus1_queue_flush", "bus1_handle_acquire"):
            mid = rest[0]
            return f"{name}: {who} {self.mname(mid)} {' '.join(str(a) for a in rest[1:])}".rstrip()
        if name == "bus1_peer_ioctl_recv":
            return f"{name}: {who} receives {self.mname(rest[0])} at {rest[1]} (handles valid: {rest[2]})"
        if name == "bus1_peer_transfer":
            return f"{name}: {who} transfers its handle to n{rest[0]} to {rest[1]}: {rest[2]}"
        if name == "bus1_handle_is_live":
            return f"{name}: {who}'s transfer of n{rest[0]} to {rest[1]} finds the node live (peer.c:472)"
        if name == "mutex_lock":
            return f"{name}: {who} takes {rest[0]}->data.lock for {rest[1]}"
        if name == "bus1_queue_stage":
            return f"{name} (unlocked): {self.mname(rest[0])} on {rest[1]}: {rest[2]}"
        if name == "bus1_handle_is_live_at":
            return f"{name} (unlocked): {who} checks {rest[0]}'s payload handle {rest[1]}: {rest[2]}"
        return f"{name}: {who} {args}"

    def describe(self, state: tuple) -> dict[str, Any]:
        h, messages = self.common_view(state)
        peers = {}
        for p, name in enumerate(self.names):
            clock, flush, left, front, entries = state[Q][p]
            tx = state[TXS][p]
            tx_text = None
            if tx and tx[0] == XFER:
                tx_text = f"transfer of n{tx[1]} to {self.names[tx[2]]}: checked live, not yet acquired"
            elif tx:
                phase, mid, i, ts, ats, T, grp, sync, asyn, post = tx
                tx_text = (f"{self.mname(mid)} group {grp}: {PHASES[phase]} (running max {ts}, async {ats}, "
                           f"commit ts {T or '-'}; sync [{', '.join(self.entry_name(a) for a in sync)}])")
            peers[name] = {
                "clock": clock,
                "flush": flush,
                "queue": [f"{self.entry_name(a)}@{ts}{'(staging)' if ts & 1 else ''}/g{g}" for ts, g, a in entries],
                "leftmost": self.entry_name(left),
                "front": self.entry_name(front),
                "transaction": tx_text,
                "delivered": [h.messages[m].name for m in h.deliveries(p)],
                "handles": {f"n{n}": list(state[H][self.hidx(p, n)]) for n in range(self.n_nodes)
                            if state[H][self.hidx(p, n)][0] != NONE},
            }
        out = {"peers": peers, "messages": messages, "nodes": {f"n{n}": f for n, f in enumerate(state[NODES])},
               "group_ranks": list(state[RANKS]), "ghost_bits": list(state[BAD])}
        if self.locks:
            out.update(bus1_locks.describe(self, state))
        return out

    # -- the refinement projection ----------------------------------------------------

    def observe(self, before: tuple, label: tuple, after: tuple) -> tuple[tuple, ...]:
        """The step's events as the abstract bus1 sees them (see :mod:`ordercheck.specs.bus1_refinement`).

        ``("send", p, mid, dmask)``, ``("deliver", q, mid)``, ``("drop", q, mid)``, and
        ``("reset", p, nodes)`` when a peer's reset starts (``nodes``: the mask of the nodes it
        destroys); destructions are sends of their
        destroy transaction to the owner and the holders collected by
        ``bus1_handle_destroy_locked``. Everything else is internal.
        """
        name = label[0]
        if name == "bus1_peer_ioctl_send":
            return (("send", label[1], label[2], label[3]),)
        if name in ("signal", "bus1_peer_transfer"):
            return (("signal", label[1], self.names.index(label[-2] if name != "signal" else label[2])),)
        if name == "bus1_handle_destroy_locked":
            events: tuple[tuple, ...] = (("send", label[1], label[2], label[3]),)
            op = self.op_of(label[2])
            if op.kind in FLUSHING:
                events = (("reset", label[1], sum(1 << n for n in op.nodes)),) + events
            return events
        out = []
        logs_b, logs_a = before[GHOST][1], after[GHOST][1]
        if logs_a is not logs_b:
            for q in range(self.peers):
                for code in logs_a[q][len(logs_b[q]):]:
                    kind, mid = code & 7, code >> 3
                    if kind == DELIVER:
                        out.append(("deliver", q, mid))
                    elif kind == DROP:
                        out.append(("drop", q, mid))
        return tuple(out)


class World:
    """A mutable copy of one state, changed by one step of the code, then frozen."""

    def __init__(self, spec: Bus1Impl, s: tuple) -> None:
        self.spec = spec
        self.q = list(s[Q])
        self.h = list(s[H])
        self.nodes = list(s[NODES])
        self.txs = list(s[TXS])
        self.pcs = list(s[PCS])
        self.ghost = s[GHOST]
        self.drops = s[DROPS]
        self.know = list(s[KNOW])
        self.notes = list(s[NOTES])
        self.valid = list(s[VALID])
        self.deq = list(s[DEQ])
        self.bits, self.warns = s[BAD]
        self.ranks = s[RANKS]
        self.actor = -1  # the peer whose thread takes this step (locks mode: for the lockdep checks)
        if spec.locks:
            self.locks = list(s[LOCKS])
            self.th = list(s[THREADS])
        self.unref: list[int] = []  # locks mode: handles a dropped message's unref is to release next
        self.pending_join: tuple = ()  # owner_gone_steps: a join that tested SEALED unlocked, to push next
        if spec.refs == "counted":
            self.refs = list(s[spec.refs_at])
            self.users = list(s[spec.refs_at + USERS - REFS])

    def freeze(self, before: tuple) -> tuple:
        for p in range(self.spec.peers):
            if self.q[p][0] < before[Q][p][0] or self.q[p][1] < before[Q][p][1]:
                self.bits |= B_CLOCK
        if self.spec.locks:
            bus1_locks.check_step(self, before)
        out = (tuple(self.q), tuple(self.h), tuple(self.nodes), tuple(self.txs), tuple(self.pcs), self.ghost,
               self.drops, tuple(self.know), tuple(self.notes), tuple(self.valid), tuple(self.deq),
               (self.bits, self.warns), self.ranks)
        if self.spec.locks:
            out += (tuple(self.locks), tuple(self.th))
        if self.spec.refs == "counted":
            out += (tuple(self.refs), tuple(self.users))
        return out

    def assert_held(self, q: int, site: int) -> None:
        """``lockdep_assert_held(&q->data.lock)`` at ``site`` (locks mode; elsewhere every
        section is atomic under the locks the code takes, so the assertions hold by construction)."""
        if self.spec.locks and self.locks[q] != self.actor + 1:
            self.bits |= B_LOCKDEP
            self.warns |= site

    def warn(self, w: int) -> None:
        if not w:
            return
        self.warns |= w
        if w & FRONT_WARNS:
            self.bits |= B_FRONT
        if w & ~FRONT_WARNS:
            self.bits |= B_WARN

    # -- handles ----------------------------------------------------------------------

    def hget(self, p: int, node: int) -> tuple[int, int, int]:
        return self.h[self.spec.hidx(p, node)]

    def hset(self, p: int, node: int, st: int | None = None, ts: int | None = None, grp: int | None = None) -> None:
        i = self.spec.hidx(p, node)
        o = self.h[i]
        self.h[i] = (o[0] if st is None else st, o[1] if ts is None else ts, o[2] if grp is None else grp)

    def is_live_at(self, p: int, node: int, key: tuple[int, int, int]) -> bool:
        """handle.c:bus1_handle_is_live_at of ``p``'s handle to ``node`` for the queue entry ``key``.

        The untimed DESTROYED bit, then, with ``liveness = "code"``, ``ts <= own destroy ts``
        (handle.c:641: the entry's group and address are not looked at); with ``"key"``, the
        entry's whole ``(ts, group, address)`` key against the handle's own destruction entry.
        """
        ts = key[0]
        if ts & 1:
            self.warn(bq.W_ODD_TS)
        self.assert_held(p, LD_LIVE)
        if not self.nodes[node] & F_DESTROYED:
            return True
        _st, qts, qgrp = self.hget(p, node)
        if qts == 0 or qts & 1:
            return True
        if self.spec.liveness == "key":
            return key <= (qts, qgrp, self.spec.haddr(p, node))
        return ts <= qts

    def destroy_key(self, node: int) -> tuple[int, int] | None:
        """The (timestamp, group) of ``node``'s destruction, once its transaction has one."""
        if not self.nodes[node] & F_DESTROYED:
            return None
        owner = self.spec.owners[node]
        _st, ts, grp = self.hget(owner, node)
        if ts and not ts & 1:
            return (ts, grp)
        tx = self.txs[owner]
        if tx and tx[6] == grp and tx[5]:
            return (tx[5], grp)
        return None

    def map_holders(self, node: int) -> list[int]:
        """The remote holders in the node's map (attached, not released), by peer."""
        if self.nodes[node] & F_RELEASED:
            return []
        return [p for p in range(self.spec.peers)
                if p != self.spec.owners[node] and self.hget(p, node)[0] in (ATTACHED, PUBLIC)]

    def queue_release(self, node: int) -> None:
        """handle.c:bus1_handle_queue_release: commit_unstaged on the owner's queue."""
        if self.nodes[node] & (F_DESTROYED | F_RELEASED):
            return
        owner = self.spec.owners[node]
        if self.spec.gone(self.pcs, self.txs, owner) and self.actor != owner:
            return  # handle.c:460-475: the owner cannot be acquired, the handle is left linked
        self.assert_held(owner, LD_QUEUE_RELEASE)
        addr = self.spec.haddr(owner, node)
        if bq.key_of(self.q[owner][4], addr) is None:
            grp = self.spec.release_group(owner, self.ranks)
            self.q[owner], ts, w = bq.commit_unstaged(self.q[owner], addr, grp)
            self.warn(w)
            self.hset(owner, node, ts=ts, grp=grp)

    def flush_release(self, node: int) -> None:
        """handle.c:bus1_handle_flush_release: a queued release notification is removed."""
        if self.nodes[node] & (F_DESTROYED | F_RELEASED):
            return
        owner = self.spec.owners[node]
        if self.spec.gone(self.pcs, self.txs, owner) and self.actor != owner:
            return  # handle.c:391: no owner acquired, nothing flushed
        self.assert_held(owner, LD_FLUSH_RELEASE)
        addr = self.spec.haddr(owner, node)
        if bq.key_of(self.q[owner][4], addr) is not None:
            self.q[owner], w = bq.remove(self.q[owner], addr)
            self.warn(w)

    def release_handle(self, p: int, node: int) -> None:
        """handle.c:bus1_handle_release_locked for a remote handle: detach, maybe notify."""
        self.hset(p, node, st=RELEASED)
        if not self.map_holders(node):
            self.queue_release(node)

    def user_release(self, p: int, node: int, every: bool = False) -> None:
        """The user lets go of one reference to ``p``'s handle to ``node`` (peer.c:441, n_user - 1),
        or of ``every`` one (a reset: peer.c:198, atomic_xchg(&h->n_user, 0)). With counted
        references the handle stays the user's while it has user references left, and attached
        while messages in flight hold it (n_weak > 0, n_strong > 0)."""
        if self.spec.refs == "counted":
            i = self.spec.hidx(p, node)
            # A scripted release waits until the user holds the handle (n_user >= 1: holds()).
            self.users[i] = 0 if every else self.users[i] - 1
            if self.users[i] and self.spec.mutant != "one_user_ref":
                return
            if self.refs[i]:
                self.hset(p, node, st=ATTACHED)
                return
        self.release_handle(p, node)

    def take_ref(self, d: int, node: int) -> None:
        """A message in flight to ``d`` takes a reference to ``d``'s handle to ``node`` (counted refs)."""
        if self.spec.refs == "counted":
            self.refs[self.spec.hidx(d, node)] += 1

    def drop_ref(self, p: int, node: int) -> bool:
        """A message gives up its reference to ``p``'s handle to ``node`` (installed invalid,
        dropped or flushed: message.c:405, 526); whether the handle is now to be released (attached,
        and nothing else holds it)."""
        if self.spec.refs == "counted":
            i = self.spec.hidx(p, node)
            self.refs[i] -= 1
            return self.hget(p, node)[0] == ATTACHED and not self.refs[i]
        return self.hget(p, node)[0] == ATTACHED

    def drop_payload(self, p: int, mid: int) -> None:
        """A data message dropped or flushed on ``p`` gives up its payload handles (counted refs)."""
        if self.spec.refs == "counted":
            for h in self.spec.op_of(mid).payload:
                if self.spec.owners[h] != p and self.drop_ref(p, h):
                    if self.spec.locks:  # released after the section, under lock2(holder, owner)
                        self.unref.append(h)
                    else:
                        self.release_handle(p, h)

    # -- ghost helpers ------------------------------------------------------------------

    def learn(self, p: int, mid: int) -> None:
        """``p`` learns message ``mid`` and its causal past (the past recorded when it was sent):
        on delivering it, on seeing a destroy notification it is no destination of, and on
        finding a handle invalid (``mid``: the node's destruction; :meth:`know_destroy`)."""
        self.know[p] |= (1 << mid) | message_past(self.ghost, mid, self.spec.stride)

    def know_destroy(self, p: int, node: int) -> None:
        """``p``, finding its handle to ``node`` invalid, learns the node's destroy message and
        its causal past, if there is one."""
        dmid = self.destroy_mid(node, self.hget(self.spec.owners[node], node)[2])
        if dmid is not None:
            self.learn(p, dmid)

    def tell(self, p: int, x: int) -> None:
        """``x`` learns everything ``p`` knows: a signal from ``p``, or a transfer's answer (the
        ID, or BUS1_HANDLE_INVALID) reaching ``x``'s user out of band."""
        self.know[x] |= self.know[p]

    def log(self, p: int, kind: int, mid: int, reason: int = 0) -> None:
        logs = self.ghost[1][p]
        if any(c >> 3 == mid and c & 7 in (DELIVER, DROP) for c in logs):
            return  # a destroy transaction with several notifications on one peer logs once
        self.ghost = ghost_event(self.ghost, p, kind, mid)
        if kind == DROP:
            self.drops = self.drops + ((p, mid, reason),)
        else:
            self.learn(p, mid)

    def is_dest(self, mid: int, d: int) -> bool:
        """Whether ``d`` is a destination of message ``mid`` in the history: for a destruction, the
        owner and the holders when it started (a late joiner is not one: its notification, when
        its join succeeds, is not a delivery of the destruction, and a failed join owes it none)."""
        s, k = divmod(mid, self.spec.stride)
        return bool(self.ghost[0][s][k][0] >> d & 1)

    def dequeued(self, p: int, key: tuple) -> None:
        if self.deq[p] and key <= self.deq[p]:
            self.bits |= B_DEQUEUE
        self.deq[p] = key

    # -- starting an operation ------------------------------------------------------------

    def start(self, p: int) -> tuple:
        spec = self.spec
        op = spec.ops[p][self.pcs[p]]
        if op.kind == SIGNAL:
            self.pcs[p] += 1
            self.ghost = ghost_signal(self.ghost, p, op.target)
            self.tell(p, op.target)
            return ("signal", p, spec.names[op.target])
        if op.kind == RELEASE:
            (node,) = op.nodes
            self.pcs[p] += 1
            self.user_release(p, node)
            return ("bus1_handle_release", p, node)
        if op.kind == TRANSFER:
            return self.transfer(p, op)
        mid = p * spec.stride + len(self.ghost[0][p])
        grp = spec.group_of(self.ranks, mid)
        if op.kind == SEND and any(self.owner_unreachable(p, n) for n in op.nodes):
            # peer.c:749-752: bus1_handle_acquire_owner finds the destination's anchor released (n_weak 0,
            # handle.c:140) or its owner deactivated (bus1_peer_acquire fails): ESHUTDOWN
            self.pcs[p] += 1
            self.ghost = ghost_send(self.ghost, p, mid, 0, self.know[p])
            self.know[p] |= 1 << mid
            return ("bus1_peer_ioctl_send", p, mid, 0, "ESHUTDOWN")
        if op.kind == SEND:
            for node in op.creates:  # bus1_handle_import of a new local ID; the factory makes it public
                self.nodes[node] &= ~F_ABSENT
                self.hset(p, node, st=PUBLIC)
                self.valid[p] |= 1 << node
            dmask = 0
            for node in op.nodes:
                dmask |= 1 << spec.owners[node]
            self.ghost = ghost_send(self.ghost, p, mid, dmask, self.know[p])
            phase = ACQ if op.payload else STAGE
            self.txs[p] = (phase, mid, 0, 0, 0, 0, grp, (), (), ())
            return ("bus1_peer_ioctl_send", p, mid, dmask)
        if op.kind == DISCONNECT:  # peer.c:254: bus1_active_deactivate; the cleanup waits for the drain
            self.txs[p] = (DRAIN, mid, 0, 0, 0, 0, grp, (), (), ())
            return ("bus1_peer_disconnect", p, mid, "deactivated")
        return self.destroy_start(p, op, mid, grp)

    def owner_unreachable(self, p: int, node: int) -> bool:
        """peer.c:746-753 for ``p``'s send to ``node``: whether bus1_peer_new_message fails with
        ESHUTDOWN. A remote destination's owner is acquired by bus1_handle_acquire_owner, which reads
        the anchor's ``n_weak`` (handle.c:140: 0 once a reset released the anchor, handle.c:436) and
        then bus1_peer_acquire (fails once the owner is deactivated); an anchor is the sender's own
        node (bus1_peer_acquire of the sender, which is active while it sends)."""
        owner = self.spec.owners[node]
        if owner == p:
            return False
        return bool(self.nodes[node] & (F_RELEASED | F_WEAK0)) or self.spec.gone(self.pcs, self.txs, owner)

    def destroy_start(self, p: int, op: Op, mid: int, grp: int) -> tuple:
        """peer.c:bus1_peer_ioctl_nodes_destroy, or bus1_peer_flush step 1: bus1_handle_destroy_locked
        for each node, one lock section."""
        spec = self.spec
        if op.nodes:
            self.assert_held(p, LD_DESTROY)
        ts = 0
        sync: tuple = ()
        post: tuple = ()
        dmask = 0
        for node in op.nodes:
            if self.nodes[node] & F_DESTROYED:
                self.warn(bq.W_QUEUED)
                continue
            self.nodes[node] |= F_DESTROYED
            addr = spec.haddr(p, node)
            if bq.key_of(self.q[p][4], addr) is not None:  # a queued release notification
                self.q[p], w = bq.remove(self.q[p], addr)
                self.warn(w)
            self.hset(p, node, ts=0, grp=grp)  # re-init as NODE_DESTROY
            ts = self.stage(p, addr, grp, ts)
            sync = (addr,) + sync
            dmask |= 1 << p
            for r in self.map_holders(node):
                if self.hget(r, node)[2]:
                    self.warn(bq.W_QUEUED)
                    continue
                self.hset(r, node, grp=grp)
                post = (spec.haddr(r, node),) + post
                dmask |= 1 << r
        self.ghost = ghost_send(self.ghost, p, mid, dmask, self.know[p])
        self.txs[p] = (POSTPONED, mid, 0, ts, 0, 0, grp, sync, (), post)
        if spec.acquire == "each":
            for tx in self.txs:
                if tx and tx[0] == ACQ and tx[9] and set(spec.op_of(tx[1]).payload) & set(op.nodes):
                    self.bits |= B_SPLIT  # some of its payload handles acquired, not all
        return ("bus1_handle_destroy_locked", p, mid, dmask)

    def transfer(self, p: int, op: Op) -> tuple:
        """peer.c:bus1_peer_transfer of ``p``'s handle to ``op.nodes[0]`` to ``op.target``: INVALID
        if the node's destruction has started (peer.c:472, the XXX there: not settled on it), else
        the target's handle acquired (handle.c:bus1_handle_acquire) and made its user's; the ID
        reaches the target's user out of band (a signal)."""
        spec = self.spec
        (node,) = op.nodes
        x = op.target
        self.pcs[p] += 1
        ghost = self.ghost
        self.ghost = ghost_signal(self.ghost, p, x)
        if self.nodes[node] & F_DESTROYED and spec.transfer_check == "bit":
            self.transfer_invalid(p, node, x)
            return ("bus1_peer_transfer", p, node, spec.names[x], "INVALID")
        if spec.transfer == "steps":  # peer.c:472 found it live; the acquire (peer.c:518) is a later step
            self.pcs[p] -= 1
            self.ghost = ghost  # the ID reaches x when the transfer returns
            self.txs[p] = (XFER, node, x, 0, 0, 0, 0, (), (), ())
            seen = "live" if spec.transfer_check == "bit" else "not checked (decided after the acquire)"
            return ("bus1_handle_is_live", p, node, spec.names[x], seen)
        return self.transfer_finish(p, node, x)

    def transfer_invalid(self, p: int, node: int, x: int) -> None:
        """The transfer answers BUS1_HANDLE_INVALID: ``p``'s user has observed the destruction, and
        tells ``x``'s (the signal)."""
        self.know_destroy(p, node)
        self.tell(p, x)

    def transfer_finish(self, p: int, node: int, x: int) -> tuple:
        """peer.c:490-527: ``x``'s handle acquired (handle.c:bus1_handle_acquire, joining a
        destruction in progress) and made its user's. With ``transfer_check = "join"`` (the fix
        for I and J) the answer is decided here instead of at peer.c:472: INVALID when the node
        is destroyed and ``x``'s handle did not join the destruction (a failed join, or a stale
        handle of a released node), which is then released again."""
        spec = self.spec
        case = self.acquire(x, node)
        if spec.transfer_check == "join" and self.nodes[node] & F_DESTROYED and spec.owners[node] != x \
                and (case.endswith("failed") or case.startswith("stale")):
            self.transfer_invalid(p, node, x)
            if self.drop_ref(x, node):  # the transfer gives up the handle it acquired
                self.release_handle(x, node)
            return ("bus1_peer_transfer", p, node, spec.names[x], f"{case}: INVALID")
        self.tell(p, x)
        if spec.owners[node] != x:
            self.commit_handle(x, node)
        return ("bus1_peer_transfer", p, node, spec.names[x], case)

    def transfer_acquire(self, p: int, node: int, x: int) -> tuple:
        """peer.c:490-527 of a transfer whose handle was found live a step earlier: ``x``'s handle
        acquired (handle.c:bus1_handle_acquire, joining the destruction if one started meanwhile)
        and made its user's; the ID reaches ``x``'s user out of band (a signal)."""
        self.txs[p] = 0
        self.pcs[p] += 1
        self.ghost = ghost_signal(self.ghost, p, x)
        return self.transfer_finish(p, node, x)

    def stage(self, d: int, addr: int, grp: int, ts: int) -> int:
        """tx.c:bus1_tx_stage -> queue.c:bus1_queue_stage on ``d``; records the node's odd
        timestamp; returns the clock."""
        self.assert_held(d, LD_TX_STAGE)
        if self.spec.mutant == "no_staging":
            self.q[d], clock, w = bq.sync(self.q[d], ts)
            self.warn(w)
            return clock
        self.q[d], clock, w = bq.stage(self.q[d], addr, grp, ts)
        self.warn(w)
        self.set_ts(addr, clock + 1, grp)
        return clock

    def set_ts(self, addr: int, ts: int, grp: int) -> None:
        spec = self.spec
        if addr < spec.mbase:
            p, node = spec.hsplit(addr)
            self.hset(p, node, ts=ts, grp=grp)

    # -- one step of a transaction ------------------------------------------------------

    def tx_step(self, p: int) -> tuple:
        spec = self.spec
        phase, mid, i, ts, ats, T, grp, sync, asyn, post = self.txs[p]
        if phase == XFER:
            return self.transfer_acquire(p, mid, i)
        op = spec.op_of(mid)
        if phase == DRAIN:  # peer.c:255-258: drained, bus1_peer_cleanup flushes the peer as a reset does
            return self.destroy_start(p, op, mid, grp)
        if phase in (ACQ, STAGE):
            order = tuple(reversed(op.nodes))  # mlist is LIFO (peer.c)
            node = order[i]
            d = spec.owners[node]
            addr = spec.msg_addr(mid, d, spec.flipped(self.ranks, d))
            if phase == ACQ and spec.acquire == "each":  # one handle a step; post holds the next one's index
                j = post[0] if post else 0
                case = self.acquire(d, op.payload[j])
                more = j + 1 < len(op.payload)
                self.txs[p] = (ACQ if more else STAGE, mid, i, ts, ats, T, grp, sync, asyn, (j + 1,) if more else ())
                return ("bus1_handle_acquire", p, mid, spec.names[d], f"n{op.payload[j]} {case}")
            if phase == ACQ:
                cases = [self.acquire(d, h) for h in op.payload]
                self.txs[p] = (STAGE, mid, i, ts, ats, T, grp, sync, asyn, post)
                return ("bus1_handle_acquire", p, mid, spec.names[d], "/".join(cases))
            ts = self.stage(d, addr, grp, ts)
            sync = (addr,) + sync
            i += 1
            if i < len(order):
                nphase = ACQ if op.payload else STAGE
            else:
                nphase, i = SEAL, 0
            self.txs[p] = (nphase, mid, i, ts, ats, T, grp, sync, asyn, post)
            return ("bus1_message_stage", p, mid, spec.names[d], f"n{node}")
        if phase == POSTPONED:
            if post:
                addr, post = post[0], post[1:]
                r, node = spec.hsplit(addr)
                ts = self.stage(r, addr, grp, ts)
                sync = (addr,) + sync
                self.txs[p] = (POSTPONED, mid, 0, ts, ats, T, grp, sync, asyn, post)
                return ("bus1_tx_stage_sync", p, mid, spec.names[r], f"n{node}")
            phase = SEAL
        if phase == SEAL:
            self.q[p], _c, w = bq.sync(self.q[p], max(ts, ats))
            self.warn(w)
            self.q[p], T = bq.tick(self.q[p])
            sync = sync + asyn  # the sync round appends the async joiners at the tail
            self.txs[p] = (SYNC, mid, 0, ts, ats, T, grp, sync, (), post)
            self.finish_if_empty(p)
            return ("bus1_queue_tick", p, mid, T)
        if phase == SYNC:
            addr = sync[i]
            r = spec.entry_peer(addr)
            self.q[r], _c, w = bq.sync(self.q[r], T)
            self.warn(w)
            i += 1
            if i == len(sync) and asyn:  # tx.c:336-338: the async list appended at the tail, synced too
                sync, asyn = sync + asyn, ()
            self.txs[p] = (SYNC, mid, i, ts, ats, T, grp, sync, asyn, post) if i < len(sync) else \
                (COMMIT, mid, 0, ts, ats, T, grp, sync, asyn, post)
            return ("bus1_queue_sync", p, mid, spec.names[r], T)
        if phase == COMMIT:
            addr, rest = sync[0], sync[1:]
            r = spec.entry_peer(addr)
            if spec.mutant == "no_staging":
                self.q[r], w = bq.add(self.q[r], addr, 0, grp, T)
            else:
                self.q[r], w = bq.commit_staged(self.q[r], addr, T)
            self.warn(w)
            self.set_ts(addr, T, grp)
            self.txs[p] = (COMMIT, mid, 0, ts, ats, T, grp, rest, asyn, post)
            self.finish_if_empty(p)
            return ("bus1_queue_commit_staged", p, mid, spec.names[r], spec.entry_name(addr))
        if phase == RELEASE_ALL:
            for node in range(spec.n_nodes):
                st = self.hget(p, node)[0]
                if st == NONE or st == RELEASED or (st == ATTACHED and spec.refs == "counted"):
                    continue  # counted: an attached handle is the messages', given up when they are flushed
                if spec.owners[node] == p:
                    self.flush_release(node)
                    self.hset(p, node, st=RELEASED)
                    self.nodes[node] |= F_RELEASED
                else:
                    self.user_release(p, node, every=True)
            self.txs[p] = (FLUSH, mid, 0, ts, ats, T, grp, sync, asyn, post)
            return ("bus1_peer_flush", p, mid, "release handles")
        # FLUSH
        self.q[p], removed, w = bq.flush(self.q[p], T, spec.flush_front)
        self.warn(w)
        for _ts, _g, addr in removed:
            if addr >= spec.mbase:
                self.log(p, DROP, spec.msg_of(addr), R_FLUSHED)
                self.drop_payload(p, spec.msg_of(addr))
            else:
                self.drop_notification(p, addr, R_FLUSHED)
        self.done(p, mid)
        return ("bus1_queue_flush", p, mid, T)

    def finish_if_empty(self, p: int) -> None:
        phase, mid, i, ts, ats, T, grp, sync, asyn, post = self.txs[p]
        if phase == SYNC and not sync:
            phase = COMMIT
        if phase == COMMIT and not sync:
            if self.spec.op_of(mid).kind in FLUSHING:
                self.txs[p] = (RELEASE_ALL, mid, 0, ts, ats, T, grp, (), (), ())
                return
            self.done(p, mid)
            return
        self.txs[p] = (phase, mid, i, ts, ats, T, grp, sync, asyn, post)

    def done(self, p: int, mid: int) -> None:
        self.txs[p] = 0
        self.pcs[p] += 1
        self.know[p] |= 1 << mid

    def acquire(self, d: int, node: int) -> str:
        """handle.c:bus1_handle_acquire_locked of ``d``'s handle to ``node``, strong."""
        spec = self.spec
        owner = spec.owners[node]
        # handle.c:346: the owner counts as present until RELEASED is set; with acquire_owner =
        # "pinned" (the fix for H) it is the owner bus1_handle_acquire_slow locked, none once the
        # anchor's n_weak is 0 (the lock-level sections hold that decision: the owner's release
        # keeps its lock from n_weak = 0 to RELEASED, handle.c:436-459)
        gone = F_RELEASED | (F_WEAK0 if spec.acquire_owner == "pinned" else 0)
        self.assert_held(d, LD_ACQ_HOLDER)
        if not self.nodes[node] & gone:
            self.assert_held(owner, LD_ACQ_OWNER)
        if owner == d:
            return "anchor"
        self.take_ref(d, node)
        st = self.hget(d, node)[0]
        if st in (ATTACHED, PUBLIC):
            return "held"
        self.hset(d, node, st=ATTACHED, ts=0, grp=0)  # a new handle from the factory
        if self.nodes[node] & gone:
            dkey = self.destroy_key(node)
            if spec.stale_handle == "invalid" and dkey is not None:
                # The fix: a stale handle of a destroyed node records the destruction's (ts, group), so
                # bus1_handle_is_live_at answers INVALID for every message ordered after it.
                self.hset(d, node, ts=dkey[0], grp=dkey[1])
                return "stale: INVALID"
            return "stale"
        if self.nodes[node] & F_WALK:  # handle.c:288-292 without the owner's lock, inside its walk
            self.bits |= B_MAPRACE
        elif self.nodes[node] & F_CLEARED:  # linked into a map nobody walks again: the pin is never dropped
            self.bits |= B_LEAK
        self.flush_release(node)  # n_strong 0 -> 1
        if not self.nodes[node] & F_DESTROYED:
            return "spliced"
        return self.join(d, node)

    def join(self, d: int, node: int) -> str:
        """tx.c:bus1_tx_join of ``d``'s new handle with the destruction of ``node``."""
        spec = self.spec
        owner = spec.owners[node]
        self.assert_held(d, LD_TX_JOIN)
        _st, wts, wgrp = self.hget(owner, node)
        addr = spec.haddr(d, node)
        tx = self.txs[owner]
        if wts & 1:
            assert tx and tx[6] == wgrp, "a staging anchor belongs to its owner's running transaction"
            phase, mid, i, ts, ats, T, grp, sync, asyn, post = tx
            self.assert_held(owner, LD_TX_JOIN_ORIGIN)
            if not T and spec.owner_gone_steps and self.locks[owner] != self.actor + 1:
                # tx.c:226-241 without the origin's lock: SEALED tested clear now, the push and stage next
                self.pending_join = (owner, node, d, grp, addr)
                return "J1 (SEALED clear, origin unlocked)"
            if not T:  # J1: stage onto the async list
                ats = self.stage(d, addr, grp, ats)
                self.txs[owner] = (phase, mid, i, ts, ats, T, grp, sync, (addr,) + asyn, post)
                return "J1"
            timestamp, case = T, "J2"
        else:
            timestamp, case = wts, "J3"
        self.hset(d, node, grp=wgrp)
        self.q[d], _c, w = bq.sync(self.q[d], timestamp)
        self.warn(w)
        self.q[d], queued, w = bq.commit_synthetic(self.q[d], addr, wgrp, timestamp,
                                                   spec.synthetic_tie == "flipped")
        self.warn(w)
        if queued:
            self.hset(d, node, ts=timestamp)
            return case
        if spec.join_failure == "invalid":
            # The fix: the handle records the destruction's timestamp (even: committed or sealed), so
            # bus1_handle_is_live_at answers INVALID for every message ordered after it; no entry queued.
            self.hset(d, node, ts=timestamp)
            self.bits |= B_JOINFAIL  # the late_join witness (the timestamp no longer tells)
        return case + " failed"

    def join_push(self, ctx: tuple) -> str:
        """owner_gone_steps: the second half of a join that tested SEALED clear without the origin's
        lock (tx.c:bus1_tx_stage onto tx->async): the push and the stage on the joiner's queue, with
        whatever the origin's transaction has done meanwhile."""
        owner, node, d, grp, addr = ctx
        tx = self.txs[owner]
        if not tx or tx[6] != grp or tx[0] in (RELEASE_ALL, FLUSH):
            if not tx or tx[6] != grp:
                self.bits |= B_UAF  # bus1_peer_flush has returned: tx is a dead stack frame
            freed = not tx or tx[6] != grp
            self.stage(d, addr, grp, 0)
            return "pushed onto a transaction that has returned: never committed" + (" (freed)" if freed else "")
        phase, mid, i, ts, ats, T, g, sync, asyn, post = tx
        if T:
            self.warn(bq.W_SEALED)
        ats = self.stage(d, addr, grp, ats)
        self.txs[owner] = (phase, mid, i, ts, ats, T, g, sync, (addr,) + asyn, post)
        if not T:
            return "J1"
        if phase == SYNC:
            return "pushed during the sync round (appended at its end)"
        return "pushed after the sync round: never committed"

    # -- receiving ------------------------------------------------------------------------

    def drop_notification(self, p: int, addr: int, reason: int) -> None:
        spec = self.spec
        hp, node = spec.hsplit(addr)
        if self.nodes[node] & F_DESTROYED:
            grp = self.hget(hp, node)[2]
            mid = self.destroy_mid(node, grp)
            if mid is not None and self.is_dest(mid, p):  # a late joiner's drop is no event of the history
                self.log(p, DROP, mid, reason)

    def destroy_mid(self, node: int, grp: int) -> int | None:
        """The history's message of ``node``'s destruction: the owner's transaction with group
        ``grp`` that destroys ``node`` (with shared_groups several of the owner's transactions
        have that group)."""
        spec = self.spec
        owner = spec.owners[node]
        for m in range(owner * spec.stride, owner * spec.stride + len(self.ghost[0][owner])):
            op = spec.op_of(m)
            if spec.group_of(self.ranks, m) == grp and op.kind != SEND and node in op.nodes:
                return m
        return None

    def peek(self, p: int) -> tuple:
        """One round of peer.c:bus1_peer_peek, and for data bus1_peer_ioctl_recv."""
        key = bq.peek(self.q[p])
        assert key is not None
        label, mid = self.peek_entry(p, key)
        if label:
            return label
        valid = []
        for h in self.spec.op_of(mid).payload:
            ok = self.install_handle(p, mid, key, h)
            if ok:
                self.commit_handle(p, h)
            elif self.drop_ref(p, h):
                self.release_handle(p, h)
            valid.append(f"n{h}" if ok else f"n{h}:INVALID")
        return self.finish_recv(p, mid, key, valid)

    def peek_entry(self, p: int, key: tuple[int, int, int]) -> tuple[tuple | None, int]:
        """peer.c:bus1_peer_peek on the front entry ``key``: drop it, or deliver a notification
        (returns the step's label), or find a data message to receive (returns ``(None, mid)``
        after checking the destination rules)."""
        spec = self.spec
        ts, grp, addr = key
        flushed = ts <= self.q[p][1]
        if addr >= spec.mbase:
            mid = spec.msg_of(addr)
            node = spec.msg_node_at(mid, p)
            reason = 0
            if flushed:
                reason = R_FLUSHED
            elif self.hget(p, node)[0] != PUBLIC:
                reason = R_NOT_PUBLIC
            elif not self.is_live_at(p, node, key):
                reason = R_DESTROYED
            dkey = self.destroy_key(node)
            before = dkey is None or (ts, grp, addr) < (*dkey, spec.haddr(p, node))
            if reason:
                self.q[p], w = bq.remove(self.q[p], addr)
                self.warn(w)
                self.dequeued(p, key)
                self.log(p, DROP, mid, reason)
                self.drop_payload(p, mid)
                if reason == R_DESTROYED and before:
                    self.bits |= B_DEST
                return ("bus1_peer_peek", p, "drop", spec.mname(mid), REASONS[reason]), mid
            if not before:
                self.bits |= B_DEST
            if self.notes[p] >> node & 1:
                self.bits |= B_OWNER
            return None, mid
        hp, node = spec.hsplit(addr)
        destroy = bool(self.nodes[node] & F_DESTROYED)
        kind = "destroy" if destroy else "release"
        reason = 0
        if flushed:
            reason = R_FLUSHED
        elif self.hget(p, node)[0] != PUBLIC:
            reason = R_NOT_PUBLIC
        elif not self.is_live_at(p, node, key):
            reason = R_DESTROYED
        self.q[p], w = bq.remove(self.q[p], addr)
        self.warn(w)
        self.dequeued(p, key)
        if reason:
            if destroy:
                self.drop_notification(p, addr, reason)
            return ("bus1_peer_peek", p, f"drop {kind} n{node}", REASONS[reason]), -1
        if destroy:
            self.notes[p] |= 1 << node
            mid = self.destroy_mid(node, grp)
            if mid is not None:
                if self.is_dest(mid, p):
                    self.log(p, DELIVER, mid)
                else:  # a late joiner's notification: not a delivery of the destruction, but seen
                    self.learn(p, mid)
        elif self.spec.refs == "counted" and self.referenced(node):
            self.bits |= B_RELEASE
        return ("bus1_peer_peek", p, f"{kind} notification n{node}", ts), -1

    def install_handle(self, p: int, mid: int, key: tuple[int, int, int], h: int) -> bool:
        """message.c:bus1_message_install's liveness check of payload handle ``h`` of message
        ``mid`` (queue key ``key``) on ``p``; checks it against the message's order."""
        ts, grp, _addr = key
        ok = self.is_live_at(p, h, key)
        hkey = self.destroy_key(h)
        expected = hkey is None or (ts, grp) < hkey
        if ok != expected:
            self.bits |= B_HANDLE
        if not ok:  # the user sees BUS1_HANDLE_INVALID: it has observed the destruction
            self.know_destroy(p, h)
        return ok

    def commit_handle(self, p: int, h: int) -> None:
        """message.c:bus1_message_install, commit handles: a valid payload handle is the user's
        (the message's reference passes to the user)."""
        if self.spec.refs == "counted" and self.spec.owners[h] != p:
            self.refs[self.spec.hidx(p, h)] -= 1
            self.users[self.spec.hidx(p, h)] += 1  # message.c:581, peer.c:521: n_user + 1
        self.hset(p, h, st=PUBLIC)
        self.valid[p] |= 1 << h

    def referenced(self, node: int) -> bool:
        """Whether a remote user holds a handle to ``node`` (with counted references: has user
        references left, n_user > 0, what the user was given minus what it released) or a
        message carrying it is still on its way to a peer other than the owner (sent, neither
        delivered nor dropped there)."""
        spec = self.spec
        owner = spec.owners[node]
        for r in range(spec.peers):
            if r != owner and (self.users[spec.hidx(r, node)] if spec.refs == "counted" else
                               self.hget(r, node)[0] == PUBLIC):
                return True
        sent, logs = self.ghost
        for s_, out in enumerate(sent):
            for k, (dmask, _past) in enumerate(out):
                mid = s_ * spec.stride + k
                op = spec.op_of(mid)
                if op.kind != SEND or node not in op.payload:
                    continue
                for r in members(dmask):
                    if r != owner and not any(c >> 3 == mid and c & 7 in (DELIVER, DROP) for c in logs[r]):
                        return True
        return False

    def finish_recv(self, p: int, mid: int, key: tuple[int, int, int], valid: list[str]) -> tuple:
        """peer.c:bus1_peer_ioctl_recv's bus1_queue_remove of the received message."""
        self.q[p], w = bq.remove(self.q[p], key[2])
        self.warn(w)
        self.dequeued(p, key)
        self.log(p, DELIVER, mid)
        return ("bus1_peer_ioctl_recv", p, mid, key[0], ",".join(valid) or "-")


_DOCS = {
    "clock_parity": "every clock and flush timestamp is even and every queued entry is stamped "
    "(queue.h: even = committed, odd = staging)",
    "clock_monotonic": "no step moves a queue's clock or flush timestamp backwards (queue.h: tick and sync only "
    "advance; queue.c: WARN_ON(ts < queue->flush))",
    "staging_bounds": "every entry is at most clock+1, every committed one at most clock, and a staged entry is "
    "below its transaction's commit timestamp (queue.c: bus1_queue_add guards)",
    "front_consistent": "the cached leftmost is the tree's first entry and front is it when committed, else NULL "
    "(queue.c: what bus1_queue_remove maintains; readiness is front != NULL)",
    "front_linked": "front is NULL or an entry in the tree (queue.c: bus1_queue_peek dereferences it)",
    "no_insert_before_front": "no entry is inserted at or before the current front, and no staged or synthetic "
    "entry becomes front (queue.c: bus1_queue_add, bus1_queue_stage, bus1_queue_commit_synthetic)",
    "dequeue_increasing": "each peer dequeues keys (ts, group, address) in increasing order (queue.h: global "
    "partial order)",
    "no_warn": "no other WARN_ON of the modelled code fires",
    "delivered_iff_before_destroy": "a message to a node is delivered iff it is ordered before the node's "
    "destruction (wiki: Destination nodes)",
    "owner_no_message_after_destroy": "the owner never receives a message for a node after that node's destroy "
    "notification (handle.h: no message after this notification carries the destroyed node)",
    "handle_valid_iff_before_destroy": "a handle arriving in a message is valid iff the message is ordered before "
    "the node's destruction (wiki: Passed handles; bus1.xml)",
    "valid_handle_notified": "a peer that holds a valid handle to a destroyed node receives its destroy "
    "notification (wiki: the notification is guaranteed to arrive after the message)",
    "queue_drained": "no run ends with an entry stuck on a queue (readiness: front is set whenever the first "
    "entry is committed)",
    "destroy_notified": "some peer receives a destroy notification (a witness that destructions are delivered "
    "at all)",
    "one_writer": "locks mode: no two writers in one queue at once (no step modifies a queue's clock or tree "
    "while another thread is inside an unlocked bus1_queue_stage on it)",
    "lockdep_held": "locks mode: every lockdep_assert_held on a data lock in the modelled functions holds when "
    "reached",
    "install_window": "locks mode, a witness: a payload handle's destruction entry is staged or committed while "
    "its receiver is between peek and the unlocked liveness check (message.c:522)",
    "release_when_unreferenced": "the owner receives a release notification only when no remote user holds a "
    "handle to the node and no message carrying one is on its way (handle.h:48-51: once all handles to a node "
    "have been released, the owner is notified)",
    "late_join": "a handle attached after its node's destruction fails to join it (tx.c:bus1_tx_join fallback)",
    "map_one_writer": "owner_gone_steps: no handle is spliced into a node's map (handle.c:288-292) while the owner's "
    "release walks it (handle.c:450-456): an unsynchronised rb-tree update during a postorder walk",
    "no_leaked_pin": "owner_gone_steps: no handle is spliced into a node's map after the owner's release reset it to "
    "empty (handle.c:457) and before RELEASED is set: its pinned reference would never be dropped, the handle "
    "never freed",
    "no_use_after_free": "owner_gone_steps: no bus1_tx_join pushes onto a transaction (tx->async, tx->async_ts) "
    "after bus1_peer_flush has returned: the struct bus1_tx on its stack is gone",
    "group_tie": "shared_groups, a witness: two messages of different transactions sit on one queue at one "
    "timestamp with one group tag, so only their addresses order them (queue.h assumes it cannot happen)",
    "acquire_split": "acquire = \"each\", a witness: a destruction of a payload node starts while a message has "
    "acquired some of its payload handles at a destination and not yet the others (message.c:bus1_message_stage "
    "acquires them one by one)",
}

SPEC = Bus1Impl


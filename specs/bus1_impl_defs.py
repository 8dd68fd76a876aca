"""The vocabulary of :mod:`ordercheck.specs.bus1_impl` and its lock-level mode :mod:`ordercheck.specs.bus1_locks`:
handle states, node flags, transaction phases, drop reasons, per-transition property bits,
the lockdep assertion sites, and the positions of the state's fields."""

from __future__ import annotations

# Handle states.
NONE, ATTACHED, PUBLIC, RELEASED = 0, 1, 2, 3
# Node flags. F_WEAK0 (locks mode): the anchor's n_weak reached 0 in bus1_handle_release_locked, whose
# section has not yet set BUS1_HANDLE_BIT_RELEASED (handle.c:436-459).
# F_ABSENT: a fresh node its owner has not created yet.
# F_WALK, F_CLEARED (locks mode, owner_gone_steps): the anchor's release is walking the node's map
# (handle.c:450-456), or has reset it to empty (handle.c:457) and not yet set RELEASED (handle.c:459).
F_DESTROYED, F_RELEASED, F_WEAK0, F_ABSENT, F_WALK, F_CLEARED = 1, 2, 4, 8, 16, 32
# Transaction phases.
ACQ, STAGE, POSTPONED, SEAL, SYNC, COMMIT, RELEASE_ALL, FLUSH, DRAIN, XFER = range(1, 11)
PHASES = {ACQ: "acquire", STAGE: "stage", POSTPONED: "stage postponed", SEAL: "seal", SYNC: "sync",
          COMMIT: "commit", RELEASE_ALL: "release handles", FLUSH: "flush", DRAIN: "deactivated, draining",
          XFER: "transfer checked live, acquiring"}
# Drop reasons (peer.c:bus1_peer_peek and bus1_queue_flush).
R_FLUSHED, R_NOT_PUBLIC, R_DESTROYED = 1, 2, 3
REASONS = {R_FLUSHED: "flushed by a reset", R_NOT_PUBLIC: "handle not held by the user",
           R_DESTROYED: "node destroyed before it (bus1_handle_is_live_at)"}
# Per-transition property bits.
B_CLOCK = 1  # a clock or flush timestamp went backwards
B_FRONT = 2  # an insertion at or before front (queue.c add, stage, commit_synthetic)
B_DEQUEUE = 4  # a key dequeued not above the previous one
B_WARN = 8  # any other WARN_ON of the code fired
B_DEST = 16  # a data message delivered though ordered after its node's destruction, or dropped though before
B_OWNER = 32  # the owner received a message for a node after that node's destroy notification
B_HANDLE = 64  # a payload handle reported valid iff the message is ordered before its destruction: broken
B_WRITERS = 128  # locks mode: a queue modified while another thread is inside an unlocked bus1_queue_stage on it
B_LOCKDEP = 256  # locks mode: a lockdep_assert_held reached without the lock (the site is in the WARN bits)
B_WINDOW = 512  # locks mode, a witness: a payload handle's destruction entry changed between peek and install
B_RELEASE = 1024  # a release notification received while a user handle or a message in flight references the node
B_SPLIT = 2048  # acquire = "each", a witness: a destruction started between two payload acquisitions of one message
B_JOINFAIL = 4096  # join_failure = "invalid", a witness: a late join failed (the handle records the timestamp)
B_MAPRACE = 8192  # owner_gone_steps: a handle spliced into a node's map while its owner's release walks it
B_LEAK = 16384  # owner_gone_steps: a handle spliced into a map already reset to empty: its pin is never dropped
B_UAF = 32768  # owner_gone_steps: bus1_tx_join pushed onto a transaction that has returned (a dead stack frame)
# Lockdep assertions of the modelled functions (locks mode), one bit each in the WARN bits of BAD.
LOCKDEP_SITES = {
    1 << 16: "tx.c:139 bus1_tx_stage: lockdep_assert_held(&peer->data.lock) of the staging destination",
    1 << 17: "tx.c:220 bus1_tx_join: lockdep_assert_held(&peer->data.lock) of the joining handle's holder",
    1 << 18: "tx.c:236 bus1_tx_join: lockdep_assert_held(&tx->origin->data.lock)",
    1 << 19: "handle.c:171 bus1_handle_queue_release: lockdep_assert_held(&owner->data.lock)",
    1 << 20: "handle.c:211 bus1_handle_flush_release: lockdep_assert_held(&owner->data.lock)",
    1 << 21: "handle.c:344 bus1_handle_acquire_locked: lockdep_assert_held(&handle->holder->data.lock)",
    1 << 22: "handle.c:346 bus1_handle_acquire_locked: lockdep_assert_held(&owner->data.lock)",
    1 << 23: "handle.c:559 bus1_handle_destroy_locked: lockdep_assert_held(&owner->data.lock)",
    1 << 24: "handle.c:626 bus1_handle_is_live_at: lockdep_assert_held(&h->holder->data.lock)",
}
(LD_TX_STAGE, LD_TX_JOIN, LD_TX_JOIN_ORIGIN, LD_QUEUE_RELEASE, LD_FLUSH_RELEASE, LD_ACQ_HOLDER, LD_ACQ_OWNER,
 LD_DESTROY, LD_LIVE) = sorted(LOCKDEP_SITES)

Q, H, NODES, TXS, PCS, GHOST, DROPS, KNOW, NOTES, VALID, DEQ, BAD, RANKS = range(13)
LOCKS, THREADS = 13, 14  # locks mode only: data-lock holders (peer + 1, 0 free) and thread states
# refs = "counted" only: per handle (p * N + node), the references of messages in flight to p that carry
# it (REFS), and its user references, the code's n_user (USERS); at 13 and 14, after LOCKS and THREADS (15
# and 16) in locks mode (Bus1Impl.refs_at).
REFS, USERS = 13, 14

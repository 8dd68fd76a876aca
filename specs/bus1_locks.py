"""The lock-level mode of :mod:`ordercheck.specs.bus1_impl` (``locks = true``).

In the default mode every action of ``bus1_impl`` is one critical section, run atomically.
Here each peer's thread takes the data locks of the code one ``mutex_lock`` at a time (an
action each, blocking while another thread holds the lock), and a section's body runs at
the step that releases its locks, so other peers' steps interleave between a section's
acquisitions and its release. The locks, as the code takes them:

=================================  =========================================================
section                            data locks, in acquisition order
=================================  =========================================================
``bus1_handle_acquire``            ``bus1_mutex_lock2(holder, owner)`` (handle.c:418): the
                                   destination and, unless its anchor is released, the node's
                                   owner, by address; one section per payload handle.
                                   With ``join_sealed = "wait"`` no lock is taken while
                                   the acquire would join a sealed, uncommitted
                                   destruction, and the locks are dropped (nothing else
                                   done) if it finds one under them; the same for a
                                   transfer's section (lock2(target, owner))
``bus1_message_stage``             none: message.c:472 calls ``bus1_tx_stage_sync`` holding
                                   only the sender's local lock. Modelled as the unlocked
                                   accesses of ``bus1_queue_stage``: load the clock, store
                                   ``max(clock, ts)``, insert at that ``+ 1`` (three steps);
                                   ``stage_lock = true`` takes the destination's lock instead
``bus1_handle_destroy_locked``     the owner (peer.c:650 and 179)
``bus1_tx_stage_sync``             the postponed destination (tx.c:300)
``bus1_queue_tick``                the origin (tx.c:312)
``bus1_queue_sync``                each destination in turn (tx.c:332)
``bus1_queue_commit_staged``       each destination in turn (tx.c:351)
``bus1_handle_release``            ``lock2(holder, owner)`` (handle.c:528); the same for a
                                   reset's release of each handle (peer.c:195-210). With
                                   ``refs = "counted"``, none when references are left (the
                                   fast path, handle.h:273-283), and a dropped or flushed
                                   message's payload handles are released after the data
                                   lock is dropped (peer.c:961-963), each under ``lock2``
``bus1_queue_flush``               the resetting peer (peer.c:214)
``bus1_peer_peek``                 the receiver (peer.c:935); kept across dropped
                                   notifications, released and retaken around a dropped data
                                   message (peer.c:961-963), released when a data message is
                                   found
``bus1_handle_is_live_at``         none: message.c:522 checks each payload handle holding
                                   only the local lock, one step per handle;
                                   ``install_lock = true`` takes the receiver's lock instead
``bus1_queue_remove``              the receiver (peer.c:1045)
=================================  =========================================================

``bus1_mutex_lock2`` orders its two locks by address (util.h:108-121); peers' data locks are
at addresses in peer order (``a`` lowest). The mutant ``lock2_unordered`` takes them in
argument order. Local locks are not in the table: each peer's ioctls run one at a time on
its own thread, which is what ``peer->local.lock`` serialises, and no modelled operation
takes another peer's local lock, so they are never contended and the lockdep assertions on
them hold by construction.

Properties (state: two more fields, ``locks``, the holder of each data lock as peer + 1, and
``threads``, each peer's position inside a section, see ``W_*``):

* ``one_writer``: no two writers in one queue at once: no step modifies a queue (its clock
  or tree) while another thread is inside an unlocked ``bus1_queue_stage`` on it;
* ``lockdep_held``: every ``lockdep_assert_held`` on a data lock in the modelled functions
  holds when reached (the explanation names the sites that failed);
* ``deadlock_free``: no run stops with a thread inside an operation (blocked on a lock);
* ``install_window`` (a witness): a payload handle's destruction entry was staged or
  committed on the receiver while the receiver was between its peek and its unlocked
  liveness check of that handle.

With ``owner_gone_steps`` (finding H followed past its assertions) an anchor's release
walks the node's map, resets it and sets ``RELEASED`` in three steps under the owner's lock
(after the step that drops ``n_weak`` to 0), and a join without the origin's lock tests
``SEALED`` in one step and pushes onto ``tx->async`` and stages in the next (a ``bus1_tx_join``
thread state holding the joiner's locks); ``map_one_writer``, ``no_leaked_pin`` and
``no_use_after_free`` name what an unlocked splice or push does there.
"""

from __future__ import annotations

from typing import Any

from ordercheck.specs import bus1_queue as bq
from ordercheck.specs.bus1_impl_defs import (
    ACQ,
    ATTACHED,
    B_LOCKDEP,
    B_WINDOW,
    B_WRITERS,
    BAD,
    COMMIT,
    DRAIN,
    F_CLEARED,
    F_DESTROYED,
    F_RELEASED,
    F_WALK,
    F_WEAK0,
    FLUSH,
    LD_TX_STAGE,
    LOCKDEP_SITES,
    LOCKS,
    NODES,
    NONE,
    PCS,
    POSTPONED,
    RELEASE_ALL,
    RELEASED,
    SEAL,
    STAGE,
    SYNC,
    THREADS,
    TXS,
    H,
    Q,
)
from ordercheck.specs.bus1_impl_script import RELEASE, SEND, SIGNAL, TRANSFER

# What a thread is doing (threads[p] is () when it is between sections):
# (what, held, locks, ctx): ``held`` of the section's ``locks`` taken so far.
W_TX, W_START, W_PEEK, W_STAGE, W_INSTALL, W_RELEASE, W_REMOVE, W_UNREF, W_JOIN = range(1, 10)
SECTION_NAMES = {W_START: "", W_PEEK: "bus1_peer_peek", W_RELEASE: "bus1_handle_release",
                 W_REMOVE: "bus1_queue_remove", W_INSTALL: "bus1_handle_is_live_at", W_UNREF: "bus1_handle_release",
                 W_JOIN: "bus1_tx_join"}


def lock2(spec: Any, a: int, b: int | None) -> tuple[int, ...]:
    """util.h:bus1_mutex_lock2 of ``a``'s and (if any) ``b``'s data locks: by address."""
    if b is None or b == a:
        return (a,)
    if spec.mutant == "lock2_unordered":
        return (a, b)
    return (a, b) if a < b else (b, a)


def owner_lock(spec: Any, nodes: Any, node: int, pcs: Any, txs: Any, acquire: bool = False) -> int | None:
    """handle.c:bus1_handle_acquire_owner, an unlocked read of the anchor's ``n_weak`` and then
    bus1_peer_acquire: the owner, unless its anchor's weak count has dropped to 0 (released, or
    being released) or the owner is deactivated (disconnecting). For an ``acquire``
    (bus1_handle_acquire_slow) with ``acquire_owner = "pinned"`` (the fix for H), a deactivated
    owner is locked too."""
    owner = spec.owners[node]
    if nodes[node] & (F_RELEASED | F_WEAK0):
        return None
    if spec.gone(pcs, txs, owner) and not (acquire and spec.acquire_owner == "pinned"):
        return None
    return owner


def next_release(spec: Any, handles: Any, p: int) -> int | None:
    """The next handle a reset releases (peer.c:195-210), or ``None``; with counted references
    an attached handle is the messages' (given up when they are flushed), as in the default mode."""
    for node in range(spec.n_nodes):
        st = handles[spec.hidx(p, node)][0]
        if st not in (NONE, RELEASED) and not (st == ATTACHED and spec.refs == "counted"):
            return node
    return None


def stays_referenced(spec: Any, s: tuple, p: int, node: int, every: bool) -> bool:
    """Counted references: whether letting go of one (or ``every``) user reference of ``p``'s
    handle to ``node`` leaves references (n_weak > 0): the code then only decrements, with
    no lock (handle.h:bus1_handle_release, bus1_handle_release_n); the slow path takes
    lock2(holder, owner)."""
    if spec.refs != "counted" or spec.owners[node] == p:
        return False
    i = spec.hidx(p, node)
    users, refs = s[spec.refs_at + 1][i], s[spec.refs_at][i]
    return bool(refs) or (not every and users > 1 and spec.mutant != "one_user_ref")


def stage_target(spec: Any, tx: tuple) -> tuple[int, int, int]:
    """(destination, node, entry address) of a send's current stage or acquire step."""
    mid, i = tx[1], tx[2]
    node = tuple(reversed(spec.op_of(mid).nodes))[i]
    d = spec.owners[node]
    return d, node, spec.msg_addr(mid, d)


def tx_section(spec: Any, s: tuple, p: int) -> tuple[str, tuple[int, ...], tuple] | None:
    """The next section of ``p``'s transaction: (name, locks, ctx); ``None`` for an unlocked stage."""
    tx = s[TXS][p]
    phase, mid, i, _ts, _ats, _T, _grp, sync, _asyn, post = tx
    if phase == DRAIN:
        return "bus1_handle_destroy_locked", (p,), ()
    if phase == ACQ:
        d, _node, _addr = stage_target(spec, tx)
        h = spec.op_of(mid).payload[post[0] if post else 0]
        return "bus1_handle_acquire", lock2(spec, d, owner_lock(spec, s[NODES], h, s[PCS], s[TXS], True)), ()
    if phase == STAGE:
        if not spec.stage_lock:
            return None
        return "bus1_message_stage", (stage_target(spec, tx)[0],), ()
    if phase == POSTPONED and post:
        return "bus1_tx_stage_sync", (spec.hsplit(post[0])[0],), ()
    if phase in (POSTPONED, SEAL):
        return "bus1_queue_tick", (p,), ()
    if phase == SYNC:
        return "bus1_queue_sync", (spec.entry_peer(sync[i]),), ()
    if phase == COMMIT:
        return "bus1_queue_commit_staged", (spec.entry_peer(sync[0]),), ()
    if phase == RELEASE_ALL:
        node = next_release(spec, s[H], p)
        if node is None:
            return "bus1_peer_flush", (p,), ()
        if spec.owners[node] == p:
            return "bus1_peer_flush", (p,), (node,)
        if stays_referenced(spec, s, p, node, True):
            return "bus1_peer_flush", (), (node,)
        return "bus1_peer_flush", lock2(spec, p, owner_lock(spec, s[NODES], node, s[PCS], s[TXS])), (node,)
    return "bus1_queue_flush", (p,), ()


def start_section(spec: Any, s: tuple, p: int) -> tuple[str, tuple[int, ...]] | None:
    """The section that starts ``p``'s next scripted operation, or ``None`` if it takes no data lock."""
    op = spec.ops[p][s[PCS][p]]
    if op.kind in (SEND, SIGNAL):
        return None
    if op.kind == RELEASE:
        (node,) = op.nodes
        if stays_referenced(spec, s, p, node, False):
            return None
        return "bus1_handle_release", lock2(spec, p, owner_lock(spec, s[NODES], node, s[PCS], s[TXS]))
    if op.kind == TRANSFER:  # bus1_handle_acquire of the target's handle (handle.c:418)
        (node,) = op.nodes
        return "bus1_peer_transfer", lock2(spec, op.target, owner_lock(spec, s[NODES], node, s[PCS], s[TXS], True))
    return "bus1_handle_destroy_locked", (p,)


def sealed_acquire(spec: Any, s: tuple, p: int) -> tuple[int, int] | None:
    """``join_sealed = "wait"`` (the fix for G) at lock level: ``(destination, node)`` when
    ``p``'s next acquire section, a payload handle's (tx.c via message.c:bus1_message_stage)
    or an atomic transfer's (peer.c:518), would now join a sealed destruction whose commit
    round has not reached the anchor (:meth:`Bus1Impl.sealed_join`, J2); else ``None``. A
    transfer that ``transfer_check = "bit"`` answers INVALID (the node is destroyed) acquires
    nothing and never waits."""
    if spec.join_sealed != "wait":
        return None
    tx = s[TXS][p]
    if tx:
        if tx[0] != ACQ:
            return None
        d, _node, _addr = stage_target(spec, tx)
        post = tx[9]
        h = spec.op_of(tx[1]).payload[post[0] if post else 0]
        return (d, h) if spec.sealed_join(s, d, h) else None
    op = spec.ops[p][s[PCS][p]] if s[PCS][p] < len(spec.ops[p]) else None
    if op is None or op.kind != TRANSFER:
        return None
    (node,) = op.nodes
    if spec.transfer_check == "bit" and s[NODES][node] & F_DESTROYED:
        return None
    return (op.target, node) if spec.sealed_join(s, op.target, node) else None


def busy(s: tuple, p: int) -> bool:
    return bool(s[TXS][p] or s[THREADS][p])


def next_states(spec: Any, s: tuple) -> list[tuple[tuple, tuple]]:
    """Every step of every thread of ``s`` (``Bus1Impl.next_states`` in locks mode)."""
    out: list[tuple[tuple, tuple]] = []
    for p in range(spec.peers):
        th = s[THREADS][p]
        if th:
            what = th[0]
            if what == W_STAGE:
                out.append(stage_step(spec, s, p))
            elif what == W_INSTALL and not th[2]:
                out.append(install_step(spec, s, p))
            else:
                out.extend(section_step(spec, s, p, th))
            continue
        if s[TXS][p]:
            if s[TXS][p][0] == DRAIN and not spec.drained(s, p):
                continue
            if sealed_acquire(spec, s, p):
                continue  # join_sealed = "wait": the acquire section waits for the commit, no lock taken
            sec = tx_section(spec, s, p)
            if sec is None:
                out.append(stage_step(spec, s, p))
            else:
                name, locks, ctx = sec
                out.extend(section_step(spec, s, p, (W_TX, 0, locks, ctx), name))
            continue
        if bq.peek(s[Q][p]) is not None and not spec.gone(s[PCS], s[TXS], p):  # nor a dangling front
            out.extend(section_step(spec, s, p, (W_PEEK, 0, (p,), ()), "bus1_peer_peek"))
        if s[PCS][p] < len(spec.ops[p]):
            op = spec.ops[p][s[PCS][p]]
            if op.kind in (SIGNAL, TRANSFER) and busy(s, op.target):
                continue
            if op.waits and not spec.holds(s, p, op.waits):
                continue
            if op.kind == TRANSFER and sealed_acquire(spec, s, p):
                continue  # join_sealed = "wait": the transfer's acquire waits for the commit
            sec = start_section(spec, s, p)
            if sec is None:
                w = world(spec, s, p)
                label = w.start(p)
                out.append((label, w.freeze(s)))
            else:
                name, locks = sec
                out.extend(section_step(spec, s, p, (W_START, 0, locks, ()), name))
    return out


def world(spec: Any, s: tuple, p: int) -> Any:
    """A mutable copy of ``s`` (a :class:`ordercheck.specs.bus1_impl.World`) for a step of ``p``'s thread."""
    w = spec.world(s)
    w.actor = p
    return w


def section_step(spec: Any, s: tuple, p: int, th: tuple, name: str = "") -> list[tuple[tuple, tuple]]:
    """The next ``mutex_lock`` of ``p``'s section ``th``, or, all taken, its body and unlock."""
    what, held, locks, ctx = th
    if held < len(locks):
        lk = locks[held]
        if s[LOCKS][lk]:
            return []  # blocked: another thread holds it
        w = world(spec, s, p)
        w.locks[lk] = p + 1
        w.th[p] = (what, held + 1, locks, ctx)
        name = name or section_name(spec, s, p, th)
        return [(("mutex_lock", p, spec.names[lk], name), w.freeze(s))]
    w = world(spec, s, p)
    w.th[p] = ()
    sealed = sealed_acquire(spec, s, p) if what in (W_TX, W_START) else None
    if sealed:  # join_sealed = "wait": sealed meanwhile; drop the locks, wait for the commit, retry
        for lk in locks:
            if w.locks[lk] == p + 1:
                w.locks[lk] = 0
        d, node = sealed
        if what == W_TX:
            return [(("bus1_handle_acquire", p, s[TXS][p][1], spec.names[d], f"n{node} sealed: unlock, wait"),
                     w.freeze(s))]
        return [(("bus1_peer_transfer", p, node, spec.names[d], "sealed: unlock, wait"), w.freeze(s))]
    if what == W_TX:
        label = tx_body(w, p, ctx)
    elif what == W_START:
        label = w.start(p)
    elif what == W_PEEK:
        label = peek_body(w, p)
    elif what == W_RELEASE:
        label = release_body(w, p, ctx)
    elif what == W_INSTALL:
        label = install_body(w, p, ctx)
    elif what == W_UNREF:
        label = unref_body(w, p, ctx)
    elif what == W_JOIN:
        label = ("bus1_tx_join", p, spec.names[ctx[0]], f"n{ctx[1]}", w.join_push(ctx))
    else:
        label = remove_body(w, p, ctx)
    if w.pending_join:  # owner_gone_steps: the join's push is the thread's next step, its locks still held
        w.th[p] = (W_JOIN, len(locks), locks, w.pending_join)
        w.pending_join = ()
    nth = w.th[p]
    keep = set(nth[2][: nth[1]]) if nth else set()
    for lk in locks:
        if lk not in keep and w.locks[lk] == p + 1:
            w.locks[lk] = 0
    return [(label, w.freeze(s))]


def section_name(spec: Any, s: tuple, p: int, th: tuple) -> str:
    what = th[0]
    if what == W_TX:
        sec = tx_section(spec, s, p)
        return sec[0] if sec else "bus1_message_stage"
    if what == W_START:
        sec = start_section(spec, s, p)
        return sec[0] if sec else ""
    return SECTION_NAMES[what]


# -- bodies ------------------------------------------------------------------------------


def tx_body(w: Any, p: int, ctx: tuple) -> tuple:
    """A transaction step: one payload handle, or one released handle of a reset, else tx_step."""
    spec = w.spec
    tx = w.txs[p]
    phase, mid, i, ts, ats, T, grp, sync, asyn, post = tx
    if phase == ACQ:
        d, _node, _addr = stage_target(spec, tx)
        payload = spec.op_of(mid).payload
        j = post[0] if post else 0
        case = w.acquire(d, payload[j])
        tx = w.txs[p]  # unchanged by acquire: a join only writes its node's owner's transaction
        if j + 1 < len(payload):
            w.txs[p] = (ACQ, mid, i, ts, ats, T, grp, sync, asyn, (j + 1,))
        else:
            w.txs[p] = (STAGE, mid, i, ts, ats, T, grp, sync, asyn, ())
        return ("bus1_handle_acquire", p, mid, spec.names[d], f"n{payload[j]} {case}")
    if phase == RELEASE_ALL:
        node = ctx[0] if ctx else None
        if node is not None and w.hget(p, node)[0] not in (NONE, RELEASED):
            if spec.owners[node] == p:  # the anchor: bus1_handle_release(h, false), in two parts
                if not w.nodes[node] & F_WEAK0:  # handle.c:436: n_weak drops to 0; the section goes on
                    w.nodes[node] |= F_WEAK0
                    w.th[p] = (W_TX, 1, (p,), ctx)
                    return ("bus1_peer_flush", p, mid, f"release n{node}: anchor n_weak 0")
                if spec.owner_gone_steps and not w.nodes[node] & (F_WALK | F_CLEARED):
                    w.nodes[node] |= F_WALK  # handle.c:450-456: the walk dropping each entry's pin
                    w.th[p] = (W_TX, 1, (p,), ctx)
                    return ("bus1_peer_flush", p, mid, f"release n{node}: walk the map")
                if spec.owner_gone_steps and w.nodes[node] & F_WALK:
                    w.nodes[node] = w.nodes[node] & ~F_WALK | F_CLEARED  # handle.c:457: map_handles = RB_ROOT
                    w.th[p] = (W_TX, 1, (p,), ctx)
                    return ("bus1_peer_flush", p, mid, f"release n{node}: map_handles = RB_ROOT")
                w.flush_release(node)  # handle.c:450-459: the map is cleared, RELEASED set
                w.hset(p, node, st=RELEASED)
                w.nodes[node] |= F_RELEASED
            else:
                w.user_release(p, node, every=True)  # peer.c:198: every user reference at once
        if next_release(spec, w.h, p) is None:
            w.txs[p] = (FLUSH, mid, i, ts, ats, T, grp, sync, asyn, post)
        return ("bus1_peer_flush", p, mid, f"release n{node}" if node is not None else "nothing to release")
    label = w.tx_step(p)
    if w.unref:  # peer.c:bus1_peer_flush: the flushed messages are unreferenced after the unlock
        w.th[p] = unref_th(w, p, 0)
    return label


def unref_th(w: Any, p: int, resume: int, nodes: tuple = ()) -> tuple:
    """The thread state releasing the payload handles a dropped or flushed message let go of
    (counted references; bus1_handle_release_slow under lock2(holder, owner)), then going on
    with the peek (``resume``) or done."""
    nodes = nodes or tuple(w.unref)
    w.unref = []
    locks = lock2(w.spec, p, owner_lock(w.spec, w.nodes, nodes[0], w.pcs, w.txs))
    return (W_UNREF, 0, locks, (resume, *nodes))


def unref_body(w: Any, p: int, ctx: tuple) -> tuple:
    """handle.c:bus1_handle_release_slow of the next handle in ``ctx`` (``(resume, node,
    ...)``), under lock2(holder, owner): released if nothing references it any more; then the
    next one, or back to the peek (``resume``) or done."""
    resume, node, *rest = ctx
    if w.hget(p, node)[0] == ATTACHED and not w.refs[w.spec.hidx(p, node)] and not w.users[w.spec.hidx(p, node)]:
        w.release_handle(p, node)
    if rest:
        w.th[p] = unref_th(w, p, resume, tuple(rest))
    else:
        w.th[p] = (W_PEEK, 0, (p,), ()) if resume else ()
    return ("bus1_handle_release", p, node, "unref")


def stage_step(spec: Any, s: tuple, p: int) -> tuple[tuple, tuple]:
    """One unlocked access of message.c:472's bus1_queue_stage on the destination (no lock held)."""
    w = world(spec, s, p)
    tx = w.txs[p]
    phase, mid, i, ts, ats, T, grp, sync, asyn, post = tx
    d, node, addr = stage_target(spec, tx)
    th = w.th[p]
    if not th:  # queue.h:bus1_queue_sync, its load
        w.assert_held(d, LD_TX_STAGE)
        clock = w.q[d][0]
        w.th[p] = (W_STAGE, 0, (), (1, max(clock, ts)))
        return ("bus1_queue_stage", p, mid, spec.names[d], f"load clock {clock}"), w.freeze(s)
    step, r = th[3]
    if step == 1:  # its store
        _c, flush, left, front, entries = w.q[d]
        w.q[d] = (r, flush, left, front, entries)
        w.th[p] = (W_STAGE, 0, (), (2, r))
        return ("bus1_queue_stage", p, mid, spec.names[d], f"store clock {r}"), w.freeze(s)
    # queue.c:bus1_queue_add at r + 1 (staging), then the transaction goes on as in tx_step
    warn = bq.W_ODD_TS if ts & 1 else 0
    if bq.key_of(w.q[d][4], addr) is not None:
        warn |= bq.W_QUEUED
    w.q[d], w2 = bq.add(w.q[d], addr, 0, grp, r + 1)
    if w.q[d][3] == addr:
        warn |= bq.W_STAGE_FRONT
    w.warn(warn | w2)
    w.set_ts(addr, r + 1, grp)
    w.th[p] = ()
    i += 1
    op = spec.op_of(mid)
    if i < len(op.nodes):
        nphase = ACQ if op.payload else STAGE
    else:
        nphase, i = SEAL, 0
    w.txs[p] = (nphase, mid, i, r, ats, T, grp, (addr,) + sync, asyn, post)
    return ("bus1_message_stage", p, mid, spec.names[d], f"n{node}"), w.freeze(s)


def peek_body(w: Any, p: int) -> tuple:
    """One round of peer.c:bus1_peer_peek's loop, under the receiver's data lock."""
    spec = w.spec
    key = bq.peek(w.q[p])
    if key is None:
        return ("bus1_peer_peek", p, "nothing at front (EAGAIN)")
    label, mid = w.peek_entry(p, key)
    if label is None:
        payload = spec.op_of(mid).payload
        ctx = (mid, *key, 0, 0)
        w.th[p] = install_th(spec, p, ctx) if payload else (W_REMOVE, 0, (p,), ctx)
        return ("bus1_peer_peek", p, "found", spec.mname(mid), key[0])
    if mid >= 0:  # a dropped data message: unlock, unref, lock again, go on (peer.c:961-963)
        w.th[p] = unref_th(w, p, 1) if w.unref else (W_PEEK, 0, (p,), ())
    elif label[2].startswith("drop"):  # a dropped notification: go on, still locked
        w.th[p] = (W_PEEK, 1, (p,), ())
    return label


def install_th(spec: Any, p: int, ctx: tuple) -> tuple:
    """The thread state checking the next payload handle: unlocked, or a section with ``install_lock``."""
    return (W_INSTALL, 0, (p,) if spec.install_lock else (), ctx)


def install_step(spec: Any, s: tuple, p: int) -> tuple[tuple, tuple]:
    """message.c:522: the liveness check of one payload handle, without the receiver's data lock."""
    w = world(spec, s, p)
    label = install_body(w, p, w.th[p][3])
    return label, w.freeze(s)


def install_body(w: Any, p: int, ctx: tuple) -> tuple:
    """bus1_handle_is_live_at of the next payload handle; an invalid attached one is released next."""
    spec = w.spec
    mid, ts, grp, addr, j, valid = ctx
    payload = spec.op_of(mid).payload
    h = payload[j]
    ok = w.install_handle(p, mid, (ts, grp, addr), h)
    if ok:
        valid |= 1 << j
    ctx = (mid, ts, grp, addr, j, valid)
    if not ok and w.drop_ref(p, h):  # message.c:526: the message's reference; the last one releases
        w.th[p] = (W_RELEASE, 0, lock2(spec, p, owner_lock(spec, w.nodes, h, w.pcs, w.txs)), ctx)
    else:
        w.th[p] = after_handle(spec, p, payload, ctx)
    return ("bus1_handle_is_live_at", p, spec.mname(mid), f"n{h}", "live" if ok else "destroyed")


def after_handle(spec: Any, p: int, payload: tuple, ctx: tuple) -> tuple:
    mid, ts, grp, addr, j, valid = ctx
    nxt = (mid, ts, grp, addr, j + 1, valid)
    return install_th(spec, p, nxt) if j + 1 < len(payload) else (W_REMOVE, 0, (p,), nxt)


def release_body(w: Any, p: int, ctx: tuple) -> tuple:
    """message.c:526: bus1_handle_release of an invalid payload handle (lock2 of holder and owner)."""
    payload = w.spec.op_of(ctx[0]).payload
    h = payload[ctx[4]]
    w.release_handle(p, h)
    w.th[p] = after_handle(w.spec, p, payload, ctx)
    return ("bus1_handle_release", p, h)


def remove_body(w: Any, p: int, ctx: tuple) -> tuple:
    """message.c:575-583 commit the valid handles; peer.c:1045 bus1_queue_remove, locked."""
    mid, ts, grp, addr, _j, valid = ctx
    texts = []
    for j, h in enumerate(w.spec.op_of(mid).payload):
        if valid >> j & 1:
            w.commit_handle(p, h)
            texts.append(f"n{h}")
        else:
            texts.append(f"n{h}:INVALID")
    return w.finish_recv(p, mid, (ts, grp, addr), texts)


# -- per-step checks ---------------------------------------------------------------------


def stager_on(spec: Any, s: tuple, r: int) -> int | None:
    """The queue ``r`` is inside an unlocked bus1_queue_stage of, or ``None``."""
    th = s[THREADS][r]
    if th and th[0] == W_STAGE:
        return stage_target(spec, s[TXS][r])[0]
    return None


def check_step(w: Any, before: tuple) -> None:
    """Sets ``B_WRITERS`` and the ``B_WINDOW`` witness for the step from ``before`` to ``w``."""
    spec = w.spec
    for r in range(spec.peers):
        if r == w.actor:
            continue
        d = stager_on(spec, before, r)
        if d is not None and w.q[d] != before[Q][d]:
            w.bits |= B_WRITERS
        th = before[THREADS][r]
        if th and th[0] in (W_INSTALL, W_RELEASE):
            mid, _ts, _g, _a, j, _v = th[3]
            for h in spec.op_of(mid).payload[j:]:
                i = spec.hidx(r, h)
                if w.h[i][1] != before[H][i][1]:
                    w.bits |= B_WINDOW


# -- properties --------------------------------------------------------------------------


def one_writer(spec: Any, s: tuple) -> str | None:
    if s[BAD][0] & B_WRITERS:
        return ("broken: a queue was modified while another thread was inside an unlocked bus1_queue_stage on it "
                "(message.c:472 stages without the destination's data lock; see the trace's last steps)")
    return None


def lockdep_held(spec: Any, s: tuple) -> str | None:
    bits, warns = s[BAD]
    if not bits & B_LOCKDEP:
        return None
    sites = [text for bit, text in LOCKDEP_SITES.items() if warns & bit]
    return "reached without the lock: " + "; ".join(sites)


def install_window(spec: Any, s: tuple) -> str | None:
    if s[BAD][0] & B_WINDOW:
        return "a payload handle's destruction entry changed between the receiver's peek and its liveness check"
    return None


def stuck(spec: Any, s: tuple) -> str | None:
    """``deadlock_free`` in locks mode: a run that stops with a thread inside an operation."""
    inside = [spec.names[p] for p in range(spec.peers) if busy(s, p)]
    if not inside:
        return None
    held = ", ".join(f"{spec.names[lk]}->data.lock held by {spec.names[v - 1]}"
                     for lk, v in enumerate(s[LOCKS]) if v) or "no lock held"
    return f"the run stops with {', '.join(inside)} inside an operation ({held})"


def describe(spec: Any, s: tuple) -> dict[str, Any]:
    """The lock table and the threads' positions, for traces."""
    names = spec.names
    threads = {}
    for p, th in enumerate(s[THREADS]):
        if not th:
            continue
        what, held, locks, ctx = th
        kind = {W_TX: "transaction section", W_START: "operation start", W_PEEK: "peek", W_STAGE: "unlocked stage",
                W_INSTALL: "install (unlocked)", W_RELEASE: "release of an invalid handle",
                W_REMOVE: "remove", W_UNREF: "release of a dropped message's handle",
                W_JOIN: "join, SEALED tested, to push"}[what]
        threads[names[p]] = f"{kind}: {held}/{len(locks)} locks ({', '.join(names[lk] for lk in locks)}) {list(ctx)}"
    return {"data_locks": {names[lk]: (names[v - 1] if v else None) for lk, v in enumerate(s[LOCKS])},
            "threads": threads}

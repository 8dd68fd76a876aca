"""The TLA+ adapter of :mod:`ordercheck.specs.bus1_impl` (template ``bus1_impl.tla.j2``).

Queue keys ``(ts, group, address)`` and the transaction lists stay integers, as the
Python has them (addresses are the spec's fixed node addresses); handle states, node
flags, drop reasons and transaction phases become strings, and messages ``<<p, k>>`` as
in every PeerSpec export. The per-transition property and ``WARN_ON`` bits (the state's
``bad``) are no variables of the module: it checks each as an action property
(:data:`STEP_CHECKS`), and :meth:`Bus1ImplAdapter.view` leaves them out.
"""

from __future__ import annotations

from typing import Any

from ordercheck.specs import bus1_impl as bi
from ordercheck.specs import bus1_locks as bl
from ordercheck.specs.bus1_impl_script import SEND, Op
from ordercheck.tla.adapters.base import ExportedProperty, PeerAdapter, _seq
from ordercheck.tla.values import ModelValue

NO_PEER = ModelValue("NoPeer")

STATES = {bi.NONE: "none", bi.ATTACHED: "attached", bi.PUBLIC: "public", bi.RELEASED: "released"}
FLAGS = {bi.F_DESTROYED: "destroyed", bi.F_RELEASED: "released", bi.F_ABSENT: "absent", bi.F_WEAK0: "weak0",
         bi.F_WALK: "walk", bi.F_CLEARED: "cleared"}
PHASES = {bi.ACQ: "acquire", bi.STAGE: "stage", bi.POSTPONED: "postponed", bi.SEAL: "seal", bi.SYNC: "sync",
          bi.COMMIT: "commit", bi.RELEASE_ALL: "release_all", bi.FLUSH: "flush", bi.XFER: "xfer", bi.DRAIN: "drain"}
REASONS = {bi.R_FLUSHED: "flushed", bi.R_NOT_PUBLIC: "not_public", bi.R_DESTROYED: "destroyed"}
STEP_CHECKS = {
    "clock_monotonic": ("ClockMonotonicStep", "ClockMonotonic"),
    "no_insert_before_front": ('~Fails("no_insert_before_front")', "NoInsertBeforeFront"),
    "dequeue_increasing": ('~Fails("dequeue_increasing")', "DequeueIncreasing"),
    "no_warn": ('~Fails("no_warn")', "NoWarn"),
    "delivered_iff_before_destroy": ('~Fails("delivered_iff_before_destroy")', "DeliveredIffBeforeDestroy"),
    "owner_no_message_after_destroy": ('~Fails("owner_no_message_after_destroy")', "OwnerNoMessageAfterDestroy"),
    "handle_valid_iff_before_destroy": ('~Fails("handle_valid_iff_before_destroy")', "HandleValidIffBeforeDestroy"),
    "release_when_unreferenced": ('~Fails("release_when_unreferenced")', "ReleaseWhenUnreferenced"),
    "one_writer": ('~Fails("one_writer")', "OneWriter"),
    "lockdep_held": ('~Fails("lockdep_held")', "LockdepHeld"),
    "map_one_writer": ('~Fails("map_one_writer")', "MapOneWriter"),
    "no_leaked_pin": ('~Fails("no_leaked_pin")', "NoLeakedPin"),
    "no_use_after_free": ('~Fails("no_use_after_free")', "NoUseAfterFree"),
    "acquire_split": ('Fails("acquire_split")', "NeverAcquireSplit"),
    "install_window": ('Fails("install_window")', "NeverInstallWindow"),
    "late_join": ("LateJoinStep", "NeverLateJoin"),
}
"""The properties over the state's ``bad`` bits, each checked by the module as an action
property: ``(predicate, checked)`` as :class:`~ordercheck.tla.adapters.base.ExportedProperty`
has them with ``step``: the action true of a step that keeps an ``always`` check (or shows
a ``sometimes`` one), and the action property the configuration lists."""
THREADS = {bl.W_TX: "tx", bl.W_START: "start", bl.W_PEEK: "peek", bl.W_INSTALL: "install", bl.W_RELEASE: "release",
           bl.W_REMOVE: "remove", bl.W_STAGE: "stage", bl.W_JOIN: "join", bl.W_UNREF: "unref"}
NO_THREAD = {"what": "none", "held": 0, "lks": (), "step": 0, "r": 0, "key": (), "j": 0, "valid": frozenset()}
IDLE_TX = {"phase": "idle", "msg": (), "i": 0, "ts": 0, "ats": 0, "T": 0, "grp": 0,
           "sync": (), "async": (), "post": ()}


def _names(mask: int, table: dict[int, str]) -> frozenset:
    return frozenset(name for bit, name in table.items() if mask & bit)


def _mask(names: frozenset, table: dict[int, str]) -> int:
    back = {v: k for k, v in table.items()}
    return sum(back[n] for n in names)


def _back(table: dict[int, str], name: str) -> int:
    return next(k for k, v in table.items() if v == name)


class Bus1ImplAdapter(PeerAdapter):
    template = "bus1_impl.tla.j2"
    protocol_module = "Bus1Impl"
    happened_before = ()
    """None: a peer that receives a handle to a destroyed node learns the destruction's
    message and its past (its user sees ``BUS1_HANDLE_INVALID``) with no event in its log,
    so the stored past holds more than the logs' happened-before (on
    bus1-impl-synthetic-causality TLC finds ``StoredPastIsCausalPast`` violated)."""
    variables = ("queues", "handles", "nodeFlags", "txs", "pcs", "sent", "logs", "drops", "know", "notes",
                 "valid", "dequeued", "ranks", "relRanks", "flips", "locks", "threads", "counts")
    """The module's variables, ``locks`` and ``threads`` included for every model (with
    ``LockLevel = FALSE`` they keep their initial values: no lock held, no thread inside a
    section)."""
    drops = True
    predicates = {"deadlock_free": "NoneInTransaction",
                  "valid_handle_notified": "ValidHandleNotifiedNow", "queue_drained": "QueueDrainedNow"}
    actions = {
        "bus1_peer_ioctl_send": "IoctlSend(p, chk)",
        "bus1_handle_destroy_locked": "HandleDestroyLocked(p, chk)",
        "bus1_peer_disconnect": "PeerDisconnect(p, chk)",
        "bus1_handle_release": "HandleRelease(p, chk)",
        "signal": "Signal(p, chk)",
        "bus1_handle_acquire": "HandleAcquire(p, chk)",
        "bus1_message_stage": "MessageStage(p, chk)",
        "bus1_tx_stage_sync": "TxStageSync(p, chk)",
        "bus1_queue_tick": "QueueTick(p, chk)",
        "bus1_queue_sync": "QueueSync(p, chk)",
        "bus1_queue_commit_staged": "QueueCommitStaged(p, chk)",
        "bus1_peer_flush": "PeerFlush(p, chk)",
        "bus1_queue_flush": "QueueFlush(p, chk)",
        "bus1_peer_peek": "PeerPeek(p, chk)",
        "bus1_peer_ioctl_recv": "IoctlRecv(p, chk)",
        "bus1_peer_transfer": "Transfer(p, chk)",
        "bus1_handle_is_live": "Transfer(p, chk)",
    }

    LOCK_ACTIONS = {
        "bus1_peer_ioctl_send": "IoctlSendBody(p, chk)",
        "mutex_lock": "MutexLock(p, th, chk)",
        "bus1_queue_stage": "StageLoad(p, chk)",
        "bus1_message_stage": "StageAdd(p, chk)",
        "bus1_queue_tick": "QueueTickBody(p, chk)",
        "bus1_queue_sync": "QueueSyncBody(p, chk)",
        "bus1_queue_commit_staged": "QueueCommitStagedBody(p, chk)",
        "bus1_peer_peek": "PeekBody(p, chk)",
        "bus1_peer_ioctl_recv": "RemoveBody(p, chk)",
        "bus1_handle_destroy_locked": "HandleDestroyLockedBody(p, chk)",
        "bus1_tx_stage_sync": "TxStageSyncBody(p, chk)",
        "bus1_handle_acquire": "AcquireOne(p)",
        "bus1_handle_is_live_at": "InstallBody(p, chk)",
        "bus1_handle_release": "ReleaseBody(p, chk)",
        "bus1_peer_flush": "RelAllBody(p, th, chk)",
        "bus1_tx_join": "JoinPushBody(p, chk)",
        "bus1_queue_flush": "QueueFlushBody(p, chk)",
        "bus1_peer_disconnect": "Deactivate(p, th, chk)",
        "signal": "SignalBody(p, chk)",
        "bus1_peer_transfer": "TransferStart(p)",
    }
    """The lock-level steps: each label's TLA+ operator (the sections' bodies are the atomic
    actions' operators, run under LStep: a ...Body, or the operator that computes the
    objects the step changes (AcquireOne, TransferStart);
    ``bus1_handle_release`` also labels a user release, a fast path or a "start" section, and
    the unref of a dropped message's handle)."""

    # The template mirrors liveness, addresses, acquire, ties, join_failure, stale_handle,
    # transfer, transfer_check, join_sealed, synthetic_tie, flush_front, acquire_owner,
    # owner_gone_steps and refs in every value, at the lock level too (releases with their
    # fast path and lock2 slow path, the deferred unrefs of dropped and flushed messages,
    # atomic transfers under lock2, signals); at lock level a send creating a fresh node,
    # traffic after a reset, and without stage_lock anything but sends without payload
    # handles are the Python model's alone (no TLC run has checked them).
    TIES = ("all", "fixed", "with_release")

    @classmethod
    def unsupported(cls, spec: Any) -> list[tuple[str, str]]:
        """Each setting of ``spec`` the template does not mirror, as ``(constant, what)``, in
        the order of the spec's constants; empty when the template mirrors them all."""
        out: list[tuple[str, str]] = []
        ops = [op for ops in spec.ops for op in ops]
        if spec.locks and (
                any(op.creates for op in ops)
                or (not spec.stage_lock and any(op.kind != "send" or op.payload for op in ops))):
            out.append(("locks", "locks = True (at lock level no send that creates a node, and with payload "
                                 "handles, destructions, releases, transfers, signals, a reset or a disconnect "
                                 "only with stage_lock = True)"))
        for p, ops in enumerate(spec.ops):  # unchecked with TLC: traffic after a reset at lock level
            if spec.locks and any(op.kind == "reset" for op in ops[:-1]):
                out.append(("script", f"script.{spec.names[p]} (at lock level only a reset last)"))
                break
        if spec.ties not in cls.TIES:
            out.append(("ties", f"ties = {spec.ties!r} (only 'all', 'fixed' or 'with_release')"))
        order = [c.name for c in spec.constants]
        return sorted(out, key=lambda item: order.index(item[0]))

    @classmethod
    def refuse(cls, spec: Any) -> tuple[str, str] | None:
        """The first unsupported constant and a message naming every one (:meth:`unsupported`)."""
        missing = cls.unsupported(spec)
        if not missing:
            return None
        return missing[0][0], ("the TLA+ template does not mirror " + "; ".join(what for _n, what in missing)
                               + "; check this model with ordercheck check")

    # -- template ---------------------------------------------------------------------

    def _op(self, op: Op) -> str:
        nodes = "<<" + ", ".join(str(n) for n in op.nodes) + ">>"
        payload = "<<" + ", ".join(str(n) for n in op.payload) + ">>"
        target = self.names[op.target] if op.target >= 0 else "NoPeer"
        waits = "<<" + ", ".join(str(n) for n in op.waits) + ">>"
        creates = "<<" + ", ".join(str(n) for n in op.creates) + ">>"
        return (f'[kind |-> "{op.kind}", nodes |-> {nodes}, payload |-> {payload}, target |-> {target}, '
                f'waits |-> {waits}, creates |-> {creates}]')

    def context(self) -> dict[str, Any]:
        """Nothing model-specific: the one module ``Bus1Impl.tla`` is the same for every
        model (the model module and the configuration give the constants)."""
        return {}

    mc_about = ("the peers, their order (Python's peer ids), the nodes' owners and initial holders, the\n"
                "   nodes created by a send, each peer's operations, the owners whose release groups rank\n"
                "   and the queue node addresses of the handles and of the messages' entries")

    def mc_definitions(self) -> list[tuple[str, str]]:
        """``MCPeers``, ``MCPeerOrder``, ``MCOwnerSeq``, ``MCInitialHolders``, ``MCFreshNodes``,
        ``MCScript`` (one line per peer), ``MCReleaseOwners``, ``MCSharedPeers``,
        ``MCAddress``: each handle's queue node address, the spec's own (``haddr``), written
        out one line per peer, and ``MCMsgAddress`` and ``MCFlippedMsgAddress`` (the message
        entries': :meth:`_msg_addresses`)."""
        spec: Any = self.spec
        names = list(self.names)

        def seq(items: list[str]) -> str:
            return "<<" + ", ".join(items) + ">>"

        def peer_set(ps: list[str]) -> str:
            return "{" + ", ".join(ps) + "}"

        script = "[p \\in MCPeers |->\n" + "\n".join(
            f"    {'  CASE' if i == 0 else '   []'} p = {self.names[p]} -> " + seq([self._op(op) for op in ops])
            for i, (p, ops) in enumerate(enumerate(spec.ops))) + "]"
        return [
            ("MCPeers", peer_set(names)),
            ("MCPeerOrder", seq(names) + "   \\* Python's peer ids: " + names[0] + " is 0, ..."),
            ("MCOwnerSeq", seq([self.names[o] for o in spec.owners])
             + f'   \\* nodes = "{"".join(self.names[o] for o in spec.owners)}"'),
            ("MCInitialHolders", seq([peer_set([self.names[p] for p in range(spec.peers) if h >> p & 1])
                                      for h in spec.holders])),
            ("MCFreshNodes", "{" + ", ".join(str(n) for n in spec.fresh_nodes) + "}"),
            ("MCScript", script),
            ("MCReleaseOwners", peer_set([self.names[o] for o in spec.release_owners])),
            ("MCSharedPeers", peer_set([self.names[p] for p in spec.shared])),
            ("MCAddress", f'   \\* addresses = "{spec.addresses}": <<p, n>> :> the address of p\'s handle to node n\n    '
             + "\n @@ ".join(" @@ ".join(f"<<{self.names[p]}, {n}>> :> {spec.haddr(p, n)}" for n in range(spec.n_nodes))
                             for p in range(spec.peers))),
            ("MCMsgAddress", "   \\* <<s, k, d>> :> the address of s's k-th message's entry on d\n    "
             + self._msg_addresses(False)),
            ("MCFlippedMsgAddress", "   \\* the same on a queue whose message entries are in reverse order\n    "
             + self._msg_addresses(True)),
        ]

    def _msg_addresses(self, flipped: bool) -> str:
        """The addresses of the sends' message entries, the spec's own (``msg_addr``), as a TLA+
        function, one line per sender: ``<<s, k, d>> :> address`` for s's k-th message on each of
        its destinations d; ``flipped``, those on the queues whose entries may start in the reverse
        order (``both_orders``: none, ``<<>>``, without ``shared_groups``)."""
        spec: Any = self.spec
        queues = set(spec.both_orders()) if flipped else set(range(spec.peers))
        lines = [" @@ ".join(f"<<{self.names[s]}, {k + 1}, {self.names[d]}>> :> "
                             f"{spec.msg_addr(s * spec.stride + k, d, flipped)}"
                             for k, op in enumerate(ops) if op.kind == SEND
                             for d in sorted({spec.owners[n] for n in op.nodes}) if d in queues)
                 for s, ops in enumerate(spec.msg_ops)]
        return "\n @@ ".join(line for line in lines if line) or "<<>>"

    MODES = (("Ties", "ties"), ("Liveness", "liveness"), ("AcquireMode", "acquire"),
             ("Mutant", "mutant"), ("JoinFailure", "join_failure"), ("StaleHandle", "stale_handle"),
             ("TransferMode", "transfer"), ("TransferCheck", "transfer_check"), ("JoinSealed", "join_sealed"),
             ("LockLevel", "locks"), ("StageLock", "stage_lock"), ("InstallLock", "install_lock"),
             ("SyntheticTie", "synthetic_tie"), ("FlushFront", "flush_front"), ("AcquireOwner", "acquire_owner"),
             ("OwnerGoneSteps", "owner_gone_steps"), ("Refs", "refs"))
    """The module's constants that are the spec's constants, ``(TLA+ name, Python name)``:
    strings, or booleans (``TRUE``/``FALSE``)."""

    def __init__(self, spec: Any) -> None:
        super().__init__(spec)
        if spec.locks:  # the lock level's steps (specs/bus1_locks.py)
            self.actions = self.LOCK_ACTIONS

    def cfg_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        bound = [(c, f"<- MC{c}") for c in ("Peers", "PeerOrder")] + [("NoPeer", "NoPeer")] + [
            (c, f"<- MC{c}") for c in ("OwnerSeq", "InitialHolders", "FreshNodes", "Script", "ReleaseOwners",
                                       "SharedPeers", "Address", "MsgAddress", "FlippedMsgAddress")]

        def value(v: Any) -> str:
            return ("TRUE" if v else "FALSE") if isinstance(v, bool) else f'"{v}"'

        return [(n, n) for n in self.names] + bound + [(c, value(getattr(spec, py))) for c, py in self.MODES]

    def exported_properties(self) -> list[ExportedProperty]:
        """Every property a bus1_impl model can have, so that the one module defines the same
        operators for every model: the spec's, and those of other settings (``acquire_split``
        with ``acquire = "each"``, the lock level's ``one_writer``, ``lockdep_held`` and
        ``install_window``)."""
        out = super().exported_properties()
        kinds = {p.name: p.kind for p in out}
        kinds.update({"acquire_split": "sometimes", "install_window": "sometimes", "one_writer": "always",
                      "lockdep_held": "always", "map_one_writer": "always", "no_leaked_pin": "always",
                      "no_use_after_free": "always", "release_when_unreferenced": "always"})
        steps = [ExportedProperty(name, kinds[name], pred, checked, step=True)
                 for name, (pred, checked) in STEP_CHECKS.items()]
        rest = [p for p in out if p.name not in STEP_CHECKS]
        if "group_tie" not in kinds:
            rest.append(ExportedProperty("group_tie", "sometimes", "GroupTie", "NeverGroupTie"))
        return sorted(rest + steps, key=lambda p: p.name)

    def optional(self) -> list[str]:
        """Every action label of both levels (the spec declares no fairness, so all are
        optional): the same comment in the one module for every model."""
        return list(dict.fromkeys([*type(self).actions, *self.LOCK_ACTIONS]))

    def symmetry(self) -> tuple[bool, str]:
        return False, "node owners, node addresses and the script tie each peer to its role"

    # -- states both ways ---------------------------------------------------------------

    def encode(self, state: tuple) -> dict[str, Any]:
        spec: Any = self.spec
        nn = spec.n_nodes
        (queues, handles, nodes, txs, pcs, ghost, drops, know, notes, valid, deq, _bad, ranks) = state[:13]

        def queue(q: tuple) -> dict[str, Any]:
            clock, flush, left, front, entries = q
            return {"clock": clock, "flush": flush, "leftmost": left, "front": front, "entries": tuple(entries)}

        def tx(t: Any) -> dict[str, Any]:
            if not t:
                return dict(IDLE_TX)
            phase, mid, i, ts, ats, T, grp, sync, asyn, post = t
            if phase == bi.XFER:  # a transfer between its liveness check and its acquire: node, target
                return {**IDLE_TX, "phase": "xfer", "msg": (self.peers[i],), "i": mid}
            return {"phase": PHASES[phase], "msg": self.msg(mid), "i": i, "ts": ts, "ats": ats, "T": T,
                    "grp": grp, "sync": tuple(sync), "async": tuple(asyn), "post": tuple(post)}

        sent, logs = ghost
        return {
            "queues": self.per_peer(queues, queue),
            "handles": {self.peers[p]: {n: {"st": STATES[handles[p * nn + n][0]], "ts": handles[p * nn + n][1],
                                            "grp": handles[p * nn + n][2]} for n in range(nn)}
                        for p in range(spec.peers)},
            "nodeFlags": {n: _names(f, FLAGS) for n, f in enumerate(nodes)},
            "txs": self.per_peer(txs, tx),
            "pcs": self.per_peer(pcs, lambda c: c),
            "sent": self.per_peer(sent, lambda out: tuple({"dests": self.peer_set(d), "past": self.msgs(pm)}
                                                          for d, pm in out)),
            "logs": self.per_peer(logs, lambda log: tuple(self.event(e) for e in log)),
            "drops": tuple({"peer": self.peers[q], "msg": self.msg(mid), "reason": REASONS[r]} for q, mid, r in drops),
            "know": self.per_peer(know, self.msgs),
            "notes": self.per_peer(notes, lambda m: frozenset(n for n in range(nn) if m >> n & 1)),
            "valid": self.per_peer(valid, lambda m: frozenset(n for n in range(nn) if m >> n & 1)),
            "dequeued": self.per_peer(deq, tuple),
            "ranks": {self.msg(spec.tx_slots[i][0] * spec.stride + spec.tx_slots[i][1]): ranks[i]
                      for i in range(spec.n_tx)},
            "relRanks": {self.peers[o]: ranks[spec.n_tx + k] for k, o in enumerate(spec.release_owners)},
            # shared_groups: the last rank is the mask of the queues whose message entries are flipped
            "flips": frozenset(self.peers[d] for d in range(spec.peers) if spec.shared and ranks[-1] >> d & 1),
            **(self._encode_locks(state[13], state[14]) if spec.locks else self._no_locks()),
            "counts": self._encode_counts(state),
        }

    def _encode_counts(self, state: tuple) -> dict[str, Any]:
        """``counts[p][n]``: the references to ``p``'s handle to ``n`` of messages in flight and
        of ``p``'s user with ``refs = "counted"``; all 0 otherwise."""
        spec: Any = self.spec
        nn = spec.n_nodes
        if spec.refs != "counted":
            return {self.peers[p]: {n: {"refs": 0, "users": 0} for n in range(nn)} for p in range(spec.peers)}
        refs, users = state[spec.refs_at], state[spec.refs_at + 1]
        return {self.peers[p]: {n: {"refs": refs[p * nn + n], "users": users[p * nn + n]} for n in range(nn)}
                for p in range(spec.peers)}

    def _no_locks(self) -> dict[str, Any]:
        """``locks`` and ``threads`` of a model without the lock level: no lock held, no
        thread inside a section, in every state."""
        return {"locks": {p: NO_PEER for p in self.peers}, "threads": {p: dict(NO_THREAD) for p in self.peers}}

    def _encode_locks(self, locks: tuple, threads: tuple) -> dict[str, Any]:
        """The lock table (holder, or NoPeer) and each thread as a record (the template's NoThread
        when idle): a transaction's or peek's section with the locks taken so far, the remove of
        the key its peek found, or the unlocked stage's step and the clock it loaded."""

        def thread(th: tuple) -> dict[str, Any]:
            if not th:
                return dict(NO_THREAD)
            what, held, lks, ctx = th
            out = {**NO_THREAD, "what": THREADS[what], "held": held, "lks": tuple(self.peers[q] for q in lks)}
            if what == bl.W_STAGE:
                out["step"], out["r"] = ctx
            elif what == bl.W_TX and ctx:  # a reset's release of one handle: its node
                out["key"] = (ctx[0],)
            elif what == bl.W_JOIN:  # (owner, node, d, grp, addr): the owner and d follow from node and addr
                out["key"] = (ctx[1], ctx[3], ctx[4])
            elif what == bl.W_UNREF:  # (resume, node, ...): the handles a dropped message let go of
                out["key"] = tuple(ctx)
            elif what in (bl.W_INSTALL, bl.W_RELEASE, bl.W_REMOVE):
                out["key"] = tuple(ctx[1:4])
                out["j"] = ctx[4]
                out["valid"] = frozenset(i for i in range(ctx[4] + 1) if ctx[5] >> i & 1)
            return out

        return {"locks": {self.peers[q]: self.peers[v - 1] if v else NO_PEER for q, v in enumerate(locks)},
                "threads": self.per_peer(threads, thread)}

    def _decode_locks(self, v: dict[str, Any]) -> tuple[tuple, tuple]:
        spec: Any = self.spec
        back = {name: code for code, name in THREADS.items()}

        def thread(t: dict[str, Any]) -> tuple:
            if t["what"] == "none":
                return ()
            what = back[t["what"]]
            lks = tuple(self.ids[q] for q in _seq(t["lks"]))
            if what == bl.W_STAGE:
                return (what, t["held"], lks, (t["step"], t["r"]))
            if what in (bl.W_INSTALL, bl.W_RELEASE, bl.W_REMOVE):
                key = tuple(_seq(t["key"]))
                return (what, t["held"], lks, (spec.msg_of(key[2]), *key, t["j"], sum(1 << i for i in t["valid"])))
            if what == bl.W_JOIN:
                node, grp, addr = _seq(t["key"])
                return (what, t["held"], lks, (spec.owners[node], node, spec.hsplit(addr)[0], grp, addr))
            if what == bl.W_UNREF:
                return (what, t["held"], lks, tuple(_seq(t["key"])))
            if what == bl.W_TX and _seq(t["key"]):
                return (what, t["held"], lks, (_seq(t["key"])[0],))
            return (what, t["held"], lks, ())

        locks = tuple(0 if v["locks"][q] == NO_PEER else self.ids[v["locks"][q]] + 1 for q in self.peers)
        return locks, self.from_peers(v["threads"], thread)

    def view(self, state: tuple) -> tuple:
        """The state without ``bad`` (the per-transition checks' sticky bits), which the
        module checks as action properties."""
        return state[:bi.BAD] + state[bi.BAD + 1:]

    def decode(self, v: dict[str, Any]) -> tuple:
        spec: Any = self.spec
        nn = spec.n_nodes

        def queue(q: dict[str, Any]) -> tuple:
            return (q["clock"], q["flush"], q["leftmost"], q["front"], tuple(tuple(e) for e in _seq(q["entries"])))

        def tx(t: dict[str, Any]) -> Any:
            if t["phase"] == "idle":
                return 0
            if t["phase"] == "xfer":
                return (bi.XFER, t["i"], self.ids[_seq(t["msg"])[0]], 0, 0, 0, 0, (), (), ())
            return (_back(PHASES, t["phase"]), self.mid(t["msg"]), t["i"], t["ts"], t["ats"], t["T"], t["grp"],
                    tuple(_seq(t["sync"])), tuple(_seq(t["async"])), tuple(_seq(t["post"])))

        def bits(s: frozenset) -> int:
            return sum(1 << n for n in s)

        handles = []
        for p in self.peers:
            for n in range(nn):
                h = v["handles"][p][n]
                handles.append((_back(STATES, h["st"]), h["ts"], h["grp"]))
        sent = self.from_peers(
            v["sent"], lambda out: tuple((self.peer_mask(r["dests"]), self.mask(r["past"])) for r in _seq(out)))
        logs = self.from_peers(v["logs"], lambda log: tuple(self.event_code(e) for e in _seq(log)))
        ranks = tuple(v["ranks"][self.msg(p * spec.stride + k)] for p, k in spec.tx_slots) + tuple(
            v["relRanks"][self.peers[o]] for o in spec.release_owners) + (
            (sum(1 << self.ids[d] for d in v["flips"]),) if spec.shared else ())
        return (
            self.from_peers(v["queues"], queue),
            tuple(handles),
            tuple(_mask(v["nodeFlags"][n], FLAGS) for n in range(nn)),
            self.from_peers(v["txs"], tx),
            self.from_peers(v["pcs"], int),
            (sent, logs),
            tuple((self.ids[d["peer"]], self.mid(d["msg"]), _back(REASONS, d["reason"])) for d in _seq(v["drops"])),
            self.from_peers(v["know"], self.mask),
            self.from_peers(v["notes"], bits),
            self.from_peers(v["valid"], bits),
            self.from_peers(v["dequeued"], lambda d: tuple(_seq(d))),
            (0, 0),   # no variable of the module: view leaves it out
            ranks,
            *(self._decode_locks(v) if spec.locks else ()),
            *((tuple(v["counts"][p][n]["refs"] for p in self.peers for n in range(nn)),
               tuple(v["counts"][p][n]["users"] for p in self.peers for n in range(nn)))
              if spec.refs == "counted" else ()),
        )


ADAPTER = Bus1ImplAdapter

"""bus1's message ordering as the kernel code implements it (``github.com/bus1/bus1``).

This models ``ipc/bus1/`` at commit ``20ee2f737ee187f369e9bc7e654d03ab2467ed44``: the
queue (``util/queue.[ch]``, see :mod:`specs.bus1_queue`), transactions (``tx.c``),
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
=============================  ==========================================================

Constants: ``peers``, ``nodes`` (each node's owner), ``handles`` (initial remote holders)
and ``script`` (each peer's operations, see :mod:`specs.bus1_impl_script`), which bounds
the sends, destructions, releases, signals and resets of a run.

Modelling choices (each keeps the code's behaviour on ordering):

* Group tags are transaction pointers in the code (stack addresses, arbitrary); here each
  transaction has a rank and, with ``ties = "all"``, the initial states hold every
  permutation of the ranks, so both orders of every tie are explored. Release
  notifications use the owner peer as group, ranked after every transaction. Node
  addresses (the third key) are fixed: handle ``(p, n)`` is ``1 + p * nodes + n``,
  message entries come after.
* ``bus1_peer_ioctl_recv`` is one step: between its peek and its remove nothing can be
  inserted before ``front`` nor remove it (only this peer removes; the local lock
  serialises it), and a payload handle's destruction entry read by ``is_live_at`` is
  either after the message whatever its state or already committed, so reading it at
  the peek gives the same answer (message.c reads it unlocked; see the findings).
* Payload handles of one message are acquired in one step; staging a data message is
  atomic under the destination's lock (the code stages without that lock, a data race
  this model does not explore).
* A handle's strong references are approximated by its holder: the release
  notification is queued when the last remote holder lets go.
* History: a destruction is recorded as a transaction of the owner (a message) addressed
  to the owner and every holder, late joiners included; receiving a destroy notification
  is delivering it, and a notification dropped by peek or flush is a drop with its
  reason, as are data messages dropped by peek (``REASONS``). A user that receives
  ``BUS1_HANDLE_INVALID`` has observed the destruction, so it joins that peer's causal
  past. Release notifications are not in the history.

State (tuples of ints only): ``(queues, handles, nodes, txs, pcs, ghost, drops, know,
notes, valid, dequeued, bad, ranks)``:

* ``queues[p]``: :data:`specs.bus1_queue.Queue` ``(clock, flush, leftmost, front, entries)``;
* ``handles[p * N + n]``: ``(state, ts, group)`` of peer ``p``'s handle to node ``n`` (the
  anchor when ``p`` owns ``n``); ``state`` is NONE, ATTACHED (in the node's map, not yet
  handed to the user), PUBLIC or RELEASED; ``ts``/``group`` are its queue node's, kept
  after dequeue as the code keeps them;
* ``nodes[n]``: DESTROYED | RELEASED flag bits;
* ``txs[p]``: ``0`` or ``(phase, mid, i, ts, async_ts, T, group, sync, async, postponed)``;
* ``pcs[p]``: operations started; ``ghost``/``drops``/``know``: the history
  (:mod:`specs.history`) with drop reasons and causal knowledge;
* ``notes[p]``/``valid[p]``: nodes whose destroy notification ``p`` received, nodes it
  holds a valid handle to (ghosts for the handle properties);
* ``dequeued[p]``: the last key ``p`` dequeued (ghost for ``dequeue_increasing``);
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

from checker import Constant, ConstantError, Property
from specs import bus1_queue as bq
from specs.base import PeerSpec
from specs.bus1_impl_script import RELEASE, RESET, SEND, SIGNAL, Op, parse_script
from specs.common import ghost_event, ghost_send, ghost_signal, members, peer_names
from specs.history import DELIVER, DROP, History
from specs.properties import LIBRARY
from specs.witnesses import WITNESSES

# Handle states.
NONE, ATTACHED, PUBLIC, RELEASED = 0, 1, 2, 3
# Node flags.
F_DESTROYED, F_RELEASED = 1, 2
# Transaction phases.
ACQ, STAGE, POSTPONED, SEAL, SYNC, COMMIT, RELEASE_ALL, FLUSH = range(1, 9)
PHASES = {ACQ: "acquire", STAGE: "stage", POSTPONED: "stage postponed", SEAL: "seal", SYNC: "sync",
          COMMIT: "commit", RELEASE_ALL: "release handles", FLUSH: "flush"}
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

Q, H, NODES, TXS, PCS, GHOST, DROPS, KNOW, NOTES, VALID, DEQ, BAD, RANKS = range(13)
FRONT_WARNS = bq.W_BEFORE_FRONT | bq.W_SYNTH_FRONT | bq.W_STAGE_FRONT


class Bus1Impl(PeerSpec):
    name = "bus1_impl"
    summary = "bus1 as the kernel code implements it: staging/commit queues, destruction, handles, reset"
    constants = (
        Constant("peers", int, 2, "number of peers, named a, b, c, ...", minimum=2, maximum=4),
        Constant("nodes", str, "ab", 'owner of each node: "ab" is node 0 owned by a, node 1 by b'),
        Constant("handles", list, [], 'initial remote holders per node: ["b", ""] gives b a handle to node 0'),
        Constant("script", dict, {}, 'operations per peer, e.g. { a = ["send 1 +0"], b = ["destroy 1"] }'),
        Constant("ties", str, "all", "group order of transactions: all permutations, or fixed", choices=("all", "fixed")),
        Constant(
            "mutant",
            str,
            "none",
            "a deliberately broken variant for testing the checks: none, or no_staging (entries "
            "are inserted committed at the commit timestamp: no blocks)",
            choices=("none", "no_staging"),
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
        self.ops = parse_script(self.script, self.names, self.owners, self.holders)
        # Message-producing operations: their ids (sender * stride + seq) and group slots.
        self.msg_ops: list[list[Op]] = [[op for op in ops if op.makes_message] for ops in self.ops]
        self.stride = max(1, max(len(m) for m in self.msg_ops))
        self.plan = None
        self.choices = None
        self.tx_slots = [(p, k) for p in range(n) for k in range(len(self.msg_ops[p]))]
        self.n_tx = len(self.tx_slots)
        self.mbase = 1 + n * self.n_nodes
        self.dest_table = tuple(members(mask) for mask in range(1 << n))

    # -- encoding helpers ---------------------------------------------------------------

    def hidx(self, p: int, node: int) -> int:
        return p * self.n_nodes + node

    def haddr(self, p: int, node: int) -> int:
        return 1 + p * self.n_nodes + node

    def msg_addr(self, mid: int, d: int) -> int:
        return self.mbase + mid * self.peers + d

    def op_of(self, mid: int) -> Op:
        return self.msg_ops[mid // self.stride][mid % self.stride]

    def msg_node_at(self, mid: int, d: int) -> int:
        """The destination node on peer ``d`` of data message ``mid``."""
        return next(n for n in self.op_of(mid).nodes if self.owners[n] == d)

    def group_of(self, ranks: tuple, mid: int) -> int:
        p, k = mid // self.stride, mid % self.stride
        return ranks[self.tx_slots.index((p, k))]

    def release_group(self, owner: int) -> int:
        return self.n_tx + 1 + owner

    # -- states -------------------------------------------------------------------------

    def init_states(self) -> list[tuple]:
        n, nn = self.peers, self.n_nodes
        handles = []
        for p in range(n):
            for node in range(nn):
                held = self.owners[node] == p or self.holders[node] >> p & 1
                handles.append((PUBLIC if held else NONE, 0, 0))
        valid = tuple(sum(1 << node for node in range(nn) if handles[p * nn + node][0] == PUBLIC) for p in range(n))
        empty = tuple(() for _ in range(n))
        base = [
            tuple(bq.EMPTY for _ in range(n)),
            tuple(handles),
            (0,) * nn,
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
        ids = tuple(range(1, self.n_tx + 1))
        orders = permutations(ids) if self.ties == "all" else [ids]
        out = []
        for ranks in orders:
            s = list(base)
            s[RANKS] = tuple(ranks)
            out.append(tuple(s))
        return out

    # -- the world: a mutable copy of a state for one step ------------------------------

    def next_states(self, state: tuple) -> list[tuple[tuple, tuple]]:
        out = []
        for p in range(self.peers):
            tx = state[TXS][p]
            if tx:
                w = World(self, state)
                label = w.tx_step(p)
                out.append((label, w.freeze(state)))
                continue
            if state[Q][p][3]:
                w = World(self, state)
                label = w.peek(p)
                out.append((label, w.freeze(state)))
            if state[PCS][p] < len(self.ops[p]):
                op = self.ops[p][state[PCS][p]]
                if op.kind == SIGNAL and state[TXS][op.target]:
                    continue  # the signalled peer takes it between its own transactions
                w = World(self, state)
                label = w.start(p)
                out.append((label, w.freeze(state)))
        return out

    def finished(self, state: tuple) -> bool:
        return not any(state[TXS])

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

    def _late_join(self, state: tuple) -> str | None:
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
        return (addr - 1) // self.n_nodes

    def entry_name(self, addr: int) -> str:
        if not addr:
            return "NULL"
        if addr >= self.mbase:
            mid, d = divmod(addr - self.mbase, self.peers)
            return f"{self.mname(mid)}->n{self.msg_node_at(mid, d)}"
        p, node = divmod(addr - 1, self.n_nodes)
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
        return f"{name}: {who} {args}"

    def describe(self, state: tuple) -> dict[str, Any]:
        h, messages = self.common_view(state)
        peers = {}
        for p, name in enumerate(self.names):
            clock, flush, left, front, entries = state[Q][p]
            tx = state[TXS][p]
            tx_text = None
            if tx:
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
        return {"peers": peers, "messages": messages, "nodes": {f"n{n}": f for n, f in enumerate(state[NODES])},
                "group_ranks": list(state[RANKS]), "ghost_bits": list(state[BAD])}

    # -- the refinement projection ----------------------------------------------------

    def observe(self, before: tuple, label: tuple, after: tuple) -> tuple[tuple, ...]:
        """The step's events as the abstract bus1 sees them (see :mod:`specs.bus1_refinement`).

        ``("send", p, mid, dmask)``, ``("deliver", q, mid)``, ``("drop", q, mid)``, and
        ``("reset", p)`` when a peer's reset starts; destructions are sends of their
        destroy transaction to the owner and the holders collected by
        ``bus1_handle_destroy_locked``. Everything else is internal.
        """
        name = label[0]
        if name == "bus1_peer_ioctl_send":
            return (("send", label[1], label[2], label[3]),)
        if name == "signal":
            return (("signal", label[1], self.names.index(label[2])),)
        if name == "bus1_handle_destroy_locked":
            events: tuple[tuple, ...] = (("send", label[1], label[2], label[3]),)
            if self.op_of(label[2]).kind == RESET:
                events = (("reset", label[1]),) + events
            return events
        if name in ("bus1_peer_ioctl_recv", "bus1_peer_peek", "bus1_queue_flush"):
            out = []
            logs_b, logs_a = before[GHOST][1], after[GHOST][1]
            for q in range(self.peers):
                for code in logs_a[q][len(logs_b[q]):]:
                    kind, mid = code & 7, code >> 3
                    if kind == DELIVER:
                        out.append(("deliver", q, mid))
                    elif kind == DROP:
                        out.append(("drop", q, mid))
            return tuple(out)
        return ()


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

    def freeze(self, before: tuple) -> tuple:
        for p in range(self.spec.peers):
            if self.q[p][0] < before[Q][p][0] or self.q[p][1] < before[Q][p][1]:
                self.bits |= B_CLOCK
        return (tuple(self.q), tuple(self.h), tuple(self.nodes), tuple(self.txs), tuple(self.pcs), self.ghost,
                self.drops, tuple(self.know), tuple(self.notes), tuple(self.valid), tuple(self.deq),
                (self.bits, self.warns), self.ranks)

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

    def is_live_at(self, p: int, node: int, ts: int) -> bool:
        """handle.c:bus1_handle_is_live_at: untimed DESTROYED bit, then ``ts <= own destroy ts``."""
        if ts & 1:
            self.warn(bq.W_ODD_TS)
        if not self.nodes[node] & F_DESTROYED:
            return True
        qts = self.hget(p, node)[1]
        return qts == 0 or bool(qts & 1) or ts <= qts

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
        addr = self.spec.haddr(owner, node)
        if bq.key_of(self.q[owner][4], addr) is None:
            grp = self.spec.release_group(owner)
            self.q[owner], ts, w = bq.commit_unstaged(self.q[owner], addr, grp)
            self.warn(w)
            self.hset(owner, node, ts=ts, grp=grp)

    def flush_release(self, node: int) -> None:
        """handle.c:bus1_handle_flush_release: a queued release notification is removed."""
        if self.nodes[node] & (F_DESTROYED | F_RELEASED):
            return
        owner = self.spec.owners[node]
        addr = self.spec.haddr(owner, node)
        if bq.key_of(self.q[owner][4], addr) is not None:
            self.q[owner], w = bq.remove(self.q[owner], addr)
            self.warn(w)

    def release_handle(self, p: int, node: int) -> None:
        """handle.c:bus1_handle_release_locked for a remote handle: detach, maybe notify."""
        self.hset(p, node, st=RELEASED)
        if not self.map_holders(node):
            self.queue_release(node)

    # -- ghost helpers ------------------------------------------------------------------

    def log(self, p: int, kind: int, mid: int, reason: int = 0) -> None:
        logs = self.ghost[1][p]
        if any(c >> 3 == mid and c & 7 in (DELIVER, DROP) for c in logs):
            return  # a destroy transaction with several notifications on one peer logs once
        self.ghost = ghost_event(self.ghost, p, kind, mid)
        if kind == DROP:
            self.drops = self.drops + ((p, mid, reason),)
        else:
            past = self.ghost[0][mid // self.spec.stride][mid % self.spec.stride][1]
            self.know[p] |= (1 << mid) | past

    def add_dest(self, mid: int, d: int) -> None:
        sent, logs = self.ghost
        s, k = divmod(mid, self.spec.stride)
        dmask, past = sent[s][k]
        if not dmask >> d & 1:
            row = sent[s][:k] + ((dmask | 1 << d, past),) + sent[s][k + 1 :]
            self.ghost = (sent[:s] + (row,) + sent[s + 1 :], logs)

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
            self.know[op.target] |= self.know[p]
            return ("signal", p, spec.names[op.target])
        if op.kind == RELEASE:
            (node,) = op.nodes
            self.pcs[p] += 1
            self.release_handle(p, node)
            return ("bus1_handle_release", p, node)
        mid = p * spec.stride + len(self.ghost[0][p])
        grp = spec.group_of(self.ranks, mid)
        if op.kind == SEND:
            dmask = 0
            for node in op.nodes:
                dmask |= 1 << spec.owners[node]
            self.ghost = ghost_send(self.ghost, p, mid, dmask, self.know[p])
            phase = ACQ if op.payload else STAGE
            self.txs[p] = (phase, mid, 0, 0, 0, 0, grp, (), (), ())
            return ("bus1_peer_ioctl_send", p, mid, dmask)
        # destroy / reset step 1: bus1_handle_destroy_locked for each node, one lock section.
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
        return ("bus1_handle_destroy_locked", p, mid, dmask)

    def stage(self, d: int, addr: int, grp: int, ts: int) -> int:
        """queue.c:bus1_queue_stage on ``d``; records the node's odd timestamp; returns the clock."""
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
            p, node = divmod(addr - 1, spec.n_nodes)
            self.hset(p, node, ts=ts, grp=grp)

    # -- one step of a transaction ------------------------------------------------------

    def tx_step(self, p: int) -> tuple:
        spec = self.spec
        phase, mid, i, ts, ats, T, grp, sync, asyn, post = self.txs[p]
        op = spec.op_of(mid)
        if phase in (ACQ, STAGE):
            order = tuple(reversed(op.nodes))  # mlist is LIFO (peer.c)
            node = order[i]
            d = spec.owners[node]
            addr = spec.msg_addr(mid, d)
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
                r, node = divmod(addr - 1, spec.n_nodes)
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
                if st == NONE or st == RELEASED:
                    continue
                if spec.owners[node] == p:
                    self.flush_release(node)
                    self.hset(p, node, st=RELEASED)
                    self.nodes[node] |= F_RELEASED
                else:
                    self.release_handle(p, node)
            self.txs[p] = (FLUSH, mid, 0, ts, ats, T, grp, sync, asyn, post)
            return ("bus1_peer_flush", p, mid, "release handles")
        # FLUSH
        self.q[p], removed, w = bq.flush(self.q[p], T)
        self.warn(w)
        for _ts, _g, addr in removed:
            if addr >= spec.mbase:
                self.log(p, DROP, (addr - spec.mbase) // spec.peers, R_FLUSHED)
            else:
                self.drop_notification(p, addr, R_FLUSHED)
        self.done(p, mid)
        return ("bus1_queue_flush", p, mid, T)

    def finish_if_empty(self, p: int) -> None:
        phase, mid, i, ts, ats, T, grp, sync, asyn, post = self.txs[p]
        if phase == SYNC and not sync:
            phase = COMMIT
        if phase == COMMIT and not sync:
            if self.spec.op_of(mid).kind == RESET:
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
        if owner == d:
            return "anchor"
        st = self.hget(d, node)[0]
        if st in (ATTACHED, PUBLIC):
            return "held"
        self.hset(d, node, st=ATTACHED, ts=0, grp=0)  # a new handle from the factory
        if self.nodes[node] & F_RELEASED:
            return "stale"
        self.flush_release(node)  # n_strong 0 -> 1
        if not self.nodes[node] & F_DESTROYED:
            return "spliced"
        return self.join(d, node)

    def join(self, d: int, node: int) -> str:
        """tx.c:bus1_tx_join of ``d``'s new handle with the destruction of ``node``."""
        spec = self.spec
        owner = spec.owners[node]
        _st, wts, wgrp = self.hget(owner, node)
        addr = spec.haddr(d, node)
        tx = self.txs[owner]
        dmid = self.destroy_mid(node, wgrp)
        if dmid is not None:
            self.add_dest(dmid, d)
        if wts & 1:
            assert tx and tx[6] == wgrp, "a staging anchor belongs to its owner's running transaction"
            phase, mid, i, ts, ats, T, grp, sync, asyn, post = tx
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
        self.q[d], queued, w = bq.commit_synthetic(self.q[d], addr, wgrp, timestamp)
        self.warn(w)
        if queued:
            self.hset(d, node, ts=timestamp)
            return case
        return case + " failed"

    # -- receiving ------------------------------------------------------------------------

    def drop_notification(self, p: int, addr: int, reason: int) -> None:
        spec = self.spec
        hp, node = divmod(addr - 1, spec.n_nodes)
        if self.nodes[node] & F_DESTROYED:
            grp = self.hget(hp, node)[2]
            mid = self.destroy_mid(node, grp)
            if mid is not None:
                self.log(p, DROP, mid, reason)

    def destroy_mid(self, node: int, grp: int) -> int | None:
        spec = self.spec
        owner = spec.owners[node]
        for m in range(owner * spec.stride, owner * spec.stride + len(self.ghost[0][owner])):
            if spec.group_of(self.ranks, m) == grp:
                return m
        return None

    def peek(self, p: int) -> tuple:
        """One round of peer.c:bus1_peer_peek, and for data bus1_peer_ioctl_recv."""
        spec = self.spec
        key = bq.peek(self.q[p])
        assert key is not None
        ts, grp, addr = key
        flushed = ts <= self.q[p][1]
        if addr >= spec.mbase:
            mid = (addr - spec.mbase) // spec.peers
            node = spec.msg_node_at(mid, p)
            reason = 0
            if flushed:
                reason = R_FLUSHED
            elif self.hget(p, node)[0] != PUBLIC:
                reason = R_NOT_PUBLIC
            elif not self.is_live_at(p, node, ts):
                reason = R_DESTROYED
            dkey = self.destroy_key(node)
            before = dkey is None or (ts, grp, addr) < (*dkey, spec.haddr(p, node))
            if reason:
                self.q[p], w = bq.remove(self.q[p], addr)
                self.warn(w)
                self.dequeued(p, key)
                self.log(p, DROP, mid, reason)
                if reason == R_DESTROYED and before:
                    self.bits |= B_DEST
                return ("bus1_peer_peek", p, "drop", spec.mname(mid), REASONS[reason])
            if not before:
                self.bits |= B_DEST
            if self.notes[p] >> node & 1:
                self.bits |= B_OWNER
            valid = []
            for h in spec.op_of(mid).payload:
                ok = self.is_live_at(p, h, ts)
                hkey = self.destroy_key(h)
                expected = hkey is None or (ts, grp) < hkey
                if ok != expected:
                    self.bits |= B_HANDLE
                if ok:
                    self.hset(p, h, st=PUBLIC)
                    self.valid[p] |= 1 << h
                else:
                    # The user sees BUS1_HANDLE_INVALID: it has observed the destruction.
                    dmid = self.destroy_mid(h, self.hget(spec.owners[h], h)[2])
                    if dmid is not None:
                        self.know[p] |= 1 << dmid | self.ghost[0][dmid // spec.stride][dmid % spec.stride][1]
                    if self.hget(p, h)[0] == ATTACHED:
                        self.release_handle(p, h)
                valid.append(f"n{h}" if ok else f"n{h}:INVALID")
            self.q[p], w = bq.remove(self.q[p], addr)
            self.warn(w)
            self.dequeued(p, key)
            self.log(p, DELIVER, mid)
            return ("bus1_peer_ioctl_recv", p, mid, ts, ",".join(valid) or "-")
        hp, node = divmod(addr - 1, spec.n_nodes)
        destroy = bool(self.nodes[node] & F_DESTROYED)
        kind = "destroy" if destroy else "release"
        reason = 0
        if flushed:
            reason = R_FLUSHED
        elif self.hget(p, node)[0] != PUBLIC:
            reason = R_NOT_PUBLIC
        elif not self.is_live_at(p, node, ts):
            reason = R_DESTROYED
        self.q[p], w = bq.remove(self.q[p], addr)
        self.warn(w)
        self.dequeued(p, key)
        if reason:
            if destroy:
                self.drop_notification(p, addr, reason)
            return ("bus1_peer_peek", p, f"drop {kind} n{node}", REASONS[reason])
        if destroy:
            self.notes[p] |= 1 << node
            mid = self.destroy_mid(node, grp)
            if mid is not None:
                self.log(p, DELIVER, mid)
        return ("bus1_peer_peek", p, f"{kind} notification n{node}", ts)


_DOCS = {
    "clock_parity": "every clock and flush timestamp is even and every queued entry is stamped "
    "(queue.h: even = committed, odd = staging)",
    "clock_monotonic": "no step moves a queue's clock or flush timestamp backwards (queue.h: tick and sync only "
    "advance; queue.c: WARN_ON(ts < queue->flush))",
    "staging_bounds": "every entry is at most clock+1, every committed one at most clock, and a staged entry is "
    "below its transaction's commit timestamp (queue.c: bus1_queue_add guards)",
    "front_consistent": "the cached leftmost is the tree's first entry and front is it when committed, else NULL "
    "(queue.c: what bus1_queue_remove maintains; readiness is front != NULL)",
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
    "late_join": "a handle attached after its node's destruction fails to join it (tx.c:bus1_tx_join fallback)",
}

SPEC = Bus1Impl

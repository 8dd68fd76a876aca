"""A base for specs of peers exchanging messages: shared constants, naming, history.

Most specs here are "n peers, each sending some messages to some destinations, with
optional side-channel signals", keep the ghost history of :mod:`ordercheck.specs.common`, and
have a per-peer transaction slot that must be empty at the end of a run. This base
gives them the shared constants and everything derived from the ghost, so a spec writes
only its own state and steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce
from itertools import permutations
from operator import itemgetter, or_
from typing import TYPE_CHECKING, Any, ClassVar

from ordercheck.checker import Constant, PartialOrder, Property, Rendering, Spec
from ordercheck.specs import peer_reductions
from ordercheck.specs.common import destination_choices, members, names_of, parse_script, peer_names, send_options
from ordercheck.specs.history import DELIVER, DROP, KIND_NAMES, SEND, SIGNAL_IN, SIGNAL_OUT, History, extend_ghost_log
from ordercheck.specs.peer_reductions import Bits, config_symmetries

if TYPE_CHECKING:
    from ordercheck.specs.history import HistoryLog

# Kinds of state variables for partial-order reduction footprints; variable ``(kind,
# peer)`` is bit ``kind_index * peers + peer`` (``signals`` is one variable). ``pop``
# stands for a peer taking the head off its own queue when the spec guarantees that
# nothing another peer may queue will land in front of that head (:meth:`head_stable`).
# ``seen`` is a peer's clock as *other* peers read it (bus1: a block reads both ``clock``
# and ``seen`` of the queue it blocks), for writes the peer itself can never observe
# (bus1's syncs absorbed by the peer's own pending tick, see ``Bus1.tx_footprint``).
# ``insert`` is a change to a queue that commutes with every other access to it (bus1's
# blocks and queueing of ``_block_commutes``/``_queue_commutes``), declared as an update
# that nothing reads. A property reading ``queue`` also sees ``pop`` and ``insert``; one
# reading ``clock`` also sees ``seen``.
VARIABLE_KINDS = ("clock", "queue", "busy", "know", "log", "sent", "signals", "tx", "pop", "seen", "insert")
_ALSO_VISIBLE = {"queue": ("pop", "insert"), "clock": ("seen",)}
MAX_SYMMETRIC_PEERS = 5


def peer_constants(peers: int = 3, sends: int = 1, destinations: str = "others") -> tuple[Constant, ...]:
    """The constants every :class:`PeerSpec` takes, with the given defaults."""
    return (
        Constant("peers", int, peers, "number of peers, named a, b, c, ...", minimum=2, maximum=8),
        Constant("sends", int, sends, "sends per peer (when no script is given)", minimum=0, maximum=8),
        Constant(
            "destinations",
            str,
            destinations,
            "what a send may address: others (all other peers at once), unicast, or subsets",
            choices=("others", "unicast", "subsets"),
        ),
        Constant("script", dict, {}, 'fixed sends per peer, e.g. { a = ["bc"], b = ["c"] }; overrides sends'),
        Constant("signals", int, 0, "side-channel signals allowed in a run", minimum=0, maximum=8),
    )


class PeerSpec(Spec, PartialOrder, Rendering):
    """Peers named a, b, c... with message ids ``sender * stride + seq``.

    Subclasses set ``ghost_at`` and ``txs_at``: the positions in their state tuple of
    the ghost ``(sent, logs)`` and of the per-peer transaction slots (``0`` when idle).
    ``setup`` derives what their steps read: ``names``, ``plan`` or ``choices``,
    ``stride``, ``dest_table`` (each destination mask's peers) and ``send_table``
    (:func:`~ordercheck.specs.common.send_options` of each peer per count of its sends).
    """

    ghost_at: ClassVar[int] = 0
    txs_at: ClassVar[int] = 1

    def setup(self) -> None:
        n = self.peers
        self.names = peer_names(n)
        self.plan, self.choices = self._send_plan()
        self.stride = max(1, max(len(s) for s in self.plan) if self.plan is not None else self.sends)
        self.dest_table = tuple(members(mask) for mask in range(1 << n))
        # send_options of each peer p after each count of its sends up to the last it
        # may make, then (): send_table[p][count] where count < len(send_table[p]), else
        # (); a spec's next_states reads it once per idle peer (send_options is a call)
        self.send_table = tuple(
            tuple(send_options(self.plan, self.choices, self.sends, p, count)
                  for count in range((len(self.plan[p]) if self.plan is not None else self.sends) + 1))
            for p in range(n)
        )
        self.var = {k: tuple(1 << (i * n + p) for p in range(n)) for i, k in enumerate(VARIABLE_KINDS)}
        self._future_cache: dict[tuple, int] = {}
        self._idle_cache: dict[tuple, tuple[int, int, int, int]] = {}
        self.configure()
        if type(self).history_key is PeerSpec.history_key:
            # the ghost, read by a getter written in C: the engines ask for a state's key
            # once or twice per state they meet (the same value as the method's)
            self.history_key = itemgetter(self.ghost_at)  # type: ignore[method-assign]

    def _send_plan(self) -> tuple[tuple[tuple[int, ...], ...] | None, tuple | None]:
        """What each peer sends: ``(plan, choices)``, one of them ``None``. ``plan[p]``
        is ``p``'s sends in order, each a bitmask of destinations (from ``script``);
        ``choices[p]`` the destination masks each of ``p``'s ``sends`` may take (from
        ``destinations``). :meth:`setup` derives the rest from it."""
        if self.script:
            return parse_script(self.script, self.peers), None
        return None, tuple(destination_choices(self.peers, p, self.destinations) for p in range(self.peers))

    def configure(self) -> None:
        """Derive spec-specific settings; runs after the shared ones are set."""

    def may_send(self, state: Any, p: int) -> bool:
        """Whether peer ``p`` may start its next send in ``state``: state-aware sending.

        The default lets every peer send whenever it has sends left. A spec whose sends
        depend on the peer's state (only the token holder sends, only the leader, only
        while the window has room) says so here, and the bases
        (:class:`~ordercheck.specs.async_peers.AsyncPeerSpec`, :class:`~ordercheck.specs.holdback.HoldBackSpec`)
        offer ``p``'s ``send`` actions only when it returns ``True``; a spec written on
        :class:`PeerSpec` directly calls it in its own ``next_states``. The sends left
        (``peers``/``sends``/``script``) still bound what is sent. A spec that declares
        partial-order reduction footprints must count what this reads among the reads
        of ``p``'s send.
        """
        return True

    # -- history ------------------------------------------------------------------------

    def history_key(self, state: tuple) -> Any:
        return state[self.ghost_at]

    def history(self, state: tuple) -> History:
        sent, logs = state[self.ghost_at]
        return History.from_raw(self.names, sent, logs, self.stride)

    def extend_history_log(self, state: tuple, log: HistoryLog, in_place: bool = False) -> HistoryLog | None:
        """``self.history(state).extend_log(log)``: a new log, ``log`` (laid out from a
        history that ``state``'s extends) followed by the events ``state``'s history
        adds; with ``in_place``, ``log`` itself extended (``extend_log_in_place``), or
        ``None``, with ``log`` unchanged, where it cannot be. Where the history is the
        plain ghost (``history`` not overridden), the raw ghost is read without building
        the :class:`History` (:func:`~ordercheck.specs.history.extend_ghost_log`): an
        evaluator extends one log per new history a search meets."""
        if type(self).history is PeerSpec.history:
            sent, logs = state[self.ghost_at]
            return extend_ghost_log(log, self.names, sent, logs, self.stride, in_place)
        h = self.history(state)
        if not in_place:
            return h.extend_log(log)
        return log if h.extend_log_in_place(log) else None

    def history_growth(self, parent_key: Any, key: Any) -> frozenset[str] | None:
        """The kinds of events by which ghost ``key`` extends ghost ``parent_key``.

        Only for specs whose history is the plain ghost (``history`` and
        ``history_key`` not overridden): logs may only grow at their ends, and a peer's
        messages only by one per appended send.
        """
        cls = type(self)
        if cls.history is not PeerSpec.history or cls.history_key is not PeerSpec.history_key:
            return None
        sent0, logs0 = parent_key
        sent1, logs1 = key
        kinds: set[str] = set()
        for p, log in enumerate(logs1):
            old = logs0[p]
            if log is old:
                if sent1[p] is not sent0[p] and sent1[p] != sent0[p]:
                    return None
                continue
            n = len(old)
            if len(log) < n or log[:n] != old:
                return None
            sends = 0
            for code in log[n:]:
                kind = code & 7
                if kind == SEND:
                    sends += 1
                kinds.add(KIND_NAMES[kind])
            outbox, outbox0 = sent1[p], sent0[p]
            if len(outbox) != len(outbox0) + sends or (sends and outbox[: len(outbox0)] != outbox0):
                return None
        return frozenset(kinds)

    def finished(self, state: tuple) -> bool:
        return not any(state[self.txs_at])

    def deadlock_free(self) -> Property:
        return Property.eventually(
            "deadlock_free", self._deadlock, doc="every run ends with no peer stuck inside a transaction"
        )

    def _deadlock(self, state: tuple) -> str | None:
        busy = [self.names[p] for p, tx in enumerate(state[self.txs_at]) if tx]
        return f"the run stops with {', '.join(busy)} inside a transaction" if busy else None

    # -- reductions (used by specs that declare them: see ordercheck.checker.engine.reduce) -------------
    # A spec opts in by defining ``actor`` (labels name their peer second), ``footprints``
    # (usually ``peer_footprints``), ``tx_footprint`` and ``whole_tx_footprint``;
    # and ``symmetries``/``permute`` with the ``perm_*`` helpers.

    def visible_mask(self, reads: Any) -> int:
        if reads is None:
            return -1
        n, out = self.peers, 0
        for kind in reads:
            if kind == "history":
                out |= self.visible_mask(("log", "sent"))
            elif kind in VARIABLE_KINDS:
                for k in (kind, *_ALSO_VISIBLE.get(kind, ())):
                    out |= ((1 << n) - 1) << (VARIABLE_KINDS.index(k) * n)
            else:
                return -1
        return out

    def remaining_sends(self, state: tuple, p: int) -> tuple[int, ...]:
        """Destination masks of every send ``p`` may still start (choices repeat)."""
        count = len(state[self.ghost_at][0][p])
        if self.plan is not None:
            return self.plan[p][count:]
        return self.choices[p] * (self.sends - count) if count < self.sends else ()

    def head_stable(self, state: tuple, p: int) -> bool:
        """Whether ``p`` can deliver its queue's head and every entry another peer may
        still queue on ``p`` lands behind that head (so delivering it commutes with
        them). ``False`` unless a spec proves more."""
        return False

    def idle_footprint(self, state: tuple, p: int, signals: int, busy: bool = False) -> tuple[int, int, int, int]:
        """Reads and writes of what an idle ``p`` may do next (deliver, start a send,
        signal), and the same with the delivery counted as touching the whole queue.
        ``busy``: ``p`` is inside a transaction, so only the second pair is wanted (the
        head's stability is not asked: the whole queue is counted anyway)."""
        stable = not busy and self.head_stable(state, p)
        return self._idle_masks(p, stable, bool(self.remaining_sends(state, p)), bool(signals))

    def _idle_masks(self, p: int, stable: bool, sending: bool, signalling: bool) -> tuple[int, int, int, int]:
        key = (p, stable, sending, signalling)
        masks = self._idle_cache.get(key)
        if masks is not None:
            return masks
        v = self.var
        pop = v["pop"][p] if stable else v["queue"][p]
        r = pop | v["know"][p]
        w = r | v["log"][p]
        if sending:
            r |= v["know"][p] | v["sent"][p] | v["tx"][p] | v["busy"][p]
            w |= v["busy"][p] | v["sent"][p] | v["log"][p] | v["tx"][p]
        if signalling:
            every = (1 << self.peers) - 1
            n = self.peers
            kinds = VARIABLE_KINDS
            sig = v["signals"][0]
            r |= sig | (every << (kinds.index("busy") * n)) | (every << (kinds.index("know") * n))
            w |= sig | (every << (kinds.index("know") * n)) | (every << (kinds.index("log") * n))
        q = v["queue"][p]
        masks = self._idle_cache[key] = (r, w, r | q, w | q)
        return masks

    def peer_footprints(self, state: tuple, signals: int) -> list[tuple[int, int, int, int, int, int]]:
        """Footprints per peer from :meth:`tx_footprint` and :meth:`idle_footprint`, as
        six masks (see :meth:`ordercheck.checker.api.reductions.PartialOrder.footprints`)."""
        txs = state[self.txs_at]
        signalling = bool(signals)
        out = []
        for p in range(self.peers):
            tx = txs[p]
            rest = self.remaining_sends(state, p)
            nu = lu = 0
            if tx:
                fp = self.tx_footprint(state, p, tx)
                nr, nw, lr, lw = fp[:4]
                if len(fp) == 6:
                    nu, lu = fp[4], fp[5]
                _r, _w, ir, iw = self._idle_masks(p, False, bool(rest), signalling)
                lr |= ir
                lw |= iw
            else:
                nr, nw, lr, lw = self._idle_masks(p, self.head_stable(state, p), bool(rest), signalling)
            if rest:
                m = self._future_cache.get((p, rest))
                if m is None:
                    m = 0
                    for dmask in set(rest):
                        m |= self.whole_tx_footprint(p, dmask)
                    self._future_cache[(p, rest)] = m
                lr |= m
                lw |= m
            out.append((nr, nw, lr, lw, nu, lu))
        return out

    def tx_footprint(self, state: tuple, p: int, tx: Any) -> tuple[int, ...]:
        """Reads and writes of ``p``'s next transaction step, and of the rest of it:
        ``(reads_now, writes_now, reads_later, writes_later)``, optionally followed by
        ``(updates_now, updates_later)`` (see :meth:`ordercheck.checker.api.reductions.PartialOrder.footprints`)."""
        raise NotImplementedError

    def whole_tx_footprint(self, p: int, dmask: int) -> int:
        """Every variable a whole transaction of ``p`` to ``dmask`` reads or writes."""
        raise NotImplementedError

    # -- reductions over channels (ordercheck.specs.peer_reductions), for the message-passing bases --
    # A base that keeps its channels, ghost, knowledge and budgets at fixed positions
    # names them in ``channel_layout`` and gets footprints from them; a spec with
    # processes beyond its peers (a sequencer) counts them in ``extra_processes``; a spec
    # whose rules order by peer id says what in ``symmetry_breaker``.

    channel_layout: ClassVar[tuple[int, int, int, int, int | None] | None] = None
    """Positions of ``(chans, ghost, know, signals_left, duplicates_left)`` in a state."""
    extra_processes: ClassVar[int] = 0
    """Processes beyond the peers (numbered from ``peers`` on), e.g. a sequencer."""
    symmetry_breaker: ClassVar[str] = ""
    """What in the spec's rules orders peers by id (so renaming peers changes its runs),
    as a phrase following the spec's name; empty when nothing does. A spec where that
    rule is a constant's choice says so in :meth:`symmetry_broken_by`."""

    def symmetry_broken_by(self) -> str:
        """What in this configuration's rules orders peers by id: :attr:`symmetry_breaker`,
        unless the spec overrides this for a configuration whose rules do not (Lamport
        and Skeen with ``tiebreak_by_sender`` off). Empty when nothing does."""
        return self.symmetry_breaker

    @property
    def reduction_bits(self) -> Any:
        """The footprint variables (:class:`ordercheck.specs.peer_reductions.Bits`) of this model."""
        bits = self.__dict__.get("_reduction_bits")
        if bits is None:
            bits = self.__dict__["_reduction_bits"] = Bits(self.peers + self.extra_processes, self.peers)
        return bits

    @property
    def channel_semantics(self) -> Any:
        """The :class:`ordercheck.specs.channels.Channels` the spec's channels follow."""
        return getattr(self, "net", None) or self.chan

    def sends_left_mask(self, state: tuple, p: int) -> int:
        """The peers ``p``'s remaining application sends may address (a mask); with
        :meth:`remaining_sends` as this class has it (a function of ``p`` and how many
        sends ``p`` made), memoised by those two."""
        if type(self).remaining_sends is not PeerSpec.remaining_sends:
            return reduce(or_, self.remaining_sends(state, p), 0)
        key = (p, len(state[self.ghost_at][0][p]))
        memo = self.__dict__.get("_sends_left")
        if memo is None:
            memo = self.__dict__["_sends_left"] = {}
        out = memo.get(key)
        if out is None:
            out = memo[key] = reduce(or_, self.remaining_sends(state, p), 0)
        return out

    def later_sends(self, state: tuple, p: int) -> int:
        """A mask of the processes ``p`` may send anything to, now or later (a superset
        will do). The default: every other process."""
        return ((1 << (self.peers + self.extra_processes)) - 1) & ~(1 << p)

    def replies_mask(self, state: tuple, p: int) -> int:
        """The processes ``p`` may answer later: those with a message in transit to ``p``
        (:attr:`channel_layout`) or with a remaining send that may address ``p``."""
        out = 0
        assert self.channel_layout is not None
        for (src, dst), _msgs in state[self.channel_layout[0]]:
            if dst == p:
                out |= 1 << src
        for q in range(self.peers):
            if q != p and self.sends_left_mask(state, q) >> p & 1:
                out |= 1 << q
        return out

    def channel_footprints(
        self, state: tuple, succ: Any, deaf: int = 0, hears: Sequence[int] | None = None
    ) -> list[tuple[int, int, int, int, int, int]]:
        """Footprints from :attr:`channel_layout` (see :mod:`ordercheck.specs.peer_reductions`);
        ``deaf``: the processes whose state rules out taking from a channel next;
        ``hears``: per process, a mask of the senders it may take from next (``None``:
        every sender)."""
        assert self.channel_layout is not None
        # Called through the module, so that a test may replace it there.
        return peer_reductions.channel_footprints(self, state, succ, self.channel_layout, self.later_sends, deaf, hears)

    def channel_refusal(self, base: type) -> str | None:
        """Why the channel footprints do not fit this spec, if they do not: it replaces
        ``base``'s ``next_states``, or gates sends on state it may read anywhere."""
        cls = type(self)
        if cls.next_states is not base.next_states:
            return f"{self.name} replaces {base.__name__}.next_states, so its steps' footprints are unknown"
        gate = getattr(PeerSpec, "may_send", None)
        if gate is not None and getattr(cls, "may_send", gate) is not gate:
            return f"{self.name}'s may_send may read any peer's state, so its sends' footprints are unknown"
        return None

    def config_symmetry(self, shapes_declared: bool) -> list[tuple[int, ...]]:
        """The peer renamings that map this configuration to itself, unless the spec
        breaks symmetry (:meth:`symmetry_broken_by`) or declares no shapes to rename by."""
        if self.symmetry_broken_by() or not shapes_declared:
            return []
        return config_symmetries(self, MAX_SYMMETRIC_PEERS)

    def channel_symmetry_refusal(self, shapes_declared: bool) -> str:
        """The phrase :meth:`~ordercheck.checker.Symmetry.symmetry_refusal` gives for a channel spec."""
        breaker = self.symmetry_broken_by()
        if breaker:
            return f"{self.name} {breaker}, so renaming peers changes its runs"
        if not shapes_declared:
            return f"{self.name} declares no shapes to rename peers in its state by"
        if self.peers > MAX_SYMMETRIC_PEERS:
            return f"more than {MAX_SYMMETRIC_PEERS} peers (each state's orbit would cost {self.peers}! renamings)"
        return f"this {self.name} configuration has no interchangeable peers (their sends differ)"

    # -- symmetry helpers --------------------------------------------------------------

    def peer_symmetries(self, *, ordered: bool) -> list[tuple[int, ...]]:
        """All peer permutations when the configuration is symmetric, else none.

        It is symmetric when no script fixes who sends what, and every send has a single
        destination (``unicast``, or two peers). A multicast visits its destinations in
        peer order, so renaming peers would change that order: multicast configurations
        with three or more peers are not symmetric. ``ordered`` says that the spec
        itself orders by peer id somewhere else (bus1's tie-break by sender id), which
        rules symmetry out too.
        """
        n = self.peers
        if ordered or self.script or n > MAX_SYMMETRIC_PEERS:
            return []
        if not (self.destinations == "unicast" or n == 2):
            return []
        ident = tuple(range(n))
        return [g for g in permutations(range(n)) if g != ident]

    def perm_mid(self, mid: int, perm: tuple[int, ...]) -> int:
        return perm[mid // self.stride] * self.stride + mid % self.stride

    def perm_peers(self, mask: int, perm: tuple[int, ...]) -> int:
        out = 0
        for p in members(mask):
            out |= 1 << perm[p]
        return out

    def perm_mids(self, mask: int, perm: tuple[int, ...]) -> int:
        out = 0
        for m in members(mask):
            out |= 1 << self.perm_mid(m, perm)
        return out

    def perm_ghost(self, ghost: tuple, perm: tuple[int, ...]) -> tuple:
        """The ghost ``(sent, logs)`` with peers (and so message ids) renamed."""
        sent, logs = ghost
        n = self.peers
        nsent: list = [()] * n
        nlogs: list = [()] * n
        for p in range(n):
            nsent[perm[p]] = tuple((self.perm_peers(d, perm), self.perm_mids(past, perm)) for d, past in sent[p])
            events = []
            for e in logs[p]:
                kind, arg = e & 7, e >> 3
                if kind in (SEND, DELIVER, DROP):
                    arg = self.perm_mid(arg, perm)
                elif kind in (SIGNAL_OUT, SIGNAL_IN):  # the other peer
                    arg = perm[arg]
                events.append((arg << 3) | kind)
            nlogs[perm[p]] = tuple(events)
        return (tuple(nsent), tuple(nlogs))

    def perm_vector(self, values: tuple, perm: tuple[int, ...]) -> tuple:
        out: list = [None] * self.peers
        for p, v in enumerate(values):
            out[perm[p]] = v
        return tuple(out)

    # -- coverage ---------------------------------------------------------------------------
    # What a configuration is sure to exercise, for the warning of ordercheck.checker.engine.run's
    # coverage_of. The base lists the steps every such spec shares (``send``, ``signal``,
    # ``lose``, ``duplicate``); a spec adds the steps of its own algorithm in
    # ``message_kinds`` and ``duplicate_kinds``, and no more.

    def planned_sends(self) -> tuple[tuple[int, int], ...]:
        """Every ``(sender, destination mask)`` a send of this configuration may take."""
        if self.plan is not None:
            return tuple(dict.fromkeys((p, m) for p, masks in enumerate(self.plan) for m in masks))
        if not self.sends or self.choices is None:
            return ()
        return tuple((p, m) for p, masks in enumerate(self.choices) for m in masks)

    def message_kinds(self) -> tuple[str, ...]:
        """The action names, besides ``send``, that some run of this configuration takes
        on the way of its messages (called only when some peer has a send).

        List a name only when the configuration guarantees it: a step every message goes
        through (``deliver``), or one the configuration makes reachable for sure (a
        hold-back when a message can overtake one it depends on). The default, ``()``,
        claims nothing.
        """
        return ()

    def duplicate_kinds(self) -> tuple[str, ...]:
        """The action names, besides ``duplicate``, that a copy left on a channel by a
        duplication makes reachable for sure (a discard of a copy). Default ``()``."""
        return ()

    def action_kinds(self) -> tuple[str, ...]:
        """``send`` and :meth:`message_kinds` when some peer has a send, ``lose`` and
        ``duplicate`` (with :meth:`duplicate_kinds`) when the channels of
        :func:`ordercheck.specs.channels.channel_constants` may lose or duplicate a message in
        transit, and ``signal`` when signals are allowed."""
        kinds: list[str] = []
        if self.planned_sends():
            kinds += ["send", *self.message_kinds()]
            if getattr(self, "lossy", False):
                kinds.append("lose")
            if getattr(self, "duplicates", 0):
                kinds += ["duplicate", *self.duplicate_kinds()]
        if self.signals:
            kinds.append("signal")
        return tuple(dict.fromkeys(kinds))

    # -- presentation ---------------------------------------------------------------------

    def mname(self, mid: int) -> str:
        """A message's readable name: ``a1`` is a's first message."""
        return f"{self.names[mid // self.stride]}{mid % self.stride + 1}"

    def format_action(self, action: tuple) -> str:
        kind, p, *rest = action
        who = self.names[p]
        if kind == "send":
            mid, dmask = rest
            return f"{who} starts sending {self.mname(mid)} to {names_of(dmask, self.names)}"
        if kind == "deliver":
            return f"{who} receives {self.mname(rest[0])}"
        if kind == "signal":
            return f"{who} signals {self.names[rest[0]]}"
        return super().format_action(action)

    def action_site(self, action: tuple) -> tuple[str, int, int | None] | None:
        """Labels here are ``(kind, peer, ...)``: a step other than a send, delivery or
        signal (those are in the history) is drawn as a local step of ``peer``."""
        if len(action) > 1 and isinstance(action[1], int) and action[0] not in ("send", "deliver", "signal"):
            return ("step", action[1], None)
        return None

    def common_view(self, state: tuple) -> tuple[History, dict[str, Any]]:
        """The history and the per-message part of :meth:`describe`."""
        h = self.history(state)
        messages = {
            m.name: {
                "from": self.names[m.sender],
                "to": [self.names[d] for d in sorted(m.dests)],
                "past": [h.messages[x].name for x in sorted(m.past)],
            }
            for m in h.sent_messages()
        }
        return h, messages

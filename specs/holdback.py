"""A base for causal-delivery protocols: asynchronous channels and a hold-back buffer.

BSS, SES and matrix clocks share one shape: a peer stamps each message with some
control data (a vector, a buffer of vectors, a matrix), the message travels over an
asynchronous channel (:mod:`ordercheck.specs.channels`), and on arrival the receiver either
delivers it at once or, if its delivery condition does not hold yet, keeps it in a
hold-back buffer until it does. A subclass gives only the algorithm's own parts:
:meth:`HoldBackSpec.init_local`, :meth:`~HoldBackSpec.stamp`,
:meth:`~HoldBackSpec.deliverable` and :meth:`~HoldBackSpec.on_deliver` (and optionally
:meth:`~HoldBackSpec.on_arrival`).

Steps of a peer ``p``:

- ``receive(p, m)``: take ``m`` off a channel into ``p`` (the head of a FIFO channel,
  any message of an unordered one) and deliver it at once, its condition holding;
- ``buffer(p, m)``: the same arrival, but the condition fails, so ``m`` is held back;
- ``deliver(p, m)``: deliver a held-back message whose condition now holds. While one
  does, ``p`` does nothing else: it re-checks its buffer after each delivery, as the
  seeds say ("check the buffer to see if now it can deliver any buffered message"),
  though in any order among the messages that became deliverable;
- ``send(p, m, dests)``: an atomic send, one copy per destination on its channel;
- ``signal(p, q)``: a side-channel signal the protocol does not see.

The environment may also ``lose`` a message in transit (``lossy``) or ``duplicate``
one (``duplicates`` times per run). A duplicate is an ordinary arrival: the spec's
condition decides what happens to it.

State: ``(chans, buffers, local, ghost, know, signals_left, dups_left)``. A message in
transit or held back is ``(mid, data)``; ``mid`` names its sender (``mid // stride``).
``local[p]`` is the algorithm's per-peer state; ``ghost`` and ``know`` are as in
:mod:`ordercheck.specs.common`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ordercheck.checker import Fields, Property, Symmetry, tag_action
from ordercheck.specs.base import PeerSpec
from ordercheck.specs.channels import EMPTY, Channels
from ordercheck.specs.common import (
    ghost_send,
    ghost_signal,
    members,
    message_past,
    names_of,
    replace,
)
from ordercheck.specs.history import DELIVER, encode_event
from ordercheck.specs.peer_reductions import (
    channel_actor,
    history_mask,
    memo_tables,
    rename_by_peer,
    rename_chans,
    rename_common,
)
from ordercheck.specs.properties import LIBRARY
from ordercheck.specs.witnesses import WITNESSES

CHANS, BUFFERS, LOCAL, GHOST, KNOW, SIGNALS, DUPS = range(7)


class HoldBackSpec(PeerSpec, Symmetry):
    """Peers with a hold-back buffer over :mod:`ordercheck.specs.channels` (see the module doc)."""

    ghost_at: ClassVar[int] = GHOST
    # Channels deliver and peers keep taking messages; sending, signalling, losing and
    # duplicating stay optional. (Every run here is finite: sends, signals and
    # duplicates are bounded, so only the terminal-state check ever applies.)
    fairness = {"receive": "weak", "buffer": "weak", "deliver": "weak"}

    def configure(self) -> None:
        self.net = Channels.from_spec(self)
        self._gated = type(self).may_send is not PeerSpec.may_send
        self.configure_algorithm()
        cls = type(self)
        # the subclass's on_arrival, or None where it is the default (the state unchanged)
        self._arrival = self.on_arrival if cls.on_arrival is not HoldBackSpec.on_arrival else None
        self._lazy = (
            not self.net.ordered
            and cls.on_arrival is HoldBackSpec.on_arrival
            and cls.next_states is HoldBackSpec.next_states
            and not self._gated
        )

    def configure_algorithm(self) -> None:
        """Derive the algorithm's own settings from its constants."""

    # -- what a subclass gives ----------------------------------------------------------

    def init_local(self, p: int) -> tuple:
        """Peer ``p``'s initial algorithm state."""
        raise NotImplementedError

    def stamp(self, local: tuple, p: int, dests: tuple[int, ...]) -> tuple[tuple, tuple]:
        """``p`` sends one message to ``dests``: its new state and, per destination (in
        the order of ``dests``), the control data the copy carries."""
        raise NotImplementedError

    def on_arrival(self, local: tuple, p: int) -> tuple:
        """``p``'s state after a message arrives, before the delivery check."""
        return local

    def deliverable(self, local: tuple, p: int, src: int, data: Any) -> bool:
        """Whether ``p`` may deliver a message from ``src`` carrying ``data`` now."""
        raise NotImplementedError

    def on_deliver(self, local: tuple, p: int, src: int, data: Any) -> tuple:
        """``p``'s state after it delivers a message from ``src`` carrying ``data``."""
        raise NotImplementedError

    def holds_back(self) -> tuple[bool, bool]:
        """Whether this configuration's delivery condition holds back a message that
        arrives before an earlier message of its sender to the same peer (first), and one
        that arrives before a message its sender had received a message after (second).
        Coverage lists ``buffer`` and ``deliver`` when the channels and sends make such an
        arrival possible (:meth:`message_kinds`); the default holds back both."""
        return True, True

    local_fields: ClassVar[Fields | None] = None
    """Names of the items of a peer's algorithm state (``Fields("clock", "seen")``): the
    hooks may read ``self.local_fields.read(local).clock`` and build the next one with
    ``self.local_fields.set(local, clock=...)``; :meth:`show_local` shows them by name."""

    def show_local(self, local: tuple) -> Any:
        """A JSON-friendly view of one peer's algorithm state (by field name when
        :attr:`local_fields` names them)."""
        if self.local_fields is not None:
            return self.local_fields.describe(local)
        return list(local)

    def show_data(self, data: Any) -> Any:
        """A JSON-friendly view of a message's control data."""
        return data

    # -- coverage -----------------------------------------------------------------------

    def message_kinds(self) -> tuple[str, ...]:
        """``receive`` (the first message sent can arrive first and be delivered at once),
        and ``buffer`` and ``deliver`` when a message can arrive early in a way that
        :meth:`holds_back` says the condition catches: overtaking an earlier message of
        its sender on an unordered channel, or a message relayed by a third peer (``p``
        sends to ``r`` and then, or in the same send, to ``q``, who sends to ``r``)."""
        fifo, relayed = self.holds_back()
        if (fifo and self._may_overtake_own()) or (relayed and self._may_overtake_relayed()):
            return ("receive", "buffer", "deliver")
        return ("receive",)

    def _sends_of(self, p: int) -> list[tuple[int, int]]:
        """``(position, destination mask)`` of each send ``p`` may make."""
        if self.plan is not None:
            return list(enumerate(self.plan[p]))
        return [(k, m) for k in range(self.sends) for m in self.choices[p]]

    def _may_overtake_own(self) -> bool:
        if self.net.ordered:
            return False
        for p in range(self.peers):
            sends = self._sends_of(p)
            if any(i < j and mi & mj for i, mi in sends for j, mj in sends):
                return True
        return False

    def _may_overtake_relayed(self) -> bool:
        reaches = [0] * self.peers  # who q's sends may reach
        for q in range(self.peers):
            for _i, m in self._sends_of(q):
                reaches[q] |= m
        for p in range(self.peers):
            sends = self._sends_of(p)
            for i, mi in sends:
                for j, mj in sends:
                    if j < i or (j == i and mi != mj):
                        continue
                    if any(q != r and reaches[q] >> r & 1 for r in members(mi) for q in members(mj)):
                        return True
        return False

    # -- states -------------------------------------------------------------------------

    def init_states(self) -> list[tuple]:
        n = self.peers
        empty = tuple(() for _ in range(n))
        local = tuple(self.init_local(p) for p in range(n))
        return [(EMPTY, empty, local, (empty, empty), (0,) * n, self.signals, self.duplicates)]

    def finished(self, state: tuple) -> bool:
        return True  # sends are atomic: a run may stop anywhere; stuck messages are eventual_delivery's

    def ready(self, state: tuple, p: int) -> list[tuple[int, Any]]:
        """The held-back messages ``p`` may deliver now, as ``(mid, data)``, each distinct
        one once (the buffer is sorted; two equal copies, a duplicate and its original,
        give one successor, as :mod:`ordercheck.specs.channels` offers one)."""
        local = state[LOCAL][p]
        buf = state[BUFFERS][p]
        out = []
        for i, (mid, data) in enumerate(buf):
            if i and buf[i - 1] == buf[i]:
                continue
            try:
                if self.deliverable(local, p, mid // self.stride, data):
                    out.append((mid, data))
            except Exception as exc:
                tag_action(exc, ("deliver", p, mid))
                raise
        return out

    def next_states(self, state: tuple) -> list[tuple[tuple, tuple]]:
        chans, buffers, local, ghost, know, signals, dups = state
        out: list[tuple[tuple, tuple]] = []
        add = out.append
        n = self.peers
        stride = self.stride
        sent, logs = ghost
        deliverable, on_deliver = self.deliverable, self.on_deliver
        # A peer with an empty buffer has nothing ready (unless a subclass's ready says otherwise).
        own_ready = type(self).ready is HoldBackSpec.ready
        # An exception from a hook is tagged with the label of the action it was computing
        # (checker.tag_action), for the one-line report of a spec error.
        arrival = self._arrival
        for p in range(n):
            # the parts of the tuples that a step of p leaves as they are, sliced once per peer
            local_a, local_b = local[:p], local[p + 1 :]
            know_a, know_b, know_p = know[:p], know[p + 1 :], know[p]
            logs_a, logs_b, log_p = logs[:p], logs[p + 1 :], logs[p]
            ready = self.ready(state, p) if buffers[p] or not own_ready else None
            if ready:
                bufs_a, bufs_b, buf_p = buffers[:p], buffers[p + 1 :], buffers[p]
                for mid, data in ready:
                    buf = list(buf_p)
                    buf.remove((mid, data))
                    src = mid // stride
                    try:
                        local_p = on_deliver(local[p], p, src, data)
                    except Exception as exc:
                        tag_action(exc, ("deliver", p, mid))
                        raise
                    add((
                        ("deliver", p, mid),
                        (
                            chans,
                            (*bufs_a, tuple(buf), *bufs_b),
                            (*local_a, local_p, *local_b),
                            (sent, (*logs_a, log_p + (encode_event(DELIVER, mid),), *logs_b)),
                            (*know_a, know_p | (1 << mid) | message_past(ghost, mid, stride), *know_b),
                            signals,
                            dups,
                        ),
                    ))
                continue
            for src, _dst, msg, rest in self.net.receivable(chans, p):
                mid, data = msg
                try:
                    arrived = arrival(local[p], p) if arrival is not None else local[p]
                    now = deliverable(arrived, p, src, data)
                    local_p = on_deliver(arrived, p, mid // stride, data) if now else None
                except Exception as exc:
                    tag_action(exc, ("receive", p, mid))
                    raise
                if now:
                    add((
                        ("receive", p, mid),
                        (
                            rest,
                            buffers,
                            (*local_a, local_p, *local_b),
                            (sent, (*logs_a, log_p + (encode_event(DELIVER, mid),), *logs_b)),
                            (*know_a, know_p | (1 << mid) | message_past(ghost, mid, stride), *know_b),
                            signals,
                            dups,
                        ),
                    ))
                else:
                    buf = tuple(sorted(buffers[p] + (msg,)))
                    add((
                        ("buffer", p, mid),
                        (rest, replace(buffers, p, buf), (*local_a, arrived, *local_b), ghost, know, signals, dups),
                    ))
            count = len(sent[p])
            options = self.send_table[p]
            options = options[count] if count < len(options) else ()
            if options and self._gated and not self.may_send(state, p):
                options = ()
            for dmask in options:
                mid = p * stride + count
                dests = self.dest_table[dmask]
                label = ("send", p, mid, dmask)
                try:
                    local_p, data = self.stamp(local[p], p, dests)
                except Exception as exc:
                    tag_action(exc, label)
                    raise
                chans2 = chans
                for d, item in zip(dests, data):
                    chans2 = self.net.send(chans2, p, d, (mid, item))
                add((
                    label,
                    (
                        chans2,
                        buffers,
                        (*local_a, local_p, *local_b),
                        ghost_send(ghost, p, mid, dmask, know_p),
                        (*know_a, know_p | (1 << mid), *know_b),
                        signals,
                        dups,
                    ),
                ))
            if signals:
                for q in range(n):
                    if q != p:
                        know2 = replace(know, q, know[q] | know_p)
                        add((("signal", p, q), (chans, buffers, local, ghost_signal(ghost, p, q), know2, signals - 1, dups)))
        for src, dst, msg, rest in self.net.losses(chans):
            add((("lose", src, dst, msg[0]), (rest, buffers, local, ghost, know, signals, dups)))
        if dups:
            for src, dst, msg, more in self.net.duplications(chans):
                add((("duplicate", src, dst, msg[0]), (more, buffers, local, ghost, know, signals, dups - 1)))
        return out

    # -- reductions (ordercheck.specs.peer_reductions): a step of p touches p's state, its incoming
    # channels and the channels it sends on; the hooks see only p's own state, so this
    # holds for every subclass that keeps this next_states.

    acyclic = True  # every step takes a message, sends one of a bounded number, or spends a budget
    channel_layout = (CHANS, GHOST, KNOW, SIGNALS, DUPS)
    local_shape: ClassVar[Any] = None
    """How to rename peers in a peer's algorithm state (a :data:`ordercheck.specs.peer_reductions.Shape`);
    declaring it (with :attr:`data_shape`) turns symmetry reduction on for symmetric
    configurations."""
    data_shape: ClassVar[Any] = None
    """How to rename peers in a message's control data."""

    def actor(self, action: tuple) -> int | None:
        return channel_actor(action)

    def successor_footprints(self, state: tuple, succ: Any) -> list[tuple[int, int, int, int, int, int]]:
        # A peer with a held-back message to deliver does only that (next_states), whatever arrives.
        deaf = 0
        for label, _t in succ:
            if label[0] == "deliver":
                deaf |= 1 << label[1]
        return self.channel_footprints(state, succ, deaf)

    def footprints(self, state: tuple) -> list[tuple[int, int, int, int, int, int]]:
        refusal = self.por_refusal()
        if refusal is not None:  # not opted in, or outside the picture: no footprints
            raise NotImplementedError(refusal)
        return self.successor_footprints(state, self.next_states(state))

    def later_sends(self, state: tuple, p: int) -> int:
        return self.sends_left_mask(state, p)

    # A message that arrives while undeliverable can as well stay in its channel until
    # it is deliverable: on an unordered channel nothing waits behind it, and when the
    # arrival leaves the peer's state as it was (no on_arrival of the subclass's own),
    # taking it later, in the step that delivers it, gives the same histories; held
    # back, it would only restrict the peer (a peer with a deliverable held-back message
    # does nothing else). So the reductions may defer every ``buffer`` step while
    # another step is enabled (ordercheck.checker.api.reductions.PartialOrder.deferrable). A ``buffer`` step
    # writes the channel's receiving end and the buffer, not the history; two of them
    # commute, and they enable nothing: the peer's state, which decides deliveries,
    # stays as it was.

    def defers(self) -> bool:
        return self._lazy

    def deferrable(self, action: tuple) -> bool:
        return self._lazy and action[0] == "buffer"

    def visible_mask(self, reads: Any) -> int:
        return history_mask(self.reduction_bits, reads)

    def por_refusal(self) -> str | None:
        return self.channel_refusal(HoldBackSpec)

    def _shapes_declared(self) -> bool:
        return type(self).local_shape is not None and type(self).data_shape is not None

    def symmetries(self) -> list[tuple[int, ...]]:
        if self.channel_refusal(HoldBackSpec) is not None:
            return []
        return self.config_symmetry(self._shapes_declared())

    def symmetry_refusal(self) -> str:
        refusal = self.channel_refusal(HoldBackSpec)
        return refusal if refusal is not None else self.channel_symmetry_refusal(self._shapes_declared())

    def permute(self, state: tuple, perm: tuple[int, ...]) -> tuple:
        item = ("tuple", "mid", self.data_shape)
        tables = memo_tables(self, perm)
        out = rename_common(self, state, perm, GHOST, KNOW, tables)
        out[CHANS] = rename_chans(self, state[CHANS], perm, item, tables)
        out[BUFFERS] = rename_by_peer(self, "buffer", state[BUFFERS], ("sorted", item), perm, tables)
        out[LOCAL] = rename_by_peer(self, "local", state[LOCAL], self.local_shape, perm, tables)
        return tuple(out)

    # -- properties and presentation ---------------------------------------------------------

    def properties(self) -> list[Property]:
        return [*LIBRARY, *WITNESSES]

    def action_site(self, action: tuple) -> tuple[str, int, int | None] | None:
        """A message held back has arrived: its delivery comes later."""
        if action[0] == "buffer":
            return ("arrive", action[1], action[2])
        return super().action_site(action)

    def format_action(self, action: tuple) -> str:
        kind = action[0]
        if kind == "receive":
            return f"{self.names[action[1]]} receives {self.mname(action[2])} and delivers it"
        if kind == "buffer":
            return f"{self.names[action[1]]} receives {self.mname(action[2])} and holds it back"
        if kind == "deliver":
            return f"{self.names[action[1]]} delivers the held-back {self.mname(action[2])}"
        if kind in ("lose", "duplicate"):
            _k, src, dst, mid = action
            verb = "is lost" if kind == "lose" else "is duplicated"
            return f"{self.mname(mid)} from {self.names[src]} to {self.names[dst]} {verb} in transit"
        if kind == "send":
            _k, p, mid, dmask = action
            return f"{self.names[p]} sends {self.mname(mid)} to {names_of(dmask, self.names)}"
        return super().format_action(action)

    def describe(self, state: tuple) -> dict[str, Any]:
        chans, buffers, local, ghost, know, signals, dups = state
        h, messages = self.common_view(state)
        return {
            "peers": {
                name: {
                    "state": self.show_local(local[p]),
                    "held_back": [{self.mname(m): self.show_data(d)} for m, d in buffers[p]],
                    "delivered": [h.messages[m].name for m in h.deliveries(p)],
                    "knows": [self.mname(m) for m in members(know[p])],
                }
                for p, name in enumerate(self.names)
            },
            "in_transit": [
                {"from": self.names[s], "to": self.names[d], "message": self.mname(m), "data": self.show_data(data)}
                for (s, d), msgs in chans
                for m, data in msgs
            ],
            "messages": messages,
            "signals_left": signals,
            "duplicates_left": dups,
        }


def vmax(a: tuple, b: tuple) -> tuple:
    """The componentwise maximum of two vectors (or matrices, as tuples of rows)."""
    if a and isinstance(a[0], tuple):
        return tuple(map(vmax, a, b))
    return tuple([x if x >= y else y for x, y in zip(a, b)])  # max(x, y) without its call


def leq(a: tuple, b: tuple) -> bool:
    """``a <= b`` componentwise."""
    return all(x <= y for x, y in zip(a, b))

"""A base for protocols whose peers talk over asynchronous channels (:mod:`ordercheck.specs.channels`).

The total-order protocols (sequencer, Lamport, Skeen) share one shape: a send is one
atomic local step that puts copies on channels (so it completes at once and the message
joins the sender's knowledge), messages travel on :class:`~ordercheck.specs.channels.Channels`
(FIFO or unordered, optionally lossy or duplicating), a receiving process buffers them
and delivers to the application when its protocol allows. What an observer sees
(the ghost history of :mod:`ordercheck.specs.common`) is only the application's sends and
deliveries, plus side-channel signals.

Every state of such a spec starts with the same five items, which this base manages::

    (ghost, know, signals_left, duplicates_left, chans, ...spec's own items)

Subclasses implement :meth:`protocol_steps` (their own actions) and get sends of
application messages scripted by ``peers``/``sends`` (and, where they allow it,
``destinations``/``script``), signals, channel losses and duplications, history and
message naming for free.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from ordercheck.checker import Constant, ConstantError, Fields, Record, Symmetry, tag_action
from ordercheck.specs.base import PeerSpec
from ordercheck.specs.channels import Channels
from ordercheck.specs.common import ghost_event, ghost_send, ghost_signal, mask_of, members, message_past, peer_names
from ordercheck.specs.history import DELIVER
from ordercheck.specs.peer_reductions import (
    channel_actor,
    history_mask,
    rename,
    rename_by_peer,
    rename_chans,
    rename_common,
)

GHOST, KNOW, SIGNALS, DUPS, CHANS = range(5)


def broadcast_constants(peers: int = 3, sends: int = 1) -> tuple[Constant, ...]:
    """``peers``, ``sends`` and ``signals`` for a spec whose every message goes to the
    whole group, its sender included (the sequencer and Lamport's algorithm)."""
    return (
        Constant("peers", int, peers, "number of peers, named a, b, c, ...", minimum=2, maximum=6),
        Constant("sends", int, sends, "broadcasts per peer", minimum=0, maximum=4),
        Constant(
            "senders",
            str,
            "",
            'which peers broadcast, e.g. "ab" (empty: every peer); the others only receive',
        ),
        Constant("signals", int, 0, "side-channel signals allowed in a run", minimum=0, maximum=8),
    )


class AsyncPeerSpec(PeerSpec, Symmetry):
    """Peers exchanging messages over asynchronous :class:`Channels`.

    ``broadcast`` (a class attribute) says whether every message goes to every peer
    including its sender (then the spec takes :func:`broadcast_constants`) or to the
    destinations :func:`ordercheck.specs.base.peer_constants` allow.
    """

    ghost_at: ClassVar[int] = GHOST
    broadcast: ClassVar[bool] = False

    def setup(self) -> None:
        super().setup()
        self.chan = Channels.from_spec(self)
        self._gated = type(self).may_send is not PeerSpec.may_send

    def _send_plan(self) -> tuple[tuple[tuple[int, ...], ...] | None, tuple | None]:
        """With ``broadcast``, each peer ``senders`` names sends its ``sends`` messages
        to the whole group, itself included; the others send nothing."""
        if not self.broadcast:
            return super()._send_plan()
        names = peer_names(self.peers)
        active = self.senders or "".join(names)
        for ch in active:
            if ch not in names:
                raise ConstantError("senders", f"{ch!r} is not a peer ({', '.join(names)})")
        everyone = mask_of(range(self.peers))
        return tuple((everyone,) * self.sends if names[p] in active else () for p in range(self.peers)), None

    # -- what subclasses give -------------------------------------------------------------

    own_fields: ClassVar[Fields | None] = None
    """Names of the spec's own state items, those after the shared five
    (``Fields("holder", "seq", "next")``): read them with :meth:`own` and replace them
    with :meth:`with_own`, instead of counting positions."""

    def init_rest(self) -> tuple:
        """The spec's own state items, appended after the shared five."""
        return ()

    def own(self, state: tuple) -> Record:
        """The spec's own items of ``state`` by name (needs :attr:`own_fields`)."""
        assert self.own_fields is not None, f"{self.name} names no own_fields"
        return self.own_fields.read(state[CHANS + 1 :])

    def with_own(self, state: tuple, **changes: Any) -> tuple:
        """``state`` with the named own items replaced (needs :attr:`own_fields`)."""
        assert self.own_fields is not None, f"{self.name} names no own_fields"
        return state[: CHANS + 1] + self.own_fields.set(state[CHANS + 1 :], **changes)

    def protocol_steps(self, state: tuple) -> list[tuple[tuple, tuple]]:
        """The spec's own actions in ``state`` (receipts, deliveries...)."""
        raise NotImplementedError

    def on_send(self, state: tuple, p: int, mid: int, dmask: int) -> tuple:
        """``state`` after ``p`` sends message ``mid`` to ``dmask``; the ghost and
        knowledge are already updated, the spec puts the message on its channels."""
        raise NotImplementedError

    # -- the state machine ---------------------------------------------------------------

    def init_states(self) -> list[tuple]:
        n = self.peers
        empty = tuple(() for _ in range(n))
        return [((empty, empty), (0,) * n, self.signals, self.duplicates, (), *self.init_rest())]

    def next_states(self, state: tuple) -> list[tuple[tuple, tuple]]:
        out = list(self.protocol_steps(state))
        ghost, know, signals = state[GHOST], state[KNOW], state[SIGNALS]
        n = self.peers
        for p in range(n):
            count = len(ghost[0][p])
            options = self.send_choices(p, count)
            if options and self._gated and not self.may_send(state, p):
                options = ()
            for dmask in options:
                mid = p * self.stride + count
                g = ghost_send(ghost, p, mid, dmask, know[p])
                k = know[:p] + (know[p] | (1 << mid),) + know[p + 1 :]
                s = (g, k) + state[SIGNALS:]
                label = ("send", p, mid, dmask)
                try:
                    after = self.on_send(s, p, mid, dmask)
                except Exception as exc:  # named in the one-line report of a spec error
                    tag_action(exc, label)
                    raise
                out.append((label, after))
            if signals:
                for q in range(n):
                    if q != p:
                        kq = know[q] | know[p]
                        s = (ghost_signal(ghost, p, q), know[:q] + (kq,) + know[q + 1 :], signals - 1) + state[DUPS:]
                        out.append((("signal", p, q), s))
        chans = state[CHANS]
        for src, dst, msg, rest in self.chan.losses(chans):
            out.append((("lose", src, dst, *_flat(msg)), state[:CHANS] + (rest,) + state[CHANS + 1 :]))
        if state[DUPS]:
            for src, dst, msg, rest in self.chan.duplications(chans):
                s = state[:DUPS] + (state[DUPS] - 1, rest) + state[CHANS + 1 :]
                out.append((("duplicate", src, dst, *_flat(msg)), s))
        return out

    def send_choices(self, p: int, count: int) -> tuple[int, ...]:
        if self.plan is not None:
            return self.plan[p][count : count + 1]
        if count < self.sends:
            return self.choices[p]
        return ()

    def finished(self, state: tuple) -> bool:
        return True

    # -- reductions (ordercheck.specs.peer_reductions) -------------------------------------------------
    # A subclass opts in by declaring ``own_shapes``: the shape of each of its own state
    # items, which also says that each is split by process (``("byp", ...)``: item[p] is
    # p's) or belongs to one extra process, and that a step of a process reads and writes
    # only its own parts, its incoming channels and the channels it sends on.

    channel_layout = (CHANS, GHOST, KNOW, SIGNALS, DUPS)
    own_shapes: ClassVar[tuple | None] = None
    """Shapes (:data:`ordercheck.specs.peer_reductions.Shape`) of the spec's own state items, in order."""
    wire_shape: ClassVar[Any] = None
    """How to rename peers in a message on a channel (``None``: symmetry not declared)."""

    def actor(self, action: tuple) -> int | None:
        return channel_actor(action)

    def successor_footprints(self, state: tuple, succ: Any) -> list[tuple[int, int, int, int, int, int]]:
        return self.channel_footprints(state, succ)

    def footprints(self, state: tuple) -> list[tuple[int, int, int, int, int, int]]:
        refusal = self.por_refusal()
        if refusal is not None:  # not opted in, or outside the picture: no footprints
            raise NotImplementedError(refusal)
        return self.channel_footprints(state, self.next_states(state))

    def visible_mask(self, reads: Any) -> int:
        return history_mask(self.reduction_bits, reads)

    def por_refusal(self) -> str | None:
        if type(self).own_shapes is None:  # not opted in (own_shapes says who owns what)
            return f"{self.name} declares no footprints"
        return self.channel_refusal(AsyncPeerSpec)

    def _shapes_declared(self) -> bool:
        return type(self).own_shapes is not None and type(self).wire_shape is not None

    def symmetries(self) -> list[tuple[int, ...]]:
        if self.channel_refusal(AsyncPeerSpec) is not None:
            return []
        return self.config_symmetry(self._shapes_declared())

    def symmetry_refusal(self) -> str:
        if type(self).own_shapes is None:
            return super().symmetry_refusal()
        refusal = self.channel_refusal(AsyncPeerSpec)
        return refusal if refusal is not None else self.channel_symmetry_refusal(self._shapes_declared())

    def permute(self, state: tuple, perm: tuple[int, ...]) -> tuple:
        assert self.own_shapes is not None
        out = rename_common(self, state, perm, GHOST, KNOW)
        out[CHANS] = rename_chans(self, state[CHANS], perm, self.wire_shape)
        for i, shape in enumerate(self.own_shapes):
            value = state[CHANS + 1 + i]
            if isinstance(shape, tuple) and shape[0] == "byp":
                out[CHANS + 1 + i] = rename_by_peer(self, f"own{i}", value, shape[1], perm)
            else:
                out[CHANS + 1 + i] = rename(shape, value, self, perm)
        return tuple(out)

    # -- helpers for subclasses ------------------------------------------------------------

    def receipts(self, chans: tuple, dst: int | None = None) -> Iterator[tuple[int, int, Any, tuple]]:
        """Messages that can be taken off a channel now (see :meth:`Channels.receivable`)."""
        return self.chan.receivable(chans, dst)

    def deliver(self, state: tuple, q: int, mid: int) -> tuple:
        """``state`` with ``q``'s application delivering ``mid``: logged in the ghost,
        and ``q`` learns the message and its causal past."""
        ghost, know = state[GHOST], state[KNOW]
        k = know[q] | (1 << mid) | message_past(ghost, mid, self.stride)
        return (ghost_event(ghost, q, DELIVER, mid), know[:q] + (k,) + know[q + 1 :]) + state[SIGNALS:]

    def proc_name(self, p: int) -> str:
        """A process's name in traces (subclasses with extra processes override it)."""
        return self.names[p]

    def format_action(self, action: tuple) -> str:
        kind = action[0]
        if kind in ("lose", "duplicate"):
            _, src, dst, *msg = action
            verb = "loses" if kind == "lose" else "duplicates"
            return f"the channel {self.proc_name(src)}->{self.proc_name(dst)} {verb} {self.format_wire(tuple(msg))}"
        return super().format_action(action)

    def format_wire(self, msg: tuple) -> str:
        """A message on the wire, readably (subclasses say what their fields mean)."""
        return str(msg)

    def base_view(self, state: tuple) -> dict[str, Any]:
        """The shared part of :meth:`describe`: messages, deliveries, knowledge, channels."""
        h, messages = self.common_view(state)
        return {
            "messages": messages,
            "delivered": {name: [h.messages[m].name for m in h.deliveries(p)] for p, name in enumerate(self.names)},
            "knows": {name: [self.mname(m) for m in members(state[KNOW][p])] for p, name in enumerate(self.names)},
            "in_transit": {
                f"{self.proc_name(s)}->{self.proc_name(d)}": [self.format_wire(_as_tuple(m)) for m in msgs]
                for (s, d), msgs in state[CHANS]
            },
            "signals_left": state[SIGNALS],
        }


def _flat(msg: Any) -> tuple:
    return msg if isinstance(msg, tuple) else (msg,)


def _as_tuple(msg: Any) -> tuple:
    return msg if isinstance(msg, tuple) else (msg,)

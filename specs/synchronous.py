"""Garg's algorithm for synchronous message ordering: big and small messages.

Source: ``seeds/garg-ch12-message-ordering.txt`` ("Synchronous order: Algorithm").
Peers are ordered by id (a < b < c ...). A message from a bigger peer to a smaller one
is *big*; from a smaller to a bigger one, *small*. Every peer starts active.

- Big message from ``i`` to ``j < i``: ``i`` must be active; it sends the message and
  turns passive until ``j``'s ack arrives. ``j`` receives a big message only while
  active, and acks it at once.
- Small message from ``i`` to ``j > i``: ``i`` first sends ``j`` a permission request
  and waits. ``j`` grants permission only while active, and turns passive when it
  does. When ``i`` receives the permission it sends the small message; when ``j``
  receives it, ``j`` turns active again.
- A passive process sends nothing and receives nothing but what ends its passivity:
  the ack it awaits, or the small message of the peer it granted permission to.

The slides leave open what a peer waiting for permission may do; here it stays active
(it is not passive in the slides' sense): it may receive big messages, ack them and
grant other peers' requests, but it starts no other send (a peer is one thread). It
takes its permission only while active, and sends the small message in the same step.

Ablation flags: ``request_permission`` (off: a small message is sent straight away, and
the receiver takes it while active), ``wait_for_ack`` (off: a big message's sender
stays active and no ack is sent). The seed warns the algorithm "cannot be totally
symmetric"; each flag makes it partly so.

Messages in transit are ``(kind, mid)`` with ``kind`` one of :data:`APP`, :data:`REQUEST`,
:data:`PERMISSION`, :data:`ACK` (``mid`` is ``0`` for control messages). Per peer:
``(mode, partner, asking)``: ``mode`` :data:`ACTIVE`, :data:`WAIT_ACK` (passive after a
big send, awaiting ``partner``'s ack) or :data:`GRANTED` (passive after granting
``partner``); ``asking`` is ``0`` or ``1 + j`` while a request to ``j`` is outstanding.
State: ``(chans, procs, ghost, know, signals_left, dups_left)``.
"""

from __future__ import annotations

from typing import Any

from ordercheck.checker import Constant, ConstantError, Property, Symmetry
from ordercheck.specs.base import PeerSpec, peer_constants
from ordercheck.specs.channels import EMPTY, Channels, channel_constants
from ordercheck.specs.common import ghost_event, ghost_send, ghost_signal, members, message_past, replace, send_options
from ordercheck.specs.history import DELIVER
from ordercheck.specs.peer_reductions import channel_actor, history_mask
from ordercheck.specs.properties import LIBRARY

APP, REQUEST, PERMISSION, ACK = 0, 1, 2, 3
KIND_NAMES = {APP: "message", REQUEST: "request", PERMISSION: "permission", ACK: "ack"}
ACTIVE, WAIT_ACK, GRANTED = 0, 1, 2
MODE_NAMES = {ACTIVE: "active", WAIT_ACK: "passive (awaits ack)", GRANTED: "passive (granted)"}

CHANS, PROCS, GHOST, KNOW, SIGNALS, DUPS = range(6)


class Synchronous(PeerSpec, Symmetry):
    name = "synchronous"
    summary = "Garg's synchronous ordering: big messages acked, small ones sent with permission, passive processes"
    # Channel faults (ordercheck.checker.api.faults): a loss leaves a peer waiting (eventual_delivery,
    # deadlock_free). The algorithm has no duplicate detection, and a copy is taken as a
    # new message deliberately: synchronous-tlc-duplicating.toml shows the crown a copy
    # of a big message makes.
    tolerates = frozenset({"reordering", "loss"})
    breaks_under = frozenset({"duplication"})
    constants = (
        *peer_constants(peers=2, sends=1, destinations="unicast"),
        *channel_constants("unordered"),
        Constant("request_permission", bool, True, "ask the bigger peer's permission before a small message", ablation=True),
        Constant("wait_for_ack", bool, True, "turn passive after a big message until its ack", ablation=True),
    )
    ghost_at = GHOST
    # Peers keep taking the messages their mode allows; starting a send is optional.
    # (Taking a permission is labelled "send", like starting a send, so it is left out;
    # every run here is finite, so only the terminal-state check applies anyway. The TLA+
    # export, which does not force every enabled step, makes taking it fair.)
    fairness = {k: "weak" for k in ("grant", "ack", "deliver")}

    # Reductions (ordercheck.specs.peer_reductions): a peer's steps touch its mode, its incoming
    # channels and the channels it sends on; of those incoming channels it reads only
    # the ones a run of the other peers may bring it a new step on (hears). Big and small
    # messages break symmetry.
    acyclic = True  # every step takes a message off a channel, or starts one of a bounded number of sends
    channel_layout = (CHANS, GHOST, KNOW, SIGNALS, DUPS)
    symmetry_breaker = "makes a message big or small by comparing peer ids"

    def actor(self, action: tuple) -> int | None:
        return channel_actor(action)

    def successor_footprints(self, state: tuple, succ: Any) -> list[tuple[int, int, int, int, int, int]]:
        return self.channel_footprints(state, succ, hears=self.hears(state))

    def footprints(self, state: tuple) -> list[tuple[int, int, int, int, int, int]]:
        return self.channel_footprints(state, self.next_states(state))

    def hears(self, state: tuple) -> tuple[int, ...]:
        """Per peer ``p``, a mask of the peers ``s`` whose channel to ``p`` it reads in
        its next steps (for :meth:`channel_footprints`, which ignores it where losses
        or copies may happen, and on a FIFO channel reads only an empty one anyway).

        ``p`` reads channel ``s -> p`` only to see whether a message ``s`` appends gives
        ``p`` a new step; ``p``'s own state changes by ``p``'s steps alone, so the
        question is, for ``p`` as it stands and runs of the *other* peers only: may
        ``s`` append a message of a kind ``p`` takes now, under a label ``p`` has not
        already enabled? (What ``p`` takes of what is in transit is unchanged by such
        appends: only ``p`` takes from its channels, and an append commutes with a take.)

        What ``p`` takes as it stands: active, a request (from a smaller peer), a big
        message (from a bigger one; a small one too without ``request_permission``),
        the permission of the peer it asks; awaiting ``j``'s ack, an ack from ``j``
        (and none if one is in transit: every ack from ``j`` is taken under one label,
        to one successor up to which copy); granted to ``j``, a small message from ``j``.

        What ``s`` may append without ``p`` acting: a request or a big message only as
        one of its remaining sends to ``p``; a small message (with
        ``request_permission``) only after taking a permission from ``p``, so only if
        one is in transit ``p -> s`` (``p`` grants nothing in such a run); a permission
        or an ack only in answer to a request or a big message of ``p`` in transit
        ``p -> s`` (``p`` sends nothing in such a run). Those channels ``p -> s`` only
        lose messages in such runs, and remaining sends only shrink, so the answer
        computed here holds for the whole run.
        """
        chans, procs = state[CHANS], state[PROCS]
        n = self.peers
        sends = [self.sends_left_mask(state, s) for s in range(n)]
        ask = self.request_permission
        out = []
        for p, (mode, j, asking) in enumerate(procs):
            mask = 0
            for s in range(n):
                if s == p or (mode != ACTIVE and s != j):
                    continue
                back = {k for k, _m in self.net.between(chans, p, s)}  # what p has in transit to s
                if mode == ACTIVE:
                    # From a smaller peer, requests (or small messages, without permission
                    # asked); from a bigger one, big messages, and the permission asked for.
                    new = bool(sends[s] >> p & 1) or (s > p and ask and asking == 1 + s and REQUEST in back)
                elif mode == WAIT_ACK:
                    new = APP in back and not any(k == ACK for k, _m in self.net.between(chans, s, p))
                else:  # GRANTED: only a permission from p lets s send it another small message
                    new = PERMISSION in back
                if new:
                    mask |= 1 << s
            out.append(mask)
        return tuple(out)

    def visible_mask(self, reads: Any) -> int:
        return history_mask(self.reduction_bits, reads)

    def symmetry_refusal(self) -> str:
        return self.channel_symmetry_refusal(True)

    def later_sends(self, state: tuple, p: int) -> int:
        # Its own messages and requests, and grants and acks to those who message it.
        return self.sends_left_mask(state, p) | self.replies_mask(state, p)

    def message_kinds(self) -> tuple[str, ...]:
        pairs = [(p, members(m)[0]) for p, m in self.planned_sends()]
        small = any(d > p for p, d in pairs)
        big = any(d < p for p, d in pairs)
        request = ("request", "grant") if small and self.request_permission else ()
        ack = ("ack",) if big and self.wait_for_ack else ()
        return (*request, "deliver", *ack)

    def configure(self) -> None:
        if self.destinations != "unicast" and not self.script:
            raise ConstantError("destinations", "synchronous ordering is point to point: use \"unicast\"")
        if self.plan is not None and any(bin(m).count("1") != 1 for sends in self.plan for m in sends):
            raise ConstantError("script", "synchronous ordering is point to point: each send names one destination")
        self.net = Channels.from_spec(self)

    def init_states(self) -> list[tuple]:
        n = self.peers
        empty = tuple(() for _ in range(n))
        procs = ((ACTIVE, 0, 0),) * n
        return [(EMPTY, procs, (empty, empty), (0,) * n, self.signals, self.duplicates)]

    def next_states(self, state: tuple) -> list[tuple[tuple, tuple]]:
        chans, procs, ghost, know, signals, dups = state
        out: list[tuple[tuple, tuple]] = []
        for p in range(self.peers):
            mode, partner, asking = procs[p]
            for src, _dst, msg, rest in self.net.receivable(chans, p):
                step = self._receive(state, p, src, msg, rest)
                if step is not None:
                    out.append(step)
            if mode != ACTIVE:
                continue
            if not asking:
                count = len(ghost[0][p])
                for dmask in send_options(self.plan, self.choices, self.sends, p, count):
                    out.append(self._start_send(state, p, members(dmask)[0]))
            if signals:
                for q in range(self.peers):
                    if q != p:
                        know2 = replace(know, q, know[q] | know[p])
                        out.append((("signal", p, q), (chans, procs, ghost_signal(ghost, p, q), know2, signals - 1, dups)))
        for src, dst, msg, rest in self.net.losses(chans):
            out.append((("lose", src, dst, msg[0], msg[1]), (rest, procs, ghost, know, signals, dups)))
        if dups:
            for src, dst, msg, more in self.net.duplications(chans):
                out.append((("duplicate", src, dst, msg[0], msg[1]), (more, procs, ghost, know, signals, dups - 1)))
        return out

    # -- steps ------------------------------------------------------------------------------

    def _start_send(self, state: tuple, p: int, d: int) -> tuple[tuple, tuple]:
        chans, procs, ghost, know, signals, dups = state
        if d > p and self.request_permission:
            chans2 = self.net.send(chans, p, d, (REQUEST, 0))
            return ("request", p, d), (chans2, replace(procs, p, (ACTIVE, 0, 1 + d)), ghost, know, signals, dups)
        big = d < p
        after = (WAIT_ACK, d, 0) if big and self.wait_for_ack else (ACTIVE, 0, 0)
        return self._send_app(state, p, d, after, chans)

    def _send_app(self, state: tuple, p: int, d: int, after: tuple, chans: tuple) -> tuple[tuple, tuple]:
        _c, procs, ghost, know, signals, dups = state
        mid = p * self.stride + len(ghost[0][p])
        chans2 = self.net.send(chans, p, d, (APP, mid))
        know2 = replace(know, p, know[p] | (1 << mid))
        return ("send", p, mid, 1 << d), (
            chans2, replace(procs, p, after), ghost_send(ghost, p, mid, 1 << d, know[p]), know2, signals, dups,
        )

    def _receive(self, state: tuple, p: int, src: int, msg: tuple, rest: tuple) -> tuple[tuple, tuple] | None:
        """``p`` takes ``msg`` from ``src`` if its mode lets it; ``None`` if not."""
        chans, procs, ghost, know, signals, dups = state
        mode, partner, asking = procs[p]
        kind, mid = msg
        if kind == ACK:
            if mode == WAIT_ACK and partner == src:
                return ("ack", p, src), (rest, replace(procs, p, (ACTIVE, 0, asking)), ghost, know, signals, dups)
            return None
        if kind == REQUEST:
            if mode != ACTIVE:
                return None
            chans2 = self.net.send(rest, p, src, (PERMISSION, 0))
            return ("grant", p, src), (chans2, replace(procs, p, (GRANTED, src, asking)), ghost, know, signals, dups)
        if kind == PERMISSION:
            if mode != ACTIVE or asking != 1 + src:
                return None
            return self._send_app((rest, procs, ghost, know, signals, dups), p, src, (ACTIVE, 0, 0), rest)
        # An application message.
        big = src > p
        if big:
            if mode != ACTIVE:
                return None
            after = (mode, partner, asking)
            if self.wait_for_ack:
                rest = self.net.send(rest, p, src, (ACK, 0))
        elif self.request_permission:
            if not (mode == GRANTED and partner == src):
                return None
            after = (ACTIVE, 0, asking)
        else:
            if mode != ACTIVE:
                return None
            after = (mode, partner, asking)
        k = know[p] | (1 << mid) | message_past(ghost, mid, self.stride)
        return ("deliver", p, mid), (
            rest, replace(procs, p, after), ghost_event(ghost, p, DELIVER, mid), replace(know, p, k), signals, dups,
        )

    # -- properties and presentation ---------------------------------------------------------

    def finished(self, state: tuple) -> bool:
        return all(proc == (ACTIVE, 0, 0) for proc in state[PROCS])

    def properties(self) -> list[Property]:
        return [*LIBRARY, Property.eventually(
            "deadlock_free", self._stuck, doc="every run ends with every peer active and no request outstanding"
        )]

    def _stuck(self, state: tuple) -> str | None:
        stuck = []
        for p, (mode, partner, asking) in enumerate(state[PROCS]):
            if mode == WAIT_ACK:
                stuck.append(f"{self.names[p]} waits for {self.names[partner]}'s ack")
            elif mode == GRANTED:
                stuck.append(f"{self.names[p]} waits for {self.names[partner]}'s small message")
            if asking:
                stuck.append(f"{self.names[p]} waits for {self.names[asking - 1]}'s permission")
        return f"the run stops with {', '.join(stuck)}" if stuck else None

    def format_action(self, action: tuple) -> str:
        kind, *args = action
        n = self.names
        if kind == "send":
            p, mid, dmask = args
            size = "big" if members(dmask)[0] < p else "small"
            return f"{n[p]} sends {size} message {self.mname(mid)} to {n[members(dmask)[0]]}"
        if kind == "deliver":
            return f"{n[args[0]]} receives {self.mname(args[1])}"
        if kind == "request":
            return f"{n[args[0]]} asks {n[args[1]]} for permission"
        if kind == "grant":
            return f"{n[args[0]]} grants {n[args[1]]} permission and turns passive"
        if kind == "ack":
            return f"{n[args[0]]} gets {n[args[1]]}'s ack and turns active"
        if kind in ("lose", "duplicate"):
            src, dst, k, mid = args
            what = self.mname(mid) if k == APP else KIND_NAMES[k]
            return f"{what} from {n[src]} to {n[dst]} is {'lost' if kind == 'lose' else 'duplicated'}"
        return super().format_action(action)

    def internal_messages(self, action: tuple) -> list[tuple[str, int, int, str]]:
        """The control messages: a ``request`` for permission before a small message,
        the ``permission`` that answers it (the small message's send takes it), the
        ``ack`` of a big message (its delivery sends it); a control message the channel
        loses (a copy's receipt is drawn as a receipt)."""
        kind, *args = action
        if kind == "request":
            return [("send", args[0], args[1], "request")]
        if kind == "grant":
            p, src = args
            return [("receive", p, src, "request"), ("send", p, src, "permission")]
        if kind == "send":
            p, _mid, dmask = args
            d = members(dmask)[0]
            return [("receive", p, d, "permission")] if d > p and self.request_permission else []
        if kind == "deliver":
            p, mid = args
            src = mid // self.stride
            return [("send", p, src, "ack")] if src > p and self.wait_for_ack else []
        if kind == "ack":
            return [("receive", args[0], args[1], "ack")]
        if kind == "lose" and args[2] != APP:
            src, dst, k, _mid = args
            return [("lose", dst, src, KIND_NAMES[k])]
        return []

    def describe(self, state: tuple) -> dict[str, Any]:
        chans, procs, ghost, know, signals, dups = state
        h, messages = self.common_view(state)
        return {
            "peers": {
                name: {
                    "mode": MODE_NAMES[procs[p][0]],
                    "partner": self.names[procs[p][1]] if procs[p][0] != ACTIVE else None,
                    "asking": self.names[procs[p][2] - 1] if procs[p][2] else None,
                    "delivered": [h.messages[m].name for m in h.deliveries(p)],
                    "knows": [self.mname(m) for m in members(know[p])],
                }
                for p, name in enumerate(self.names)
            },
            "in_transit": [
                {"from": self.names[s], "to": self.names[d], "kind": KIND_NAMES[k], "message": self.mname(m) if k == APP else None}
                for (s, d), msgs in chans
                for k, m in msgs
            ],
            "messages": messages,
            "signals_left": signals,
            "duplicates_left": dups,
        }


SPEC = Synchronous

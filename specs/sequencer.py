"""Total order through a sequencer process.

Sources: ``seeds/message-ordering-notes.txt`` ("a central component for total ordering
with a special process (called sequencer) to which all processes send their broadcast
messages. The special process gives each message a sequence number and broadcasts it to
all processes") and ``seeds/garg-ch12-message-ordering.txt`` ("Centralized:
Coordinator multicasts the message", FIFO channels assumed).

The sequencer is an extra process, not one of the peers: it has no application, so its
numbering and re-broadcasts are protocol traffic, absent from the history (process
number ``peers`` on the channels, shown as ``S``). Each peer broadcasts to the whole
group, itself included: a peer's own message reaches its application only through the
sequencer, like everyone else's.

Steps:

* ``send(p, m)``: ``p`` puts ``m`` on its channel to the sequencer.
* ``sequence(m)``: the sequencer takes ``m`` off a channel, numbers it with its
  counter and puts ``(k, m)`` on its channel to every peer (one atomic step of the
  sequencer).
* ``receive(q, k, m)``: ``q`` takes ``(k, m)`` off the channel into its hold-back set.
* ``discard(q, k, m)``: a duplicate (a number already delivered or held) is dropped.
* ``deliver(q, m)``: ``q`` delivers the held message numbered with the next number it
  expects (``hold_back``); without ``hold_back`` ``receive`` delivers at once.

State: ``(ghost, know, signals, dups, chans, counter, expect, held)`` with ``expect[q]``
the next sequence number ``q`` delivers and ``held[q]`` a sorted tuple of ``(k, m)``.

The sequencer numbers whatever reaches it: a copy made by a duplicating channel on the
way to it gets a second number and is delivered twice (the seed does not ask the
sequencer to deduplicate). Copies on the way from it are discarded by number.

Ablations:

* ``hold_back``: the sequence numbers are used for delivery: a peer holds back a
  numbered message until every smaller number is delivered. Off, it delivers in order
  of arrival. With FIFO channels from the sequencer that changes nothing (numbers
  arrive in order); with unordered channels it breaks the total order.
* ``own_via_sequencer``: a peer's own message reaches its application only through the
  sequencer, like everyone else's. Off (the tempting shortcut), the sender delivers
  its message at once when it sends it, and skips it when the numbered copy comes back;
  another peer's message numbered first is then delivered after it there, before it
  everywhere else: the total order breaks even over FIFO channels.
"""

from __future__ import annotations

from typing import Any

from ordercheck.checker import Constant, Property
from ordercheck.specs.async_peers import CHANS, AsyncPeerSpec, broadcast_constants
from ordercheck.specs.channels import channel_constants
from ordercheck.specs.common import replace
from ordercheck.specs.properties import LIBRARY
from ordercheck.specs.witnesses import WITNESSES

COUNTER, EXPECT, HELD = 5, 6, 7


class Sequencer(AsyncPeerSpec):
    name = "sequencer"
    summary = "total order broadcast: a sequencer process numbers every message and re-broadcasts it"
    # Channel faults (ordercheck.checker.api.faults): copies from the sequencer are discarded by number;
    # a copy on the way to it is numbered again, deliberately (see the module docstring,
    # sequencer-2-duplicating.toml); unordered channels are what hold-back is for.
    tolerates = frozenset({"reordering", "loss"})
    breaks_under = frozenset({"duplication"})
    broadcast = True
    constants = (
        *broadcast_constants(3, 1),
        *channel_constants("fifo"),
        Constant("hold_back", bool, True, "deliver in sequence-number order (hold back early arrivals)", ablation=True),
        Constant(
            "own_via_sequencer",
            bool,
            True,
            "a sender delivers its own message only when the sequencer's numbered copy comes back",
            ablation=True,
        ),
    )

    # Reductions: the counter is the sequencer's own (an extra process); peers own the rest.
    acyclic = True  # every step takes a message off a channel, or sends one of a bounded number
    # The sequencer keeps numbering and each peer keeps taking and delivering; sending,
    # signals and channel faults are never obligations.
    fairness = {k: "weak" for k in ("sequence", "discard", "receive", "deliver", "skip")}
    extra_processes = 1
    own_shapes = (None, ("byp", None), ("byp", ("sorted", ("tuple", None, "mid"))))
    wire_shape = staticmethod(lambda msg, perm, _s=None: msg)  # replaced per instance in configure

    def configure(self) -> None:
        self.seq_id = self.peers
        # On the wire: a message id to the sequencer, (number, id) from it.
        self.wire_shape = lambda msg, perm: (
            self.perm_mid(msg, perm) if isinstance(msg, int) else (msg[0], self.perm_mid(msg[1], perm))
        )

    def message_kinds(self) -> tuple[str, ...]:
        if not self.hold_back:
            return ("sequence", "deliver")
        skip = () if self.own_via_sequencer else ("skip",)
        return ("sequence", "receive", "deliver", *skip)

    def por_refusal(self) -> str | None:
        if self.duplicates:
            # Found on sampled states (tests/test_peer_reductions.py): with a copy of a
            # message in flight, the sequencer's numbering step does not commute with a
            # peer's delivery of the other copy, which the footprints do not show.
            return "the sequencer over duplicating channels: numbering a copy does not commute with delivering the other"
        return super().por_refusal()

    def duplicate_kinds(self) -> tuple[str, ...]:
        # A copy of a numbered message is discarded by its number (or, without hold-back,
        # only the sender's own copy after the shortcut).
        return ("discard",) if self.hold_back or not self.own_via_sequencer else ()

    def actor(self, action: tuple) -> int | None:
        return self.seq_id if action[0] == "sequence" else super().actor(action)

    def later_sends(self, state: tuple, p: int) -> int:
        if p == self.seq_id:
            return (1 << self.peers) - 1
        return 1 << self.seq_id if self.remaining_sends(state, p) else 0

    def init_rest(self) -> tuple:
        n = self.peers
        return (0, (0,) * n, ((),) * n)

    def on_send(self, state: tuple, p: int, mid: int, dmask: int) -> tuple:
        state = replace(state, CHANS, self.chan.send(state[CHANS], p, self.seq_id, mid))
        if not self.own_via_sequencer:
            state = self.deliver(state, p, mid)  # the shortcut: delivered at once
        return state

    def delivered_early(self, q: int, mid: int) -> bool:
        """Whether ``q`` delivered ``mid`` when it sent it (``own_via_sequencer`` off)."""
        return not self.own_via_sequencer and mid // self.stride == q

    def protocol_steps(self, state: tuple) -> list[tuple[tuple, tuple]]:
        out: list[tuple[tuple, tuple]] = []
        chans, counter, expect, held = state[CHANS], state[COUNTER], state[EXPECT], state[HELD]
        S = self.seq_id
        for src, dst, msg, rest in self.receipts(chans):
            if dst == S:
                for q in range(self.peers):
                    rest = self.chan.send(rest, S, q, (counter, msg))
                s = state[:CHANS] + (rest, counter + 1) + state[EXPECT:]
                out.append((("sequence", src, msg, counter), s))
            else:
                k, mid = msg
                if (self.hold_back and (k < expect[dst] or msg in held[dst])) or (
                    not self.hold_back and self.delivered_early(dst, mid)
                ):
                    s = state[:CHANS] + (rest,) + state[CHANS + 1 :]
                    out.append((("discard", dst, mid, k), s))
                elif self.hold_back:
                    s = state[:CHANS] + (rest, counter, expect, replace(held, dst, tuple(sorted(held[dst] + (msg,)))))
                    out.append((("receive", dst, mid, k), s))
                else:
                    s = self.deliver(state[:CHANS] + (rest,) + state[CHANS + 1 :], dst, mid)
                    out.append((("deliver", dst, mid), s))
        if self.hold_back:
            for q in range(self.peers):
                if held[q] and held[q][0][0] == expect[q]:
                    k, mid = held[q][0]
                    s = state[:EXPECT] + (replace(expect, q, k + 1), replace(held, q, held[q][1:]))
                    if self.delivered_early(q, mid):
                        out.append((("skip", q, mid, k), s))
                    else:
                        out.append((("deliver", q, mid), self.deliver(s, q, mid)))
        return out

    def properties(self) -> list[Property]:
        return [*LIBRARY, *WITNESSES]

    # -- presentation -------------------------------------------------------------------------

    def proc_name(self, p: int) -> str:
        return "S" if p == self.seq_id else self.names[p]

    def format_wire(self, msg: tuple) -> str:
        if len(msg) == 1:
            return self.mname(msg[0])
        return f"#{msg[0]}:{self.mname(msg[1])}"

    def action_site(self, action: tuple) -> tuple[str, int, int | None] | None:
        """A numbered message held back at a peer has arrived there: its delivery
        comes later."""
        if action[0] == "receive":
            return ("arrive", action[1], action[2])
        return super().action_site(action)

    def format_action(self, action: tuple) -> str:
        kind = action[0]
        if kind == "sequence":
            _, src, mid, k = action
            return f"the sequencer numbers {self.mname(mid)} #{k} and sends it to every peer"
        if kind == "receive":
            _, q, mid, k = action
            return f"{self.names[q]} holds back {self.mname(mid)} #{k}"
        if kind == "discard":
            _, q, mid, k = action
            if self.delivered_early(q, mid):
                return f"{self.names[q]} discards {self.mname(mid)} #{k}, delivered when it was sent"
            return f"{self.names[q]} discards a duplicate of {self.mname(mid)} #{k}"
        if kind == "skip":
            _, q, mid, k = action
            return f"{self.names[q]} passes #{k} ({self.mname(mid)}, delivered when it was sent)"
        if kind == "send":
            _, p, mid, _d = action
            return f"{self.names[p]} sends {self.mname(mid)} to the sequencer"
        return super().format_action(action)

    def describe(self, state: tuple) -> dict[str, Any]:
        view = self.base_view(state)
        view["sequencer_counter"] = state[COUNTER]
        view["peers"] = {
            name: {
                "next_number": state[EXPECT][q],
                "held_back": [f"#{k}:{self.mname(m)}" for k, m in state[HELD][q]],
            }
            for q, name in enumerate(self.names)
        }
        return view


SPEC = Sequencer

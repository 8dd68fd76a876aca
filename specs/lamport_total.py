"""Lamport's total-order broadcast: scalar clocks, process-id tie-break, acknowledgements.

Sources: ``seeds/message-ordering-notes.txt`` ("FIFO links and scalar clocks with
process ids as tie breakers ... a queue of non-delivered messages ... ordered based on
the timestamp. Every message is acknowledged to all other processes (including self).
When a process has received an acknowledgment for the message at the head of its queue
from every other process, that message is removed from the queue and is delivered") and
``seeds/garg-ch12-message-ordering.txt`` (Lamport: "a timestamped ack is sent back. A
process can deliver a message with timestamp t in its request queue if it has received
a message with timestamp greater than t from all other processes").

Model (constant ``rule`` picks the seed):

* Every process keeps a Lamport clock. Each send and each receive is an event that
  ticks it; a receive first takes the maximum with the message's timestamp. Sending a
  batch of acknowledgements is one event.
* ``send(p, m)``: ``p`` stamps ``m`` with its clock, puts it in its own queue, and puts
  ``m`` on its FIFO link to every other process. A broadcast goes to the whole group,
  its sender included (the sender delivers its own message through its queue).
* Every process acknowledges every message to every other process, the sender included
  (its own message too), and counts its own acknowledgement: the notes' "acknowledged
  to all other processes (including self)". The sender acknowledges in the send step;
  any other process in the step that receives the message. An acknowledgement carries
  the acknowledger's clock after its own event, so it is later than the message it
  acknowledges (without that, Garg's rule could never deliver the last message).
* ``deliver(q, m)``: the head of ``q``'s queue (smallest ``(timestamp, sender)``) is
  delivered when
  - ``rule = "all_acks"`` (the notes, the default): ``q`` holds an acknowledgement of
    ``m`` from every process;
  - ``rule = "later_timestamp"`` (Garg): ``q`` has received, from every other process,
    some message (broadcast or acknowledgement) with a timestamp greater than ``m``'s.

Acknowledgements may arrive before the message they acknowledge (they come on other
links), so ``acks[q]`` holds, per message id, the mask of processes ``q`` has an
acknowledgement from. ``latest[q][c]`` is the largest timestamp ``q`` received from
``c`` (kept only under ``later_timestamp``).

Ablations, each a step or an assumption of the algorithm a reviewer may question:

* ``wait_acks``: off, deliver the head of the queue without waiting (neither rule);
* ``fifo_links``: the links are FIFO, as both seeds assume; off, they are unordered (a
  message or acknowledgement may overtake an earlier one on the same link). This spec
  has no ``channel`` constant: the link order is this assumption;
* ``tiebreak_by_sender``: the queue orders equal timestamps by sender id; off, entries
  with equal timestamps may be delivered in any order;
* ``discard_duplicates``: a copy of a broadcast the process already has (a duplicating
  link's) is ignored; off, it is queued and acknowledged again. The queue holds each
  ``(timestamp, sender, message)`` once, so a copy that arrives while the original is
  still queued adds nothing to it; only a copy arriving after the delivery is delivered
  again. On FIFO links that cannot happen: the copy travels right behind the original,
  ahead of the sender's acknowledgement (sent on the same link after the broadcast), and
  the delivery waits for that acknowledgement under either rule. The ablation shows
  only with unordered links or without ``wait_acks``.

A duplicate of a message a process already has (a duplicating channel's copy) is
ignored (``discard_duplicates``); duplicate acknowledgements change nothing.

State: ``(ghost, know, signals, dups, chans, clocks, queues, acks, latest)``; wire
messages are ``(kind, mid, ts)`` with kind 0 a broadcast and 1 an acknowledgement.
"""

from __future__ import annotations

from typing import Any

from ordercheck.checker import Constant, Property
from ordercheck.specs.async_peers import CHANS, SIGNALS, AsyncPeerSpec, broadcast_constants
from ordercheck.specs.channels import channel_constants
from ordercheck.specs.common import members, replace, settled_delivery
from ordercheck.specs.properties import LIBRARY
from ordercheck.specs.witnesses import WITNESSES

CLOCKS, QUEUES, ACKS, LATEST = 5, 6, 7, 8
MSG, ACK = 0, 1


class LamportTotal(AsyncPeerSpec):
    name = "lamport_total"
    summary = "Lamport total-order broadcast: scalar clocks, id tie-break, FIFO links, acks to all"
    # Channel faults (ordercheck.checker.api.faults): copies of messages and acks are ignored; a loss
    # leaves a message unacknowledged (eventual_delivery); unordered channels break the
    # algorithm's FIFO assumption, which lamport-unordered.toml expects.
    tolerates = frozenset({"loss", "duplication"})
    breaks_under = frozenset({"reordering"})
    broadcast = True
    constants = (
        *broadcast_constants(3, 1),
        Constant("fifo_links", bool, True, "the links are FIFO (off: unordered)", ablation=True,
                 fault="reordering", fault_values=(False,)),
        *(c for c in channel_constants("fifo") if c.name != "channel"),
        Constant(
            "rule",
            str,
            "all_acks",
            "delivery rule: all_acks (the notes) or later_timestamp (Garg)",
            choices=("all_acks", "later_timestamp"),
        ),
        Constant("wait_acks", bool, True, "wait (per rule) before delivering the head of the queue", ablation=True),
        Constant("tiebreak_by_sender", bool, True, "order equal timestamps by sender id", ablation=True),
        Constant("discard_duplicates", bool, True, "ignore a copy of a broadcast already received", ablation=True),
    )

    # Reductions: every own item is split by peer. Symmetry is broken by the tie-break (when on).
    acyclic = True  # every step takes a message off a channel, delivers, or sends one of a bounded number
    # Each peer keeps taking what arrives and delivering what it may; sending, signals and
    # channel faults are never obligations.
    fairness = {k: "weak" for k in ("discard", "receive", "ack", "deliver")}
    own_shapes = (("byp", None), ("byp", ("sorted", ("tuple", None, "peer", "mid"))), ("byp", ("bymid", "peers")),
                  ("byp", ("byp", None)))
    wire_shape = ("tuple", None, "mid", None)
    symmetry_breaker = "orders equal timestamps by process id"

    def symmetry_broken_by(self) -> str:
        """Only the tie-break orders peers by id. Without it every rule compares
        timestamps alone: the heads are every entry of the smallest timestamp (a set,
        whatever order the renamed queue sorts them in), acknowledgements and latest
        timestamps are kept per peer and read for every other peer alike, and settled
        deliveries (which compare ``(timestamp, sender)``) are not used."""
        return self.symmetry_breaker if self.tiebreak_by_sender else ""

    def later_sends(self, state: tuple, p: int) -> int:
        # A broadcast, or acknowledgements to everyone for a message still to come to p.
        if self.remaining_sends(state, p) or self.replies_mask(state, p):
            return self.everyone & ~(1 << p)
        return 0

    def message_kinds(self) -> tuple[str, ...]:
        return ("receive", "ack", "deliver")

    def duplicate_kinds(self) -> tuple[str, ...]:
        return ("discard",) if self.discard_duplicates else ()

    def configure(self) -> None:
        self.channel = "fifo" if self.fifo_links else "unordered"  # what Channels.from_spec reads
        n = self.peers
        self.everyone = (1 << n) - 1
        self.track_latest = self.rule == "later_timestamp"
        self.nmsgs = n * self.stride

    def init_rest(self) -> tuple:
        n = self.peers
        return ((0,) * n, ((),) * n, ((0,) * self.nmsgs,) * n, ((0,) * n,) * n)

    # -- steps ------------------------------------------------------------------------------

    def _ack_out(self, chans: tuple, p: int, mid: int, ts: int) -> tuple:
        for q in range(self.peers):
            if q != p:
                chans = self.chan.send(chans, p, q, (ACK, mid, ts))
        return chans

    def on_send(self, state: tuple, p: int, mid: int, dmask: int) -> tuple:
        clocks, queues, acks = state[CLOCKS], state[QUEUES], state[ACKS]
        ts = clocks[p] + 1
        chans = state[CHANS]
        for q in range(self.peers):
            if q != p:
                chans = self.chan.send(chans, p, q, (MSG, mid, ts))
        chans = self._ack_out(chans, p, mid, ts + 1)
        queue = tuple(sorted(queues[p] + ((ts, p, mid),)))
        mine = replace(acks[p], mid, acks[p][mid] | (1 << p))
        return state[:CHANS] + (chans, replace(clocks, p, ts + 1), replace(queues, p, queue), replace(acks, p, mine), state[LATEST])

    def protocol_steps(self, state: tuple) -> list[tuple[tuple, tuple]]:
        out: list[tuple[tuple, tuple]] = []
        chans, clocks, queues, acks, latest = state[CHANS:]
        for src, q, (kind, mid, ts), rest in self.receipts(chans):
            if kind == MSG and acks[q][mid] >> q & 1 and self.discard_duplicates:
                # A duplicate of a message q already has (it acknowledged it then): ignored.
                out.append((("discard", q, src, mid), state[:CHANS] + (rest,) + state[CHANS + 1 :]))
                continue
            clock = max(clocks[q], ts) + 1
            lat = latest
            if self.track_latest and ts > latest[q][src]:
                lat = replace(latest, q, replace(latest[q], src, ts))
            got = acks[q][mid]
            if kind == MSG:
                queue = tuple(sorted({*queues[q], (ts, src, mid)}))
                got |= 1 << q  # q acknowledges it now, to everyone else
                clock += 1  # sending the acknowledgements is an event of its own
                rest = self._ack_out(rest, q, mid, clock)
                s = state[:CHANS] + (
                    rest,
                    replace(clocks, q, clock),
                    replace(queues, q, queue),
                    replace(acks, q, replace(acks[q], mid, got)),
                    lat,
                )
                out.append((("receive", q, mid, ts), s))
            else:
                got |= 1 << src
                s = state[:CHANS] + (rest, replace(clocks, q, clock), queues, replace(acks, q, replace(acks[q], mid, got)), lat)
                out.append((("ack", q, src, mid, ts), s))
        for q in range(self.peers):
            for head in self.heads(queues[q]):
                if self.may_deliver(state, q, head):
                    queue = tuple(e for e in queues[q] if e != head)
                    s = state[:QUEUES] + (replace(queues, q, queue),) + state[ACKS:]
                    out.append((("deliver", q, head[2]), self.deliver(s, q, head[2])))
        return out

    def solo_step(self, state: tuple, succ: Any) -> int | None:
        """A delivery of a *settled* head (:meth:`settled`): it goes alone
        (:meth:`ordercheck.checker.api.reductions.PartialOrder.solo_step`). Its guard only grows true (acks and
        latest timestamps only grow), a settled head stays the head, and the delivery
        touches only ``q``'s queue, log and knowledge: no other step reads or writes
        them, but ``q``'s receipts (which insert behind the head, or change acks, clock
        and latest timestamps) and its sends and signals (which read its knowledge;
        ruled out). Without ``tiebreak_by_sender`` two heads of one timestamp conflict
        (each appends to the log first): none."""
        if not self.tiebreak_by_sender or state[SIGNALS]:
            return None
        return settled_delivery(self, state, succ)

    def settled(self, state: tuple, q: int) -> bool:
        """Whether nothing can still come before the head of ``q``'s queue, and ``q`` has
        nothing left to send: every broadcast in transit to ``q`` and every one still to
        be sent (stamped above its sender's clock now) sorts after the head by
        ``(timestamp, sender)``."""
        if self.remaining_sends(state, q):
            return False
        head = state[QUEUES][q][0][:2]
        clocks = state[CLOCKS]
        for p in range(self.peers):
            if p != q and self.remaining_sends(state, p) and (clocks[p] + 1, p) <= head:
                return False
        stride = self.stride
        for (_src, dst), msgs in state[CHANS]:
            if dst == q:
                for kind, mid, ts in msgs:
                    if kind == MSG and (ts, mid // stride) <= head:
                        return False
        return True

    def heads(self, queue: tuple) -> tuple:
        """The entries that count as the head of ``queue``: the smallest ``(timestamp,
        sender)``, or without ``tiebreak_by_sender`` every entry of the smallest timestamp."""
        if not queue:
            return ()
        if self.tiebreak_by_sender:
            return queue[:1]
        return tuple(e for e in queue if e[0] == queue[0][0])

    def may_deliver(self, state: tuple, q: int, head: tuple) -> bool:
        """Whether ``q`` may deliver the head of its queue now (the rule in the docstring)."""
        if not self.wait_acks:
            return True
        ts, _src, mid = head
        if self.rule == "all_acks":
            return state[ACKS][q][mid] == self.everyone
        seen = state[LATEST][q]
        return all(seen[c] > ts for c in range(self.peers) if c != q)

    def properties(self) -> list[Property]:
        return [*LIBRARY, *WITNESSES]

    # -- presentation -------------------------------------------------------------------------

    def format_wire(self, msg: tuple) -> str:
        kind, mid, ts = msg
        return f"{self.mname(mid)}@{ts}" if kind == MSG else f"ack({self.mname(mid)})@{ts}"

    def format_action(self, action: tuple) -> str:
        kind = action[0]
        if kind == "send":
            _, p, mid, _d = action
            return f"{self.names[p]} broadcasts {self.mname(mid)}"
        if kind == "receive":
            _, q, mid, ts = action
            return f"{self.names[q]} queues {self.mname(mid)}@{ts} and acknowledges it to all"
        if kind == "discard":
            _, q, src, mid = action
            return f"{self.names[q]} ignores a duplicate of {self.mname(mid)} from {self.names[src]}"
        if kind == "ack":
            _, q, src, mid, ts = action
            return f"{self.names[q]} gets {self.names[src]}'s ack of {self.mname(mid)} (@{ts})"
        return super().format_action(action)

    def action_site(self, action: tuple) -> tuple[str, int, int | None] | None:
        """A message arrives when its destination queues it (and acknowledges it);
        taking an acknowledgement is a step of the peer that takes it."""
        if action[0] == "receive":
            return ("arrive", action[1], action[2])
        if action[0] == "ack":
            return ("step", action[1], action[3])
        return super().action_site(action)

    def internal_messages(self, action: tuple) -> list[tuple[str, int, int, str]]:
        """The acknowledgements, ``ack(a1)``: the sender's own when it broadcasts, each
        receiver's when it queues the message, to every other peer; a channel may lose
        one (a copy's receipt is drawn as a receipt)."""
        kind = action[0]
        if kind in ("send", "receive"):
            p, mid = action[1], action[2]
            return [("send", p, q, f"ack({self.mname(mid)})") for q in range(self.peers) if q != p]
        if kind == "ack":
            _, q, src, mid, _ts = action
            return [("receive", q, src, f"ack({self.mname(mid)})")]
        if kind == "lose" and action[3] == ACK:
            _, src, dst, _wire, mid, _ts = action
            return [("lose", dst, src, f"ack({self.mname(mid)})")]
        return []

    def describe(self, state: tuple) -> dict[str, Any]:
        view = self.base_view(state)
        clocks, queues, acks, latest = state[CLOCKS:]
        view["peers"] = {
            name: {
                "clock": clocks[q],
                "queue": [f"{self.mname(m)}@{ts}" for ts, _s, m in queues[q]],
                "acks": {
                    self.mname(m): [self.names[c] for c in members(mask)] for m, mask in enumerate(acks[q]) if mask
                },
                **({"latest": dict(zip(self.names, latest[q]))} if self.track_latest else {}),
            }
            for q, name in enumerate(self.names)
        }
        return view


SPEC = LamportTotal

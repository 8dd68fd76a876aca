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

Ablation ``wait_acks``: deliver the head of the queue without waiting (neither rule).
The FIFO links are an assumption of the algorithm: ``channel = "unordered"`` is a model
that expects the break.

A duplicate of a message a process already has (a duplicating channel's copy) is
ignored; duplicate acknowledgements change nothing.

State: ``(ghost, know, signals, dups, chans, clocks, queues, acks, latest)``; wire
messages are ``(kind, mid, ts)`` with kind 0 a broadcast and 1 an acknowledgement.
"""

from __future__ import annotations

from typing import Any

from checker import Constant, Property
from specs.async_peers import CHANS, AsyncPeerSpec, broadcast_constants
from specs.channels import channel_constants
from specs.common import members, replace
from specs.properties import LIBRARY
from specs.witnesses import WITNESSES

CLOCKS, QUEUES, ACKS, LATEST = 5, 6, 7, 8
MSG, ACK = 0, 1


class LamportTotal(AsyncPeerSpec):
    name = "lamport_total"
    summary = "Lamport total-order broadcast: scalar clocks, id tie-break, FIFO links, acks to all"
    broadcast = True
    constants = (
        *broadcast_constants(3, 1),
        *channel_constants("fifo"),
        Constant(
            "rule",
            str,
            "all_acks",
            "delivery rule: all_acks (the notes) or later_timestamp (Garg)",
            choices=("all_acks", "later_timestamp"),
        ),
        Constant("wait_acks", bool, True, "wait (per rule) before delivering the head of the queue", ablation=True),
    )

    def configure(self) -> None:
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
            if kind == MSG and acks[q][mid] >> q & 1:
                # A duplicate of a message q already has (it acknowledged it then): ignored.
                out.append((("discard", q, src, mid), state[:CHANS] + (rest,) + state[CHANS + 1 :]))
                continue
            clock = max(clocks[q], ts) + 1
            lat = latest
            if self.track_latest and ts > latest[q][src]:
                lat = replace(latest, q, replace(latest[q], src, ts))
            got = acks[q][mid]
            if kind == MSG:
                queue = tuple(sorted(queues[q] + ((ts, src, mid),)))
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
            if queues[q] and self.may_deliver(state, q, queues[q][0]):
                ts, _src, mid = queues[q][0]
                s = state[:QUEUES] + (replace(queues, q, queues[q][1:]),) + state[ACKS:]
                out.append((("deliver", q, mid), self.deliver(s, q, mid)))
        return out

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

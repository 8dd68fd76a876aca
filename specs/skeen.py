"""Skeen's total-order multicast: proposed timestamps, the maximum as final.

Source: ``seeds/garg-ch12-message-ordering.txt`` ("Send a timestamped message to all
the destination processes. On receiving a message, a process marks it as undeliverable
and sends the value of the logical clock as the proposed timestamp to the initiator.
Set the max of all proposals as the final timestamp and send to all destinations. On
receiving the final timestamp of a message, it is marked as deliverable. A deliverable
message is delivered if it has the smallest timestamp in the message queue."), with its
example: proposals 2 and 4, final 4, and a lower-priority message ignored until the
final arrives.

Model:

* Every process keeps a Lamport clock; every send and every receive is an event that
  ticks it, a receive first taking the maximum with the message's timestamp.
* ``send(p, m, D)``: ``p`` ticks and puts ``(MSG, m, clock)`` on its channel to each
  destination; it waits for one proposal per destination. Destinations are chosen as in
  every peer spec (``destinations``, ``script``); the sender is not one of them.
* ``propose(q, m)``: ``q`` takes ``m`` off the channel, ticks, queues ``m`` as
  undeliverable with its clock as the proposed timestamp and sends ``(PROPOSE, m, ts)``
  to the sender.
* ``collect(p, q, m)``: the sender takes a proposal; with the last one it fixes the
  final timestamp (the maximum) and sends ``(FINAL, m, ts)`` to every destination.
* ``finalise(q, m)``: ``q`` marks ``m`` deliverable with the final timestamp.
* ``deliver(q, m)``: ``q`` delivers the entry with the smallest ``(timestamp, sender,
  message)`` when it is deliverable. Ties go to the lower process id (Garg: a message
  from "a lower priority process (say with id 3)" waits).

A copy made by a duplicating channel is ignored (``discard``): a message already
queued or delivered, a proposal already counted, a final for an entry already final.

State: ``(ghost, know, signals, dups, chans, clocks, waiting, queues)``; ``waiting[p]``
is a sorted tuple of ``(m, still_to_propose_mask, final_so_far)``; ``queues[q]`` a
sorted tuple of ``(ts, m, deliverable)``.

Ablations, each a step of the algorithm a reviewer may question:

* ``take_max`` (off: the final timestamp is ``mutant_final``, the minimum or the first
  proposal to arrive);
* ``wait_for_undeliverable`` (off: deliver the smallest *deliverable* entry even though
  an undeliverable one with a lower proposed timestamp precedes it);
* ``tiebreak_by_sender`` (off: entries with equal timestamps are delivered in any order
  rather than by sender id);
* ``discard_duplicates`` (off: a copy from a duplicating channel is handled as if it
  were new: a message is queued and proposed again, a proposal counted again, a final
  applied again).

``mutant_final`` is a parameter of the ``take_max`` ablation (:data:`Skeen.ablation_parameters`).
"""

from __future__ import annotations

from typing import Any

from ordercheck.checker import Constant, Property
from ordercheck.specs.async_peers import CHANS, SIGNALS, AsyncPeerSpec
from ordercheck.specs.base import peer_constants
from ordercheck.specs.channels import channel_constants
from ordercheck.specs.common import members, names_of, replace, settled_delivery
from ordercheck.specs.history import DELIVER, encode_event
from ordercheck.specs.properties import LIBRARY
from ordercheck.specs.witnesses import WITNESSES

CLOCKS, WAITING, QUEUES = 5, 6, 7
MSG, PROPOSE, FINAL = 0, 1, 2


class Skeen(AsyncPeerSpec):
    name = "skeen"
    summary = "Skeen's multicast: destinations propose clock values, the maximum is final"
    # Channel faults (ordercheck.checker.api.faults): copies are ignored (discard); a lost proposal or
    # final blocks delivery (skeen-2-lossy.toml); proposals may arrive in any order.
    tolerates = frozenset({"reordering", "loss", "duplication"})
    constants = (
        *peer_constants(3, 1, "others"),
        *channel_constants("fifo"),
        Constant("take_max", bool, True, "the final timestamp is the maximum proposal", ablation=True),
        Constant(
            "mutant_final",
            str,
            "min",
            "what take_max = false takes instead: the minimum or the first proposal",
            choices=("min", "first"),
        ),
        Constant(
            "wait_for_undeliverable",
            bool,
            True,
            "an undeliverable entry with a lower timestamp blocks delivery",
            ablation=True,
        ),
        Constant("tiebreak_by_sender", bool, True, "order equal timestamps by sender id", ablation=True),
        Constant(
            "discard_duplicates",
            bool,
            True,
            "ignore a copy of a message, proposal or final already handled",
            ablation=True,
        ),
    )
    ablation_parameters = ("mutant_final",)
    """Constants that only shape an ablation (what ``take_max = false`` takes instead)."""

    # Reductions: every own item is split by peer (a proposal is a message to the sender,
    # the collected ones the sender's own). Symmetry is broken by the delivery tie-break (when on).
    acyclic = True  # every step takes a message off a channel, delivers, or sends one of a bounded number
    # Each peer keeps answering, collecting, finalising and delivering; sending, signals
    # and channel faults are never obligations.
    fairness = {k: "weak" for k in ("discard", "propose", "collect", "finalise", "final", "deliver")}
    own_shapes = (("byp", None), ("byp", ("sorted", ("tuple", "mid", "peers", None))),
                  ("byp", ("sorted", ("tuple", None, "mid", None))))
    wire_shape = ("tuple", None, "mid", None)
    symmetry_breaker = "delivers equal final timestamps in message-id order, the lower peer's first"

    def symmetry_broken_by(self) -> str:
        """Only the tie-break orders peers by id. Without it every rule compares
        timestamps alone: a peer may deliver any deliverable entry of the smallest final
        timestamp (a set, whatever order the renamed queue sorts them in); proposals are
        clock values, the final one their maximum (or minimum, or the first to arrive);
        and settled deliveries are not used."""
        return self.symmetry_breaker if self.tiebreak_by_sender else ""

    def later_sends(self, state: tuple, p: int) -> int:
        # Its messages, proposals to those who message it, finals to its messages' destinations.
        out = self.sends_left_mask(state, p) | self.replies_mask(state, p)
        for mid, _left, _acc in state[WAITING][p]:
            out |= self._dests(state, p, mid)
        return out

    def message_kinds(self) -> tuple[str, ...]:
        # A proposal that leaves others outstanding is collected; the last one finalises.
        collect = ("collect",) if any(m & (m - 1) for _p, m in self.planned_sends()) else ()
        return ("propose", *collect, "finalise", "final", "deliver")

    def duplicate_kinds(self) -> tuple[str, ...]:
        # A copied final arriving after the original is stale; the ablation keeps only
        # the discard of orphan proposals, which a copied proposal makes too.
        return ("discard",)

    def init_rest(self) -> tuple:
        n = self.peers
        return ((0,) * n, ((),) * n, ((),) * n)

    def on_send(self, state: tuple, p: int, mid: int, dmask: int) -> tuple:
        clocks, waiting = state[CLOCKS], state[WAITING]
        ts = clocks[p] + 1
        chans = state[CHANS]
        for d in self.dest_table[dmask]:
            chans = self.chan.send(chans, p, d, (MSG, mid, ts))
        mine = tuple(sorted(waiting[p] + ((mid, dmask, 0),)))
        return state[:CHANS] + (chans, replace(clocks, p, ts), replace(waiting, p, mine), state[QUEUES])

    def _combine(self, acc: int, ts: int) -> int:
        if acc == 0 or self.take_max:
            return max(acc, ts)
        if self.mutant_final == "min":
            return min(acc, ts)
        return acc  # the first proposal stays

    def protocol_steps(self, state: tuple) -> list[tuple[tuple, tuple]]:
        out: list[tuple[tuple, tuple]] = []
        chans, clocks, waiting, queues = state[CHANS:]
        for src, q, (kind, mid, ts), rest in self.receipts(chans):
            if self.stale(state, src, q, kind, mid) and (self.discard_duplicates or self.orphan(state, q, kind, mid)):
                out.append((("discard", q, src, kind, mid), state[:CHANS] + (rest,) + state[CHANS + 1 :]))
                continue
            clock = max(clocks[q], ts) + 1
            clocks2 = replace(clocks, q, clock)
            if kind == MSG:
                rest = self.chan.send(rest, q, src, (PROPOSE, mid, clock))
                queue = tuple(sorted({*queues[q], (clock, mid, 0)}))
                s = state[:CHANS] + (rest, clocks2, waiting, replace(queues, q, queue))
                out.append((("propose", q, mid, clock), s))
            elif kind == PROPOSE:
                mine = list(waiting[q])
                i = next(i for i, w in enumerate(mine) if w[0] == mid)
                _, left, acc = mine[i]
                left &= ~(1 << src)
                acc = self._combine(acc, ts)
                if left:
                    mine[i] = (mid, left, acc)
                    s = state[:CHANS] + (rest, clocks2, replace(waiting, q, tuple(mine)), queues)
                    out.append((("collect", q, src, mid, ts), s))
                else:
                    dmask = self._dests(state, q, mid)
                    del mine[i]
                    for d in self.dest_table[dmask]:
                        rest = self.chan.send(rest, q, d, (FINAL, mid, acc))
                    s = state[:CHANS] + (rest, clocks2, replace(waiting, q, tuple(mine)), queues)
                    out.append((("finalise", q, src, mid, ts, acc), s))
            else:
                queue = tuple(sorted([e for e in queues[q] if e[1] != mid] + [(ts, mid, 1)]))
                s = state[:CHANS] + (rest, clocks2, waiting, replace(queues, q, queue))
                out.append((("final", q, mid, ts), s))
        for q in range(self.peers):
            for entry in self.next_deliveries(queues[q]):
                queue = tuple(e for e in queues[q] if e != entry)
                s = state[:QUEUES] + (replace(queues, q, queue),)
                out.append((("deliver", q, entry[1]), self.deliver(s, q, entry[1])))
        return out

    def solo_step(self, state: tuple, succ: Any) -> int | None:
        """A delivery of a *settled* head (:meth:`settled`): it goes alone
        (:meth:`ordercheck.checker.api.reductions.PartialOrder.solo_step`). A deliverable head stays deliverable
        and the head, and the delivery touches only ``q``'s queue, log and knowledge:
        ``q``'s receipts insert behind it or finalise other entries (and read the log
        only to discard a copy, which the queue discarded as well before), its
        collections read neither; its sends and signals read its knowledge (ruled out).
        Needs ``tiebreak_by_sender`` and ``wait_for_undeliverable`` (else several
        entries may go first, and conflict), and copies discarded where a channel may
        make them (else a copy of the head queues it again once delivered)."""
        if not (self.tiebreak_by_sender and self.wait_for_undeliverable) or state[SIGNALS]:
            return None
        if self.duplicates and not self.discard_duplicates:
            return None
        return settled_delivery(self, state, succ)

    def settled(self, state: tuple, q: int) -> bool:
        """Whether nothing can still come before the (deliverable) head of ``q``'s
        queue, and ``q`` has nothing left to send. A message still to arrive is
        proposed above ``q``'s clock, which is at least the head's timestamp; an
        undeliverable entry's final timestamp is the maximum of the proposals, its own
        among them, so it stays behind the head (under ``take_max``; without it, there
        must be no undeliverable entry)."""
        if self.remaining_sends(state, q):
            return False
        queue = state[QUEUES][q]
        if state[CLOCKS][q] < queue[0][0]:
            return False
        return self.take_max or all(e[2] for e in queue)

    def stale(self, state: tuple, src: int, q: int, kind: int, mid: int) -> bool:
        """A copy made by a duplicating channel that ``q`` ignores: a message it already
        queued or delivered, a proposal it already has, a final for an entry it no longer
        holds as undeliverable."""
        queue = state[QUEUES][q]
        if kind == MSG:
            return any(e[1] == mid for e in queue) or encode_event(DELIVER, mid) in state[0][1][q]
        if kind == PROPOSE:
            return not any(w[0] == mid and w[1] >> src & 1 for w in state[WAITING][q])
        return not any(e[1] == mid and not e[2] for e in queue)

    def orphan(self, state: tuple, q: int, kind: int, mid: int) -> bool:
        """A proposal for a message ``q`` no longer awaits proposals for (its final is
        out): ignored even by the ``discard_duplicates`` ablation, as there is nothing
        to count it in."""
        return kind == PROPOSE and not any(w[0] == mid for w in state[WAITING][q])

    def _dests(self, state: tuple, p: int, mid: int) -> int:
        return state[0][0][p][mid % self.stride][0]

    def next_deliveries(self, queue: tuple) -> list[tuple]:
        """The entries ``q`` may deliver now: the smallest ``(timestamp, message)`` if it is
        deliverable (see the ablations in the module docstring for the others)."""
        if self.wait_for_undeliverable:
            pool = queue
        else:
            pool = tuple(e for e in queue if e[2])
        if not pool:
            return []
        if self.tiebreak_by_sender:
            return [pool[0]] if pool[0][2] else []
        low = pool[0][0]
        return [e for e in pool if e[0] == low and e[2]]

    def properties(self) -> list[Property]:
        return [*LIBRARY, *WITNESSES]

    # -- presentation -------------------------------------------------------------------------

    def format_wire(self, msg: tuple) -> str:
        kind, mid, ts = msg
        return f"{('msg', 'propose', 'final')[kind]}({self.mname(mid)}, {ts})"

    def format_action(self, action: tuple) -> str:
        kind = action[0]
        if kind == "send":
            _, p, mid, dmask = action
            return f"{self.names[p]} multicasts {self.mname(mid)} to {names_of(dmask, self.names)}"
        if kind == "propose":
            _, q, mid, ts = action
            return f"{self.names[q]} queues {self.mname(mid)} as undeliverable and proposes {ts}"
        if kind == "collect":
            _, p, src, mid, ts = action
            return f"{self.names[p]} gets {self.names[src]}'s proposal {ts} for {self.mname(mid)}"
        if kind == "finalise":
            _, p, src, mid, ts, final = action
            return (
                f"{self.names[p]} gets {self.names[src]}'s proposal {ts} for {self.mname(mid)}, "
                f"the last one: final timestamp {final}"
            )
        if kind == "discard":
            _, q, src, wire, mid = action
            return f"{self.names[q]} ignores a duplicate {('msg', 'propose', 'final')[wire]} of {self.mname(mid)} from {self.names[src]}"
        if kind == "final":
            _, q, mid, ts = action
            return f"{self.names[q]} marks {self.mname(mid)} deliverable at {ts}"
        return super().format_action(action)

    def action_site(self, action: tuple) -> tuple[str, int, int | None] | None:
        """A message arrives when its destination queues it as undeliverable (and
        proposes), and is committed when the final timestamp marks it deliverable;
        collecting proposals is a step of the sender."""
        kind = action[0]
        if kind == "propose":
            return ("arrive", action[1], action[2])
        if kind == "final":
            return ("commit", action[1], action[2])
        if kind in ("collect", "finalise"):
            return ("step", action[1], action[3])
        return super().action_site(action)

    def internal_messages(self, action: tuple) -> list[tuple[str, int, int, str]]:
        """Proposals go from a destination to the sender, final timestamps from the
        sender to each destination: ``propose(a1, 2)``, ``final(a1, 2)``; a channel may
        lose one (a copy's receipt is drawn as a receipt)."""
        kind = action[0]
        if kind == "propose":
            _, q, mid, ts = action
            return [("send", q, mid // self.stride, f"propose({self.mname(mid)}, {ts})")]
        if kind == "collect":
            _, p, src, mid, ts = action
            return [("receive", p, src, f"propose({self.mname(mid)}, {ts})")]
        if kind == "finalise":
            _, p, src, mid, ts, final = action
            return [("receive", p, src, f"propose({self.mname(mid)}, {ts})"),
                    ("send_dests", p, mid, f"final({self.mname(mid)}, {final})")]
        if kind == "final":
            _, q, mid, ts = action
            return [("receive", q, mid // self.stride, f"final({self.mname(mid)}, {ts})")]
        if kind == "lose" and action[3] != MSG:
            _, src, dst, wire, mid, ts = action
            return [("lose", dst, src, self.format_wire((wire, mid, ts)))]
        return []

    def describe(self, state: tuple) -> dict[str, Any]:
        view = self.base_view(state)
        clocks, waiting, queues = state[CLOCKS:]
        view["peers"] = {
            name: {
                "clock": clocks[q],
                "queue": [f"{self.mname(m)}@{ts}{'' if ok else '?'}" for ts, m, ok in queues[q]],
                "awaiting_proposals": {
                    self.mname(m): [self.names[d] for d in members(left)] for m, left, _acc in waiting[q]
                },
            }
            for q, name in enumerate(self.names)
        }
        return view


SPEC = Skeen

"""The distributed message queue of the restart-count post, with its three clock schemes.

Source: ``seeds/vector-clocks-node-failure.txt``. Producers queue each message on a
quorum of nodes; every node gives it the next value of its counter, and the message's
vector clock is those values (``(A:1, B:1)``). A consumer "asks for all messages since"
the clock of the last message it read and gets the messages whose clocks follow it.
After a TTL the queue is garbage-collected. Nodes crash and come back with their
counters reset. The post tries three schemes, the constant ``clock_mode``:

* ``per_queue``: counters belong to the queue and restart from zero when it is
  collected (the post's first, broken, design);
* ``per_node``: counters belong to the node and survive collection, but not a crash
  (the second design: "what happens when A dies and then comes back");
* ``restart_count``: each clock entry is ``(restart count, counter)``, compared
  restart count first; a node's restart count survives its crashes, its counter does
  not (the post's fix; counts start at 1 as in the post's ``A:1/1``).

Modelling decisions (the post leaves them open):

* "follows" is the post's comparison: clock ``x`` follows ``y`` when every entry of
  ``x`` is at least ``y``'s and one is greater (entries compared as ``(restart,
  counter)`` pairs). A node a message was not written to has entry ``(0, 0)``.
* The consumer keeps the entrywise maximum of the clocks it has read (the clock of the
  last message read, when the clocks it read are ordered, as in every scenario of the
  post). One ``poll`` reads every stored, unread message that follows it.
* Messages are durable: a crash loses a node's counter, not its stored messages.
* The TTL is an action, ``collect``, enabled once every stored message has been read
  (so no message is lost by expiry; a miss is the clocks' fault alone).
* With ``atomic_writes`` a producer's write takes its counters from the whole quorum in
  one step; without it, one node at a time (``assign``), the message being stored with
  its full clock after the last node answered. A write needs its nodes up.

The property ``no_missed_message``: every stored message the consumer has not read
still follows the consumer's clock. Once it does not, no later poll returns it (the
consumer's clock only grows): the consumer has missed it. ``all_read`` is the liveness
form: every run ends with every message read.

Findings (see the models ``restart-*.toml``): the checker reproduces the post's two
failures and finds no miss for the fix in the post's own setting (two nodes, every
message written to both, whole-quorum writes), with crashes and collections. The fix
does not close every gap: with two producers whose writes reach the nodes one at a
time, two messages get crossed clocks (``(A:1/1, B:1/2)`` and ``(A:1/2, B:1/1)``);
the consumer reads one and never gets the other, with no crash at all. With a quorum
smaller than the node count, a message written to other nodes has ``(0, 0)`` entries
and is missed as well. Restart counts repair counter resets, not concurrency.

The spec keeps no peer history (its processes are nodes, producers and one consumer,
not peers of a bus), so the library's ordering properties do not apply to it; its
properties are its own.

State: ``(counters, restarts, up, stored, read, last, pending, produced, crashes_left,
collections_left)``; ``stored`` is a sorted tuple of ``(mid, clock, nodes_mask)`` with
``clock`` a tuple of ``(restart, counter)`` pairs; ``pending[p]`` is ``0`` or
``(mid, nodes_mask, clock_so_far)`` for a node-by-node write in progress.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from ordercheck.checker import Constant, ConstantError, Property, Rendering, Spec
from ordercheck.specs.common import mask_of, members, replace

NODE_NAMES = "ABCDE"
COUNTERS, RESTARTS, UP, STORED, READ, LAST, PENDING, PRODUCED, CRASHES, COLLECTIONS = range(10)
MESSAGE_TEXT = ("Hi", "How are you?", "I'm doing well!")


def follows(x: tuple, y: tuple) -> bool:
    """Clock ``x`` follows ``y``: every entry at least ``y``'s, and one greater."""
    return all(a >= b for a, b in zip(x, y)) and x != y


def entrywise_max(x: tuple, y: tuple) -> tuple:
    return tuple(max(a, b) for a, b in zip(x, y))


class RestartClocks(Spec, Rendering):
    name = "restart_clocks"
    summary = "a quorum-replicated queue read by vector clock, with node restarts (restart-count post)"
    # A write in progress goes on, the consumer keeps polling, a dead node comes back;
    # writing, crashing and the TTL's collection are never obligations.
    fairness = {"assign": "weak", "poll": "weak", "restart": "weak"}
    constants = (
        Constant("nodes", int, 2, "queue nodes, named A, B, C", minimum=1, maximum=3),
        Constant("quorum", int, 2, "nodes each message is written to", minimum=1, maximum=3),
        Constant("producers", int, 1, "producers, p1, p2", minimum=1, maximum=2),
        Constant("messages", int, 3, "messages per producer", minimum=0, maximum=4),
        Constant("crashes", int, 1, "node crashes allowed in a run", minimum=0, maximum=3),
        Constant("collections", int, 1, "TTL collections of the queue allowed in a run", minimum=0, maximum=3),
        Constant(
            "clock_mode",
            str,
            "restart_count",
            "per_queue (reset on collection), per_node (no restart count) or restart_count",
            choices=("per_queue", "per_node", "restart_count"),
        ),
        Constant("atomic_writes", bool, True, "a write takes its counters from the whole quorum in one step"),
    )

    def setup(self) -> None:
        if self.quorum > self.nodes:
            raise ConstantError("quorum", f"must be at most nodes ({self.nodes}), got {self.quorum}")
        self.node_names = NODE_NAMES[: self.nodes]
        self.quorums = tuple(mask_of(c) for c in combinations(range(self.nodes), self.quorum))
        self.zero = ((0, 0),) * self.nodes
        self.first_restart = 1 if self.clock_mode == "restart_count" else 0

    def action_kinds(self) -> tuple[str, ...]:
        """Writes (and, with non-atomic writes, one assignment per node of the quorum) and
        polls when there are messages; collections when allowed and something is
        written; crashes and restarts when crashes are allowed."""
        kinds: list[str] = []
        if self.messages:
            kinds += ["write", *(() if self.atomic_writes else ("assign",)), "poll"]
            if self.collections:
                kinds.append("collect")
        if self.crashes:
            kinds += ["crash", "restart"]
        return tuple(kinds)

    # -- states ----------------------------------------------------------------------------

    def init_states(self) -> list[tuple]:
        n, p = self.nodes, self.producers
        return [
            (
                (0,) * n,
                (self.first_restart,) * n,
                (1 << n) - 1,
                (),
                0,
                self.zero,
                (0,) * p,
                (0,) * p,
                self.crashes,
                self.collections,
            )
        ]

    def next_states(self, state: tuple) -> list[tuple[tuple, tuple]]:
        counters, restarts, up, stored, read, last, pending, produced, crashes, collections = state
        out: list[tuple[tuple, tuple]] = []
        for p in range(self.producers):
            if pending[p]:
                mid, qmask, clock = pending[p]
                node = next(i for i in members(qmask) if clock[i] == (0, 0))
                if up >> node & 1:
                    c = counters[node] + 1
                    clock = replace(clock, node, (restarts[node], c))
                    s = replace(state, COUNTERS, replace(counters, node, c))
                    if all(clock[i] != (0, 0) for i in members(qmask)):
                        s = s[:STORED] + (tuple(sorted(stored + ((mid, clock, qmask),))),) + s[READ:]
                        s = s[:PENDING] + (replace(pending, p, 0),) + s[PRODUCED:]
                    else:
                        s = s[:PENDING] + (replace(pending, p, (mid, qmask, clock)),) + s[PRODUCED:]
                    out.append((("assign", p, mid, node), s))
            elif produced[p] < self.messages:
                mid = p * self.messages + produced[p]
                produced2 = replace(produced, p, produced[p] + 1)
                for qmask in self.quorums:
                    if self.atomic_writes:
                        if qmask & up != qmask:
                            continue
                        cs, clock = list(counters), list(self.zero)
                        for i in members(qmask):
                            cs[i] += 1
                            clock[i] = (restarts[i], cs[i])
                        entry = (mid, tuple(clock), qmask)
                        s = (tuple(cs), restarts, up, tuple(sorted(stored + (entry,))), read, last, pending, produced2, crashes, collections)
                    else:
                        s = state[:PENDING] + (replace(pending, p, (mid, qmask, self.zero)), produced2) + state[CRASHES:]
                    out.append((("write", p, mid, qmask), s))
        batch = self.poll(state)
        if batch:
            new_last = last
            new_read = read
            for mid, clock, _q in batch:
                new_last = entrywise_max(new_last, clock)
                new_read |= 1 << mid
            s = state[:READ] + (new_read, new_last) + state[PENDING:]
            out.append((("poll", mask_of([m for m, _c, _q in batch])), s))
        if collections and stored and all(read >> mid & 1 for mid, _c, _q in stored) and not any(pending):
            cs = (0,) * self.nodes if self.clock_mode == "per_queue" else counters
            s = (cs, restarts, up, (), read, last, pending, produced, crashes, collections - 1)
            out.append((("collect",), s))
        for node in range(self.nodes):
            if up >> node & 1:
                if crashes:
                    s = (replace(counters, node, 0), restarts, up & ~(1 << node)) + state[STORED:CRASHES] + (crashes - 1, collections)
                    out.append((("crash", node), s))
            else:
                bump = 1 if self.clock_mode == "restart_count" else 0
                s = (counters, replace(restarts, node, restarts[node] + bump), up | (1 << node)) + state[STORED:]
                out.append((("restart", node), s))
        return out

    def poll(self, state: tuple) -> tuple:
        """What the consumer gets when it asks the live nodes for everything after its clock."""
        up, stored, read, last = state[UP], state[STORED], state[READ], state[LAST]
        return tuple(
            e for e in stored if e[2] & up and not read >> e[0] & 1 and follows(e[1], last)
        )

    # -- properties ----------------------------------------------------------------------------

    def properties(self) -> list[Property]:
        return [
            Property.always(
                "no_missed_message",
                self.missed,
                doc="every stored message the consumer has not read still follows its clock",
            ),
            Property.eventually("all_read", self.unread, doc="every run ends with every message read"),
        ]

    def missed(self, state: tuple) -> str | None:
        stored, read, last = state[STORED], state[READ], state[LAST]
        for mid, clock, _q in stored:
            if not read >> mid & 1 and not follows(clock, last):
                return (
                    f"the consumer has missed {self.mname(mid)} {self.show_clock(clock)}: it does not follow "
                    f"the consumer's clock {self.show_clock(last)}, so asking for everything after it never "
                    "returns it"
                )
        return None

    def unread(self, state: tuple) -> str | None:
        produced = state[PRODUCED]
        total = [p * self.messages + i for p in range(self.producers) for i in range(produced[p])]
        left = [self.mname(m) for m in total if not state[READ] >> m & 1]
        return f"the run ends with {', '.join(left)} never read" if left else None

    # -- presentation ---------------------------------------------------------------------------

    def mname(self, mid: int) -> str:
        p, i = divmod(mid, self.messages)
        text = f" {MESSAGE_TEXT[i]!r}" if self.producers == 1 and i < len(MESSAGE_TEXT) else ""
        return f"p{p + 1}.m{i + 1}{text}"

    def show_clock(self, clock: tuple) -> str:
        if self.clock_mode == "restart_count":
            parts = [f"{self.node_names[i]}:{r}/{c}" for i, (r, c) in enumerate(clock)]
        else:
            parts = [f"{self.node_names[i]}:{c}" for i, (_r, c) in enumerate(clock)]
        return f"({', '.join(parts)})"

    def format_action(self, action: tuple) -> str:
        kind = action[0]
        if kind == "write":
            _, p, mid, qmask = action
            nodes = "".join(self.node_names[i] for i in members(qmask))
            verb = "queues" if self.atomic_writes else "starts queueing"
            return f"p{p + 1} {verb} {self.mname(mid)} on {nodes}"
        if kind == "assign":
            _, p, mid, node = action
            return f"node {self.node_names[node]} numbers {self.mname(mid)} for p{p + 1}"
        if kind == "poll":
            got = ", ".join(self.mname(m) for m in members(action[1]))
            return f"the consumer asks for everything after its clock and reads {got}"
        if kind == "collect":
            return "TTL passes: the queue is garbage-collected"
        if kind == "crash":
            return f"node {self.node_names[action[1]]} dies"
        if kind == "restart":
            return f"node {self.node_names[action[1]]} comes back with its counter reset"
        return super().format_action(action)

    def describe(self, state: tuple) -> dict[str, Any]:
        counters, restarts, up, stored, read, last, pending, produced, crashes, collections = state
        return {
            "nodes": {
                name: {
                    "up": bool(up >> i & 1),
                    "counter": counters[i],
                    **({"restart_count": restarts[i]} if self.clock_mode == "restart_count" else {}),
                }
                for i, name in enumerate(self.node_names)
            },
            "queue": [
                {"message": self.mname(m), "clock": self.show_clock(c), "read": bool(read >> m & 1)}
                for m, c, _q in stored
            ],
            "consumer_clock": self.show_clock(last),
            "writing": {f"p{p + 1}": self.mname(w[0]) for p, w in enumerate(pending) if w},
            "crashes_left": crashes,
            "collections_left": collections,
        }


SPEC = RestartClocks

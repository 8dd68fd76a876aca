"""Refinement: every behaviour of ``bus1_impl`` is a behaviour of ``bus1`` with destruction.

The abstract side is the wiki algorithm of :mod:`ordercheck.specs.bus1` (its transaction steps are
run by :meth:`ordercheck.specs.bus1.Bus1._step` itself: block, tick, sync, queue), with
destruction added as the wiki's "Other events" section describes it:

* a node's destruction is a transaction of its owner, addressed to the owner and to
  every holder of a handle to the node when the destruction starts, ordered like any
  message (its timestamp is the node's destruction timestamp);
* a data message to a node is dropped, not delivered, iff the node's destruction was
  dequeued before it on the owner's queue (ordered before it); a destroy notification
  may be dropped (its handle was released, or not yet handed to the user);
* a reset is a destruction of every live node of the peer (its own transaction) that also
  flushes its queue: from its start, a data message to one of the nodes it destroys may be
  dropped wherever it stands in the queue and is never delivered, and a destroy
  notification reaching a reset peer may be dropped (its handle was released); messages to
  nodes created after the reset (fresh nodes its later sends create) and notifications of
  handles received after it are ordered as any other, so later traffic is checked too.

**Method: a product search with the abstract side determinised.** The checked spec's
state is ``(impl_state, S)``, where ``S`` is the set of abstract states that match the
events seen so far. Each implementation step is projected by
:meth:`ordercheck.specs.bus1_impl.Bus1Impl.observe` onto events (send starts, deliveries, drops,
reset starts; destructions are sends of their destroy transaction); a step with no event
leaves ``S`` as it is; for an event, ``S`` becomes the abstract states reachable from
``S`` by internal abstract steps followed by that event. The invariant ``refines_bus1``
is ``S != {}``: when it breaks, no run of the wiki algorithm shows the implementation's
events, and the trace ends with the step that did it. This decides trace inclusion
exactly for the bounded model, with no refinement mapping to invent: a state mapping
from the code to the wiki algorithm does not exist step by step (the code stages at
``clock + 1`` with the running maximum, the wiki blocks at the clock; the code's
timestamps are twice the wiki's and ties go by transaction, not sender), while the
observable behaviours must agree. Notifications to late joiners (handles attached after
the destruction started) are projected away: the abstract side has no such holders.
"""

from __future__ import annotations

from typing import Any

from ordercheck.checker import Property, Rendering, Spec
from ordercheck.specs.bus1 import BLOCK, Bus1
from ordercheck.specs.bus1_impl import Bus1Impl
from ordercheck.specs.bus1_impl_defs import GHOST
from ordercheck.specs.bus1_impl_script import DESTROY, FLUSHING
from ordercheck.specs.common import ghost_event, ghost_send, ghost_signal, message_past
from ordercheck.specs.history import DELIVER, DROP, SEND

CACHE_LIMIT = 1 << 15
EVENT_CODES = {"send": 0, "deliver": 1, "drop": 2, "reset": 3, "signal": 4}


class Bus1Refinement(Spec, Rendering):
    name = "bus1_refinement"
    summary = "bus1_impl checked against the wiki algorithm (bus1) with destruction: trace inclusion"
    constants = Bus1Impl.constants

    def setup(self) -> None:
        self.impl = Bus1Impl(**self.values)
        self.abstract = Bus1(peers=self.peers)
        self.abstract.stride = self.impl.stride
        self._cache: dict[tuple, frozenset] = {}

    # -- abstract states: (bus1 state, gone, reset mask, wiped) -------------------------------
    # ``gone[q]``: nodes whose destruction q has dequeued; ``reset``: peers that reset;
    # ``wiped[q]``: q's nodes destroyed by its resets.

    def abstract_init(self) -> tuple:
        (b,) = self.abstract.init_states()
        return (b, (0,) * self.peers, 0, (0,) * self.peers)

    def internal(self, a: tuple) -> list[tuple]:
        """The abstract transaction steps enabled in ``a`` (Bus1's block/tick/sync/queue)."""
        b, gone, reset, wiped = a
        out = []
        for p, tx in enumerate(b[2]):
            if tx:
                _label, nb = self.abstract._step(b, p, tx)
                out.append((nb, gone, reset, wiped))
        return out

    def closure(self, states: frozenset) -> set[tuple]:
        seen = set(states)
        todo = list(states)
        while todo:
            a = todo.pop()
            for n in self.internal(a):
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return seen

    def apply(self, a: tuple, event: tuple) -> tuple | None:
        """``a`` after the observable ``event``, or ``None`` if the wiki algorithm cannot do it."""
        b, gone, reset, wiped = a
        clocks, queues, txs, ghost, know, signals = b
        kind = event[0]
        if kind == "reset":
            _k, p, nodes = event
            return (b, gone, reset | 1 << p, wiped[:p] + (wiped[p] | nodes,) + wiped[p + 1 :])
        if kind == "signal":
            _k, p, q = event
            if txs[p] or txs[q]:
                return None
            know = know[:q] + (know[q] | know[p],) + know[q + 1 :]
            return ((clocks, queues, txs, ghost_signal(ghost, p, q), know, signals), gone, reset, wiped)
        if kind == "send":
            _k, p, mid, dmask = event
            if txs[p]:
                return None
            ghost = ghost_send(ghost, p, mid, dmask, know[p])
            if dmask:
                txs = txs[:p] + ((mid, 0, 0, 0),) + txs[p + 1 :]
            else:  # a reset of a peer without nodes: no destination to order against
                know = know[:p] + (know[p] | 1 << mid,) + know[p + 1 :]
            return ((clocks, queues, txs, ghost, know, signals), gone, reset, wiped)
        _k, q, mid = kind, event[1], event[2]
        s, k = divmod(mid, self.impl.stride)
        if k >= len(ghost[0][s]):
            return None  # never sent
        op = self.impl.op_of(mid)
        destroy = op.kind in (DESTROY, *FLUSHING)
        if not ghost[0][s][k][0] >> q & 1:
            # Only a destroy notification can reach a peer outside the transaction's
            # destinations: a late joiner's, which the abstract side does not have.
            return a if destroy else None
        queue = queues[q]
        pos = next((i for i, e in enumerate(queue) if e[1] != BLOCK and e[2] == mid), None)
        if pos is None:
            return None
        # Flushed by a reset: a message to a node the reset destroyed, or (its handle released)
        # a destroy notification to a peer that reset; dropped wherever it stands.
        flushed = bool(reset >> q & 1) if destroy else bool(wiped[q] >> self.impl.msg_node_at(mid, q) & 1)
        must_drop = not destroy and bool(flushed or gone[q] >> self.impl.msg_node_at(mid, q) & 1)
        at_head = pos == 0 and not txs[q]
        if kind == "deliver":
            if must_drop or not at_head:
                return None
            ghost = ghost_event(ghost, q, DELIVER, mid)
            know = know[:q] + (know[q] | 1 << mid | message_past(ghost, mid, self.impl.stride),) + know[q + 1 :]
        else:
            if not flushed and not (at_head and (must_drop or destroy)):
                return None
            ghost = ghost_event(ghost, q, DROP, mid)
        if destroy:
            gone = gone[:q] + (gone[q] | sum(1 << n for n in op.nodes),) + gone[q + 1 :]
        queues = queues[:q] + (queue[:pos] + queue[pos + 1 :],) + queues[q + 1 :]
        return ((clocks, queues, txs, ghost, know, signals), gone, reset, wiped)

    def advance(self, states: frozenset, event: tuple) -> frozenset:
        key = (states, event)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        out = set()
        for a in self.closure(states):
            n = self.apply(a, event)
            if n is not None:
                out.add(n)
        result = frozenset(out)
        if len(self._cache) >= CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = result
        return result

    # -- the product -------------------------------------------------------------------------

    def init_states(self) -> list[tuple]:
        start = frozenset([self.abstract_init()])
        return [(s, start, ()) for s in self.impl.init_states()]

    def next_states(self, state: tuple) -> list[tuple[tuple, tuple]]:
        impl_state, states, failed = state
        if failed:
            return []
        out = []
        for label, nxt in self.impl.next_states(impl_state):
            cur = states
            bad: tuple = ()
            for event in self.impl.observe(impl_state, label, nxt):
                cur = self.advance(cur, event)
                if not cur:
                    bad = (EVENT_CODES[event[0]], *event[1:])
                    break
            out.append((label, (nxt, cur, bad)))
        return out

    def properties(self) -> list[Property]:
        return [
            Property.always("refines_bus1", self._refines, doc=_DOC),
            Property.sometimes("delivered_after_reset", self._delivered_after_reset, doc=_DOC_AFTER_RESET),
        ]

    def _delivered_after_reset(self, state: tuple) -> str | None:
        impl = self.impl
        _sent, logs = state[0][GHOST]
        for q, log in enumerate(logs):
            reset_seen = False
            for code in log:
                kind, mid = code & 7, code >> 3
                if kind == SEND and impl.op_of(mid).kind in FLUSHING and mid // impl.stride == q:
                    reset_seen = True
                elif kind == DELIVER and reset_seen:
                    return f"{impl.names[q]} delivered {impl.mname(mid)} after its reset"
        return None

    def _refines(self, state: tuple) -> str | None:
        _impl, _states, failed = state
        if not failed:
            return None
        kind = {v: k for k, v in EVENT_CODES.items()}[failed[0]]
        names = self.impl.names
        if kind in ("deliver", "drop"):
            what = f"{names[failed[1]]} {'receives' if kind == 'deliver' else 'drops'} {self.impl.mname(failed[2])}"
        elif kind == "send":
            what = f"{names[failed[1]]} starts {self.impl.mname(failed[2])}"
        elif kind == "signal":
            what = f"{names[failed[1]]} signals {names[failed[2]]}"
        else:
            what = f"{names[failed[1]]} resets"
        return f"no run of the wiki algorithm with destruction shows this run's events: after the last step ({what})"

    def format_action(self, action: tuple) -> str:
        return self.impl.format_action(action)

    def action_kinds(self) -> tuple[str, ...]:
        return self.impl.action_kinds()

    def describe(self, state: tuple) -> dict[str, Any]:
        impl_state, states, _failed = state
        out = self.impl.describe(impl_state)
        out["abstract_states"] = len(states)
        return out


_DOC_AFTER_RESET = (
    "a witness: a peer delivers a message after its reset started (later traffic, which the refinement orders as "
    "any other)"
)
_DOC = (
    "every run of the code, projected on sends, deliveries, drops and destructions, is a run of the wiki "
    "algorithm (specs/bus1.py) with destruction added"
)

SPEC = Bus1Refinement

"""Step-exact bounded encodings of the seed protocols, for bounded model checking.

The seed encodings (``specs/NAME_symbolic.py``) abstract: they choose the message a
peer delivers (the number, the timestamp) freely, so that their lemmas speak of any
number of messages; bounded model checking on them finds runs the spec cannot make. The
encodings built here are the other kind: for one model's bounded configuration they
track every message the model's plan sends, and each of their steps is exactly one step
of the explicit spec, so that bounded model checking agrees with the explicit engine on
verdicts and on the length of the shortest counterexample.

An exact encoding's state is a function of the explicit state (:meth:`ExactPeers.encode`):

* per peer ``p``: ``sent.p`` (messages sent), ``know.p.m`` (``p`` knows message ``m``:
  the spec's ``know`` bitmask, which is the causal past a send records), ``dl.p.m``
  (``p`` has delivered ``m``) and ``bf.p.m1.m2`` (``p``'s first delivery of ``m1``
  came before its first delivery of ``m2``: Booleans, which Z3 handles faster than
  delivery positions);
* per message ``m``: ``past.m.m1`` (``m1`` was in ``m``'s causal past when ``m`` was
  sent);
* per *wire slot* (a message the protocol may put on one channel: an application
  message to one destination, an acknowledgement, a proposal...): ``w.KEY.in`` (in
  flight), its fields, and over FIFO channels ``w.KEY.at``, its position in its
  channel (0 the head). Every field of a slot not in flight is 0, so one explicit state
  has one encoding;
* the protocol's own variables (counters, clocks, hold-back buffers as one slot per
  message).

Each action is one kind of the spec's steps for one peer and one slot, with the label the
spec gives that step (``SymAction.label`` rebuilds it), so a trace of the encoding is a
sequence of the spec's labels. The properties (``causal``, ``total``,
``total_global``, ``total_prefix``) are those of :mod:`ordercheck.specs.properties`,
written over the delivery positions and pasts, named like the spec's properties, so
``bmc_queries`` on an exact encoding answers for the explicit spec's own properties.

Bounded model checking uses :meth:`ExactPeers.transition` (one formula per variable,
:func:`~ordercheck.specs.symbolic.selector_transition`).

Only configurations with a fixed plan (one destination set per send), no side-channel
signals, no lossy and no duplicating channels are encoded (:class:`NoExact` otherwise):
each wire slot then carries at most one copy at a time.

``tests/test_symbolic_exact.py`` checks the claim on the explicit state space: from each
of the first states of a breadth-first search, the encoding's successors (enumerated by
Z3) are exactly the encodings of the spec's successors, with the same labels, and each
property's formula agrees with the spec's monitor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import permutations
from typing import Any

import z3

from ordercheck.specs.symbolic import SymAction, SymState, selector_transition


class NoExact(ValueError):
    """The configuration is outside what the exact encodings cover (the message says why)."""


@dataclass(frozen=True)
class Slot:
    """A message the protocol may put on channel ``src -> dst``, with its fields."""

    key: str
    src: int
    dst: int
    fields: dict[str, str] = field(default_factory=dict)
    text: str = ""  # how a state shows it (the key when empty)


Updates = dict[str, Any]


class ExactPeers:
    """The shared part of the exact encodings (module doc): plan, knowledge, pasts,
    delivery positions, wire slots and the ordering properties. A subclass gives
    :meth:`wire_slots`, :meth:`own_schema`, :meth:`protocol_actions`, :meth:`encode_own`
    and :meth:`slot_of`, and the positions of the spec's state items."""

    ghost_at = 0
    know_at = 1
    chans_at = 4
    choices_allowed = False
    """Whether a send may pick among several destination sets (then ``to.m.d`` records
    the pick, and :meth:`dests` is every destination ``m`` may have)."""
    property_names: tuple[str, ...] = ("causal", "total", "total_global", "total_prefix")

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self.n = spec.peers
        self.names = spec.names
        plan = getattr(spec, "plan", None)
        self.options: dict[int, tuple[int, ...]] = {}  # per message, the destination sets its send may pick
        if plan is None:  # a choice of destinations per send
            choices = getattr(spec, "choices", None)
            if choices is None or (any(len(c) > 1 for c in choices) and not self.choices_allowed):
                raise NoExact(f"{spec.name}: only a fixed plan of sends (one destination set per send) is encoded exactly")
            for p, c in enumerate(choices):
                for i in range(spec.sends):
                    self.options[p * spec.stride + i] = tuple(c)
            plan = tuple(tuple(c[:1]) * spec.sends for c in choices)
        if getattr(spec, "signals", 0) or getattr(spec, "lossy", False) or getattr(spec, "duplicates", 0):
            raise NoExact(f"{spec.name}: signals, lossy and duplicating channels are not encoded exactly")
        self.stride = spec.stride
        self.msgs: dict[int, tuple[int, int]] = {}
        for p in range(self.n):
            for i, dmask in enumerate(plan[p]):
                self.msgs[p * self.stride + i] = (p, dmask)
                self.options.setdefault(p * self.stride + i, (dmask,))
        self.mids = sorted(self.msgs)
        self.fifo = spec.channel == "fifo"
        self.slots = self.wire_slots()
        self.slot_by_key = {s.key: s for s in self.slots}
        schema: dict[str, str] = {}
        for p in range(self.n):
            schema[f"sent.{p}"] = "int"
            for m in self.mids:
                schema[f"know.{p}.{m}"] = "bool"
                schema[f"dl.{p}.{m}"] = "bool"
                for m1 in self.mids:
                    if m1 != m:
                        schema[f"bf.{p}.{m1}.{m}"] = "bool"
        for m in self.mids:
            for m1 in self.mids:
                schema[f"past.{m}.{m1}"] = "bool"
            if len(self.options[m]) > 1:
                schema.update({f"to.{m}.{d}": "bool" for d in self.dests(m)})
        for slot in self.slots:
            schema[f"w.{slot.key}.in"] = "bool"
            if self.fifo:
                schema[f"w.{slot.key}.at"] = "int"
            for f, kind in slot.fields.items():
                schema[f"w.{slot.key}.{f}"] = kind
        schema.update(self.own_schema())
        self.schema = schema
        self.properties = {name: ("always", getattr(self, f"p_{name}")) for name in self.property_names}
        self.lemmas: dict[str, Any] = {}  # no invariant: the abstract encoding (SYMBOLIC) proves
        self.targets: dict[str, Any] = {}
        self._init = self.encode(spec.init_states()[0])

    # -- what a protocol gives ------------------------------------------------------------

    def wire_slots(self) -> list[Slot]:
        raise NotImplementedError

    def own_schema(self) -> dict[str, str]:
        raise NotImplementedError

    def protocol_actions(self) -> list[SymAction]:
        raise NotImplementedError

    def encode_own(self, state: tuple, out: dict[str, Any]) -> None:
        raise NotImplementedError

    def slot_of(self, src: int, dst: int, msg: Any) -> tuple[str, dict[str, int]]:
        """The wire slot of ``msg`` on channel ``src -> dst`` and its field values."""
        raise NotImplementedError

    # -- the state ------------------------------------------------------------------------

    def dests(self, m: int) -> list[int]:
        mask = 0
        for dmask in self.options[m]:
            mask |= dmask
        return [q for q in range(self.n) if mask >> q & 1]

    def mname(self, m: int) -> str:
        return self.spec.mname(m)

    def init(self, s: SymState) -> z3.BoolRef:
        return s.equals(self._init)

    def actions(self) -> list[SymAction]:
        if not hasattr(self, "_actions"):
            self._actions = self.protocol_actions()
        return self._actions

    def transition(self, s: SymState, t: SymState) -> z3.BoolRef:
        """``Next`` for bounded model checking (:func:`~ordercheck.specs.symbolic.selector_transition`)."""
        return selector_transition(self.actions(), s, t)

    def encode(self, state: tuple, prev: Any = None) -> dict[str, Any]:
        """The explicit ``state`` as variable values (``prev`` is ignored: an exact
        encoding is a function of the state alone)."""
        from ordercheck.specs.history import DELIVER, decode_event

        out: dict[str, Any] = {}
        for name, kind in self.schema.items():
            out[name] = False if kind == "bool" else 0
        sent, logs = state[self.ghost_at]
        know = state[self.know_at]
        for p in range(self.n):
            out[f"sent.{p}"] = len(sent[p])
            for m in self.mids:
                out[f"know.{p}.{m}"] = bool(know[p] >> m & 1)
            for i, (dmask, past) in enumerate(sent[p]):
                m = p * self.stride + i
                for m1 in self.mids:
                    out[f"past.{m}.{m1}"] = bool(past >> m1 & 1)
                if len(self.options[m]) > 1:
                    for d in self.dests(m):
                        out[f"to.{m}.{d}"] = bool(dmask >> d & 1)
            for code in logs[p]:
                ev = decode_event(code)
                if ev.kind == DELIVER and not out[f"dl.{p}.{ev.arg}"]:
                    for m1 in self.mids:
                        if m1 != ev.arg:
                            out[f"bf.{p}.{m1}.{ev.arg}"] = out[f"dl.{p}.{m1}"]
                    out[f"dl.{p}.{ev.arg}"] = True
        for (src, dst), msgs in state[self.chans_at]:
            for i, msg in enumerate(msgs):
                key, values = self.slot_of(src, dst, msg)
                assert not out[f"w.{key}.in"], f"two copies of {key} in flight"
                out[f"w.{key}.in"] = True
                if self.fifo:
                    out[f"w.{key}.at"] = i
                for f, v in values.items():
                    out[f"w.{key}.{f}"] = v
        self.encode_own(state, out)
        return out

    # -- building blocks of actions ----------------------------------------------------------

    def send_app(self, s: SymState, p: int, m: int, dmask: int | None = None) -> tuple[Any, Updates]:
        """``p`` sends its planned message ``m`` (the guard: it is ``p``'s next), to
        ``dmask`` where it may pick: the count, the knowledge and the past; the protocol
        adds its wire slots."""
        i = m - p * self.stride
        upd: Updates = {f"sent.{p}": z3.IntVal(i + 1), f"know.{p}.{m}": z3.BoolVal(True)}
        if len(self.options[m]) > 1:
            assert dmask is not None
            upd.update({f"to.{m}.{d}": z3.BoolVal(bool(dmask >> d & 1)) for d in self.dests(m)})
        for m1 in self.mids:
            upd[f"past.{m}.{m1}"] = s[f"know.{p}.{m1}"]
        return s[f"sent.{p}"] == i, upd

    def deliver_app(self, s: SymState, q: int, m: int, after_send: bool = False) -> Updates:
        """``q``'s application delivers ``m``: its position (first delivery only), the
        count, and ``q`` learns ``m`` and its past (``after_send``: ``q`` sent ``m`` in
        this same step, so it knows them already)."""
        first = z3.Not(s[f"dl.{q}.{m}"])
        upd: Updates = {f"dl.{q}.{m}": z3.BoolVal(True)}
        for m1 in self.mids:
            if m1 != m:
                upd[f"bf.{q}.{m1}.{m}"] = z3.If(first, s[f"dl.{q}.{m1}"], s[f"bf.{q}.{m1}.{m}"])
        if not after_send:
            for m1 in self.mids:
                upd[f"know.{q}.{m1}"] = z3.BoolVal(True) if m1 == m else z3.Or(s[f"know.{q}.{m1}"], s[f"past.{m}.{m1}"])
        return upd

    def on_channel(self, s: SymState, src: int, dst: int) -> list[Slot]:
        return [slot for slot in self.slots if slot.src == src and slot.dst == dst]

    def put(self, s: SymState, key: str, values: dict[str, Any], upd: Updates) -> Any:
        """Put slot ``key`` in flight with ``values`` (into ``upd``, which may already
        put other slots on the same channel in this step); returns the guard that the
        slot is free (one copy at a time)."""
        slot = self.slot_by_key[key]
        upd[f"w.{key}.in"] = z3.BoolVal(True)
        if self.fifo:
            ahead = [z3.If(s[f"w.{o.key}.in"], 1, 0) for o in self.on_channel(s, slot.src, slot.dst)]
            ahead += [1 for o in self.on_channel(s, slot.src, slot.dst)
                      if o.key != key and o.key in upd.get("_put", ())]
            upd[f"w.{key}.at"] = z3.Sum(ahead) if ahead else z3.IntVal(0)
        for f, v in values.items():
            upd[f"w.{key}.{f}"] = v
        upd.setdefault("_put", []).append(key)
        return z3.Not(s[f"w.{key}.in"])

    def can_take(self, s: SymState, key: str) -> Any:
        """Slot ``key`` can be taken off its channel: in flight, and its channel's head
        over FIFO channels."""
        if self.fifo:
            return z3.And(s[f"w.{key}.in"], s[f"w.{key}.at"] == 0)
        return s[f"w.{key}.in"]

    def take(self, s: SymState, key: str, upd: Updates) -> None:
        """Take slot ``key`` off its channel (into ``upd``): its fields back to 0, and
        over FIFO channels every slot behind it moves up one."""
        slot = self.slot_by_key[key]
        upd[f"w.{key}.in"] = z3.BoolVal(False)
        if self.fifo:
            upd[f"w.{key}.at"] = z3.IntVal(0)
            for o in self.on_channel(s, slot.src, slot.dst):
                if o.key != key:
                    upd[f"w.{o.key}.at"] = z3.If(s[f"w.{o.key}.in"], s[f"w.{o.key}.at"] - 1, 0)
        for f, kind in slot.fields.items():
            upd[f"w.{key}.{f}"] = z3.BoolVal(False) if kind == "bool" else z3.IntVal(0)

    def action(self, name: str, step: Any, label: Any) -> SymAction:
        """A :class:`SymAction` whose ``step`` may leave the bookkeeping key ``_put``."""

        def clean(s: SymState, t: SymState) -> tuple[Any, Updates]:
            guard, upd = step(s, t)
            upd.pop("_put", None)
            return guard, upd

        return SymAction(name, clean, label)

    # -- the properties (ordercheck.specs.properties) ----------------------------------------

    def p_causal(self, s: SymState) -> z3.BoolRef:
        """No peer delivered ``m2`` before a message of ``m2``'s past addressed to it."""
        bad = []
        for q in range(self.n):
            for m2 in self.mids:
                for m1 in self.mids:
                    if m1 == m2 or q not in self.dests(m1):
                        continue
                    bad.append(z3.And(s[f"dl.{q}.{m2}"], s[f"past.{m2}.{m1}"], z3.Not(s[f"bf.{q}.{m1}.{m2}"])))
        return z3.Not(z3.Or(bad)) if bad else z3.BoolVal(True)

    def _before(self, s: SymState, q: int, m1: int, m2: int) -> Any:
        return s[f"bf.{q}.{m1}.{m2}"]

    def p_total(self, s: SymState) -> z3.BoolRef:
        """No two peers delivered two messages (first deliveries) in opposite orders."""
        bad = []
        for q in range(self.n):
            for r in range(self.n):
                if q == r:
                    continue
                for m1 in self.mids:
                    for m2 in self.mids:
                        if m1 != m2:
                            bad.append(z3.And(self._before(s, q, m1, m2), self._before(s, r, m2, m1)))
        return z3.Not(z3.Or(bad)) if bad else z3.BoolVal(True)

    def p_total_global(self, s: SymState) -> z3.BoolRef:
        """The union of the peers' delivery orders has no cycle (every simple cycle of
        messages enumerated: the plans are small)."""
        edge = {(a, b): z3.Or([self._before(s, q, a, b) for q in range(self.n)])
                for a in self.mids for b in self.mids if a != b}
        bad = []
        for k in range(2, len(self.mids) + 1):
            for cyc in permutations(self.mids, k):
                if cyc[0] != min(cyc):
                    continue
                bad.append(z3.And([edge[cyc[i], cyc[(i + 1) % k]] for i in range(k)]))
        return z3.Not(z3.Or(bad)) if bad else z3.BoolVal(True)

    def p_total_prefix(self, s: SymState) -> z3.BoolRef:
        """For two peers, the messages addressed to both, in each one's delivery order,
        form two sequences one a prefix of the other: no index holds two different
        messages."""
        bad = []
        for q in range(self.n):
            for r in range(q + 1, self.n):
                both = [m for m in self.mids if q in self.dests(m) and r in self.dests(m)]

                def index(p: int, m: int, both: list[int] = both) -> Any:
                    return z3.Sum([z3.If(self._before(s, p, o, m), 1, 0) for o in both if o != m] or [z3.IntVal(0)])

                for m1 in both:
                    for m2 in both:
                        if m1 != m2:
                            bad.append(z3.And(s[f"dl.{q}.{m1}"], s[f"dl.{r}.{m2}"], index(q, m1) == index(r, m2)))
        return z3.Not(z3.Or(bad)) if bad else z3.BoolVal(True)

    # -- presentation ----------------------------------------------------------------------

    def describe(self, values: dict[str, Any]) -> dict[str, Any]:
        """The state readably (``lines``) and every variable off its initial value
        (``changed``), which determines the state."""
        lines = []
        for p, a in enumerate(self.names):
            got = [m for m in self.mids if values[f"dl.{p}.{m}"]]
            order = sorted(got, key=lambda m, p=p: sum(values[f"bf.{p}.{o}.{m}"] for o in got if o != m))
            lines.append(f"{a}: sent {values[f'sent.{p}']}; delivered {', '.join(self.mname(m) for m in order) or 'nothing'}")
        flight = [f"{self.proc_name(slot.src)}->{self.proc_name(slot.dst)} {slot.text or slot.key}"
                  + "".join(f" {f}={values[f'w.{slot.key}.{f}']}" for f in slot.fields)
                  + (f" (at {values[f'w.{slot.key}.at']})" if self.fifo else "")
                  for slot in self.slots if values[f"w.{slot.key}.in"]]
        lines.append("in flight: " + (", ".join(flight) or "nothing"))
        lines += self.describe_own(values)
        changed = {k: v for k, v in sorted(values.items()) if v != self._init[k]}
        return {"lines": lines, "changed": changed}

    def describe_own(self, values: dict[str, Any]) -> list[str]:
        return []

    def proc_name(self, p: int) -> str:
        return self.names[p] if p < self.n else "S"

    def format_action(self, label: tuple) -> str:
        return self.spec.format_action(label)


class ExactHoldBack(ExactPeers):
    """The exact encoding of a :class:`~ordercheck.specs.holdback.HoldBackSpec` (BSS, matrix
    clocks...): each peer's algorithm state as integers ``L.p.i``, a wire slot ``m>q``
    per copy with the control data it carries (``d0``, ``d1``...), and the hold-back
    buffer as ``held.q.m`` with the same data. The steps are the base's: ``receive``
    (taken off its channel and delivered at once), ``buffer`` (taken and held back),
    ``deliver`` (from the buffer; a peer with a deliverable held-back message does only
    that), ``send``. A subclass gives the algorithm over lists of Z3 integers:
    :meth:`z_stamp`, :meth:`z_deliverable`, :meth:`z_on_deliver`, and how the spec's
    algorithm state and data flatten to integers."""

    ghost_at, know_at, chans_at = 3, 4, 0
    local_width = 0
    data_width = 0

    def flat_local(self, local: Any) -> list[int]:
        raise NotImplementedError

    def flat_data(self, data: Any) -> list[int]:
        raise NotImplementedError

    def z_stamp(self, local: list[Any], p: int, dests: list[int]) -> tuple[list[Any], list[list[Any]]]:
        """``p``'s new state and the data each copy carries (in the order of ``dests``)."""
        raise NotImplementedError

    def z_on_arrival(self, local: list[Any], p: int) -> list[Any]:
        """``p``'s state after a message arrives, before the delivery check."""
        return local

    def z_deliverable(self, local: list[Any], p: int, src: int, data: list[Any]) -> Any:
        raise NotImplementedError

    def z_on_deliver(self, local: list[Any], p: int, src: int, data: list[Any]) -> list[Any]:
        raise NotImplementedError

    def wire_slots(self) -> list[Slot]:
        fields = {f"d{i}": "int" for i in range(self.data_width)}
        return [Slot(f"{m}>{q}", self.msgs[m][0], q, fields, self.mname(m)) for m in self.mids for q in self.dests(m)]

    def own_schema(self) -> dict[str, str]:
        out = {f"L.{p}.{i}": "int" for p in range(self.n) for i in range(self.local_width)}
        for q in range(self.n):
            for m in self.mids:
                if q in self.dests(m):
                    out[f"held.{q}.{m}"] = "bool"
                    out.update({f"held.{q}.{m}.d{i}": "int" for i in range(self.data_width)})
        return out

    def slot_of(self, src: int, dst: int, msg: Any) -> tuple[str, dict[str, int]]:
        mid, data = msg
        return f"{mid}>{dst}", {f"d{i}": v for i, v in enumerate(self.flat_data(data))}

    def encode_own(self, state: tuple, out: dict[str, Any]) -> None:
        from ordercheck.specs.holdback import BUFFERS, LOCAL

        for p in range(self.n):
            for i, v in enumerate(self.flat_local(state[LOCAL][p])):
                out[f"L.{p}.{i}"] = v
            for mid, data in state[BUFFERS][p]:
                assert not out[f"held.{p}.{mid}"], "two copies held back"
                out[f"held.{p}.{mid}"] = True
                for i, v in enumerate(self.flat_data(data)):
                    out[f"held.{p}.{mid}.d{i}"] = v

    def _local(self, s: SymState, p: int) -> list[Any]:
        return [s[f"L.{p}.{i}"] for i in range(self.local_width)]

    def _held(self, s: SymState, q: int, m: int) -> list[Any]:
        return [s[f"held.{q}.{m}.d{i}"] for i in range(self.data_width)]

    def _set_local(self, p: int, local: list[Any], upd: Updates) -> None:
        for i, v in enumerate(local):
            upd[f"L.{p}.{i}"] = v

    def _ready(self, s: SymState, q: int, m: int) -> Any:
        return z3.And(s[f"held.{q}.{m}"], self.z_deliverable(self._local(s, q), q, self.msgs[m][0], self._held(s, q, m)))

    def draining(self, s: SymState, p: int) -> Any:
        """``p`` has a held-back message it may deliver (then it does nothing else)."""
        return z3.Or([self._ready(s, p, m) for m in self.mids if p in self.dests(m)] or [z3.BoolVal(False)])

    def protocol_actions(self) -> list[SymAction]:
        out = []
        for m in self.mids:
            p, dmask = self.msgs[m]
            dests = self.dests(m)

            def send(s: SymState, t: SymState, p: int = p, m: int = m, dests: list[int] = dests) -> tuple[Any, Updates]:
                guard, upd = self.send_app(s, p, m)
                local, datas = self.z_stamp(self._local(s, p), p, dests)
                self._set_local(p, local, upd)
                free = [self.put(s, f"{m}>{q}", {f"d{i}": v for i, v in enumerate(data)}, upd)
                        for q, data in zip(dests, datas)]
                return z3.And(guard, z3.Not(self.draining(s, p)), *free), upd

            out.append(self.action(f"send {self.mname(m)}", send, lambda pre, post, p=p, m=m, d=dmask: ("send", p, m, d)))
            for q in dests:
                out += self._at(q, m)
        return out

    def _at(self, q: int, m: int) -> list[SymAction]:
        key, src = f"{m}>{q}", self.msgs[m][0]

        def data(s: SymState) -> list[Any]:
            return [s[f"w.{key}.d{i}"] for i in range(self.data_width)]

        def receive(s: SymState, t: SymState) -> tuple[Any, Updates]:
            upd: Updates = {}
            self.take(s, key, upd)
            local = self.z_on_arrival(self._local(s, q), q)
            self._set_local(q, self.z_on_deliver(local, q, src, data(s)), upd)
            upd.update(self.deliver_app(s, q, m))
            ok = self.z_deliverable(local, q, src, data(s))
            return z3.And(self.can_take(s, key), z3.Not(self.draining(s, q)), ok), upd

        def buffer(s: SymState, t: SymState) -> tuple[Any, Updates]:
            upd: Updates = {f"held.{q}.{m}": z3.BoolVal(True)}
            upd.update({f"held.{q}.{m}.d{i}": v for i, v in enumerate(data(s))})
            self.take(s, key, upd)
            local = self.z_on_arrival(self._local(s, q), q)
            self._set_local(q, local, upd)
            ok = self.z_deliverable(local, q, src, data(s))
            return z3.And(self.can_take(s, key), z3.Not(self.draining(s, q)), z3.Not(ok)), upd

        def deliver(s: SymState, t: SymState) -> tuple[Any, Updates]:
            upd: Updates = {f"held.{q}.{m}": z3.BoolVal(False)}
            upd.update({f"held.{q}.{m}.d{i}": z3.IntVal(0) for i in range(self.data_width)})
            self._set_local(q, self.z_on_deliver(self._local(s, q), q, src, self._held(s, q, m)), upd)
            upd.update(self.deliver_app(s, q, m))
            return self._ready(s, q, m), upd

        a, mm = self.names[q], self.mname(m)
        return [
            self.action(f"receive {mm} at {a}", receive, lambda pre, post: ("receive", q, m)),
            self.action(f"buffer {mm} at {a}", buffer, lambda pre, post: ("buffer", q, m)),
            self.action(f"deliver {mm} at {a}", deliver, lambda pre, post: ("deliver", q, m)),
        ]

    def describe_own(self, values: dict[str, Any]) -> list[str]:
        lines = []
        for p, a in enumerate(self.names):
            held = [self.mname(m) for m in self.mids if values.get(f"held.{p}.{m}")]
            local = [values[f"L.{p}.{i}"] for i in range(self.local_width)]
            lines.append(f"{a}: state {local}; held back " + (", ".join(held) or "nothing"))
        return lines


def zmax_list(a: list[Any], b: list[Any]) -> list[Any]:
    """Elementwise maximum of two lists of Z3 integers."""
    return [z3.If(x >= y, x, y) for x, y in zip(a, b)]

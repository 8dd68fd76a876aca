"""The adapter base classes: the general contract (:class:`Adapter`), and the peers,
message ids and ghost history every :class:`ordercheck.specs.base.PeerSpec` shares
(:class:`PeerAdapter`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from ordercheck.checker import Spec
from ordercheck.specs.history import DELIVER, DROP, KIND_NAMES, SEND, SIGNAL_IN, SIGNAL_OUT, decode_event, encode_event
from ordercheck.tla.values import ModelValue, tla


def camel(name: str) -> str:
    """``global_lock`` -> ``GlobalLock``."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


@dataclass(frozen=True)
class ExportedProperty:
    """One property of the spec as the TLA+ module carries it.

    ``predicate`` is the state predicate (the invariant itself; for ``sometimes`` the
    state sought; for ``eventually`` the state every run must end in). ``checked`` is
    what the configuration lists: the invariant, ``Never<P>`` for ``sometimes``, the
    temporal formula ``<>[]P`` for ``eventually``.

    With ``step``, the property is a check of each step (Python keeps it as a sticky part
    of its state, which :meth:`Adapter.view` leaves out): ``predicate`` is then an action,
    true of a step that keeps an ``always`` property or shows a ``sometimes`` one, and
    ``checked`` the action property ``[][predicate]_vars`` (``[][~predicate]_vars`` for
    ``sometimes``), which the configuration lists as a PROPERTY and whose violation TLC
    reports as "Action property ... is violated".
    """

    name: str
    kind: str
    predicate: str
    checked: str
    step: bool = False

    @property
    def temporal(self) -> bool:
        return self.kind == "eventually"

    @property
    def listed_as_property(self) -> bool:
        """The configuration lists it as a PROPERTY (a temporal formula or an action
        property), not an INVARIANT."""
        return self.temporal or self.step


class Adapter:
    """What the exporter and the cross-check need to know about one spec's TLA+ mirror.

    A subclass sets :attr:`template` and :attr:`variables` (and :attr:`actions`,
    :attr:`predicates` where they apply) and implements the codec, :meth:`encode` and
    :meth:`decode`: a Python state as the TLA+ module's variables and back. The
    cross-check reads each TLC trace back through :meth:`decode` (a state that decodes
    to no successor of the state before is a mismatch, shown by ``ordercheck tlc
    --show-traces``) and has TLC replay our traces written by :meth:`encode`, so the two
    must be inverses: ``decode(parsed(encode_text(s))) == s`` for every reachable
    ``s`` (``tests/test_tla_async.py`` has the round-trip test to copy).

    The values both ways are those of :mod:`ordercheck.tla.values`, by TLA+ form:

    =======================================  ======================================
    TLA+ value, as TLC prints it             Python value
    =======================================  ======================================
    integer ``3``                            ``int``
    string ``"send"``                        ``str``
    ``TRUE``, ``FALSE``                      ``bool``
    model value ``a`` (a peer)               :class:`~ordercheck.tla.values.ModelValue`
    sequence or tuple ``<<a, 1>>``           ``tuple``
    set ``{a, b}``                           ``frozenset``
    record ``[kind |-> "send", arg |-> x]``  ``dict`` keyed by field name (``str``)
    function ``(a :> 1 @@ b :> 2)``          ``dict`` keyed by argument
    =======================================  ======================================

    What :meth:`decode` receives follows TLC's printing, not the template's types: a
    function whose domain is ``1..n`` arrives as a ``tuple`` (TLC prints it as a
    sequence), and an empty sequence, function or bag all arrive as ``()`` (TLC prints
    each as ``<<>>``); a sequence TLC prints as a function arrives as a ``dict`` keyed
    ``1..n``. Read a sequence accepting both forms, and a bag accepting ``()`` for the
    empty one, as the built-in adapters do. What :meth:`encode` returns is written by
    :func:`ordercheck.tla.values.tla`: a ``dict`` whose keys are all ``str`` becomes a record, any
    other a function, an empty one ``<<>>``.
    """

    template: ClassVar[str] = ""
    """The template's file name (``NAME.tla.j2``), found beside the spec file (for a
    built-in spec, in ``tla/templates``)."""
    variables: ClassVar[tuple[str, ...]] = ()
    """The TLA+ module's variables, each a key of what :meth:`encode` returns and of what
    :meth:`decode` receives; the module that replays our traces in TLC names a state's
    variables by these."""
    predicates: ClassVar[dict[str, str]] = {}
    """Property name -> its TLA+ predicate, where it is not the camel-cased name
    (``global_lock`` -> ``GlobalLock``)."""
    protocol_module: ClassVar[str | None] = None
    """The name of the spec's one parameterised TLA+ module, or ``None``. With a name,
    the template renders once per spec as that module (constants ``Peers``,
    ``PeerOrder``, ``Plan``, ``Signals`` and the spec's own), and each model gets a small
    module of its own, ``MC``-style, that extends it and defines the constants' values
    (:meth:`PeerAdapter.mc_definitions`); without, the template renders per model, with the model's
    peers and script written into it."""
    drops: ClassVar[bool] = False
    """Whether the spec's peers may drop a message with a reason (a ``"drop"`` event in
    ``logs``). Python's ``eventual_delivery`` waits for a delivery or such a drop: with
    ``drops`` it is exported as ``EventuallyDeliveredOrDropped == <>[]AllDeliveredOrDropped``;
    without, as ``EventualDelivery == <>[]AllDelivered`` (deliveries only), the type
    invariant ruling drop events out so that the two coincide."""
    happened_before: ClassVar[tuple[str, ...]] = ()
    """The invariants of ``Name_happened_before.cfg``, each defined in the module (the
    template piece ``_properties.tla.j2`` defines them over ``HappenedBefore.tla``):
    ``AgreesWithHappenedBefore`` (the library's Fifo, Causal and Total equal
    HappenedBefore's in every state) and ``StoredPastIsCausalPast`` (the past stored with
    each message is the set of messages sent causally before it). Empty for a spec
    without the peers' history."""
    actions: ClassVar[dict[str, str]] = {}
    """Action label name -> the TLA+ action of one peer ``p`` that mirrors it: the
    formula each ``WF``/``SF`` conjunct of :meth:`fairness` quantifies over ``p``."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        """The spec instance, its constants set: the model's configuration."""

    @classmethod
    def refuse(cls, spec: Spec) -> tuple[str, str] | None:
        """``(constant, why)`` when the template does not cover this configuration of the
        spec (a constant value it does not mirror); ``None`` (the default) when it does."""
        return None

    # -- what the template gets ---------------------------------------------------------

    mc_about: ClassVar[str] = (
        "the peers, their order (Python's peer ids) and each peer's sends, as the\n"
        "   destination sets each send may choose from"
    )
    """What the model module's definitions give (the comment at its top), where the
    spec has a :attr:`protocol_module`."""

    def mc_model_values(self) -> list[str]:
        """The model values the model module declares as its CONSTANTS (and the
        configuration sets to themselves), where the spec has a :attr:`protocol_module`."""
        raise NotImplementedError(f"{type(self).__name__} has a protocol module but no model values")

    def mc_definitions(self) -> list[tuple[str, str]]:
        """The model module's definitions, ``(name, TLA+ expression)``, which the
        configuration binds the protocol module's constants to (``Const <- MCConst``)."""
        raise NotImplementedError(f"{type(self).__name__} has a protocol module but no model definitions")

    def exported_properties(self) -> list[ExportedProperty]:
        """Every property of the spec, with its TLA+ names."""
        out = []
        for prop in self.spec.properties():
            pred = self.predicates.get(prop.name, camel(prop.name))
            if prop.name == "eventual_delivery" and self.drops:
                pred, checked = "AllDeliveredOrDropped", "EventuallyDeliveredOrDropped"
            elif prop.kind == "sometimes":
                checked = "Never" + pred
            elif prop.kind == "eventually":
                checked = camel(prop.name)
            else:
                checked = pred
            out.append(ExportedProperty(prop.name, prop.kind, pred, checked))
        return out

    def context(self) -> dict[str, Any]:
        """Template variables beyond the common ones."""
        return {}

    def cfg_constants(self) -> list[tuple[str, str]]:
        """``(name, value)`` assignments for the configuration's CONSTANTS."""
        return []

    def fairness(self) -> list[dict[str, str]]:
        """The spec's fairness (:attr:`ordercheck.checker.Spec.fairness`) as per-peer TLA+ conditions."""
        out: list[dict[str, str]] = []
        for label, kind in sorted(self.spec.fairness.items()):
            formula = self.actions.get(label)
            if formula is None:
                raise ValueError(f"{self.spec.name}: fairness names action {label!r}, which the TLA+ adapter does not map")
            prefix = "SF" if kind == "strong" else "WF"
            same = next((f for f in out if f["formula"] == formula and f["prefix"] == prefix), None)
            if same is not None:  # two labels one TLA+ action mirrors: one conjunct
                same["label"] += f", {label}"
                continue
            out.append({"label": label, "kind": kind, "formula": formula, "prefix": prefix})
        return out

    def optional(self) -> list[str]:
        """The action labels the spec's fairness does not cover, in :attr:`actions`' order:
        steps a behaviour may leave untaken for ever (sending, signalling, channel faults)."""
        return [label for label in self.actions if label not in self.spec.fairness]

    def symmetry(self) -> tuple[bool, str]:
        """Whether permuting the peers is a symmetry of this model, and why (not)."""
        return False, "this spec declares no symmetry"

    # -- states both ways -----------------------------------------------------------------

    def encode(self, state: Any) -> dict[str, Any]:
        """A Python state as TLA+ values, by variable: one entry per name of
        :attr:`variables`, each a value :func:`ordercheck.tla.values.tla` can write (see the
        table above)."""
        raise NotImplementedError

    def decode(self, values: dict[str, Any]) -> Any:
        """A TLC state as the Python state: ``values`` maps each variable of the module to
        its value as :func:`ordercheck.tla.values.parse_value` read TLC's print of it (see the table
        above: model values, tuples, frozensets, records and functions as dicts). The
        result must equal the Python state exactly (the same tuple, in the spec's
        canonical form), since the cross-check compares it with the Python successors;
        where :meth:`view` leaves part of the state out, its :meth:`view` must."""
        raise NotImplementedError

    def view(self, state: Any) -> Any:
        """The part of a Python state the TLA+ module's variables hold: the whole state,
        unless the spec keeps per-step checks in its state, which the module checks as
        action properties instead (an :class:`ExportedProperty` with ``step``). :meth:`decode` then
        gives those parts a fixed value, and the cross-check compares states by their view
        (its state counts are those of the graph of views, :mod:`ordercheck.tla.views`)."""
        return state

    @property
    def has_view(self) -> bool:
        """Whether :meth:`view` leaves part of the state out."""
        return type(self).view is not Adapter.view

    def encode_text(self, state: Any) -> dict[str, str]:
        """A Python state as TLA+ expressions, by variable (:meth:`encode`, written out)."""
        return {k: tla(v) for k, v in self.encode(state).items()}


_KIND_CODES = {name: code for code, name in KIND_NAMES.items()}


class PeerAdapter(Adapter):
    """For specs built on :class:`ordercheck.specs.base.PeerSpec`: peers as model values, messages as
    ``<<peer, k>>``, and the ghost history ``sent``, ``logs``, ``know``, ``signalsLeft``
    that the template piece ``_peers.tla.j2`` declares.

    **Peers and message ids.** Python numbers peers from 0 (peer ``a`` is 0) and names a
    message by one integer, its *id*: ``sender * stride + k``, where ``k`` counts the
    sender's messages from 0. TLA+ names it ``<<sender, k + 1>>``, the sender's model
    value and its messages counted from 1 as the template's ``Messages`` are. So ``a``'s
    first message is id 0 and ``<<a, 1>>``, and with ``stride = 2`` ``b``'s second is id 3
    and ``<<b, 2>>``. Use :meth:`msg` and :meth:`mid` rather than the arithmetic: an id
    read off by one decodes to another peer's message, and the cross-check reports the
    state as no successor of the one before.

    Sets of messages and of peers are bit masks in Python (bit ``id``, bit ``peer``) and
    sets in TLA+ (:meth:`msgs`, :meth:`mask`, :meth:`peer_set`, :meth:`peer_mask`); a
    per-peer tuple is a function from the peers (:meth:`per_peer`, :meth:`from_peers`).
    """

    happened_before = ("AgreesWithHappenedBefore", "StoredPastIsCausalPast")

    def __init__(self, spec: Spec) -> None:
        super().__init__(spec)
        self.names: tuple[str, ...] = spec.names  # type: ignore[attr-defined]
        """The peers' names, by peer id: ``("a", "b", "c")``; each is also the name of
        the peer's model value and of its CONSTANT in the configuration."""
        self.stride: int = spec.stride  # type: ignore[attr-defined]
        """The spec's ``stride``: how many ids each sender has (its ``sends``, or the
        longest ``script`` entry), so that ``id // stride`` is the sender and
        ``id % stride`` the message's 0-based number at it."""
        self.peers: tuple[ModelValue, ...] = tuple(ModelValue(n) for n in self.names)
        """The peers' model values, by peer id."""
        self.ids: dict[ModelValue, int] = {p: i for i, p in enumerate(self.peers)}
        """A peer's model value -> its peer id (the inverse of :attr:`peers`)."""

    # -- template ---------------------------------------------------------------------

    def mc_model_values(self) -> list[str]:
        """The peers' names: the model module declares each as a model value."""
        return list(self.names)

    def mc_definitions(self) -> list[tuple[str, str]]:
        """The model module's definitions for a parameterised protocol module, as
        ``(name, TLA+ expression)``: ``MCPeers``, ``MCPeerOrder`` and ``MCPlan``, each
        peer's sends as the sets of destination sets it may choose from (one set for a
        scripted send)."""
        spec: Any = self.spec
        names = list(self.names)
        destinations = getattr(spec, "destinations", "others")  # a broadcast spec sends to every other peer
        if spec.plan is not None:
            rows = [(self.names[p], "<<" + ", ".join("{" + self._set_text(m) + "}" for m in masks) + ">>")
                    for p, masks in enumerate(spec.plan) if masks]
            plan = "[p \\in MCPeers |->\n" + "".join(
                f"    {'  CASE' if i == 0 else '   []'} p = {p} -> {seq}\n" for i, (p, seq) in enumerate(rows)
            ) + "       [] OTHER -> <<>>]"
        else:
            choices = {
                "others": "{MCPeers \\ {p}}",
                "unicast": "{{q} : q \\in MCPeers \\ {p}}",
            }.get(destinations, "(SUBSET (MCPeers \\ {p})) \\ {{}}")
            plan = f"[p \\in MCPeers |-> [k \\in 1..{spec.sends} |-> {choices}]]   \\* destinations = \"{destinations}\""
        return [
            ("MCPeers", "{" + ", ".join(names) + "}"),
            ("MCPeerOrder", "<<" + ", ".join(names) + ">>   \\* Python's peer ids: " + names[0] + " is 0, ..."),
            ("MCPlan", plan),
        ]

    def context(self) -> dict[str, Any]:
        spec = self.spec
        script = None
        if spec.plan is not None:  # type: ignore[attr-defined]
            script = [
                (self.names[p], [self._set_text(mask) for mask in masks])
                for p, masks in enumerate(spec.plan)  # type: ignore[attr-defined]
                if masks
            ]
        return {"peers": list(self.names), "script": script, "destinations": spec.destinations,  # type: ignore[attr-defined]
                "parameterised": self.protocol_module is not None}

    def _set_text(self, mask: int) -> str:
        return "{" + ", ".join(self.names[i] for i in range(len(self.names)) if mask >> i & 1) + "}"

    def cfg_constants(self) -> list[tuple[str, str]]:
        peers = [(n, n) for n in self.names]
        spec: Any = self.spec
        if self.protocol_module is not None:
            bound = [("Peers", "<- MCPeers"), ("PeerOrder", "<- MCPeerOrder"), ("Plan", "<- MCPlan")]
            return [*peers, *bound, ("Signals", str(spec.signals))]
        sends = [("Sends", str(spec.sends))] if spec.plan is None else []  # a script gives each peer's sends
        return [*peers, *sends, ("Signals", str(spec.signals))]

    # -- pieces of the codec ------------------------------------------------------------

    def msg(self, mid: int) -> tuple[ModelValue, int]:
        """The message with 0-based id ``mid`` as TLA+ names it: ``<<sender, k>>``, ``k``
        counted from 1 (id 0 is ``<<a, 1>>``)."""
        return (self.peers[mid // self.stride], mid % self.stride + 1)

    def mid(self, msg: tuple[ModelValue, int]) -> int:
        """The 0-based id of the TLA+ message ``<<sender, k>>`` (the inverse of :meth:`msg`)."""
        return self.ids[msg[0]] * self.stride + msg[1] - 1

    def msgs(self, mask: int) -> frozenset:
        """A bit mask of message ids as the TLA+ set of those messages."""
        return frozenset(self.msg(i) for i in range(mask.bit_length()) if mask >> i & 1)

    def mask(self, msgs: frozenset) -> int:
        """A TLA+ set of messages as the bit mask of their ids (the inverse of :meth:`msgs`)."""
        out = 0
        for m in msgs:
            out |= 1 << self.mid(m)
        return out

    def peer_set(self, mask: int) -> frozenset:
        """A bit mask of peer ids as the TLA+ set of those peers' model values."""
        return frozenset(self.peers[i] for i in range(len(self.peers)) if mask >> i & 1)

    def peer_mask(self, peers: frozenset) -> int:
        """A TLA+ set of peers as the bit mask of their ids (the inverse of :meth:`peer_set`)."""
        out = 0
        for p in peers:
            out |= 1 << self.ids[p]
        return out

    def per_peer(self, items: tuple, fn: Any) -> dict[ModelValue, Any]:
        """A tuple indexed by peer id as a TLA+ function from the peers: peer ->
        ``fn(item)``."""
        return {self.peers[i]: fn(x) for i, x in enumerate(items)}

    def from_peers(self, func: dict, fn: Any) -> tuple:
        """A TLA+ function from the peers (decoded: a dict keyed by model value) as a
        tuple indexed by peer id, each value through ``fn`` (the inverse of :meth:`per_peer`)."""
        return tuple(fn(func[p]) for p in self.peers)

    def event(self, code: int) -> dict[str, Any]:
        """A history event code (:mod:`ordercheck.specs.history`) as the TLA+ record of ``logs``:
        ``[kind |-> "send", arg |-> <<a, 1>>]`` (a message for a send, delivery or drop,
        a peer for a signal)."""
        ev = decode_event(code)
        if ev.kind in (SEND, DELIVER, DROP):
            arg: Any = self.msg(ev.arg)
        elif ev.kind in (SIGNAL_OUT, SIGNAL_IN):
            arg = self.peers[ev.arg]
        else:
            raise ValueError(f"no TLA+ form for the {KIND_NAMES[ev.kind]} event yet")
        return {"kind": KIND_NAMES[ev.kind], "arg": arg}

    def event_code(self, ev: dict[str, Any]) -> int:
        """A decoded ``logs`` record as the history event code (the inverse of :meth:`event`)."""
        kind = _KIND_CODES[ev["kind"]]
        arg = ev["arg"]
        return encode_event(kind, self.ids[arg] if isinstance(arg, ModelValue) else self.mid(arg))

    def encode_ghost(self, ghost: tuple, know: tuple, signals: int) -> dict[str, Any]:
        """The ghost history of a peer spec's state as the variables ``sent`` (per peer,
        the sequence of its sends as ``[dests |-> peers, past |-> messages]``), ``logs``
        (per peer, its events, see :meth:`event`), ``know`` (per peer, the messages in its
        causal past) and ``signalsLeft``."""
        sent, logs = ghost
        return {
            "sent": self.per_peer(
                sent, lambda out: tuple({"dests": self.peer_set(d), "past": self.msgs(pm)} for d, pm in out)
            ),
            "logs": self.per_peer(logs, lambda log: tuple(self.event(e) for e in log)),
            "know": self.per_peer(know, self.msgs),
            "signalsLeft": signals,
        }

    def decode_ghost(self, v: dict[str, Any]) -> tuple[tuple, tuple, int]:
        """``(ghost, know, signals_left)`` of the Python state from a decoded TLC state
        (the inverse of :meth:`encode_ghost`)."""
        sent = self.from_peers(
            v["sent"], lambda out: tuple((self.peer_mask(r["dests"]), self.mask(r["past"])) for r in _seq(out))
        )
        logs = self.from_peers(v["logs"], lambda log: tuple(self.event_code(e) for e in _seq(log)))
        know = self.from_peers(v["know"], self.mask)
        return (sent, logs), know, v["signalsLeft"]


def _seq(value: Any) -> tuple:
    """A decoded TLC sequence as a tuple: TLC prints some sequences as functions from
    ``1..n`` (a dict here), read in index order."""
    if isinstance(value, dict):
        return tuple(value[k] for k in sorted(value))
    return tuple(value)


SAFE_NAME = re.compile(r"[^A-Za-z0-9_]")


def module_name(stem: str) -> str:
    """A TLA+ module name from a model file's stem: ``bus1-2`` -> ``bus1_2``."""
    name = SAFE_NAME.sub("_", stem)
    return name if name[:1].isalpha() else "M_" + name

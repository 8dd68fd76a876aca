"""The adapter base classes: the general contract, and the ghost history of PeerSpecs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from checker import Spec
from specs.history import DELIVER, DROP, KIND_NAMES, SEND, SIGNAL_IN, SIGNAL_OUT, decode_event, encode_event
from tla.values import ModelValue, tla


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
    """

    name: str
    kind: str
    predicate: str
    checked: str

    @property
    def temporal(self) -> bool:
        return self.kind == "eventually"


class Adapter:
    """Subclasses set ``template`` and ``variables`` and implement the codec."""

    template: ClassVar[str] = ""
    variables: ClassVar[tuple[str, ...]] = ()
    predicates: ClassVar[dict[str, str]] = {}  # property name -> TLA+ predicate, when not camel(name)
    actions: ClassVar[dict[str, str]] = {}
    """Action label name -> the TLA+ action of one peer ``p`` that mirrors it."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec

    @classmethod
    def refuse(cls, spec: Spec) -> tuple[str, str] | None:
        """``(constant, why)`` when the template does not cover this configuration of the
        spec (a constant value it does not mirror); ``None`` (the default) when it does."""
        return None

    # -- what the template gets ---------------------------------------------------------

    def exported_properties(self) -> list[ExportedProperty]:
        """Every property of the spec, with its TLA+ names."""
        out = []
        for prop in self.spec.properties():
            pred = self.predicates.get(prop.name, camel(prop.name))
            if prop.kind == "sometimes":
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
        """The spec's fairness (:attr:`checker.Spec.fairness`) as per-peer TLA+ conditions."""
        out = []
        for label, kind in sorted(self.spec.fairness.items()):
            formula = self.actions.get(label)
            if formula is None:
                raise ValueError(f"{self.spec.name}: fairness names action {label!r}, which the TLA+ adapter does not map")
            out.append({"label": label, "kind": kind, "formula": formula, "prefix": "SF" if kind == "strong" else "WF"})
        return out

    def symmetry(self) -> tuple[bool, str]:
        """Whether permuting the peers is a symmetry of this model, and why (not)."""
        return False, "this spec declares no symmetry"

    # -- states both ways -----------------------------------------------------------------

    def encode(self, state: Any) -> dict[str, Any]:
        """A Python state as TLA+ values (see :mod:`tla.values`), by variable."""
        raise NotImplementedError

    def decode(self, values: dict[str, Any]) -> Any:
        """A TLC state (variable -> parsed value) as the Python state."""
        raise NotImplementedError

    def encode_text(self, state: Any) -> dict[str, str]:
        """A Python state as TLA+ expressions, by variable."""
        return {k: tla(v) for k, v in self.encode(state).items()}


_KIND_CODES = {name: code for code, name in KIND_NAMES.items()}


class PeerAdapter(Adapter):
    """For specs built on ``specs.base.PeerSpec``: peers as model values, messages as
    ``<<peer, k>>``, and the ghost ``sent``, ``logs``, ``know``, ``signalsLeft``."""

    def __init__(self, spec: Spec) -> None:
        super().__init__(spec)
        self.names: tuple[str, ...] = spec.names  # type: ignore[attr-defined]
        self.stride: int = spec.stride  # type: ignore[attr-defined]
        self.peers = tuple(ModelValue(n) for n in self.names)
        self.ids = {p: i for i, p in enumerate(self.peers)}

    # -- template ---------------------------------------------------------------------

    def context(self) -> dict[str, Any]:
        spec = self.spec
        script = None
        if spec.plan is not None:  # type: ignore[attr-defined]
            script = [
                (self.names[p], [self._set_text(mask) for mask in masks])
                for p, masks in enumerate(spec.plan)  # type: ignore[attr-defined]
                if masks
            ]
        return {"peers": list(self.names), "script": script, "destinations": spec.destinations}  # type: ignore[attr-defined]

    def _set_text(self, mask: int) -> str:
        return "{" + ", ".join(self.names[i] for i in range(len(self.names)) if mask >> i & 1) + "}"

    def cfg_constants(self) -> list[tuple[str, str]]:
        peers = [(n, n) for n in self.names]
        return [*peers, ("Sends", str(self.spec.sends)), ("Signals", str(self.spec.signals))]  # type: ignore[attr-defined]

    # -- pieces of the codec ------------------------------------------------------------

    def msg(self, mid: int) -> tuple[ModelValue, int]:
        return (self.peers[mid // self.stride], mid % self.stride + 1)

    def mid(self, msg: tuple[ModelValue, int]) -> int:
        return self.ids[msg[0]] * self.stride + msg[1] - 1

    def msgs(self, mask: int) -> frozenset:
        return frozenset(self.msg(i) for i in range(mask.bit_length()) if mask >> i & 1)

    def mask(self, msgs: frozenset) -> int:
        out = 0
        for m in msgs:
            out |= 1 << self.mid(m)
        return out

    def peer_set(self, mask: int) -> frozenset:
        return frozenset(self.peers[i] for i in range(len(self.peers)) if mask >> i & 1)

    def peer_mask(self, peers: frozenset) -> int:
        out = 0
        for p in peers:
            out |= 1 << self.ids[p]
        return out

    def per_peer(self, items: tuple, fn: Any) -> dict[ModelValue, Any]:
        return {self.peers[i]: fn(x) for i, x in enumerate(items)}

    def from_peers(self, func: dict, fn: Any) -> tuple:
        return tuple(fn(func[p]) for p in self.peers)

    def event(self, code: int) -> dict[str, Any]:
        ev = decode_event(code)
        if ev.kind in (SEND, DELIVER, DROP):
            arg: Any = self.msg(ev.arg)
        elif ev.kind in (SIGNAL_OUT, SIGNAL_IN):
            arg = self.peers[ev.arg]
        else:
            raise ValueError(f"no TLA+ form for the {KIND_NAMES[ev.kind]} event yet")
        return {"kind": KIND_NAMES[ev.kind], "arg": arg}

    def event_code(self, ev: dict[str, Any]) -> int:
        kind = _KIND_CODES[ev["kind"]]
        arg = ev["arg"]
        return encode_event(kind, self.ids[arg] if isinstance(arg, ModelValue) else self.mid(arg))

    def encode_ghost(self, ghost: tuple, know: tuple, signals: int) -> dict[str, Any]:
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
        sent = self.from_peers(
            v["sent"], lambda out: tuple((self.peer_mask(r["dests"]), self.mask(r["past"])) for r in _seq(out))
        )
        logs = self.from_peers(v["logs"], lambda log: tuple(self.event_code(e) for e in _seq(log)))
        know = self.from_peers(v["know"], self.mask)
        return (sent, logs), know, v["signalsLeft"]


def _seq(value: Any) -> tuple:
    """A TLC sequence; TLC prints an empty function for some empty sequences."""
    if isinstance(value, dict):
        return tuple(value[k] for k in sorted(value))
    return tuple(value)


SAFE_NAME = re.compile(r"[^A-Za-z0-9_]")


def module_name(stem: str) -> str:
    """A TLA+ module name from a model file's stem: ``bus1-2`` -> ``bus1_2``."""
    name = SAFE_NAME.sub("_", stem)
    return name if name[:1].isalpha() else "M_" + name

"""Channel faults are opt-in: a model asks for a channel's behaviour, and a spec says
which faults its protocol tolerates and which it may be shown to break under.

Two sides, two names. A model file asks for a channel behaviour through a constant
that marks the fault it asks for (:attr:`ordercheck.checker.api.spec.Constant.fault`):
:func:`ordercheck.specs.channels.channel_constants` marks ``lossy = true`` (``"loss"``),
``duplicates = N`` (``"duplication"``) and ``channel = "unordered"``
(``"reordering"``). A spec class states what its protocol does with each fault:
:attr:`~ordercheck.checker.api.spec.Spec.tolerates` lists the faults it is meant to handle,
:attr:`~ordercheck.checker.api.spec.Spec.breaks_under` those it is not but that a model may
still ask for, to show what happens. A fault in neither is refused: a spec built on
a base that offers every fault, but whose own steps never expect a copy of a message,
would otherwise accept ``duplicates = 1`` and report the copy's second delivery as an
ordering violation nobody asked about.

The spelling these replace, one ``faults`` set that read as a claim and was also the
permission to model a fault, is refused by :func:`declaration_errors` with a line
naming the two new attributes.
"""

from __future__ import annotations

from typing import Any

from ordercheck.checker.api.spec import Constant, Spec

FAULTS: dict[str, str] = {
    "loss": "a message in transit may vanish",
    "duplication": "a message in transit may be copied",
    "reordering": "messages on one channel may be taken out of send order",
}
"""The channel faults a spec may declare, with what each means."""

GUIDE = "docs/howto/channels-and-faults.md"


def asks_for(const: Constant, value: Any) -> bool:
    """Whether ``value`` of ``const`` asks for its fault."""
    if not const.fault:
        return False
    if const.fault_values:
        return value in const.fault_values
    return bool(value)


def declared(cls: type[Spec]) -> frozenset[str]:
    """Every fault a model of ``cls`` may ask for: those it tolerates and those it breaks under."""
    return frozenset(cls.tolerates) | frozenset(cls.breaks_under)


def declaration_errors(cls: type[Spec]) -> str | None:
    """What is wrong with ``cls``'s fault declarations, as one sentence; ``None`` when
    nothing is: the old ``faults`` attribute, a name that is no fault (a typo), or a
    fault both tolerated and broken under."""
    old = next((klass for klass in cls.__mro__ if "faults" in vars(klass)), None)
    if old is not None:
        value = vars(old)["faults"]
        shown = _set(value) if isinstance(value, (set, frozenset, list, tuple)) else repr(value)
        return (
            f"{cls.name} declares faults = {shown} (in {old.__qualname__}), a spelling no longer read: write "
            f"tolerates = {{...}} for the faults its protocol handles and breaks_under = {{...}} for those a model "
            f"may ask for to show it fails (see {GUIDE})"
        )
    for attr in ("tolerates", "breaks_under"):
        unknown = sorted(set(getattr(cls, attr)) - set(FAULTS))
        if unknown:
            return f"{cls.name} declares unknown faults {unknown} in {attr} (known: {', '.join(FAULTS)})"
    both = sorted(frozenset(cls.tolerates) & frozenset(cls.breaks_under))
    if both:
        return f"{cls.name} declares {_set(both)} both in tolerates and in breaks_under; a fault is one or the other"
    return None


def undeclared(spec: Spec) -> tuple[Constant, str] | None:
    """The first constant of ``spec`` whose value asks for a fault the spec neither
    tolerates nor breaks under, with the refusal to print; ``None`` when every fault
    asked for is declared."""
    allowed = declared(type(spec))
    for const in spec.constants:
        value = spec.values.get(const.name)
        if asks_for(const, value) and const.fault not in allowed:
            shown = _toml(value)
            default = " (the spec's default)" if value == const.default else ""
            return const, (
                f"= {shown}{default} asks for message {const.fault} ({FAULTS.get(const.fault, '?')}), which spec "
                f"{spec.name} does not model (it tolerates: {_set(spec.tolerates)}; breaks under: "
                f"{_set(spec.breaks_under)}); leave the constant out, or declare it in the spec class: "
                f"tolerates = {{..., \"{const.fault}\"}} if its steps handle it, breaks_under = {{..., \"{const.fault}\"}} "
                f"to show what it does then (see {GUIDE})"
            )
    return None


def _set(names: object) -> str:
    items = sorted(str(n) for n in names)  # type: ignore[attr-defined]
    return "{" + ", ".join(f'"{n}"' for n in items) + "}" if items else "none"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)

"""Channel faults are opt-in: a spec declares the ones it models, and a model asking for
another is refused.

A constant marks the fault it asks for (:attr:`checker.api.spec.Constant.fault`):
:func:`specs.channels.channel_constants` marks ``lossy`` (``"loss"``), ``duplicates``
(``"duplication"``) and ``channel = "unordered"`` (``"reordering"``). A spec lists what
it handles in :attr:`checker.api.spec.Spec.faults`. A spec built on a base that offers every
fault, but whose own steps never expect a copy of a message, would otherwise accept
``duplicates = 1`` and report the copy's second delivery as an ordering violation.
"""

from __future__ import annotations

from typing import Any

from checker.api.spec import Constant, Spec

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


def unknown_faults(cls: type[Spec]) -> list[str]:
    """The names in ``cls.faults`` that are not faults (a typo in a declaration)."""
    return sorted(set(cls.faults) - set(FAULTS))


def undeclared(spec: Spec) -> tuple[Constant, str] | None:
    """The first constant of ``spec`` whose value asks for a fault the spec does not
    declare, with the refusal to print; ``None`` when every fault asked for is declared."""
    declared = frozenset(spec.faults)
    for const in spec.constants:
        value = spec.values.get(const.name)
        if asks_for(const, value) and const.fault not in declared:
            have = ", ".join(sorted(declared)) or "none"
            shown = _toml(value)
            default = " (the spec's default)" if value == const.default else ""
            return const, (
                f"= {shown}{default} asks for message {const.fault} ({FAULTS.get(const.fault, '?')}), which spec "
                f"{spec.name} does not model (its faults: {have}); leave the constant out, or, if the spec's steps "
                f"handle it, declare faults = {{..., \"{const.fault}\"}} in the spec class (see {GUIDE})"
            )
    return None


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)

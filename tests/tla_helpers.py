"""Reading exported states back as TLC would print them, for the round-trip tests."""

from __future__ import annotations

from typing import Any

from ordercheck.tla.values import parse_value


class Reader:
    """:func:`~ordercheck.tla.values.parse_value` over a state's variables, each distinct
    text read once.

    The round-trip tests encode every reachable state, and most of a state's variables
    print as in many other states (about one text in nine is new on the built-in models).
    ``parse_value`` is a function of its text alone, so the value read for a text stands
    for its repeats, and every distinct text is still read."""

    def __init__(self) -> None:
        self._read: dict[str, Any] = {}

    def state(self, text: dict[str, str]) -> dict[str, Any]:
        """The values of one state's variables, ``{variable: TLA+ text}`` read back."""
        out: dict[str, Any] = {}
        for var, value in text.items():
            if value not in self._read:
                self._read[value] = parse_value(value)
            out[var] = self._read[value]
        return out

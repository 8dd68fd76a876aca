"""The TLA+ adapter of :mod:`ordercheck.specs.bss` (template ``bss.tla.j2``)."""

from __future__ import annotations

from typing import Any

from ordercheck.tla.adapters.holdback import HoldBackAdapter, _bool


class BSSAdapter(HoldBackAdapter):
    template = "bss.tla.j2"
    protocol_module = "BSS"

    def algorithm_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        return [
            ("Update", f'"{spec.update}"'),
            ("ConditionA", _bool(spec.condition_a)),
            ("ConditionB", _bool(spec.condition_b)),
        ]


ADAPTER = BSSAdapter

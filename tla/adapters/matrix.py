"""The TLA+ adapter of :mod:`ordercheck.specs.matrix` (template ``matrix.tla.j2``)."""

from __future__ import annotations

from typing import Any

from ordercheck.tla.adapters.holdback import HoldBackAdapter, _bool


class MatrixAdapter(HoldBackAdapter):
    template = "matrix.tla.j2"
    protocol_module = "MatrixClocks"

    def algorithm_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        return [("CheckOthers", _bool(spec.check_others)), ("CheckSender", _bool(spec.check_sender))]


ADAPTER = MatrixAdapter

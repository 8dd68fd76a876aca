"""The TLA+ adapter of :mod:`ordercheck.specs.ses` (template ``ses.tla.j2``)."""

from __future__ import annotations

from typing import Any

from ordercheck.tla.adapters.holdback import HoldBackAdapter, _bool


class SESAdapter(HoldBackAdapter):
    template = "ses.tla.j2"
    protocol_module = "SES"

    def algorithm_constants(self) -> list[tuple[str, str]]:
        spec: Any = self.spec
        return [
            ("BufferTest", f'"{spec.buffer_test}"'),
            ("CheckBuffer", _bool(spec.check_buffer)),
            ("MergeBuffer", _bool(spec.merge_buffer)),
        ]


ADAPTER = SESAdapter

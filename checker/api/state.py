"""What a spec's states and action labels are (re-exported by :mod:`ordercheck.checker.api.spec`
and :mod:`ordercheck.checker`)."""

from __future__ import annotations

from collections.abc import Hashable

State = Hashable
"""A state: an immutable value of ints, bools and tuples."""

Action = tuple
"""An action label: ``(name, arg, ...)`` with int or str arguments; shown in traces."""

"""Exceptions raised inside a spec: the report (:class:`SpecRaised`) and the tag a spec
base puts on an exception to name the action it was computing (:func:`tag_action`).

The engine finds the state such an exception was raised on
(:mod:`checker.engine.diagnose`); the command line prints :meth:`SpecRaised.line` and
exits with :data:`~checker.api.result.EXIT_SPEC` (5).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path

ACTION_ATTRIBUTE = "ordercheck_action"
"""The attribute :func:`tag_action` sets on an exception: the label being computed."""


class SpecRaised(Exception):
    """A spec's code raised an exception. ``line()`` is the one line the command line
    prints: the model, the spec, the exception, the hook and action, and the shortest
    trace to the state the action was taken from."""

    def __init__(
        self,
        model: str,
        spec: str,
        error: str,
        hook: str,
        label: str | None,
        trace: Sequence[str] | None,
        where: str | None = None,
    ) -> None:
        self.model = model
        self.spec = spec
        self.error = error
        self.hook = hook
        self.label = label
        self.trace = list(trace) if trace is not None else None
        self.where = where
        super().__init__(self.line())

    def line(self) -> str:
        at = f" at {self.where}" if self.where else ""
        what = f"in action {self.label} ({self.hook})" if self.label else f"in {self.hook}"
        if self.trace is None:
            path = "; the state was not found again (search it with `ordercheck simulate`)"
        elif not self.trace:
            path = ", taken from an initial state"
        else:
            n = len(self.trace)
            path = f", taken from the state after {n} step{'s' if n != 1 else ''}: " + "; ".join(self.trace)
        return f"{self.model}: spec {self.spec} raised {self.error}{at} {what}{path}"


def tag_action(exc: BaseException, label: tuple) -> BaseException:
    """Record on ``exc`` (once: the innermost label wins) the label of the action whose
    successor was being computed when it was raised; returns ``exc``.

    A spec base calls it in an ``except`` clause around a hook, then re-raises::

        try:
            after = self.on_send(state, p, mid, dmask)
        except Exception as exc:
            tag_action(exc, ("send", p, mid, dmask))
            raise
    """
    if getattr(exc, ACTION_ATTRIBUTE, None) is None:
        try:
            setattr(exc, ACTION_ATTRIBUTE, tuple(label))
        except (AttributeError, TypeError):  # an exception type that takes no attributes
            pass
    return exc


def source_of(cls: type) -> Path | None:
    """The file that defines ``cls``, or ``None``."""
    try:
        found = inspect.getsourcefile(cls)
    except (TypeError, OSError):
        return None
    return Path(found).resolve() if found else None

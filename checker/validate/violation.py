"""Compatibility: :class:`Violation` lives in :mod:`checker.monitors.violation`."""

from checker.monitors.violation import Violation, chain

__all__ = ["Violation", "chain"]

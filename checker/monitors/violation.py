"""What a property check finds in a log: the first violation and the events that show it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ordercheck.checker.monitors.log import Log


@dataclass(frozen=True)
class Violation:
    """The first violation of a property in a log.

    ``at`` is the event at which the log's prefix first breaks the property (so every
    shorter prefix satisfies it). ``events`` is the window: the few events that show
    the violation on their own (in log order), ``at`` among them; the log made of them
    alone breaks the property too. ``offending`` are the deliveries a diagram
    highlights and ``missing`` the ``(message, peer)`` pairs whose absence is the
    point (a predecessor not yet delivered). ``sentence`` says what went wrong, naming
    peers, messages and the log's line numbers.
    """

    prop: str
    at: int
    sentence: str
    events: tuple[int, ...]
    offending: tuple[int, ...] = ()
    missing: tuple[tuple[int, int], ...] = ()

    def line(self, log: Log) -> int:
        """The source line of the event at which the property breaks."""
        return log.line[self.at]

    def to_json(self, log: Log) -> dict[str, Any]:
        """A JSON record: the property, the line, the sentence and the window's lines
        (for a merged log, each with its ``file`` too)."""
        if log.origin:
            files = log.sources
            return {
                "property": self.prop, "event": self.at, "file": files[log.origin[self.at]],
                "line": log.line[self.at], "explanation": self.sentence,
                "window": [{"file": files[log.origin[i]], "line": log.line[i], "event": log.describe(i)}
                           for i in self.events],
            }
        return {
            "property": self.prop,
            "event": self.at,
            "line": log.line[self.at],
            "explanation": self.sentence,
            "window": [{"line": log.line[i], "event": log.describe(i)} for i in self.events],
        }


def place(log: Log, i: int) -> str:
    """`` (line 12)``: where event ``i`` stands in the source, to follow a mention of it
    in a sentence; empty for a log with no places (a model's history)."""
    at = log.at(i)
    return f" ({at})" if at else ""


def noun(log: Log) -> str:
    """What a sentence calls the log: ``run`` for a model's history, else ``log``."""
    return "run" if log.fmt == "history" else "log"


def chain(log: Log, events: list[int]) -> str:
    """Events in words with their lines, joined by commas."""
    return ", ".join(log.where(i) for i in events)

"""What changed between two described states, for the step lists of a report.

A described state (``Rendering.describe``) is nested JSON: tables of tables of values. It
is flattened to ``path -> value`` (``peers.b.queue -> ["a1@2"]``), and two flattened
states are compared path by path, so a change inside a table (a map) names the key that
changed. A list of scalars (a queue, a vector clock) is one value, shown whole, as its
order matters; a list of tables is a bag of records (the messages ``in_transit``, a
hold-back buffer), and its change is the records that came and went
(:attr:`Change.gained`, :attr:`Change.lost`), not the whole bag rewritten.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

MISSING = object()


@dataclass(frozen=True)
class Change:
    """One path whose value differs: ``before`` or ``after`` is ``None`` when the path
    is new or gone (see ``added``/``removed``). For a bag of records (a list of tables
    both before and after) ``gained`` and ``lost`` are the records that came and went,
    each shown alone (a record held twice and now once is lost once); ``before`` and
    ``after`` still hold the whole bags."""

    path: str
    before: str | None
    after: str | None
    gained: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()

    @property
    def added(self) -> bool:
        return self.before is None

    @property
    def removed(self) -> bool:
        return self.after is None

    @property
    def items(self) -> bool:
        """Whether the change is shown record by record (``gained``/``lost``)."""
        return bool(self.gained or self.lost)

    def brief(self, cut: Any = str) -> str:
        """The change in one line (``cut`` shortens each value): ``before → after``,
        ``+record, −record`` for a bag, ``VALUE (new)``, ``gone``."""
        if self.items:
            return ", ".join([*(f"+{cut(g)}" for g in self.gained), *(f"−{cut(x)}" for x in self.lost)])
        if self.added:
            return f"{cut(self.after)} (new)"
        if self.removed:
            return "gone"
        return f"{cut(self.before)} → {cut(self.after)}"


def is_bag(value: Any) -> bool:
    """A non-empty list of tables, or an empty list (which may be one)."""
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


def bag_change(before: list[Any], after: list[Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The records of ``after`` not in ``before`` and those of ``before`` not in
    ``after``, counted as multisets, each in its bag's order."""
    def key(v: Any) -> str:
        return json.dumps(v, sort_keys=True)

    old, new = Counter(key(v) for v in before), Counter(key(v) for v in after)
    more, fewer = new - old, old - new
    gained, lost = [], []
    for v in after:
        if more[key(v)] > 0:
            more[key(v)] -= 1
            gained.append(show(v))
    for v in before:
        if fewer[key(v)] > 0:
            fewer[key(v)] -= 1
            lost.append(show(v))
    return tuple(gained), tuple(lost)


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested tables as ``dotted.path -> leaf``; an empty table is a leaf ``{}``."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for key, sub in value.items():
            out.update(flatten(sub, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix or "(state)": value}


def show(value: Any) -> str:
    """A compact reading of a leaf value: lists as ``[a1, b1]``, ``None`` as a dash."""
    if value is None:
        return "—"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {show(v)}" for k, v in value.items()) + "}"
    return str(value)


def diff(before: dict[str, Any] | None, after: dict[str, Any]) -> list[Change]:
    """The changes from ``before`` to ``after``, in ``after``'s path order (then gone
    paths). With ``before`` ``None`` every path of ``after`` is new."""
    old = flatten(before) if before is not None else {}
    new = flatten(after)
    out = []
    for path, value in new.items():
        prev = old.get(path, MISSING)
        if prev is MISSING:
            out.append(Change(path, None, show(value)))
        elif prev != value:
            if is_bag(prev) and is_bag(value) and (prev or value):
                out.append(Change(path, show(prev), show(value), *bag_change(prev, value)))
            else:
                out.append(Change(path, show(prev), show(value)))
    for path, value in old.items():
        if path not in new and not (value == {} and any(p.startswith(path + ".") for p in new)):
            out.append(Change(path, show(value), None))
    return [c for c in out if not (c.added and c.after == "{}" and any(p.startswith(c.path + ".") for p in old))]


def step_lines(steps: list[Any], most: int = 3, width: int = 48) -> list[str]:
    """A trace as numbered lines for a log (the console, a JUnit body): each step's
    number and action, and below it what the step changed in the described state, as
    the report's step list shows it (at most ``most`` changes, each value cut to
    ``width`` characters; ``+N more`` for the rest; no line for a step that changed
    nothing described). ``steps`` are :class:`ordercheck.checker.api.result.Step` values."""

    def cut(text: str | None) -> str:
        text = "—" if text is None else text
        return text if len(text) <= width else text[: width - 1] + "…"

    out = []
    prev = None
    for i, step in enumerate(steps):
        out.append(f"{i:>3}. {step.action or 'initial state'}")
        if prev is not None:
            changes = diff(prev, step.state)
            shown = [f"{c.path}: {c.brief(cut)}" for c in changes[:most]]
            if len(changes) > most:
                shown.append(f"+{len(changes) - most} more")
            if shown:
                out.append("       " + "; ".join(shown))
        prev = step.state
    return out

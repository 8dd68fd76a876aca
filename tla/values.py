"""TLA+ values in Python: reading TLC's printed values and writing TLA+ expressions.

TLC prints a state as ``/\\ var = value`` lines. Values are integers, strings,
booleans, model values (bare names), sequences ``<<...>>``, sets ``{...}``, records
``[f |-> v, ...]`` and functions ``(a :> 1 @@ b :> 2)``. :func:`parse_value` turns one
into Python: ``int``, ``str``, ``bool``, :class:`ModelValue`, ``tuple`` (sequences),
``frozenset`` (sets) and ``dict`` (records by field name, functions by argument).
:func:`tla` writes the same Python values back as TLA+ text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, order=True)
class ModelValue:
    """A TLC model value such as a peer ``a``."""

    name: str

    def __str__(self) -> str:
        return self.name


class ValueSyntaxError(ValueError):
    """Text that is not a TLC value."""


_TOKEN = re.compile(
    r"""\s*(?:
        (-?\d+)                          # 1: an integer
      | ("(?:[^"\\]|\\.)*")              # 2: a string
      | (<<|>>|\|->|:>|@@|[{}\[\](),])   # 3: punctuation
      | ([A-Za-z_][A-Za-z0-9_]*)         # 4: a name
      | (\S)                             # 5: anything else, which no value holds
    )""",
    re.VERBOSE,
)
_BOOLEANS = {"TRUE": True, "FALSE": False}
_CLOSING = {"<<": ">>", "{": "}"}


def parse_value(text: str) -> Any:
    """One TLC value from its printed form."""
    # One regular-expression pass cuts the text into tokens, each a tuple of the five
    # groups above with exactly one non-empty; a recursive descent reads them.
    toks: list[tuple[str, str, str, str, str]] = _TOKEN.findall(text)
    n = len(toks)

    def fail(message: str) -> ValueSyntaxError:
        # A character no value holds is the better message, wherever the parse stopped.
        for m in _TOKEN.finditer(text):
            if m.group(5):
                return ValueSyntaxError(f"cannot read a TLA+ value at {text[m.start(5):m.start(5) + 30]!r}")
        return ValueSyntaxError(message)

    def expect(i: int, what: str) -> int:
        if i >= n or toks[i][2] != what:
            raise fail(f"expected {what!r}, got {_shown(toks[i]) if i < n else 'the end'!r}")
        return i + 1

    def value(i: int) -> tuple[Any, int]:
        if i >= n:
            raise fail("a value ends too early")
        number, string, op, name, _ = toks[i]
        if number:
            return int(number), i + 1
        if name:
            boolean = _BOOLEANS.get(name)
            return (ModelValue(name) if boolean is None else boolean), i + 1
        if string:
            return bytes(string[1:-1], "utf-8").decode("unicode_escape"), i + 1
        if op in _CLOSING:  # a sequence or a set
            close = _CLOSING[op]
            items: list[Any] = []
            i += 1
            if i < n and toks[i][2] == close:
                i += 1
            else:
                while True:
                    item, i = value(i)
                    items.append(item)
                    if i < n and toks[i][2] == ",":
                        i += 1
                        continue
                    i = expect(i, close)
                    break
            return (tuple(items) if op == "<<" else frozenset(items)), i
        if op == "[":
            record: dict[Any, Any] = {}
            i += 1
            if i < n and toks[i][2] == "]":
                return record, i + 1
            while True:
                if i >= n or not toks[i][3]:
                    raise fail("expected a record field name")
                field = toks[i][3]
                i = expect(i + 1, "|->")
                record[field], i = value(i)
                if i < n and toks[i][2] == ",":
                    i += 1
                    continue
                return record, expect(i, "]")
        if op == "(":
            func: dict[Any, Any] = {}
            i += 1
            while True:
                key, i = value(i)
                i = expect(i, ":>")
                func[key], i = value(i)
                if i < n and toks[i][2] == "@@":
                    i += 1
                    continue
                return func, expect(i, ")")
        raise fail(f"unexpected {_shown(toks[i])!r}")

    result, i = value(0)
    if i != n:
        raise fail(f"unexpected {_shown(toks[i])!r} after a complete value in {text[:60]!r}")
    return result


def _shown(token: tuple[str, ...]) -> str:
    """A token's text (its one non-empty group)."""
    return next(group for group in token if group)


def tla(value: Any) -> str:
    """A Python value as a TLA+ expression (the inverse of :func:`parse_value`)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, ModelValue):
        return value.name
    if isinstance(value, tuple):
        return "<<" + ", ".join(tla(v) for v in value) + ">>"
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(tla(v) for v in value)) + "}"
    if isinstance(value, dict):
        if not value:
            return "<<>>"
        if all(isinstance(k, str) for k in value):
            return "[" + ", ".join(f"{k} |-> {tla(v)}" for k, v in value.items()) + "]"
        return "(" + " @@ ".join(f"{tla(k)} :> {tla(v)}" for k, v in value.items()) + ")"
    raise TypeError(f"no TLA+ form for {type(value).__name__} {value!r}")

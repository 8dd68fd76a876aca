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
        (?P<num>-?\d+)
      | (?P<str>"(?:[^"\\]|\\.)*")
      | (?P<op><<|>>|\|->|:>|@@|[{}\[\](),])
      | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    )""",
    re.VERBOSE,
)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueSyntaxError(f"cannot read a TLA+ value at {text[pos:pos + 30]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


def parse_value(text: str) -> Any:
    """One TLC value from its printed form."""
    toks = _tokens(text)
    value, i = _parse(toks, 0)
    if i != len(toks):
        raise ValueSyntaxError(f"unexpected {toks[i][1]!r} after a complete value in {text[:60]!r}")
    return value


def _expect(toks: list[tuple[str, str]], i: int, what: str) -> int:
    if i >= len(toks) or toks[i][1] != what:
        got = toks[i][1] if i < len(toks) else "the end"
        raise ValueSyntaxError(f"expected {what!r}, got {got!r}")
    return i + 1


def _items(toks: list[tuple[str, str]], i: int, close: str) -> tuple[list[Any], int]:
    items: list[Any] = []
    if i < len(toks) and toks[i][1] == close:
        return items, i + 1
    while True:
        value, i = _parse(toks, i)
        items.append(value)
        if i < len(toks) and toks[i][1] == ",":
            i += 1
            continue
        return items, _expect(toks, i, close)


def _parse(toks: list[tuple[str, str]], i: int) -> tuple[Any, int]:
    if i >= len(toks):
        raise ValueSyntaxError("a value ends too early")
    kind, text = toks[i]
    if kind == "num":
        return int(text), i + 1
    if kind == "str":
        return bytes(text[1:-1], "utf-8").decode("unicode_escape"), i + 1
    if kind == "name":
        if text in ("TRUE", "FALSE"):
            return text == "TRUE", i + 1
        return ModelValue(text), i + 1
    if text == "<<":
        items, i = _items(toks, i + 1, ">>")
        return tuple(items), i
    if text == "{":
        items, i = _items(toks, i + 1, "}")
        return frozenset(items), i
    if text == "[":
        record: dict[Any, Any] = {}
        i += 1
        if i < len(toks) and toks[i][1] == "]":
            return record, i + 1
        while True:
            if i >= len(toks) or toks[i][0] != "name":
                raise ValueSyntaxError("expected a record field name")
            field = toks[i][1]
            i = _expect(toks, i + 1, "|->")
            record[field], i = _parse(toks, i)
            if i < len(toks) and toks[i][1] == ",":
                i += 1
                continue
            return record, _expect(toks, i, "]")
    if text == "(":
        func: dict[Any, Any] = {}
        i += 1
        while True:
            key, i = _parse(toks, i)
            i = _expect(toks, i, ":>")
            func[key], i = _parse(toks, i)
            if i < len(toks) and toks[i][1] == "@@":
                i += 1
                continue
            return func, _expect(toks, i, ")")
    raise ValueSyntaxError(f"unexpected {text!r}")


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

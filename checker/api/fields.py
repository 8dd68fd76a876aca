"""Named fields for state tuples: read and update by name, store plain tuples.

A state (or one peer's part of it) is a tuple, so that its fingerprint is the same in
every process and on every machine (:mod:`ordercheck.checker.engine.fingerprint`). Keeping track of what
``local[3]`` means is error-prone; :class:`Fields` names the positions once::

    LOCAL = Fields("holder", "next_seq", "expected")

    local = LOCAL.new(holder=0, next_seq=0, expected=(0, 0, 0))   # a plain tuple
    LOCAL.read(local).holder                                     # 0
    LOCAL.set(local, next_seq=1)                                 # (0, 1, (0, 0, 0))
    state[LOCAL.holder]                                          # the position: 0

What is stored is the tuple itself, not a named tuple or an object: its hash, and so its
fingerprint, is that of the tuple form, and the encodings the engines ship states with
(``marshal``, ``pickle``) carry it unchanged. A :class:`Record` (what :meth:`Fields.read`
gives) is a read-only view; it is not a state value, and the engine refuses a state
that holds one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

_METHODS = frozenset({"names", "new", "read", "set", "get", "describe", "index", "values"})


class Fields:
    """Names for the positions of a tuple (see the module docstring)."""

    def __init__(self, *names: str) -> None:
        if not names:
            raise ValueError("Fields needs at least one name")
        for name in names:
            if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
                raise ValueError(f"field name {name!r} is not a plain identifier")
            if name in _METHODS:
                raise ValueError(f"field name {name!r} is taken by a method of Fields or Record; choose another")
        if len(set(names)) != len(names):
            raise ValueError(f"field names repeat: {names}")
        self.names: tuple[str, ...] = tuple(names)
        self.index: dict[str, int] = {n: i for i, n in enumerate(names)}

    def __getattr__(self, name: str) -> int:
        # Only reached for names that are not attributes: a field's position.
        index = self.__dict__.get("index")
        if index is not None and name in index:
            return index[name]
        raise AttributeError(f"no field {name!r} (fields: {', '.join(self.__dict__.get('names', ()))})")

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"Fields({', '.join(repr(n) for n in self.names)})"

    def new(self, **values: Any) -> tuple:
        """The tuple with every field given by name (all of them, no others)."""
        missing = [n for n in self.names if n not in values]
        extra = [n for n in values if n not in self.index]
        if missing or extra:
            raise TypeError(f"Fields.new: missing {missing}, unknown {extra} (fields: {', '.join(self.names)})")
        return tuple(values[n] for n in self.names)

    def read(self, values: tuple) -> Record:
        """A read-only view of ``values`` whose attributes are the fields."""
        self._check(values)
        return Record(self, values)

    def get(self, values: tuple, name: str) -> Any:
        """The field ``name`` of ``values``."""
        return values[self.index[name]]

    def set(self, values: tuple, **changes: Any) -> tuple:
        """``values`` with the named fields replaced (a new plain tuple)."""
        self._check(values)
        out = list(values)
        for name, value in changes.items():
            i = self.index.get(name)
            if i is None:
                raise TypeError(f"Fields.set: no field {name!r} (fields: {', '.join(self.names)})")
            out[i] = value
        return tuple(out)

    def describe(self, values: tuple) -> dict[str, Any]:
        """``values`` as a dict by field name (for :meth:`ordercheck.checker.api.rendering.Rendering.describe`)."""
        self._check(values)
        return dict(zip(self.names, values))

    def _check(self, values: Any) -> None:
        if not isinstance(values, tuple) or len(values) != len(self.names):
            raise TypeError(f"expected a tuple of {len(self.names)} items ({', '.join(self.names)}), got {values!r}")


class Record:
    """A read-only view of a tuple through :class:`Fields` (not itself a state value)."""

    __slots__ = ("_fields", "_values")

    def __init__(self, fields: Fields, values: tuple) -> None:
        object.__setattr__(self, "_fields", fields)
        object.__setattr__(self, "_values", values)

    def __getattr__(self, name: str) -> Any:
        fields: Fields = object.__getattribute__(self, "_fields")
        i = fields.index.get(name)
        if i is None:
            raise AttributeError(f"no field {name!r} (fields: {', '.join(fields.names)})")
        return object.__getattribute__(self, "_values")[i]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a Record is read-only: build the new tuple with Fields.set(values, name=...)")

    def __iter__(self) -> Iterator[Any]:
        return iter(object.__getattribute__(self, "_values"))

    def __repr__(self) -> str:
        fields: Fields = object.__getattribute__(self, "_fields")
        values = object.__getattribute__(self, "_values")
        return "Record(" + ", ".join(f"{n}={v!r}" for n, v in zip(fields.names, values)) + ")"

    @property
    def values(self) -> tuple:
        """The tuple viewed."""
        return object.__getattribute__(self, "_values")

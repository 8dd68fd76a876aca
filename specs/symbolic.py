"""Building blocks for the symbolic (Z3) encodings that sit beside the explicit specs.

A symbolic encoding gives the same protocol as its explicit spec, as formulas over Z3
integers and booleans: a state is a :class:`SymState` (named Z3 constants, one per
variable of a fixed schema), the initial condition a formula over one state, and the
transition relation a list of :class:`SymAction` (a guard over the pre-state and the new
value of each variable it changes). ``ordercheck.checker.symbolic.prove`` runs the queries (initiation,
consecution, implication, bounded model checking) on any encoding made of these parts.

An encoding module ``specs/NAME_symbolic.py`` exports ``SYMBOLIC``: a class built from
the explicit spec instance (``SYMBOLIC(spec, queue_bound=K, bounded=...)``) with

* ``schema``: ``{name: "int" | "bool"}``, the variables of a state;
* ``init(s)``: the initial condition; ``actions()``: the :class:`SymAction` list;
* ``lemmas``: ``{name: (doc, fn)}`` with ``fn(s)`` returning ``[(text, formula), ...]``,
  the conjuncts of the strengthened invariant, each a list of readable clauses;
* ``targets``: the properties the invariant must imply, in the same form;
* ``guarantees`` (optional): ``{property: (target, ...)}``, the explicit spec's
  properties that hold on every run once the invariant is inductive and implies those
  targets, provided the run's queues fit the unbounded encoding's ``queue_bound``;
* ``max_queue()`` (optional): the most entries a queue can hold in a run of the model
  (the bounded encoding's bound), to tell whether ``queue_bound`` covers every run;
* ``properties``: ``{name: (kind, fn)}`` for bounded model checking, named like the
  explicit spec's properties; ``kind`` is ``always``, ``sometimes`` or ``terminal``;
* ``describe(values)`` and ``format_action(label)``: readable states and actions;
* ``encode(state, ...)``: an explicit state as variable values (for the agreement test).

Queues of bounded length are kept as ``K`` slots of records plus a length; slots past
the length hold the field defaults, so that a state has one encoding.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import z3

Key = str | tuple


def key_name(key: Key) -> str:
    """The variable name of a key: ``("clk", 0)`` is ``clk.0``."""
    if isinstance(key, tuple):
        return ".".join(str(k) for k in key)
    return key


class SymState:
    """One symbolic state: a Z3 constant per schema variable, tagged (``s0``, ``s1``...)."""

    def __init__(self, schema: dict[str, str], tag: str) -> None:
        self.schema = schema
        self.tag = tag
        self.vars: dict[str, z3.ExprRef] = {
            name: (z3.Int if kind == "int" else z3.Bool)(f"{name}@{tag}") for name, kind in schema.items()
        }

    def __getitem__(self, key: Key) -> Any:
        return self.vars[key_name(key)]

    def values(self, model: z3.ModelRef) -> dict[str, int | bool]:
        """The concrete value of every variable in ``model`` (defaults when unconstrained)."""
        out: dict[str, int | bool] = {}
        for name, var in self.vars.items():
            val = model.eval(var, model_completion=True)
            out[name] = z3.is_true(val) if self.schema[name] == "bool" else val.as_long()
        return out

    def equals(self, values: dict[str, int | bool]) -> z3.BoolRef:
        """This state equals the given concrete values."""
        return z3.And([self.vars[n] == v for n, v in values.items()])


Updates = dict[str, Any]


@dataclass
class SymAction:
    """One action of the transition relation.

    ``step(s, t)`` returns ``(guard, updates)``: when the action is enabled (a formula
    over the pre-state ``s`` alone) and the new value of each variable it changes, keyed
    by variable name; every other variable keeps its value. An update may read ``t``
    for a nondeterministic choice, which ``choose(s, t)`` constrains.
    ``label(pre, post)`` rebuilds the explicit spec's action label from concrete values.
    """

    name: str
    step: Callable[[SymState, SymState], tuple[Any, Updates]]
    label: Callable[[dict, dict], tuple]
    choose: Callable[[SymState, SymState], z3.BoolRef] | None = None

    def guard(self, s: SymState) -> z3.BoolRef:
        """When the action is enabled in ``s``."""
        return self.step(s, s)[0]

    def relation(self, s: SymState, t: SymState) -> z3.BoolRef:
        """The action as a formula over the pre-state ``s`` and the post-state ``t``."""
        guard, upd = self.step(s, t)
        upd = {key_name(k): v for k, v in upd.items()}
        parts = [guard]
        if self.choose is not None:
            parts.append(self.choose(s, t))
        for name, var in t.vars.items():
            new = upd.get(name, s.vars[name])
            if new is not var:
                parts.append(var == new)
        return z3.And(parts)


def zmax(a: Any, b: Any) -> Any:
    return z3.If(a >= b, a, b)


def lex_less(pairs: Sequence[tuple[Any, Any]]) -> z3.BoolRef:
    """``(a1, a2, ...) < (b1, b2, ...)`` lexicographically, from ``[(a1, b1), ...]``."""
    out: Any = z3.BoolVal(False)
    for a, b in reversed(pairs):
        out = z3.Or(a < b, z3.And(a == b, out))
    return out


def first_member(bits: Sequence[Any], after: int = -1, none: int = -1) -> Any:
    """The lowest index ``i > after`` whose bit is true, else ``none``."""
    out: Any = z3.IntVal(none)
    for i in reversed(range(after + 1, len(bits))):
        out = z3.If(bits[i], i, out)
    return out


class SlotQueue:
    """A bounded queue of records stored in a state as ``prefix.q.i.field`` slots.

    ``fields`` maps a field name to its kind (``"int"`` or ``"bool"``); defaults are
    ``0`` and ``False``. The operations return updates for :class:`SymAction`.
    """

    def __init__(self, prefix: str, fields: dict[str, str], capacity: int) -> None:
        self.prefix = prefix
        self.fields = fields
        self.capacity = capacity

    def schema(self, q: int) -> dict[str, str]:
        out = {key_name((self.prefix, q, "len")): "int"}
        for i in range(self.capacity):
            for f, kind in self.fields.items():
                out[key_name((self.prefix, q, i, f))] = kind
        return out

    def default(self, f: str) -> Any:
        return z3.BoolVal(False) if self.fields[f] == "bool" else z3.IntVal(0)

    def length(self, s: SymState, q: int) -> Any:
        return s[self.prefix, q, "len"]

    def slot(self, s: SymState, q: int, i: int) -> dict[str, Any]:
        return {f: s[self.prefix, q, i, f] for f in self.fields}

    def slots(self, s: SymState, q: int) -> list[dict[str, Any]]:
        return [self.slot(s, q, i) for i in range(self.capacity)]

    def live(self, s: SymState, q: int) -> list[tuple[Any, dict[str, Any]]]:
        """``(is_live, record)`` per slot: slot ``i`` is live when ``i < len``."""
        n = self.length(s, q)
        return [(n > i, self.slot(s, q, i)) for i in range(self.capacity)]

    def init(self, s: SymState, q: int) -> z3.BoolRef:
        parts = [self.length(s, q) == 0]
        for i in range(self.capacity):
            parts += [s[self.prefix, q, i, f] == self.default(f) for f in self.fields]
        return z3.And(parts)

    def _write(self, q: int, recs: list[dict[str, Any]], length: Any) -> Updates:
        out: Updates = {key_name((self.prefix, q, "len")): length}
        for i, rec in enumerate(recs):
            for f in self.fields:
                out[key_name((self.prefix, q, i, f))] = z3.If(length > i, rec[f], self.default(f))
        return out

    def _remove(self, recs: list[dict[str, Any]], length: Any, at: Any) -> tuple[list[dict[str, Any]], Any]:
        out = []
        for i in range(self.capacity):
            later = recs[i + 1] if i + 1 < self.capacity else {f: self.default(f) for f in self.fields}
            out.append({f: z3.If(at > i, recs[i][f], later[f]) for f in self.fields})
        return out, length - 1

    def _insert(self, recs: list[dict[str, Any]], length: Any, at: Any, rec: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for i in range(self.capacity):
            prev = recs[i - 1] if i > 0 else rec
            out.append({f: z3.If(at > i, recs[i][f], z3.If(at == i, rec[f], prev[f])) for f in self.fields})
        return out

    def remove_at(self, s: SymState, q: int, at: int) -> Updates:
        """The updates that take slot ``at`` off queue ``q`` (later slots move up one);
        the caller guards that the slot is live."""
        recs, n = self._remove(self.slots(s, q), self.length(s, q), z3.IntVal(at))
        return self._write(q, recs, n)

    def append(self, s: SymState, q: int, rec: dict[str, Any]) -> tuple[Updates, Any]:
        """The updates that put ``rec`` after every live entry of queue ``q``, and a
        formula saying it fits (the queue is not full)."""
        return self.insert(s, q, rec, lambda _e: z3.BoolVal(True))

    def pop_front(self, s: SymState, q: int) -> Updates:
        recs, n = self._remove(self.slots(s, q), self.length(s, q), z3.IntVal(0))
        return self._write(q, recs, n)

    def insert(
        self,
        s: SymState,
        q: int,
        rec: dict[str, Any],
        before: Callable[[dict[str, Any]], z3.BoolRef],
        remove: Callable[[dict[str, Any]], z3.BoolRef] | None = None,
    ) -> tuple[Updates, Any]:
        """Insert ``rec`` after every live entry for which ``before(entry)`` holds (the
        queue's sort order), first removing the first live entry matching ``remove``.

        Returns the updates and a formula saying the record fits (no slot overflows).
        """
        recs = self.slots(s, q)
        n = self.length(s, q)
        found: Any = z3.BoolVal(False)
        if remove is not None:
            at: Any = z3.IntVal(self.capacity)
            for i in reversed(range(self.capacity)):
                at = z3.If(z3.And(n > i, remove(recs[i])), i, at)
            found = at < n
            shorter, n2 = self._remove(recs, n, at)
            recs = [{f: z3.If(found, a[f], b[f]) for f in self.fields} for a, b in zip(shorter, recs)]
            n = z3.If(found, n2, n)
        pos = z3.Sum([z3.If(z3.And(n > i, before(recs[i])), 1, 0) for i in range(self.capacity)])
        new = self._insert(recs, n, pos, rec)
        return self._write(q, new, n + 1), n < self.capacity


def named_clauses(clauses: list[tuple[str, Any]]) -> z3.BoolRef:
    """The conjunction of a lemma's clauses."""
    return z3.And([c for _t, c in clauses]) if clauses else z3.BoolVal(True)


def all_zero(schema: dict[str, str], s: SymState) -> z3.BoolRef:
    """Every integer variable of ``schema`` 0 and every Boolean false in ``s``: the initial
    condition of an encoding whose processes start with nothing sent, received or
    delivered."""
    parts = [s[v] == 0 for v, kind in schema.items() if kind == "int"]
    parts += [z3.Not(s[v]) for v, kind in schema.items() if kind == "bool"]
    return z3.And(parts)


def target_properties(targets: dict[str, tuple[str, Callable[[SymState], list[tuple[str, Any]]]]]
                      ) -> dict[str, tuple[str, Callable[[SymState], z3.BoolRef]]]:
    """The encoding's targets as ``always`` properties for bounded model checking, keyed
    by the target's name (never by one of the explicit spec's properties: a target is the
    encoding's form of a guarantee, and an abstract encoding's run that breaks it need
    not be a run of the spec). ``bmc_queries(sym, [target], k)`` then unrolls the
    encoding ``k`` steps from ``init`` and looks for a state that breaks the target."""
    return {name: ("always", lambda s, fn=fn: named_clauses(fn(s))) for name, (_doc, fn) in targets.items()}


def selector_transition(actions: Sequence[SymAction], s: SymState, t: SymState) -> z3.BoolRef:
    """``Next`` from ``s`` to ``t`` as one formula per variable: an integer ``action@TAG``
    (``t``'s tag) picks the action, whose guard (and ``choose``) must hold, and each
    variable of ``t`` is the update of the picked action, or its old value when that
    action leaves it. Equivalent to the disjunction of the actions' relations, but
    the frame conditions are not repeated per action, which bounded model checking of
    encodings with many actions and variables solves much faster."""
    sel = z3.Int(f"action@{t.tag}")
    parts = [sel >= 0, sel < len(actions)]
    changes: dict[str, list[tuple[int, Any]]] = {}
    for i, a in enumerate(actions):
        guard, upd = a.step(s, t)
        extra = [guard] if a.choose is None else [guard, a.choose(s, t)]
        parts.append(z3.Implies(sel == i, z3.And(extra)))
        for name, value in upd.items():
            changes.setdefault(key_name(name), []).append((i, value))
    for name, var in t.vars.items():
        value = s.vars[name]
        for i, new in changes.get(name, []):
            value = z3.If(sel == i, new, value)
        parts.append(var == value)
    return z3.And(parts)

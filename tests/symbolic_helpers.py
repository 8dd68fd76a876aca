"""Shared checks of a symbolic encoding against its explicit spec (tests of ``prove``).

``explore`` walks the explicit state space breadth first, carrying each state's encoding
(an encoding's ghosts may depend on the step that reached a state, so a state reached
by two steps is visited once per distinct encoding). ``check_against_spec`` asserts
what makes a proof on the encoding a proof about the spec: every explicit reachable
state's encoding satisfies every lemma, and every explicit step is a step of the
encoding (one of its actions, or a stutter that changes none of its variables).
``by_name`` indexes prove's queries by name.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

import z3

from ordercheck.specs.symbolic import SymState


def by_name(queries: list[Any]) -> dict[str, Any]:
    return {q.name: q for q in queries}


def explore(spec: Any, sym: Any, max_states: int) -> Iterator[tuple[tuple, dict, list[tuple[tuple, tuple, dict]]]]:
    """``(state, values, [(label, next_state, next_values), ...])`` for up to
    ``max_states`` explicit states, breadth first from the initial ones."""
    seen: set[tuple] = set()
    todo: deque[tuple[tuple, dict]] = deque()
    for s in spec.init_states():
        todo.append((s, sym.encode(s)))
    while todo and len(seen) < max_states:
        state, values = todo.popleft()
        key = (state, tuple(sorted(values.items())))
        if key in seen:
            continue
        seen.add(key)
        succ = [(label, nxt, sym.encode(nxt, (state, values, label))) for label, nxt in spec.next_states(state)]
        yield state, values, succ
        todo.extend((nxt, v) for _l, nxt, v in succ)


class Evaluator:
    """Lemmas and action relations of ``sym`` evaluated on concrete values."""

    def __init__(self, sym: Any) -> None:
        self.sym = sym
        self.pre, self.post = SymState(sym.schema, "pre"), SymState(sym.schema, "post")
        self.clauses = [(name, text, f) for name, (_doc, fn) in sym.lemmas.items() for text, f in fn(self.pre)]
        self.hits: dict[str, int] = {}
        self.all = z3.And([f for _n, _t, f in self.clauses])
        self.relations = [(a.name, a.relation(self.pre, self.post)) for a in sym.actions()]

    def _subst(self, formula: z3.ExprRef, states: list[tuple[SymState, dict]]) -> bool:
        """Whether ``formula`` is true with each state's variables replaced by values
        (one native call: the Python wrapper is too slow for hundreds of variables)."""
        ctx = formula.ctx
        pairs = [(var, values[name], self.sym.schema[name]) for state, values in states for name, var in state.vars.items()]
        src = (z3.Ast * len(pairs))()
        dst = (z3.Ast * len(pairs))()
        keep = []
        for i, (var, v, kind) in enumerate(pairs):
            const = z3.BoolVal(v, ctx) if kind == "bool" else z3.IntVal(v, ctx)
            keep.append(const)
            src[i], dst[i] = var.as_ast(), const.as_ast()
        ast = z3.Z3_substitute(ctx.ref(), formula.as_ast(), len(pairs), src, dst)
        return z3.is_true(z3.simplify(z3.BoolRef(ast, ctx)))

    def failing(self, values: dict) -> list[str]:
        """The lemma clauses ``values`` breaks, as ``lemma: text``."""
        if self._subst(self.all, [(self.pre, values)]):
            return []
        return [f"{name}: {text}" for name, text, f in self.clauses if not self._subst(f, [(self.pre, values)])]

    def step_of(self, pre: dict, post: dict) -> str | None:
        """The encoding's action from ``pre`` to ``post`` (``"stutter"`` when they are
        equal), or ``None`` when the encoding has no such step."""
        if pre == post:
            return "stutter"
        for name, rel in sorted(self.relations, key=lambda r: -self.hits.get(r[0], 0)):
            if self._subst(rel, [(self.pre, pre), (self.post, post)]):
                self.hits[name] = self.hits.get(name, 0) + 1
                return name
        return None


def check_against_spec(spec: Any, sym: Any, max_states: int) -> dict[str, int]:
    """Assert that every explored state satisfies the lemmas and every explicit step is
    a step of the encoding; return how many explicit steps each action matched."""
    ev = Evaluator(sym)
    matched: dict[str, int] = {}
    states = 0
    for state, values, succ in explore(spec, sym, max_states):
        states += 1
        bad = ev.failing(values)
        assert not bad, (spec.describe(state), bad)
        for label, _nxt, nvalues in succ:
            name = ev.step_of(values, nvalues)
            assert name is not None, (label, spec.describe(state), values, nvalues)
            matched[name] = matched.get(name, 0) + 1
    assert states >= 10, states
    return matched

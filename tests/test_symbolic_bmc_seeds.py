"""Bounded model checking of the seed protocols' encodings against the explicit engine.

The seed encodings (BSS, matrix, sequencer, Skeen, Lamport, SES, synchronous) are
abstractions: every explicit step is one of their steps or a stutter (receiving into a
hold-back buffer, a loss, a signal change none of their variables), but they choose the
message a peer delivers (or the number, the timestamp a peer proposes...) freely, so
they also have runs no explicit run maps to. ``bmc_queries`` unrolls an encoding's
initial condition ``k`` steps and looks for a state that breaks one of its targets
(``target_properties``). What that can agree on with the explicit engine:

* **correct models**: the explicit engine finds no counterexample to depth ``k``, and
  BMC finds no state within ``k`` steps that breaks a target. Sound for the spec, by
  simulation: an explicit run of ``k`` steps maps to an encoding run of at most ``k``.
* **mutants**: the explicit engine's shortest counterexample to the ordering property
  (``L`` steps) is replayed through the encoding; it is a run of the encoding whose
  target first breaks after ``i <= L`` explicit steps, ``j <= i`` of them encoding steps
  (the rest are stutters). BMC, which finds a shortest violation of the encoding, must
  then find one at depth ``d <= j``. Equality is not expected: ``d < j`` is a run of the
  abstraction that delivers a message never sent, or numbers one nobody sent (the table
  in docs/explanation/proofs.md gives each number and why).

Equal lengths (``d = L``) are tests/test_symbolic_exact.py's, on the step-exact encodings.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest
import z3

from ordercheck.checker.api.trace import replay
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.symbolic.encodings import encoding_class
from ordercheck.checker.symbolic.prove import bmc_queries
from ordercheck.specs.symbolic import SymState, named_clauses
from tests.symbolic_helpers import Evaluator, by_name


def encoded_trace(m: Any, prop: str, watch: tuple[int, int] | None = None) -> tuple[Any, int, list[tuple[int, int, dict]]]:
    """The explicit engine's shortest counterexample to ``prop`` on model ``m``, replayed
    through the bounded encoding: the encoding, ``L`` and per explicit step ``(explicit
    steps, encoding steps, encoded state)``. Asserts each explicit step is an encoding
    step or a stutter. ``watch``: SES's watched copy ``(message id, destination)``."""
    result = check_model(m, Options(progress=False))
    found = result.properties[prop]
    assert found.status == "violated" and found.trace, (prop, found.status)
    sym = encoding_class(m)(m.spec, bounded=True)
    if watch is not None:
        sym.watch = watch
    ev = Evaluator(sym)
    path = replay(m.spec, found.trace[0].index, [s.index for s in found.trace[1:]])
    values = sym.encode(path[0][2])
    out, moves = [(0, 0, values)], 0
    for i in range(1, len(path)):
        label, _pos, state = path[i]
        nxt = sym.encode(state, (path[i - 1][2], values, label))
        step = ev.step_of(values, nxt)
        assert step is not None, (label, values, nxt)
        moves += step != "stutter"
        out.append((i, moves, nxt))
        values = nxt
    return sym, len(path) - 1, out


def first_break(sym: Any, target: str, states: list[tuple[int, int, dict]]) -> tuple[int, int]:
    """``(explicit steps, encoding steps)`` to the first state of ``states`` that breaks
    ``target``; fails the test when none does."""
    ev = Evaluator(sym)
    formula = named_clauses(sym.targets[target][1](ev.pre))
    for i, j, values in states:
        if not ev._subst(formula, [(ev.pre, values)]):
            return i, j
    raise AssertionError(f"no state of the explicit counterexample breaks {target}")


def shortest_break(m: Any, sym: Any, target: str, max_states: int) -> int:
    """The fewest encoding steps of an explicit run (stutters count 0) to a state that
    breaks ``target``: a 0-1 breadth-first search of the explicit state space, each
    explicit step classified by the encoding. Fails the test when an explicit step is
    no step of the encoding, or when no state within ``max_states`` breaks it."""
    ev = Evaluator(sym)
    formula = named_clauses(sym.targets[target][1](ev.pre))
    best: dict[tuple, int] = {}
    todo = deque((s, sym.encode(s), 0) for s in m.spec.init_states())
    while todo and len(best) < max_states:
        state, values, moves = todo.popleft()
        key = (state, tuple(sorted(values.items())))
        if best.get(key, moves + 1) <= moves:
            continue
        best[key] = moves
        if not ev._subst(formula, [(ev.pre, values)]):
            return moves
        for label, nxt in m.spec.next_states(state):
            nvalues = sym.encode(nxt, (state, values, label))
            step = ev.step_of(values, nvalues)
            assert step is not None, (label, values, nvalues)
            if step == "stutter":
                todo.appendleft((nxt, nvalues, moves))
            else:
                todo.append((nxt, nvalues, moves + 1))
    raise AssertionError(f"no explicit state within {max_states} breaks {target}")


# model, the ordering property its explicit check breaks, the encoding's target,
# and what the comparison finds: L, (i, j) where the replayed trace first breaks the
# target, s the fewest encoding steps of any explicit run to a state breaking the
# target (None: not searched), d the BMC depth (d <= s <= j). The numbers are those of
# docs/explanation/proofs.md.
MUTANTS = [
    ("bss-mutant-no-causal-condition", "causal", "causal_per_peer", 4, (4, 4), 4, 1),
    ("matrix-mutant-no-causal-condition", "causal", "causal_per_peer", 5, (5, 5), 5, 1),
    ("sequencer-mutant-no-hold-back", "total", "total_by_number", 8, (7, 7), 5, 3),
    # about 1,500 states before the first break: too slow for a unit test
    ("skeen-mutant-no-tiebreak", "total", "delivered_in_key_order", 18, (18, 18), None, 6),
    ("lamport-mutant-no-wait", "total", "delivered_in_key_order", 8, (8, 8), 5, 5),
    ("ses-mutant-no-buffer-check", "causal", "causal_per_pair", 5, (5, 5), 5, 2),
    # the synchronous encoding does not simulate this mutant everywhere (see the docs):
    # only the replayed counterexample is compared
    ("synchronous-3-mutant-no-permission", "synchronous", "numbered_in_order", 5, (5, 5), None, 3),
]


@pytest.mark.parametrize(("model", "prop", "target", "length", "breaks", "shortest", "depth"), MUTANTS)
def test_bmc_finds_the_mutants_target_violation_no_later_than_the_explicit_trace(
    model: str, prop: str, target: str, length: int, breaks: tuple[int, int], shortest: int | None, depth: int
) -> None:
    m = load_model(f"models/{model}.toml")
    sym, found_length, states = encoded_trace(m, prop, (0, 2) if m.spec_name == "ses" else None)
    i, j = first_break(sym, target, states)
    assert (found_length, (i, j)) == (length, breaks)
    assert j <= i <= found_length
    if shortest is not None:
        assert shortest_break(m, sym, target, 200) == shortest <= j
    q = by_name(bmc_queries(sym, [target], j, None))[f"bmc: {target}"]
    assert q.status == "violated", q.explanation
    assert q.explanation == f"counterexample in {depth} steps" and depth <= (j if shortest is None else shortest)
    assert len(q.trace) == depth + 1
    # BMC's shortest: no violation one step earlier.
    if depth > 0:
        assert by_name(bmc_queries(sym, [target], depth - 1, None))[f"bmc: {target}"].status == "bounded"


# model, depth k, the properties the explicit engine must find unbroken to depth k
CORRECT = [
    ("bss-3", 4, ["causal"]),
    ("matrix-3", 4, ["causal"]),
    ("sequencer-2", 4, ["total", "total_global", "total_prefix"]),
    ("skeen-4", 3, ["total", "total_global"]),
    ("lamport-2", 3, ["total", "total_global", "total_prefix"]),
    ("ses-3", 3, ["causal"]),
    ("synchronous-3", 3, ["synchronous"]),
]


@pytest.mark.parametrize(("model", "depth", "props"), CORRECT)
def test_bmc_and_the_explicit_engine_find_no_violation_of_a_correct_model(model: str, depth: int,
                                                                          props: list[str]) -> None:
    m = load_model(f"models/{model}.toml")
    explicit = check_model(m, Options(max_depth=depth, progress=False, stop_when_decided=False))
    for name in props:
        assert explicit.properties[name].status != "violated", name
    sym = encoding_class(m)(m.spec, bounded=True)
    found = by_name(bmc_queries(sym, list(sym.targets), depth, None))
    assert {q.name: q.status for q in found.values()} == {f"bmc: {t}": "bounded" for t in sym.targets}
    # the unrolling is not empty: some run of the encoding takes `depth` steps
    assert _runs_exist(sym, depth)


def _runs_exist(sym: Any, depth: int) -> bool:
    """Whether the encoding has a run of ``depth`` steps from its initial condition."""
    states = [SymState(sym.schema, f"r{i}") for i in range(depth + 1)]
    solver = z3.Solver()
    solver.add(sym.init(states[0]))
    actions = sym.actions()
    for i in range(1, depth + 1):
        solver.add(z3.Or([a.relation(states[i - 1], states[i]) for a in actions]))
    return solver.check() == z3.sat

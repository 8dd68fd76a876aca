"""The exact (step-for-step) encodings against the explicit engine (issue 37).

``specs/symbolic_exact.py`` builds, for one model's bounded configuration, an encoding
whose every step is one step of the explicit spec, with the spec's label. Three checks
make bounded model checking on it agree with the explicit engine, and not by chance:

* **steps**: from each of the first states of a breadth-first search of the explicit
  state space, the encoding's successors (every model of its transition relation,
  enumerated by Z3) are exactly the encodings of the spec's successors, labels
  included; and each property's formula gives the spec's monitor's verdict there;
* **mutants**: BMC's shortest violation of the ordering property has exactly the
  explicit engine's shortest counterexample length ``L`` (``d = L``), and its trace,
  replayed through the Python spec label by label, is a run of the spec (each step one
  of the spec's steps from the state before, to a state with the same encoding) that
  breaks the property at its last step and not before;
* **correct models**: neither the explicit engine (to depth ``k``) nor BMC (``k``
  steps) finds a violation, and the encoding has runs of ``k`` steps.

The abstract seed encodings' one-way bound (BMC's depth at most ``L``) is
tests/test_symbolic_bmc_seeds.py's.
"""

from __future__ import annotations

import importlib
import random
from collections import deque
from typing import Any

import pytest
import z3

from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.symbolic.encodings import Stepper
from ordercheck.checker.symbolic.prove import bmc_queries
from ordercheck.specs import properties as library
from ordercheck.specs.symbolic import SymState
from ordercheck.specs.symbolic_exact import NoExact
from tests.symbolic_helpers import Evaluator


def exact(m: Any) -> Any:
    """The exact encoding of model ``m``'s spec and configuration."""
    module = importlib.import_module(f"ordercheck.specs.{m.spec_name}_symbolic")
    return module.EXACT(m.spec)


def violated(spec: Any, state: tuple, prop: str) -> bool:
    """The spec's own verdict (its monitor, on the state's history)."""
    return getattr(library, prop)(spec.history(state)) is not None


# model, how many reachable states (drawn at random, seeded) whose steps are compared
STEPS = [
    ("bss-mutant-no-causal-condition", 20),
    ("bss-3", 30),
    ("matrix-mutant-no-causal-condition", 20),
    ("matrix-3", 80),
    ("sequencer-mutant-no-hold-back", 20),
    ("sequencer-mutant-own-delivery", 20),
    ("sequencer-2", 30),
    ("sequencer-unordered", 30),  # hold-back over unordered channels: a number may arrive early
    ("lamport-mutant-no-wait", 20),
    ("lamport-mutant-no-tiebreak", 20),
    ("lamport-unordered", 20),
    ("lamport-2", 30),
    ("lamport-2-garg", 30),
    ("skeen-mutant-no-tiebreak", 20),
    ("skeen-mutant-min", 20),
    ("skeen-mutant-no-wait", 20),
    ("skeen-4", 30),
    ("ses-mutant-no-buffer-check", 29),  # the whole state space of each SES mutant
    ("ses-literal-smaller", 29),
    ("ses-mutant-no-merge", 29),
    ("ses-3", 30),
    ("synchronous-mutant-no-ack", 20),
    ("synchronous-3-mutant-no-permission", 20),
    ("synchronous-3", 30),
]


@pytest.mark.parametrize(("model", "count"), STEPS)
def test_the_exact_encoding_steps_as_the_spec_does(model: str, count: int) -> None:
    m = load_model(f"models/{model}.toml")
    spec, sym = m.spec, exact(m)
    stepper, ev = Stepper(sym), Evaluator(sym)
    rng = random.Random(37)  # seeded: the same states every run
    forms = {name: fn(ev.pre) for name, (_kind, fn) in sym.properties.items()}
    labels: set[str] = set()

    def compare(state: tuple) -> list[tuple[tuple, tuple]]:
        values = sym.encode(state)
        succ = spec.next_states(state)
        want = {(label, tuple(sorted(sym.encode(nxt).items()))) for label, nxt in succ}
        got = stepper.successors(values)
        assert got == want, (spec.describe(state), sorted(w[0] for w in want ^ got))
        for name, formula in forms.items():
            holds = ev._subst(formula, [(ev.pre, values)])
            assert holds != violated(spec, state, name), (name, spec.describe(state))
        labels.update(label[0] for label, _n in succ)
        return succ

    # the initial state and `count` states drawn (seeded) from the whole reachable set
    (init,) = spec.init_states()
    reachable, todo = {init}, deque([init])
    while todo:
        for _l, nxt in spec.next_states(todo.popleft()):
            if nxt not in reachable:
                reachable.add(nxt)
                todo.append(nxt)
    others = sorted(reachable - {init}, key=repr)
    for state in [init, *rng.sample(others, min(count, len(others)))]:
        compare(state)
    assert "send" in labels and len(labels) >= 2, labels


# model, the ordering property the explicit engine finds broken, its shortest
# counterexample's length L (= BMC's depth on the exact encoding)
MUTANTS = [
    ("bss-mutant-no-causal-condition", "causal", 4),
    ("matrix-mutant-no-causal-condition", "causal", 5),
    ("sequencer-mutant-no-hold-back", "total", 8),
    ("sequencer-mutant-own-delivery", "total", 10),
    ("lamport-mutant-no-wait", "total", 8),
    ("lamport-mutant-no-tiebreak", "total", 12),
    ("lamport-unordered", "total", 12),
    ("ses-mutant-no-buffer-check", "causal", 5),
    ("ses-literal-smaller", "causal", 5),
    ("ses-mutant-no-merge", "causal", 5),
    ("synchronous-mutant-no-ack", "synchronous", 4),
    ("synchronous-3-mutant-no-permission", "synchronous", 5),
    # the Skeen mutants (L = 18, d = 18) take tens of seconds of Z3 each: benchmarks/exact_bmc.py
]


@pytest.mark.parametrize(("model", "prop", "length"), MUTANTS)
def test_bmc_on_the_exact_encoding_finds_the_explicit_shortest_counterexample(model: str, prop: str,
                                                                             length: int) -> None:
    m = load_model(f"models/{model}.toml")
    found = check_model(m, Options(progress=False)).properties[prop]
    assert found.status == "violated" and len(found.trace) - 1 == length
    sym = exact(m)
    (q,) = bmc_queries(sym, [prop], length, None)
    # bmc_queries asks depth 0, 1, ... in turn: the first depth with a violation is d
    assert q.status == "violated" and q.explanation == f"counterexample in {length} steps", q.explanation
    # the trace is a run of the spec, step by step
    spec = m.spec
    (state,) = spec.init_states()
    assert sym.describe(sym.encode(state))["changed"] == q.trace[0].state["changed"] == {}
    for i, step in enumerate(q.trace[1:], 1):
        assert not violated(spec, state, prop), i
        label = tuple(step.label)
        nexts = [nxt for lab, nxt in spec.next_states(state) if lab == label]
        assert len(nexts) == 1, (i, label)
        state = nexts[0]
        assert sym.describe(sym.encode(state))["changed"] == step.state["changed"], i
    assert violated(spec, state, prop)


# model, depth k, the properties checked
CORRECT = [
    ("bss-3", 6, ["causal"]),
    ("matrix-3", 6, ["causal"]),
    ("sequencer-2", 6, ["total", "total_global", "total_prefix"]),
    ("lamport-2", 8, ["total", "total_global", "total_prefix"]),
    ("lamport-2-garg", 8, ["total", "total_global", "total_prefix"]),
    ("skeen-4", 8, ["total", "total_global"]),
    ("ses-3", 6, ["causal"]),
    ("synchronous-3", 6, ["synchronous"]),
]


@pytest.mark.parametrize(("model", "depth", "props"), CORRECT)
def test_bmc_on_the_exact_encoding_and_the_explicit_engine_agree_on_a_correct_model(model: str, depth: int,
                                                                                  props: list[str]) -> None:
    m = load_model(f"models/{model}.toml")
    explicit = check_model(m, Options(max_depth=depth, progress=False, stop_when_decided=False))
    sym = exact(m)
    found = {q.name: q.status for q in bmc_queries(sym, props, depth, None)}
    for name in props:
        assert explicit.properties[name].status != "violated", name
        assert found[f"bmc: {name}"] == "bounded", name
    states = [SymState(sym.schema, f"r{i}") for i in range(depth + 1)]
    solver = z3.Solver()
    solver.add(sym.init(states[0]), *[sym.transition(states[i - 1], states[i]) for i in range(1, depth + 1)])
    assert solver.check() == z3.sat  # the unrolling is not empty


def test_what_is_not_encoded_exactly_is_refused() -> None:
    m = load_model("models/bss-3-lossy.toml")
    with pytest.raises(NoExact, match="lossy"):
        exact(m)


def test_prove_runs_bmc_on_the_exact_encoding_where_there_is_one() -> None:
    """``prove --depth`` model-checks the spec's own property on the exact encoding: the
    BSS mutant's causal breaks in L = 4 steps, as expected (exit 0); a lossy model has no
    exact encoding and keeps the bounded one, which has no form of ``causal``."""
    from ordercheck.checker.symbolic.prove import ProveOptions, prove_model

    m = load_model("models/bss-mutant-no-causal-condition.toml")
    result = prove_model(m, ProveOptions(depth=4, bmc_only=True, properties=("causal",)))
    (q,) = result.queries
    assert (q.name, q.status, q.explanation, q.outcome) == ("bmc: causal", "violated", "counterexample in 4 steps", "ok")
    assert result.bmc_encoding == "exact" and result.to_json()["bmc_encoding"] == "exact"
    assert result.exit_code() == 0
    lossy = prove_model(load_model("models/bss-3-lossy.toml"), ProveOptions(depth=2, bmc_only=True, properties=("causal",)))
    assert lossy.bmc_encoding == "bounded" and lossy.skipped == ["causal"]


@pytest.mark.parametrize("model", ["sequencer-mutant-own-delivery", "lamport-mutant-no-wait"])
def test_the_selector_transition_is_the_disjunction_of_the_actions(model: str) -> None:
    """``selector_transition`` (what BMC unrolls) and the disjunction of the actions'
    relations (what the step comparison enumerates) have the same pairs of states, on
    the exact encoding and on the abstract one (whose actions choose a value freely)."""
    from ordercheck.checker.symbolic.encodings import encoding_class
    from ordercheck.specs.symbolic import selector_transition

    m = load_model(f"models/{model}.toml")
    for sym in (exact(m), encoding_class(m)(m.spec, bounded=True)):
        s, t = SymState(sym.schema, "s"), SymState(sym.schema, "t")
        actions = sym.actions()
        picked = selector_transition(actions, s, t)
        sel = z3.Int(f"action@{t.tag}")
        solver = z3.Solver()  # each pair it allows is a step of some action
        solver.add(picked, z3.Not(z3.Or([a.relation(s, t) for a in actions])))
        assert solver.check() == z3.unsat
        solver = z3.Solver()  # each step of action i is allowed, picking i
        solver.add(z3.Or([z3.And(a.relation(s, t), z3.Not(z3.substitute(picked, (sel, z3.IntVal(i)))))
                          for i, a in enumerate(actions)]))
        assert solver.check() == z3.unsat

"""Invariant inference on a symbolic encoding (``ordercheck prove MODEL --infer``).

No hand-written lemma is used. The steps:

1. **Samples.** The explicit engine's reachable states of the model (breadth first, at
   most ``limit`` of them), each decoded into the encoding's variables: by the bounded
   encoding's ``explicit_values(limit)`` when it has one (an encoding whose variables
   need proof ghosts that follow a run, like bus1's), else by its ``encode(state)``, or
   ``encode(state, prev)`` carried breadth first for ghosts that depend on the step that
   reached a state (the seed encodings' last delivery).
2. **Candidates.** Templates over the encoding's named variables (its ``schema``):
   for every integer variable ``x`` the bounds ``x >= lo`` and ``x <= hi`` (``lo`` and
   ``hi`` the least and greatest value seen); for every two integer variables
   ``x == y``, ``x <= y``, ``x < y`` (both ways); for every boolean ``b`` the constant
   ``b`` or ``not b``; for every two booleans ``a => b`` (both ways) and ``not (a and
   b)``. A variable of a queue slot (``P.Q.I.F`` beside a length ``P.Q.len``) is
   compared only while its slot is live: the template is guarded by ``P.Q.len > I``.
   The encoding's targets are candidates too, one per clause. A candidate false on any
   sample is discarded (it is no invariant of the model), and so is a guarded one whose
   slot is live on no sample: the queues' ``queue_bound`` (``--queue-bound``, ``[prove]
   queue_bound``, else the encoding's ``max_queue()``) should not exceed what the
   model's runs fill, or the slots past it are left unconstrained.
3. **Houdini.** Z3 drops every candidate that an initial state breaks, then, action by
   action, every candidate false after a step from a state satisfying all that remain,
   until none is dropped: what remains is the largest inductive subset of the
   candidates (relative to itself, in the *unbounded* encoding: any number of steps).
   Each dropped candidate keeps its counterexample to induction: the state before
   (every remaining candidate holds there), the action and the state after.
4. **Re-check.** What Houdini kept is not trusted: it becomes the invariant of an
   encoding whose lemmas are the kept candidates, and
   :func:`ordercheck.checker.symbolic.prove.invariant_queries` asks initiation, consecution and
   the implication of each target again, as ``prove`` does for hand-written lemmas;
   a ``proof: P`` query follows only as ``prove`` adds one (``guarantees``,
   ``max_queue``), then ``[prove] depth``'s bounded model checking; a property the
   model expects something of that no query decides is undecided (exit 3), as in
   ``prove``.

Inference is bounded in what it proposes (the samples come from one bounded model and
the templates are fixed), not in what it shows: a re-checked inductive invariant holds
for runs of any length, and a target it does not imply is reported with the
counterexample to induction that dropped it.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import z3

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.result import Step
from ordercheck.checker.symbolic.encodings import NoEncoding, encoding_class, exact_encoding
from ordercheck.checker.symbolic.prove import (
    ProveResult,
    finish,
    has_signals,
    invariant_queries,
    judged_scope,
    proof_queries,
)

INFERRED = "inferred"


@dataclass
class Candidate:
    """One template instance: ``fn(s)`` is its formula over a state, ``test`` its value
    on the samples (a boolean array), ``target`` the target it is a clause of."""

    text: str
    fn: Callable[[Any], Any]
    test: Any = None
    target: str | None = None


@dataclass
class Dropped:
    """A candidate Houdini dropped, with the counterexample to induction (or the
    initial state) that broke it."""

    text: str
    target: str | None
    trace: list[Step]


@dataclass
class InferResult:
    """What inference found on one model, and the re-check of it."""

    samples: int
    proposed: int
    on_samples: int
    kept: list[str]
    dropped: list[Dropped]
    seconds: float
    check: ProveResult
    targets_kept: list[str] = field(default_factory=list)
    broken_on_samples: list[str] = field(default_factory=list)  # target clauses a reachable state breaks
    invariant: Any = None  # the Inferred encoding (its one lemma: the kept clauses), for `prove --tla`

    def to_json(self) -> dict[str, Any]:
        out = self.check.to_json()
        out["inference"] = {
            "samples": self.samples,
            "candidates": self.proposed,
            "true_on_samples": self.on_samples,
            "kept": self.kept,
            "targets_kept": self.targets_kept,
            "target_clauses_broken_on_samples": self.broken_on_samples,
            "dropped": [{"text": d.text, "target": d.target, "trace": [vars(s) for s in d.trace]} for d in self.dropped],
            "seconds": self.seconds,
        }
        return out


# -- samples ------------------------------------------------------------------------------


def explicit_samples(spec: Any, bounded: Any, limit: int) -> list[dict[str, Any]]:
    """The model's reachable states (breadth first, at most ``limit``) as the bounded
    encoding's variable values; :class:`NoEncoding` when the encoding cannot decode an
    explicit state (neither ``explicit_values`` nor a one-argument ``encode``)."""
    if hasattr(bounded, "explicit_values"):
        return list(_take(bounded.explicit_values(limit), limit))
    encode = getattr(bounded, "encode", None)
    if encode is None:
        raise NoEncoding("encode(state)")
    params = list(inspect.signature(encode).parameters.values())
    if len(params) == 2 and params[1].default is not inspect.Parameter.empty:
        return _samples_with_steps(spec, encode, limit)
    if len(params) != 1:
        raise NoEncoding("encode(state)")
    seen: set[tuple] = set()
    frontier = list(spec.init_states())
    out: list[dict[str, Any]] = []
    while frontier and len(out) < limit:
        nxt = []
        for state in frontier:
            if state in seen or len(out) >= limit:
                continue
            seen.add(state)
            out.append(encode(state))
            nxt += [succ for _label, succ in spec.next_states(state)]
        frontier = nxt
    return out


def _samples_with_steps(spec: Any, encode: Any, limit: int) -> list[dict[str, Any]]:
    """Breadth first, as :func:`explicit_samples`, for an encoding whose ghosts depend
    on the step that reached a state: ``encode(state, prev)`` with ``prev`` the
    predecessor's ``(state, values, label)`` (``None`` for an initial state). A state
    reached with two different encodings is a sample once per encoding."""
    seen: set[tuple] = set()
    frontier = [(state, encode(state)) for state in spec.init_states()]
    out: list[dict[str, Any]] = []
    while frontier and len(out) < limit:
        nxt = []
        for state, values in frontier:
            key = (state, tuple(sorted(values.items())))
            if key in seen or len(out) >= limit:
                continue
            seen.add(key)
            out.append(values)
            nxt += [(succ, encode(succ, (state, values, label))) for label, succ in spec.next_states(state)]
        frontier = nxt
    return out


def _take(values: Iterator[dict[str, Any]], limit: int) -> Iterator[dict[str, Any]]:
    for i, v in enumerate(values):
        if i >= limit:
            return
        yield v


# -- candidates ---------------------------------------------------------------------------


def _slot_guard(name: str, schema: dict[str, str]) -> str | None:
    """The length variable of the queue whose slot ``name`` is (``P.Q.I.F``), else None."""
    parts = name.split(".")
    if len(parts) >= 3 and parts[-2].isdigit():
        length = ".".join([*parts[:-2], "len"])
        if schema.get(length) == "int":
            return length
    return None


def candidates(schema: dict[str, str], samples: list[dict[str, Any]]) -> list[Candidate]:
    """Every template instance over ``schema`` that holds on every sample (see the
    module docstring); variables a sample lacks read as their default (0, False)."""
    names = list(schema)
    col = {n: np.array([int(v.get(n, 0)) for v in samples], dtype=np.int64) for n in names}
    live: dict[str, Any] = {}
    guard: dict[str, tuple[str, int] | None] = {}
    for n in names:
        length = _slot_guard(n, schema)
        if length is None:
            guard[n] = None
            live[n] = np.ones(len(samples), dtype=bool)
        else:
            i = int(n.split(".")[-2])
            guard[n] = (length, i)
            live[n] = col[length] > i
    out: list[Candidate] = []

    def add(text: str, fn: Callable[[Any], Any], value: Any, over: list[str]) -> None:
        mask = np.ones(len(samples), dtype=bool)
        guards = []
        for n in over:
            if guard[n] is not None and guard[n] not in guards:
                guards.append(guard[n])
                mask &= live[n]
        if not mask.any():
            return  # never live on a sample: says nothing
        if not bool(np.all(value | ~mask)):
            return
        if guards:
            g_text = " and ".join(f"{ln} > {i}" for ln, i in guards)
            out.append(Candidate(f"{g_text} => {text}", _guarded(guards, fn)))
        else:
            out.append(Candidate(text, fn))

    ints = [n for n in names if schema[n] == "int"]
    bools = [n for n in names if schema[n] == "bool"]
    for x in ints:
        mask = live[x]
        if not mask.any():
            continue
        lo, hi = int(col[x][mask].min()), int(col[x][mask].max())
        add(f"{x} >= {lo}", lambda s, x=x, lo=lo: s[x] >= lo, col[x] >= lo, [x])
        add(f"{x} <= {hi}", lambda s, x=x, hi=hi: s[x] <= hi, col[x] <= hi, [x])
    for i, x in enumerate(ints):
        for y in ints[i + 1:]:
            a, b = col[x], col[y]
            add(f"{x} == {y}", lambda s, x=x, y=y: s[x] == s[y], a == b, [x, y])
            add(f"{x} <= {y}", lambda s, x=x, y=y: s[x] <= s[y], a <= b, [x, y])
            add(f"{y} <= {x}", lambda s, x=x, y=y: s[y] <= s[x], b <= a, [x, y])
            add(f"{x} < {y}", lambda s, x=x, y=y: s[x] < s[y], a < b, [x, y])
            add(f"{y} < {x}", lambda s, x=x, y=y: s[y] < s[x], b < a, [x, y])
    for x in bools:
        add(f"{x}", lambda s, x=x: s[x], col[x] == 1, [x])
        add(f"not {x}", lambda s, x=x: z3.Not(s[x]), col[x] == 0, [x])
    for i, x in enumerate(bools):
        for y in bools[i + 1:]:
            a, b = col[x] == 1, col[y] == 1
            add(f"{x} => {y}", lambda s, x=x, y=y: z3.Implies(s[x], s[y]), ~a | b, [x, y])
            add(f"{y} => {x}", lambda s, x=x, y=y: z3.Implies(s[y], s[x]), ~b | a, [x, y])
            add(f"not ({x} and {y})", lambda s, x=x, y=y: z3.Not(z3.And(s[x], s[y])), ~(a & b), [x, y])
    return out


def _guarded(guards: list[tuple[str, int]], fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def formula(s: Any) -> Any:
        return z3.Implies(z3.And([s[ln] > i for ln, i in guards]), fn(s))

    return formula


def _holds_on(formula: Callable[[Any], Any], schema: dict[str, str], values: dict[str, Any]) -> bool:
    from ordercheck.specs.symbolic import SymState

    s = SymState(schema, "x")
    subst = [(s.vars[n], (z3.BoolVal(bool(values.get(n, False))) if schema[n] == "bool" else z3.IntVal(int(values.get(n, 0)))))
             for n in schema]
    return z3.is_true(z3.simplify(z3.substitute(formula(s), *subst)))


# -- Houdini ------------------------------------------------------------------------------


def houdini(sym: Any, cands: list[Candidate], timeout: float | None = None) -> tuple[list[Candidate], list[Dropped]]:
    """The largest subset of ``cands`` that is inductive on ``sym`` (initiation and
    consecution under every action), and each dropped candidate with the state (or
    two states and the action) that broke it. Raises :class:`TimeoutError` when Z3
    answers unknown (a result would not be the largest subset)."""
    from ordercheck.checker.symbolic.prove import _two_states
    from ordercheck.specs.symbolic import SymState

    s, t = SymState(sym.schema, "s"), SymState(sym.schema, "t")
    alive = list(range(len(cands)))
    dropped: list[Dropped] = []
    pre = [c.fn(s) for c in cands]
    post = [c.fn(t) for c in cands]

    def check(solver: z3.Solver, assumptions: list[Any]) -> Any:
        if timeout is not None:
            solver.set("timeout", max(1, int(timeout * 1000)))
        res = solver.check(*assumptions)
        if res == z3.unknown:
            raise TimeoutError(solver.reason_unknown())
        return res

    init = z3.Solver()
    init.add(sym.init(s))
    while alive:
        if check(init, [z3.Not(z3.And([pre[i] for i in alive]))]) != z3.sat:
            break
        model = init.model()
        broken = [i for i in alive if z3.is_false(model.eval(pre[i], model_completion=True))]
        state = [Step(None, None, sym.describe(s.values(model)), 0)]
        for i in broken:
            dropped.append(Dropped(cands[i].text, cands[i].target, state))
        alive = [i for i in alive if i not in broken]

    selectors = [z3.Bool(f"houdini_{i}") for i in range(len(cands))]
    solvers = []
    for action in sym.actions():
        solver = z3.Solver()
        solver.add(action.relation(s, t))
        solver.add([z3.Implies(selectors[i], pre[i]) for i in range(len(cands))])
        solvers.append(solver)
    changed = True
    rounds = 0
    while changed and alive:
        changed = False
        for solver in solvers:
            while alive:
                rounds += 1
                goal = z3.Bool(f"goal_{rounds}")
                solver.add(z3.Implies(goal, z3.Or([z3.Not(post[i]) for i in alive])))
                if check(solver, [selectors[i] for i in alive] + [goal]) != z3.sat:
                    break
                model = solver.model()
                broken = [i for i in alive if z3.is_false(model.eval(post[i], model_completion=True))]
                trace = _two_states(sym, model, s, t)
                for i in broken:
                    dropped.append(Dropped(cands[i].text, cands[i].target, trace))
                alive = [i for i in alive if i not in broken]
                changed = True
    return [cands[i] for i in alive], dropped


# -- the encoding of the inferred invariant ---------------------------------------------


class Inferred:
    """An encoding whose lemmas are the inferred invariant: everything else is the
    unbounded encoding's (schema, init, actions, targets, guarantees, presentation)."""

    def __init__(self, base: Any, kept: list[Candidate]) -> None:
        self._base = base
        self.kept = kept
        self.lemmas = {INFERRED: (f"{len(kept)} inferred clauses", self._clauses)}

    def _clauses(self, s: Any) -> list[tuple[str, Any]]:
        return [(c.text, c.fn(s)) for c in self.kept]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)


# -- a model end to end -----------------------------------------------------------------


def infer_model(model: Model, *, limit: int = 20_000, queue_bound: int | None = None,
                timeout: float | None = None, properties: tuple[str, ...] | None = None) -> InferResult:
    """Infer an inductive invariant of ``model``'s encoding from its reachable states and
    re-check it (module docstring). :class:`InputError` (exit 2) when the spec has no
    encoding or the encoding cannot decode explicit states."""
    started = time.monotonic()
    where = model.path
    try:
        cls = encoding_class(model)
    except NoEncoding:
        raise InputError(where, "spec", f"{model.spec_name} has no symbolic encoding: inference needs one "
                         "(specs/NAME_symbolic.py, or [prove] encoding = \"FILE.py\"; see docs/howto/prove-any-length.md)") from None
    settings = model.prove
    bounded = cls(model.spec, bounded=True)
    bound = queue_bound if queue_bound is not None else settings.get("queue_bound")
    if bound is None:  # as long as a run's queues get, so that every slot is live on some sample
        bound = bounded.max_queue() if hasattr(bounded, "max_queue") else 3
    unbounded = cls(model.spec, queue_bound=bound, bounded=False)
    try:
        samples = explicit_samples(model.spec, bounded, limit)
    except NoEncoding:
        raise InputError(where, "spec", f"the encoding of {model.spec_name} cannot decode explicit states "
                         "(it needs encode(state) or explicit_values(limit)): inference has no samples") from None
    targets = settings.get("targets", list(unbounded.targets))
    for name in targets:
        if name not in unbounded.targets:
            raise InputError(where, "prove.targets", f"{model.spec_name} has no target {name!r} (it has: {', '.join(unbounded.targets)})")
    schema = unbounded.schema
    found = candidates(schema, samples)
    proposed = _count_templates(schema)
    broken: list[str] = []
    for name in targets:
        for text, fn in _target_clauses(unbounded, name):
            if all(_holds_on(fn, schema, v) for v in samples):
                found.append(Candidate(f"target {name}: {text}", fn, target=name))
            else:
                broken.append(f"{name}: {text}")
    kept, dropped = houdini(unbounded, found, timeout)
    inferred = Inferred(unbounded, kept)
    depth = settings.get("depth", 0)
    result = ProveResult(model.path, model.spec_name, model.constants, bound, [INFERRED], [], depth)
    expect = {"initiation": "proved", INFERRED: "proved", **dict.fromkeys(targets, "proved")}
    names, model_expect = judged_scope(model, result, properties)  # [prove] properties (--property), as prove does
    result.queue_free = hasattr(bounded, "max_queue") and bounded.max_queue() == 0
    result.signals = has_signals(unbounded)
    result.queries += invariant_queries(inferred, [INFERRED], targets, timeout, expect)
    result.queries += proof_queries(result, inferred, bounded, names, model_expect)
    exact = exact_encoding(model) if depth > 0 else None  # as prove does: the step-exact encoding where there is one
    finish(result, exact if exact is not None else bounded, names, depth, timeout, model_expect)
    if depth > 0:
        result.bmc_encoding = "exact" if exact is not None else "bounded"
    kept_targets = [n for n in targets if _all_kept(n, kept, len(_target_clauses(unbounded, n)))]
    return InferResult(len(samples), proposed, len(found), [c.text for c in kept], dropped,
                       round(time.monotonic() - started, 3), result, kept_targets, broken, inferred)


def _target_clauses(sym: Any, name: str) -> list[tuple[str, Callable[[Any], Any]]]:
    """The clauses of target ``name`` as functions of a state (one per clause index)."""
    from ordercheck.specs.symbolic import SymState

    count = len(sym.targets[name][1](SymState(sym.schema, "probe")))
    out = []
    for k in range(count):
        def fn(s: Any, k: int = k) -> Any:
            return sym.targets[name][1](s)[k][1]

        text = sym.targets[name][1](SymState(sym.schema, "probe"))[k][0]
        out.append((text, fn))
    return out


def _all_kept(name: str, kept: list[Candidate], count: int) -> bool:
    return sum(1 for c in kept if c.target == name) == count


def _count_templates(schema: dict[str, str]) -> int:
    ints = sum(1 for k in schema.values() if k == "int")
    bools = len(schema) - ints
    return 2 * ints + 5 * ints * (ints - 1) // 2 + 2 * bools + 3 * bools * (bools - 1) // 2

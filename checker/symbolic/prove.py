"""Z3 invariant queries on a spec's symbolic encoding (``ordercheck prove``).

For a model whose spec has an encoding (``specs/NAME_symbolic.py``), with ``Inv`` the
conjunction of the encoding's lemmas (less any dropped ones):

* ``initiation``: ``Init ⇒ Inv``.
* ``inductive: L`` for each lemma ``L``: ``Inv ∧ Next ⇒ L'``, for *every* state that
  satisfies ``Inv``, reachable or not, in the unbounded encoding (any number of sends and
  signals, unbounded clocks). All of them proved means ``Inv`` is inductive. When one is
  refuted, Z3's model is a counterexample to induction: a state satisfying ``Inv``, the
  action it takes and the state after it, where ``L`` fails (the clauses that fail are
  named).
* ``implies: P`` for each target: ``Inv ⇒ P``.
* ``bmc: P`` (with a depth ``k``): the bounded encoding, which mirrors the explicit spec
  and its bounds, unrolled ``k`` steps from ``Init``; an ``always`` property is proved
  when no state within ``k`` steps breaks it, a ``sometimes`` property when some state
  within ``k`` steps satisfies it, and a ``terminal`` one (``deadlock_free``,
  ``eventual_delivery``) when no state within ``k`` steps is a dead end with work left.
  The trace found is the shortest, so it can be compared with the explicit engine's.

Each query gets a verdict (``proved``, ``refuted`` with the model, ``unknown`` with Z3's
reason) and the seconds Z3 spent on it. BMC queries share one unrolling and one check
per depth for all open properties, so each BMC query's seconds are those of the checks
it took part in, and the run's BMC time is counted once.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import z3

from checker.api.errors import InputError
from checker.api.model import Model
from checker.api.result import Step, verdicts_exit_code
from checker.symbolic.encodings import NoEncoding, symbolic_class

VERDICTS = ("proved", "refuted")


@dataclass
class Query:
    """One Z3 query and its verdict."""

    name: str
    kind: str  # initiation | inductive | implies | bmc
    status: str  # proved | refuted | unknown
    seconds: float
    expected: str | None = None
    doc: str = ""
    reason: str | None = None  # Z3's reason when unknown
    explanation: str | None = None
    trace: list[Step] | None = None

    @property
    def as_expected(self) -> bool:
        if self.expected is None:
            return self.status != "refuted" or self.kind == "bmc"
        return self.status == self.expected

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "trace"}
        out["trace"] = [asdict(s) for s in self.trace] if self.trace is not None else None
        return out


@dataclass
class ProveResult:
    """Every query run on one model."""

    model: str
    spec: str
    constants: dict[str, Any]
    queue_bound: int
    lemmas: list[str]
    dropped: list[str]
    depth: int
    queries: list[Query] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # properties BMC has no encoding of
    bmc_seconds: float = 0.0  # Z3 time of the whole unrolling (its queries share checks)

    @property
    def z3_seconds(self) -> float:
        return round(self.invariant_seconds + self.bmc_seconds, 3)

    @property
    def invariant_seconds(self) -> float:
        return round(sum(q.seconds for q in self.queries if q.kind != "bmc"), 3)

    @property
    def inductive(self) -> bool:
        """Initiation and every lemma's consecution proved."""
        mine = [q for q in self.queries if q.kind in ("initiation", "inductive")]
        return bool(mine) and all(q.status == "proved" for q in mine)

    def exit_code(self) -> int:
        return verdicts_exit_code(self.queries)

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "spec": self.spec,
            "engine": "z3",
            "constants": self.constants,
            "queue_bound": self.queue_bound,
            "lemmas": self.lemmas,
            "dropped": self.dropped,
            "depth": self.depth,
            "inductive": self.inductive,
            "z3_seconds": self.z3_seconds,
            "invariant_seconds": self.invariant_seconds,
            "bmc_seconds": self.bmc_seconds,
            "queries": {q.name: q.to_json() for q in self.queries},
            "bmc_skipped": self.skipped,
        }


@dataclass(frozen=True)
class ProveOptions:
    """Command-line settings; ``None`` means "as the model's [prove] table says"."""

    depth: int | None = None
    drop: tuple[str, ...] = ()
    queue_bound: int | None = None
    timeout: float | None = None
    bmc_only: bool = False


# -- running queries --------------------------------------------------------------------


def _check(solver: z3.Solver, timeout: float | None) -> tuple[z3.CheckSatResult, float, str | None]:
    if timeout is not None:
        solver.set("timeout", max(1, int(timeout * 1000)))
    start = time.monotonic()
    res = solver.check()
    seconds = round(time.monotonic() - start, 3)
    reason = solver.reason_unknown() if res == z3.unknown else None
    return res, seconds, reason


def _failing(clauses: list[tuple[str, Any]], model: z3.ModelRef) -> list[str]:
    out = []
    for text, formula in clauses:
        if z3.is_false(model.eval(formula, model_completion=True)) and text not in out:
            out.append(text)
    return out


def _step_of(sym: Any, model: z3.ModelRef, s: Any, t: Any) -> tuple[str, list[Any], dict, dict]:
    """The action taken between ``s`` and ``t`` in ``model``, and both states' values."""
    pre, post = s.values(model), t.values(model)
    for action in sym.actions():
        if z3.is_true(model.eval(action.relation(s, t), model_completion=True)):
            label = action.label(pre, post)
            return sym.format_action(label), list(label), pre, post
    return "(no action)", [], pre, post


def _two_states(sym: Any, model: z3.ModelRef, s: Any, t: Any) -> list[Step]:
    text, label, pre, post = _step_of(sym, model, s, t)
    return [Step(None, None, sym.describe(pre), 0), Step(text, label, sym.describe(post), 1)]


def _lemma_clauses(sym: Any, names: list[str], s: Any) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for name in names:
        out += sym.lemmas[name][1](s)
    return out


def _conj(clauses: list[tuple[str, Any]]) -> z3.BoolRef:
    return z3.And([c for _t, c in clauses]) if clauses else z3.BoolVal(True)


def invariant_queries(
    sym: Any,
    lemmas: list[str],
    targets: list[str],
    timeout: float | None,
    expect: dict[str, str],
    only: list[str] | None = None,
) -> list[Query]:
    """Initiation, one consecution query per lemma (or per lemma of ``only``: the others
    are still assumed in the pre-state), and one implication per target."""
    from specs.symbolic import SymState

    s, t = SymState(sym.schema, "s"), SymState(sym.schema, "t")
    inv_s = _conj(_lemma_clauses(sym, lemmas, s))
    out: list[Query] = []

    solver = z3.Solver()
    init_clauses = _lemma_clauses(sym, lemmas, s)
    solver.add(sym.init(s), z3.Not(inv_s))
    res, secs, reason = _check(solver, timeout)
    q = Query("initiation", "initiation", _status(res), secs, expect.get("initiation"), "Init implies the invariant", reason)
    if res == z3.sat:
        model = solver.model()
        q.explanation = "an initial state breaks: " + "; ".join(_failing(init_clauses, model))
        q.trace = [Step(None, None, sym.describe(s.values(model)), 0)]
    out.append(q)

    # Consecution, split by action: one solver holds Inv(s); each action's relation is
    # pushed once and each lemma's negation checked under it (much faster for Z3 than
    # one query over the whole disjunction Next).
    base = z3.Solver()
    if timeout is not None:
        base.set("timeout", max(1, int(timeout * 1000)))
    base.add(inv_s)
    checked = [n for n in lemmas if only is None or n in only]
    post = {name: sym.lemmas[name][1](t) for name in checked}
    spent = dict.fromkeys(checked, 0.0)
    cti: dict[str, z3.ModelRef] = {}
    reasons: dict[str, str] = {}
    for action in sym.actions():
        base.push()
        base.add(action.relation(s, t))
        for name in checked:
            if name in cti:
                continue
            base.push()
            base.add(z3.Not(_conj(post[name])))
            res, secs, reason = _check(base, None)
            spent[name] += secs
            if res == z3.sat:
                cti[name] = _small_model(base, s) or base.model()
            elif res == z3.unknown:
                reasons.setdefault(name, f"{reason} (after {action.name})")
            base.pop()
        base.pop()
    for name in checked:
        doc = sym.lemmas[name][0]
        status = "refuted" if name in cti else ("unknown" if name in reasons else "proved")
        q = Query(f"inductive: {name}", "inductive", status, round(spent[name], 3), expect.get(name), doc, reasons.get(name))
        if name in cti:
            model = cti[name]
            q.trace = _two_states(sym, model, s, t)
            q.explanation = (
                f"counterexample to induction: every lemma holds in state 0; after '{q.trace[1].action}' "
                + "this fails: "
                + "; ".join(_failing(post[name], model))
            )
        out.append(q)

    for name in targets:
        doc, fn = sym.targets[name]
        clauses = fn(s)
        solver = z3.Solver()
        solver.add(inv_s, z3.Not(_conj(clauses)))
        res, secs, reason = _check(solver, timeout)
        q = Query(f"implies: {name}", "implies", _status(res), secs, expect.get(name), doc, reason)
        if res == z3.sat:
            model = _small_model(solver, s) or solver.model()
            q.explanation = "a state satisfying the invariant breaks: " + "; ".join(_failing(clauses, model))
            q.trace = [Step(None, None, sym.describe(s.values(model)), 0)]
        out.append(q)
    return out


def _small_model(solver: z3.Solver, s: Any, bound: int = 12) -> z3.ModelRef | None:
    """A model of the solver's (satisfiable) assertions whose pre-state numbers are all
    small, if there is one: counterexamples read better with clocks 0..12 than with
    whatever Z3 picked first."""
    ints = [v for n, v in s.vars.items() if s.schema[n] == "int"]
    solver.push()
    solver.add(z3.And([z3.And(v >= -1, v <= bound) for v in ints]))
    res = solver.check()
    model = solver.model() if res == z3.sat else None
    solver.pop()
    return model


def _status(res: z3.CheckSatResult) -> str:
    """An unsat negation is a proof; a model refutes."""
    if res == z3.unsat:
        return "proved"
    if res == z3.sat:
        return "refuted"
    return "unknown"


def bmc_queries(sym: Any, names: list[str], depth: int, timeout: float | None) -> list[Query]:
    """Bounded model checking of the named properties to ``depth`` steps (shared unrolling)."""
    from specs.symbolic import SymState

    states = [SymState(sym.schema, "s0")]
    solver = z3.Solver()
    solver.add(sym.init(states[0]))
    actions = sym.actions()
    open_props = [n for n in names if n in sym.properties]
    found: dict[str, tuple[int, z3.ModelRef, float]] = {}
    spent: dict[str, float] = dict.fromkeys(open_props, 0.0)
    unknown: dict[str, str] = {}
    for j in range(depth + 1):
        if j > 0:
            states.append(SymState(sym.schema, f"s{j}"))
            solver.add(z3.Or([a.relation(states[j - 1], states[j]) for a in actions]))
        s = states[j]
        goals = {}
        for name in open_props:
            if name in found or name in unknown:
                continue
            kind, fn = sym.properties[name]
            if kind == "always":
                goals[name] = z3.Not(fn(s))
            elif kind == "sometimes":
                goals[name] = fn(s)
            else:
                goals[name] = z3.And(z3.Not(z3.Or([a.guard(s) for a in actions])), fn(s))
        # One query for all open goals at this depth; a model settles every goal it
        # satisfies, and the rest are asked again until the query is unsat.
        while goals:
            solver.push()
            solver.add(z3.Or(list(goals.values())))
            res, secs, reason = _check(solver, timeout)
            for name in goals:
                spent[name] += secs
            if res == z3.sat:
                model = solver.model()
                for name in [n for n, g in goals.items() if z3.is_true(model.eval(g, model_completion=True))]:
                    found[name] = (j, model, secs)
                    del goals[name]
            elif res == z3.unknown:
                for name in goals:
                    unknown[name] = reason or "unknown"
                goals = {}
            else:
                goals = {}
            solver.pop()
    out = []
    for name in open_props:
        kind = sym.properties[name][0]
        secs = round(spent[name], 3)
        if name in unknown:
            out.append(Query(f"bmc: {name}", "bmc", "unknown", secs, reason=unknown[name]))
            continue
        if name in found:
            j, model, _ = found[name]
            trace = _trace(sym, model, states[: j + 1])
            if kind == "sometimes":
                q = Query(f"bmc: {name}", "bmc", "proved", secs, explanation=f"witness in {j} steps", trace=trace)
            else:
                q = Query(f"bmc: {name}", "bmc", "refuted", secs, explanation=f"counterexample in {j} steps", trace=trace)
        elif kind == "sometimes":
            q = Query(f"bmc: {name}", "bmc", "refuted", secs, explanation=f"no witness within {depth} steps")
        else:
            q = Query(f"bmc: {name}", "bmc", "proved", secs, explanation=f"no counterexample within {depth} steps")
        q.doc = f"{kind} property {name}, runs of at most {depth} steps"
        out.append(q)
    return out


def _trace(sym: Any, model: z3.ModelRef, states: list[Any]) -> list[Step]:
    steps = [Step(None, None, sym.describe(states[0].values(model)), 0)]
    for i in range(1, len(states)):
        text, label, _pre, post = _step_of(sym, model, states[i - 1], states[i])
        steps.append(Step(text, label, sym.describe(post), i))
    return steps


# -- a model end to end -----------------------------------------------------------------


def prove_model(model: Model, options: ProveOptions = ProveOptions()) -> ProveResult:
    """Run every query the model's ``[prove]`` table and ``options`` ask for."""
    where = model.path
    try:
        cls = symbolic_class(model.spec)
    except NoEncoding:
        raise InputError(where, "spec", f"{model.spec_name} has no symbolic encoding for `prove`") from None
    settings = model.prove
    bound = options.queue_bound if options.queue_bound is not None else settings.get("queue_bound", 3)
    depth = options.depth if options.depth is not None else settings.get("depth", 0)
    timeout = options.timeout if options.timeout is not None else settings.get("timeout")
    unbounded = cls(model.spec, queue_bound=bound, bounded=False)
    drop = list(dict.fromkeys([*settings.get("drop", []), *options.drop]))
    for name in drop:
        if name not in unbounded.lemmas:
            raise InputError(where, "prove.drop", f"{model.spec_name} has no lemma {name!r} (it has: {', '.join(unbounded.lemmas)})")
    targets = settings.get("targets", list(unbounded.targets))
    for name in targets:
        if name not in unbounded.targets:
            raise InputError(where, "prove.targets", f"{model.spec_name} has no target {name!r} (it has: {', '.join(unbounded.targets)})")
    expect = dict(settings.get("expect", {}))
    for name in expect:
        if name != "initiation" and name not in unbounded.lemmas and name not in unbounded.targets:
            raise InputError(where, f"prove.expect.{name}", "is neither a lemma, a target nor 'initiation'")
    lemmas = [n for n in unbounded.lemmas if n not in drop]
    result = ProveResult(model.path, model.spec_name, model.constants, bound, lemmas, drop, depth)
    if not options.bmc_only:
        for name in [*lemmas, *targets, "initiation"]:
            expect.setdefault(name, "proved")
        result.queries += invariant_queries(unbounded, lemmas, targets, timeout, expect)
    if depth > 0:
        bounded = cls(model.spec, bounded=True)
        names = [p.name for p in model.properties]
        started = time.monotonic()
        result.queries += bmc_queries(bounded, names, depth, timeout)
        result.bmc_seconds = round(time.monotonic() - started, 3)
        result.skipped = [n for n in names if n not in bounded.properties]
    return result

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
* ``implies: P`` for each target: ``Inv ⇒ P``. When the invariant is not shown
  inductive, a proved implication is marked ``conditional`` (printed so, never
  "proved"): it holds of the states satisfying ``Inv``, which need not include the
  model's reachable ones.
* ``bmc: P`` (with a depth ``k``): the bounded encoding, which mirrors the explicit spec
  and its bounds, unrolled ``k`` steps from ``Init``. An ``always`` property is
  ``violated`` when a state within ``k`` steps breaks it, a ``terminal`` one
  (``deadlock_free``, ``eventual_delivery``) when a state within ``k`` steps is a dead
  end with work left, and a ``sometimes`` property ``holds`` when some state within ``k``
  steps satisfies it; otherwise the query is ``bounded`` ("no counterexample within k
  steps", "no witness within k steps"), which is never a proof. The trace found is the
  shortest, so it can be compared with the explicit engine's.
* ``proof: P``: the property ``P`` of the model holds on every run, because the
  invariant is inductive, implies the targets the encoding names for ``P``
  (``guarantees``), and the unbounded encoding's queues hold as many entries as a run of
  the model can put on one (``max_queue``). Added only when all of that is proved.

Each query gets a verdict (``proved``, ``refuted`` with the model, ``unknown`` with Z3's
reason; for BMC ``violated``, ``holds``, ``bounded`` or ``unknown``; ``holds`` for a
proof) and the seconds Z3 spent on it. BMC queries share one unrolling and one check
per depth for all open properties, so each BMC query's seconds are those of the checks
it took part in, and the run's BMC time is counted once.

**Outcomes.** Each query is then compared with what the model expects
(:func:`judge`): the invariant queries with ``[prove] expect`` (``proved`` unless it
says ``refuted``), BMC and proof queries with the model's ``[expect]``, as ``check``
does. A query's ``outcome`` is ``ok``, ``mismatch`` (exit 1) or ``unknown`` (exit 3):

====================================  ================  =================  ==============
what prove found for property P       expect "holds"    expect "violated"  no expectation
====================================  ================  =================  ==============
counterexample within k steps         mismatch          ok                 mismatch
witness within k steps (sometimes)    ok                mismatch           ok
proof (``proof: P``)                  ok                mismatch           ok
bounded, and a proof of P             ok                unknown            ok
bounded, no proof of P                unknown           unknown            unknown
Z3 unknown                            unknown           unknown            unknown
====================================  ================  =================  ==============

A bounded search never makes a property pass: against an expected violation it says the
depth is too small to decide, against an expected ``holds`` that it is no proof.

A property the model's ``[expect]`` names that no query decides at all (one the
encoding has no symbolic form of, or any with ``--depth 0`` and no proof) is
*undecided* (:attr:`ProveResult.undecided`): unknown, exit 3, never a silent pass.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import z3

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.result import EXIT_BOUND, EXIT_MISMATCH, EXIT_OK, Step, verdict_word
from ordercheck.checker.symbolic.encodings import NoEncoding, encoding_class, exact_encoding

VERDICTS = ("proved", "refuted")


OK, MISMATCH, UNKNOWN = "ok", "mismatch", "unknown"


@dataclass
class Query:
    """One Z3 query, its verdict and its outcome against the model's expectations.

    ``status``: ``proved``, ``refuted`` or ``unknown`` for the invariant queries
    (initiation, inductive, implies); ``violated``, ``holds``, ``bounded`` or
    ``unknown`` for ``bmc``; ``holds`` for ``proof``. ``expected`` is ``[prove] expect``'s
    word for the invariant queries and ``[expect]``'s (``holds``, ``violated`` or
    ``None``) for the others; ``outcome`` and ``note`` are set by :func:`judge`."""

    name: str
    kind: str  # initiation | inductive | implies | bmc | proof
    status: str
    seconds: float
    expected: str | None = None
    doc: str = ""
    reason: str | None = None  # Z3's reason when unknown
    explanation: str | None = None
    trace: list[Step] | None = None
    outcome: str = UNKNOWN
    note: str | None = None  # why the outcome is not ok
    conditional: bool = False  # an ``implies`` query proved while the invariant is not shown inductive
    prop_kind: str | None = None  # a bmc query's property kind: always, sometimes or terminal

    @property
    def expected_word(self) -> str | None:
        """The expectation as printed: ``unreached`` for a ``sometimes`` property
        expected ``violated`` (:func:`ordercheck.checker.api.result.verdict_word`)."""
        return verdict_word(self.prop_kind, self.expected)

    @property
    def as_expected(self) -> bool:
        """The outcome is ``ok``."""
        return self.outcome == OK

    @property
    def shown_status(self) -> str:
        """The status as every artifact prints it. A BMC query never says "proved": a
        bounded one says what it did not find (``no counterexample within k steps``),
        a decided one what it found (``counterexample in k steps``, ``witness in k
        steps``). An ``implies`` query proved from an invariant that is not shown
        inductive is ``conditional``: it says nothing about the model's runs."""
        if self.kind == "bmc" and self.status in ("bounded", "violated", "holds"):
            return self.explanation or self.status
        if self.conditional:
            return "conditional"
        return self.status

    @property
    def flag(self) -> str:
        """The last column: ``ok``, ``ok, as expected`` for a counterexample the model
        expects (a violation that is the verdict wanted, not a failure), ``UNKNOWN`` or
        ``UNEXPECTED``."""
        if self.outcome == OK:
            return "ok, as expected" if self.status == "violated" and self.expected == "violated" else "ok"
        return "UNKNOWN" if self.outcome == UNKNOWN else "UNEXPECTED"

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "trace"}
        out["trace"] = [asdict(s) for s in self.trace] if self.trace is not None else None
        out["shown"] = self.shown_status
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
    queue_free: bool = False  # the encoding keeps no queue (its max_queue is 0): queue_bound plays no part
    signals: bool = False  # the unbounded encoding has a side-channel signal action (any number of them)
    skipped: list[str] = field(default_factory=list)  # properties BMC has no encoding of
    bmc_encoding: str | None = None  # "exact" (step-exact, EXACT) or "bounded" (SYMBOLIC(bounded=True)); None: no BMC
    uncovered: list[str] = field(default_factory=list)  # implied by the targets, but queues too short to cover the model
    undecided: dict[str, str] = field(default_factory=dict)  # [expect]'s word for properties no query decides
    not_judged: dict[str, str] = field(default_factory=dict)  # [expect]'s word for properties [prove] properties leaves out
    judged: list[str] | None = None  # [prove] properties: the properties prove judges (None: every checked one)
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
        """1 when a query's outcome is a mismatch, else 3 when one is unknown, a
        property the model expects something of is :attr:`undecided`, or no query was
        asked at all (``--bmc-only --depth 0``), else 0."""
        outcomes = [q.outcome for q in self.queries]
        if MISMATCH in outcomes:
            return EXIT_MISMATCH
        if UNKNOWN in outcomes or self.undecided or not self.queries:  # nothing asked is no pass
            return EXIT_BOUND
        return EXIT_OK

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
            "bmc_encoding": self.bmc_encoding,
            "proof_uncovered": self.uncovered,
            "undecided": self.undecided,
            "queue_free": self.queue_free,
            "signals": self.signals,
            "judged": self.judged,
            "not_judged": self.not_judged,
        }


@dataclass(frozen=True)
class ProveOptions:
    """Command-line settings; ``None`` means "as the model's [prove] table says"."""

    depth: int | None = None
    drop: tuple[str, ...] = ()
    queue_bound: int | None = None
    timeout: float | None = None
    bmc_only: bool = False
    properties: tuple[str, ...] | None = None  # --property: replaces [prove] properties


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
    from ordercheck.specs.symbolic import SymState

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


def bmc_queries(
    sym: Any, names: list[str], depth: int, timeout: float | None, expect: dict[str, str] | None = None
) -> list[Query]:
    """Bounded model checking of the named properties to ``depth`` steps (shared
    unrolling); each query's ``expected`` is ``expect``'s word for its property."""
    expect = expect or {}
    from ordercheck.specs.symbolic import SymState

    states = [SymState(sym.schema, "s0")]
    solver = z3.Solver()
    solver.add(sym.init(states[0]))
    # An encoding with its own transition formula (the step-exact ones) is asked with a
    # new, non-incremental solver per query: it simplifies the whole unrolling first
    # (the frame equalities away), several times faster there than the incremental one.
    fresh = hasattr(sym, "transition")
    parts = [sym.init(states[0])]
    actions = sym.actions()
    open_props = [n for n in names if n in sym.properties]
    found: dict[str, tuple[int, z3.ModelRef, float]] = {}
    spent: dict[str, float] = dict.fromkeys(open_props, 0.0)
    unknown: dict[str, str] = {}
    for j in range(depth + 1):
        if j > 0:
            states.append(SymState(sym.schema, f"s{j}"))
            if fresh:  # an encoding's own form of Next (one formula per variable)
                parts.append(sym.transition(states[j - 1], states[j]))
            else:
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
            if fresh:
                asked = z3.SolverFor("QF_LIA")
                asked.add(*parts, z3.Or(list(goals.values())))
            else:
                asked = solver
                solver.push()
                solver.add(z3.Or(list(goals.values())))
            res, secs, reason = _check(asked, timeout)
            for name in goals:
                spent[name] += secs
            if res == z3.sat:
                model = asked.model()
                for name in [n for n, g in goals.items() if z3.is_true(model.eval(g, model_completion=True))]:
                    found[name] = (j, model, secs)
                    del goals[name]
            elif res == z3.unknown:
                for name in goals:
                    unknown[name] = reason or "unknown"
                goals = {}
            else:
                goals = {}
            if not fresh:
                solver.pop()
    out = []
    for name in open_props:
        kind = sym.properties[name][0]
        secs = round(spent[name], 3)
        wanted = expect.get(name)
        if name in unknown:
            out.append(Query(f"bmc: {name}", "bmc", "unknown", secs, wanted, reason=unknown[name]))
            continue
        if name in found:
            j, model, _ = found[name]
            trace = _trace(sym, model, states[: j + 1])
            if kind == "sometimes":
                q = Query(f"bmc: {name}", "bmc", "holds", secs, wanted, explanation=f"witness in {j} steps", trace=trace)
            else:
                q = Query(f"bmc: {name}", "bmc", "violated", secs, wanted, explanation=f"counterexample in {j} steps",
                          trace=trace)
        else:
            missing = "witness" if kind == "sometimes" else "counterexample"
            q = Query(f"bmc: {name}", "bmc", "bounded", secs, wanted, explanation=f"no {missing} within {depth} steps")
        q.doc = f"{kind} property {name}, runs of at most {depth} steps"
        q.prop_kind = kind
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
        cls = encoding_class(model)
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
    names, model_expect = judged_scope(model, result, options.properties)
    bounded = cls(model.spec, bounded=True)
    result.queue_free = hasattr(bounded, "max_queue") and bounded.max_queue() == 0
    result.signals = has_signals(unbounded)
    if not options.bmc_only:
        for name in [*lemmas, *targets, "initiation"]:
            expect.setdefault(name, "proved")
        result.queries += invariant_queries(unbounded, lemmas, targets, timeout, expect)
        if not result.inductive:  # Inv => P proved, but Inv is no invariant of the model: conditional
            for q in result.queries:
                if q.kind == "implies" and q.status == "proved":
                    q.conditional = True
                    q.explanation = (f"conditional: the invariant implies {q.name.removeprefix('implies: ')}, but the "
                                     "invariant is not shown inductive, so this says nothing about the model's runs")
        result.queries += proof_queries(result, unbounded, bounded, names, model_expect)
    # bounded model checking on the step-exact encoding where the spec has one for this
    # configuration (its properties are the spec's own, its lengths the explicit engine's)
    exact = exact_encoding(model) if depth > 0 else None
    finish(result, exact if exact is not None else bounded, names, depth, timeout, model_expect)
    if depth > 0:
        result.bmc_encoding = "exact" if exact is not None else "bounded"
    return result


def has_signals(sym: Any) -> bool:
    """Whether an encoding has a side-channel signal action (one named ``signal...``)."""
    return any(a.name.startswith("signal") for a in sym.actions())


def judged_scope(model: Model, result: ProveResult,
                 chosen: tuple[str, ...] | list[str] | None = None) -> tuple[list[str], dict[str, str]]:
    """The checked properties ``prove`` judges on ``model`` and their expectations.

    With ``[prove] properties`` (a list of the model's checked properties), only those
    get bounded model checking and proof queries, and only their ``[expect]`` entries
    can be undecided (exit 3); the expectations of the other properties go to
    ``result.not_judged``, printed as not judged (``check`` decides them), with no
    part in the exit code, as TLC checks only the invariants its configuration names.
    Without the key, every checked property is judged. ``chosen`` (``--property``)
    replaces the key. A name the model does not check is bad input naming
    ``prove.properties`` (or ``--property``)."""
    names = [p.name for p in model.properties]
    field = "--property" if chosen is not None else "prove.properties"
    if chosen is None:
        chosen = model.prove.get("properties")
    if chosen is None:
        return names, dict(model.expect)
    for name in chosen:
        if name not in names:
            raise InputError(model.path, field,
                             f"{name!r} is not a property this model checks (it checks: {', '.join(names)})")
    result.judged = list(chosen)
    result.not_judged = {n: w for n, w in model.expect.items() if n not in chosen}
    return [n for n in names if n in chosen], {n: w for n, w in model.expect.items() if n in chosen}


def finish(result: ProveResult, bounded: Any, names: list[str], depth: int, timeout: float | None,
           expect: dict[str, str]) -> None:
    """The end of a prove run, on any invariant (the encoding's lemmas or an inferred
    one): ``[prove] depth``'s bounded model checking of ``names``, each query judged
    against the model's ``expect``, and the expectations no query decided recorded as
    ``undecided``."""
    if depth > 0:
        started = time.monotonic()
        result.queries += bmc_queries(bounded, names, depth, timeout, expect)
        result.bmc_seconds = round(time.monotonic() - started, 3)
        result.skipped = [n for n in names if n not in bounded.properties]
    judge(result.queries)
    asked = {q.name.split(": ", 1)[1] for q in result.queries if q.kind in ("bmc", "proof")}
    result.undecided = {name: word for name, word in expect.items() if name not in asked}


def proof_queries(result: ProveResult, unbounded: Any, bounded: Any, names: list[str],
                  expect: dict[str, str]) -> list[Query]:
    """A ``proof: P`` query for each checked property ``P`` the invariant queries of
    ``result`` establish on every run of the model: the invariant is inductive, every
    target the encoding's ``guarantees`` name for ``P`` is implied, and the unbounded
    encoding's queues are as long as a run of the model can fill (``max_queue``).
    ``result.uncovered`` says why a property the targets do cover gets no proof when
    the queues are too short."""
    guarantees: dict[str, tuple[str, ...]] = getattr(unbounded, "guarantees", {})
    if not result.inductive or not guarantees:
        return []
    implied = {q.name.removeprefix("implies: ") for q in result.queries if q.kind == "implies" and q.status == "proved"}
    need = bounded.max_queue() if hasattr(bounded, "max_queue") else None
    out = []
    for name in names:
        targets = guarantees.get(name)
        if not targets or not all(t in implied for t in targets):
            continue
        if need is None or result.queue_bound < need:
            result.uncovered.append(name)
            continue
        cover = (f"queues of {result.queue_bound} entries hold every run of the model (at most {need} per queue)"
                 if need else "the encoding keeps no queue (any number of messages in flight)")
        out.append(Query(
            f"proof: {name}", "proof", "holds", 0.0, expect.get(name),
            f"{name} on every run of the model",
            explanation=f"the inductive invariant implies {' and '.join(targets)}, and {cover}",
        ))
    return out


def judge(queries: list[Query]) -> None:
    """Set each query's ``outcome`` (and ``note`` when it is not ``ok``) by the table
    in the module's docstring."""
    proved = {q.name.removeprefix("proof: ") for q in queries if q.kind == "proof" and q.status == "holds"}
    for q in queries:
        q.outcome, q.note = _outcome(q, proved)


def _outcome(q: Query, proved: set[str]) -> tuple[str, str | None]:
    if q.status == "unknown":
        return UNKNOWN, "Z3 could not decide it"
    if q.kind not in ("bmc", "proof"):
        if q.expected is None:  # an invariant query with no expectation (a direct caller's)
            return (MISMATCH, "refuted") if q.status == "refuted" else (OK, None)
        return (OK, None) if q.status == q.expected else (MISMATCH, f"expected {q.expected}")
    prop = q.name.split(": ", 1)[1]
    expected = q.expected
    if q.status == "violated":
        if expected == "violated":
            return OK, None
        return MISMATCH, (f"the model expects {prop} to hold" if expected else f"{prop} has no expectation and is violated")
    if q.status == "holds":
        if expected == "violated":
            return MISMATCH, f"the model expects {prop} violated"
        return OK, None
    # bounded: no counterexample (or witness) within the depth
    witness = (q.explanation or "").startswith("no witness")
    if expected == "violated":
        if witness:
            return UNKNOWN, (f"the model expects {prop} unreached (no witness on any run): a bounded search "
                             "cannot show that (run check)")
        return UNKNOWN, (f"the model expects {prop} violated: the depth is too small to decide "
                         "(raise --depth, or run check)")
    if witness:
        return UNKNOWN, f"the depth is too small to reach a witness of {prop} (raise --depth, or run check)"
    if prop in proved:
        return OK, None
    return UNKNOWN, (f"a bounded search is no proof that {prop} holds "
                     f"({'the model expects it to hold; ' if expected else ''}run check, or prove it by induction)")

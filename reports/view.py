"""Everything a report shows, gathered once from results and specs for every format.

The HTML, Markdown and JUnit renderers read a :class:`ReportView`; none of them looks
at a spec or replays a trace itself. Inputs are :class:`~ordercheck.checker.api.result.Result` values
(``ordercheck check --json``) and ablation records (``ordercheck ablate --json``, see
:class:`Ablation`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ordercheck.checker.api.expectation import category as expectation_category
from ordercheck.checker.api.expectation import cell_sentence, glyph, mutant_steps, property_order
from ordercheck.checker.api.result import PropertyResult, RecordError, Result, verdict_word
from ordercheck.checker.api.spec import Property, Spec
from ordercheck.reports.diagram import Diagram, layout
from ordercheck.reports.diff import Change, diff
from ordercheck.reports.proofs import ProofRecord
from ordercheck.reports.timeline import (
    Blame,
    Timeline,
    TimelineUnavailable,
    blame,
    build_timeline,
    load_spec,
    replay_states,
)


@dataclass
class Ablation:
    """An ablation run: the full algorithm, then each ablation flag switched off alone."""

    model: str
    spec: str
    baseline: Result
    mutants: list[tuple[str, str, Result]]  # flag, what the step does, result
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "ablation",
            "model": self.model,
            "spec": self.spec,
            "note": self.note,
            "baseline": self.baseline.to_json(),
            "ablations": [{"flag": f, "doc": doc, "result": r.to_json()} for f, doc, r in self.mutants],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], path: str = "") -> Ablation:
        """The ablation run an ``ablate --json`` record holds, every field checked
        (:meth:`ordercheck.checker.api.result.Result.from_json`; :class:`~ordercheck.checker.api.result.RecordError`
        names a field of the wrong type)."""
        def text(value: Any, where: str) -> str:
            if not isinstance(value, str):
                raise RecordError(where, "expected a string")
            return value

        at = f"{path}." if path else ""
        runs = data.get("ablations", [])
        if not isinstance(runs, list):
            raise RecordError(f"{at}ablations", "expected an array")
        ablations = []
        for i, a in enumerate(runs):
            where = f"{at}ablations[{i}]"
            if not isinstance(a, dict):
                raise RecordError(where, "expected a JSON object")
            ablations.append((text(a["flag"], f"{where}.flag"), text(a.get("doc", ""), f"{where}.doc"),
                              Result.from_json(a["result"], f"{where}.result")))
        return cls(
            text(data["model"], f"{at}model"),
            text(data["spec"], f"{at}spec"),
            Result.from_json(data["baseline"], f"{at}baseline"),
            ablations,
            text(data.get("note", ""), f"{at}note"),
        )


@dataclass
class AblationOutcome:
    """What switching one step off did, in the words the console table, the HTML and
    the Markdown report all use (:func:`ablation_outcome`).

    ``changes``: each property whose verdict differs from the full algorithm's, with
    its new verdict word (``violated``, ``unreached``, ``holds``...); ``undecided``:
    properties a bound left ``unknown``; ``inert``: the mutant's search found the same
    number of states and transitions and every verdict the same (the flag changes
    nothing in this configuration); ``checked``: the properties the model checks."""

    changes: list[tuple[str, str]]
    undecided: list[str]
    inert: bool
    states: int
    checked: list[str]

    @property
    def breaks(self) -> str:
        """The ``breaks`` cell: the changed properties (``NAME`` for a violation,
        ``NAME WORD`` for any other change), or why there is none."""
        if self.changes:
            return ", ".join(name if word == "violated" else f"{name} {word}" for name, word in self.changes)
        if self.undecided:
            return "unknown (a bound stopped the search)"
        if self.inert:
            return "inert here"
        return "none of those checked"

    def sentence(self, flag: str, doc: str) -> str | None:
        """The console's line for a row without a change (``None`` when something changed)."""
        what = f" ({doc})" if doc else ""
        if self.changes:
            return None
        if self.undecided:
            return (f"{flag}{what}: unknown whether anything breaks without this step: "
                    f"{', '.join(self.undecided)} undecided (a bound stopped the search)")
        if self.inert:
            return (f"{flag}{what}: inert here: without this step the search finds the same {self.states:,} states "
                    "and every verdict the same, so this configuration cannot show what the step protects")
        return (f"{flag}{what}: none of the {len(self.checked)} properties this model checks breaks without this "
                "step; it may protect one the model does not check")


def ablation_outcome(baseline: Result, mutant: Result) -> AblationOutcome:
    """Compare a mutant's result with the full algorithm's (see :class:`AblationOutcome`)."""
    base = baseline.properties
    changes = [(name, p.word) for name, p in mutant.properties.items() if name in base and base[name].status != p.status]
    undecided = [name for name, p in mutant.properties.items() if p.status == "unknown"]
    same_search = (mutant.stats.distinct_states == baseline.stats.distinct_states
                   and mutant.stats.transitions == baseline.stats.transitions
                   and not mutant.stats.bound and not baseline.stats.bound)
    inert = same_search and not changes and not undecided and set(mutant.properties) == set(base)
    return AblationOutcome(changes, undecided, inert, mutant.stats.distinct_states, list(mutant.properties))


def full_algorithm_label(note: str) -> str:
    """How the ablation table names its first row: every flag on is the full algorithm,
    also when the model file itself switches steps off (``note`` says which, and the
    table's text says the row starts from every step on); it is the model's *label*
    that never calls a mutant's file the full algorithm (:func:`build_report`)."""
    return "none (full algorithm)"


@dataclass
class StepView:
    number: int
    action: str
    changes: list[Change]
    hot: bool = False


@dataclass
class TraceView:
    """A counterexample or witness, ready to draw."""

    anchor: str
    slug: str
    model: str
    prop: str
    kind: str
    status: str
    explanation: str
    steps: list[StepView]
    diagram: Diagram | None
    note: str | None
    timeline: Timeline | None
    blame: Blame | None
    raw: PropertyResult
    spec: str
    constants: dict[str, Any]
    source: str = ""
    loop_start: int | None = None  # a lasso: the last state is the one after this step
    result: Result | None = None  # the model's result, which describes the model (ordercheck.reports.about)
    judged: bool = True  # False in an ablation run: no [expect] applies to a step switched off

    @property
    def as_expected(self) -> bool:
        """Whether the verdict is the model's ``[expect]`` (always, in an ablation run)."""
        return self.raw.as_expected or not self.judged

    @property
    def culprits(self) -> list[str]:
        """What the diagram highlights, in words: ``step 20: d received c1``..."""
        tl, bl = self.timeline, self.blame
        if tl is None or bl is None:
            return []
        out = [
            f"step {e.step}: {e.text}"
            for e in tl.events
            if e.kind in ("deliver", "drop") and (e.peer, e.log_index) in bl.deliveries
        ]
        out += [f"{tl.message_name(m)} to {tl.peers[q]}: not yet delivered there" for m, q in sorted(bl.awaited)]
        out += [f"{tl.message_name(m)} to {tl.peers[q]}: never delivered" for m, q in sorted(bl.missing)]
        if not out:
            out = [f"step {k}: {self.steps[k].action}" for k in sorted(bl.steps) if k < len(self.steps)]
        return out

    @property
    def witness(self) -> bool:
        return self.kind == "sometimes" and self.status == "holds"

    @property
    def word(self) -> str:
        """The verdict as printed (``unreached`` for a ``sometimes`` never reached)."""
        return verdict_word(self.kind, self.status) or self.status

    @property
    def title(self) -> str:
        return f"{'witness' if self.witness else 'counterexample'}: {self.model} · {self.prop}"


class _Words:
    """The verdict and the expectation of a property's row or cell as every artifact prints
    them (:func:`ordercheck.checker.api.result.verdict_word`): ``kind``, ``status`` and ``expected``
    are the holder's fields."""

    kind: str | None
    status: str
    expected: str | None

    @property
    def word(self) -> str:
        """The verdict as printed (``unreached`` for a ``sometimes`` never reached)."""
        return verdict_word(self.kind, self.status) or self.status

    @property
    def expected_word(self) -> str | None:
        """The expectation as printed (:func:`ordercheck.checker.api.result.verdict_word`)."""
        return verdict_word(self.kind, self.expected)


@dataclass
class PropertyView(_Words):
    name: str
    kind: str
    status: str
    expected: str | None
    as_expected: bool
    explanation: str | None
    doc: str
    trace: TraceView | None


@dataclass
class ModelView:
    label: str
    slug: str
    result: Result
    properties: list[PropertyView]
    group: str = ""
    judged: bool = True  # False for ablation runs: no [expect] applies to a mutant
    mutant: list[str] = field(default_factory=list)  # what makes the model a mutant (ordercheck.checker.api.expectation)

    @property
    def name(self) -> str:
        """The model file's name without ``.toml``."""
        return Path(self.result.model).stem

    @property
    def description(self) -> str:
        """The model file's one-line description ("" for a result recorded without it)."""
        return self.result.description

    @property
    def not_checked(self) -> dict[str, str]:
        """Each property of the spec the model leaves out -> the model file's reason
        ("" for none given; empty for a result recorded without them)."""
        return dict(self.result.not_checked)

    @property
    def ok(self) -> bool:
        return not self.judged or self.result.exit_code() == 0

    @property
    def unexpected(self) -> list[PropertyView]:
        return [p for p in self.properties if not p.as_expected]


@dataclass
class Cell(_Words):
    status: str
    changed: bool
    anchor: str | None
    steps: int | None
    explanation: str | None
    expected: str | None = None
    as_expected: bool = True
    kind: str | None = None
    category: str = ""  # what the verdict means against the expectation (ordercheck.checker.api.expectation)

    @property
    def glyph(self) -> str:
        """The matrix's mark for this cell (:func:`ordercheck.checker.api.expectation.glyph`)."""
        return glyph(self.category or "unjudged", self.kind, self.status)

    @property
    def sentence(self) -> str:
        """The verdict and what was expected, in words (the matrix cell's tooltip)."""
        return cell_sentence(self.category or "unjudged", self.kind, self.status, self.expected, self.steps)


@dataclass
class SpecMatrix:
    """The matrix of one spec: its guarantee ``models`` before its ``mutants``, its
    ``guarantees`` (always, eventually) before its ``witnesses`` (sometimes)."""

    spec: str
    models: list[ModelView]
    mutants: list[ModelView]
    guarantees: list[str]
    witnesses: list[str]

    @property
    def columns(self) -> list[str]:
        return [*self.guarantees, *self.witnesses]

    @property
    def unexpected(self) -> int:
        """How many of its verdicts differ from the expectation."""
        return sum(1 for m in [*self.models, *self.mutants] for p in m.properties
                   if not p.as_expected and p.status != "unknown")

    @property
    def unknown(self) -> int:
        """How many of its verdicts a bound left unknown."""
        return sum(1 for m in [*self.models, *self.mutants] for p in m.properties if p.status == "unknown")


@dataclass
class AblationView:
    model: str
    spec: str
    note: str
    baseline: ModelView
    properties: list[str]
    rows: list[tuple[str, str, ModelView, dict[str, Cell]]]  # flag, doc, mutant, cells
    outcomes: dict[str, AblationOutcome] = field(default_factory=dict)  # flag -> what switching it off did

    @property
    def first_row(self) -> str:
        """The first row's label (:func:`full_algorithm_label`)."""
        return full_algorithm_label(self.note)

    @property
    def baseline_cells(self) -> dict[str, Cell]:
        return {p.name: _cell(p, None) for p in self.baseline.properties}


@dataclass
class ReportView:
    title: str
    models: list[ModelView]
    columns: list[str]
    ablations: list[AblationView] = field(default_factory=list)
    proofs: list[ProofRecord] = field(default_factory=list)  # ``prove --json`` records

    @property
    def traces(self) -> list[TraceView]:
        return [p.trace for m in self.models for p in m.properties if p.trace is not None]

    def cell(self, model: ModelView, column: str) -> Cell | None:
        for p in model.properties:
            if p.name == column:
                return _cell(p, None, bool(model.mutant))
        return None

    @property
    def matrices(self) -> list[SpecMatrix]:
        """The protocol x property matrix, one :class:`SpecMatrix` per spec in the
        order the models meet them; ablation runs (not judged) have their own tables."""
        specs: dict[str, list[ModelView]] = {}
        for m in self.models:
            if m.judged:
                specs.setdefault(m.result.spec, []).append(m)
        out = []
        for spec, models in specs.items():
            props: list[str] = []
            witness: set[str] = set()
            for m in models:
                for p in m.properties:
                    if p.name not in props:
                        props.append(p.name)
                    if p.kind == "sometimes":
                        witness.add(p.name)
            order = property_order(props)
            out.append(SpecMatrix(spec, [m for m in models if not m.mutant], [m for m in models if m.mutant],
                                  [c for c in order if c not in witness], [c for c in order if c in witness]))
        return out


def build_report(
    items: list[Result | Ablation | ProofRecord],
    title: str = "ordercheck report",
    specs: dict[str, type[Spec]] | None = None,
) -> ReportView:
    """Gather results and ablation runs into one view (models in the order given).

    Specs are found by name in the ``specs`` package; ``specs`` adds classes by name
    (for specs defined outside it).
    """
    slugs: set[str] = set()
    extra = specs or {}
    models: list[ModelView] = []
    ablations: list[AblationView] = []
    proofs: list[ProofRecord] = []
    for item in items:
        if isinstance(item, ProofRecord):
            proofs.append(item)
        elif isinstance(item, Ablation):
            name = Path(item.model).stem
            # A mutant's file (one that switches steps off) is not the full algorithm: its
            # baseline is that file with every step switched back on.
            label = f"{name} with every step on" if item.note else f"{name} (full algorithm)"
            base = model_view(item.baseline, label, slugs, f"ablation of {name}", False, extra)
            models.append(base)
            rows = []
            for flag, doc, result in item.mutants:
                mv = model_view(result, f"{name} without {flag}", slugs, f"ablation of {name}", False, extra)
                models.append(mv)
                before = {p.name: p.status for p in base.properties}
                cells = {p.name: _cell(p, before.get(p.name)) for p in mv.properties}
                rows.append((flag, doc, mv, cells))
            props = [p.name for p in base.properties]
            outcomes = {flag: ablation_outcome(item.baseline, result) for flag, _doc, result in item.mutants}
            ablations.append(AblationView(item.model, item.spec, item.note, base, props, rows, outcomes))
        else:
            models.append(model_view(item, Path(item.model).stem, slugs, specs=extra))
    columns: list[str] = []
    for m in models:
        for p in m.properties:
            if p.name not in columns:
                columns.append(p.name)
    return ReportView(title, models, columns, ablations, proofs)


def _cell(p: PropertyView, baseline: str | None, mutant: bool = False) -> Cell:
    steps = len(p.trace.steps) - 1 if p.trace is not None else None
    return Cell(
        p.status,
        baseline is not None and baseline != p.status,
        p.trace.anchor if p.trace is not None else None,
        steps,
        p.explanation,
        p.expected,
        p.as_expected,
        p.kind,
        expectation_category(p.kind, p.status, p.expected, p.as_expected, mutant),
    )


SLUG_MAX = 80
"""The longest slug: report file names are built of two (a model's and a property's)
and a suffix, and must stay within a file system's 255 bytes a name."""


def slugify(text: str, taken: set[str]) -> str:
    """An anchor- and file-safe name, unique among ``taken`` (which it joins). A name
    longer than :data:`SLUG_MAX` is cut and ends with a digest of the whole ``text``,
    so that it stays unique and is the same in every run."""
    base = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.").lower() or "x"
    if len(base) > SLUG_MAX:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        base = f"{base[:SLUG_MAX - 13].rstrip('-.')}-{digest}"
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    taken.add(slug)
    return slug


def model_view(
    result: Result,
    label: str,
    slugs: set[str],
    group: str = "",
    judged: bool = True,
    specs: dict[str, type[Spec]] | None = None,
) -> ModelView:
    """One model's verdicts, with every trace replayed and laid out."""
    slug = slugify(label, slugs)
    spec: Spec | None = None
    spec_note = None
    try:
        spec = load_spec(result.spec, result.constants, (specs or {}).get(result.spec))
    except TimelineUnavailable as exc:
        spec_note = str(exc)
    known: dict[str, Property] = spec.property_map() if spec is not None else {}
    mutant = mutant_steps(type(spec), result.constants) if spec is not None else []
    props = []
    for name, pr in result.properties.items():
        prop = known.get(name)
        trace = None
        if pr.trace:
            trace = trace_view(result, pr, spec, prop, label, f"{slug}--{slugify(name, set())}", spec_note)
            trace.judged = judged
        props.append(
            PropertyView(
                name, pr.kind, pr.status, pr.expected, pr.as_expected or not judged, pr.explanation,
                prop.doc if prop is not None else "", trace,
            )
        )
    return ModelView(label, slug, result, props, group, judged, mutant)


def trace_view(
    result: Result,
    pr: PropertyResult,
    spec: Spec | None,
    prop: Property | None,
    label: str,
    slug: str,
    spec_note: str | None,
) -> TraceView:
    """Replay one trace and lay out its diagram; on failure keep the steps and say why."""
    steps = pr.trace or []
    timeline = None
    bl = None
    diagram = None
    note = spec_note
    if spec is not None:
        try:
            states = replay_states(spec, steps)
            timeline = build_timeline(spec, steps, states)
            bl = blame(timeline, prop, pr.status)
            diagram = layout(timeline, bl, slug, pr.loop_start)
        except TimelineUnavailable as exc:
            note = str(exc)
    hot_steps = bl.steps if bl is not None else {len(steps) - 1}
    views = []
    prev = None
    for k, step in enumerate(steps):
        changes = diff(prev, step.state) if prev is not None else []
        views.append(StepView(k, step.action or "initial state", changes, k in hot_steps))
        prev = step.state
    if bl is not None and timeline is not None:
        for e in timeline.events:
            if (e.peer, e.log_index) in bl.deliveries and e.kind in ("deliver", "drop"):
                views[e.step].hot = True
    return TraceView(
        anchor=f"trace-{slug}",
        slug=slug,
        model=label,
        prop=pr.name,
        kind=pr.kind,
        status=pr.status,
        explanation=pr.explanation or "",
        steps=views,
        diagram=diagram,
        note=note,
        timeline=timeline,
        blame=bl,
        raw=pr,
        spec=result.spec,
        constants=result.constants,
        source=result.model,
        loop_start=pr.loop_start,
        result=result,
    )


def initial_state(trace: TraceView) -> list[Change]:
    """The first state in full, as changes from nothing."""
    steps = trace.raw.trace or []
    return diff(None, steps[0].state) if steps else []

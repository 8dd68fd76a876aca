"""A pull-request summary of a report: short enough for a forge's comment, whatever the suite.

``report.md`` holds every trace of every model (1.4 MB for the built-in suite); a pull
request comment on the common forges holds 65,536 characters. :func:`render_summary`
writes what a reviewer of a change needs first, always in fewer than
:data:`SUMMARY_LIMIT` characters:

- a headline: models, as expected, with an unexpected verdict, stopped by a bound;
- with a baseline (an earlier ``check --json`` file, :func:`compare`), what changed
  since it: verdicts, models added and removed, state counts;
- each unexpected verdict with its explanation and its (shortest) trace, long traces
  trimmed to their first and last steps;
- a per-spec table of the verdicts by expectation;
- links to the full pages of the report directory (``index.html``, ``traces/*.html``).

Every list is cut to the room left for it and ends with ``… N more, see PAGE``; every
name and value is cut to a fixed length before it is escaped (:func:`ordercheck.reports.markdown.md`),
so no input can push the document past the limit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from ordercheck.checker.api.result import Result, verdict_word
from ordercheck.reports.markdown import md
from ordercheck.reports.view import ModelView, PropertyView, ReportView, StepView, TraceView

SUMMARY_LIMIT = 60_000
"""The summary is always shorter than this many characters (a forge's pull-request
comment holds 65,536)."""

NAME_CUT = 80
"""Names (models, properties, specs) are cut to this many characters before escaping."""

TEXT_CUT = 400
"""Explanations are cut to this many characters before escaping."""

TRACE_STEPS = 24
"""A trace of more steps shows its first two, its last ``TRACE_STEPS - 2`` and the
steps the diagram highlights (:func:`trace_lines`)."""

TRACE_CUT = 4_000
"""The most characters one trace's block takes; its lines past that are left out."""

LINE_CUT = 200
"""The longest line of a trace block."""

URL_CUT = 1_000
"""The longest link prefix (``report --summary-url``)."""

def _cut(value: object, n: int) -> str:
    """``value`` as one line of at most ``n`` characters (``…`` where cut)."""
    text = " ".join(str(value).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _name(value: object) -> str:
    return md(_cut(value, NAME_CUT))


# -- what changed since a baseline -------------------------------------------------------


@dataclass
class VerdictChange:
    """One property whose verdict differs from the baseline's (``None``: not checked there)."""

    model: str
    prop: str
    before: str | None
    after: str | None
    as_expected: bool
    unknown: bool


@dataclass
class StateChange:
    """A model whose search found another number of distinct states."""

    model: str
    before: int
    after: int
    note: str  # "reductions differ", "stopped by a bound", or ""


@dataclass
class Changes:
    """What differs between a baseline's results and the current ones, each list in the
    current results' order (removed models in the baseline's)."""

    baseline: str
    baseline_models: int
    verdicts: list[VerdictChange] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    states: list[StateChange] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.verdicts or self.added or self.removed or self.states)


def _keyed(results: list[Result]) -> dict[str, Result]:
    """Results by model path; a path checked more than once is ``PATH (2)``, ``PATH (3)``..."""
    out: dict[str, Result] = {}
    seen: Counter[str] = Counter()
    for r in results:
        seen[r.model] += 1
        out[r.model if seen[r.model] == 1 else f"{r.model} ({seen[r.model]})"] = r
    return out


def compare(current: list[Result], baseline: list[Result], name: str) -> Changes:
    """What changed from ``baseline`` (the results of the file ``name``) to ``current``:
    models are matched by their file path, properties by name."""
    now, before = _keyed(current), _keyed(baseline)
    out = Changes(name, len(baseline))
    out.added = [k for k in now if k not in before]
    out.removed = [k for k in before if k not in now]
    for key, r in now.items():
        old = before.get(key)
        if old is None:
            continue
        for prop in [*r.properties, *(p for p in old.properties if p not in r.properties)]:
            p, q = r.properties.get(prop), old.properties.get(prop)
            was = q.word if q is not None else None
            is_ = p.word if p is not None else None
            if was != is_:
                out.verdicts.append(VerdictChange(key, prop, was, is_, p is None or p.as_expected,
                                                  p is not None and p.status == "unknown"))
        if r.stats.distinct_states != old.stats.distinct_states:
            note = ("reductions differ" if _switched_on(r.reductions) != _switched_on(old.reductions)
                    else "stopped by a bound" if r.stats.bound or old.stats.bound else "")
            out.states.append(StateChange(key, old.stats.distinct_states, r.stats.distinct_states, note))
    return out


def _switched_on(reductions: dict[str, bool]) -> set[str]:
    """The reductions a record has on: a key an older record lacks (a reduction its
    version did not report) reads as off, as a newer record's reduction left off does."""
    return {name for name, on in reductions.items() if on}


# -- the document ------------------------------------------------------------------------


class _Links:
    """Links to the report directory's pages, relative or under a published address."""

    def __init__(self, base: str) -> None:
        self.base = quote(base, safe=":/?#[]@!$&'*+,;=%~") if base else ""
        if self.base and not self.base.endswith("/"):
            self.base += "/"

    def index(self, anchor: str = "") -> str:
        return f"{self.base}index.html" + (f"#{anchor}" if anchor else "")

    def model(self, mv: ModelView) -> str:
        return self.index(f"model-{mv.slug}")

    def trace(self, t: TraceView) -> str:
        return f"{self.base}traces/{t.slug}.html"


def _fit(items: Iterable[str], count: int, room: int, more: Callable[[int], str]) -> str:
    """As many of the ``count`` ``items`` as fit in ``room`` characters, in order, then
    ``more(N)`` for the ``N`` left out (room for it is kept). ``items`` is read lazily:
    those past the room are never rendered."""
    out: list[str] = []
    used = 0
    reserve = len(more(count))  # the longest "more" line this list can need
    for i, item in enumerate(items):
        if used + len(item) + reserve > room:
            out.append(more(count - i))
            break
        out.append(item)
        used += len(item)
    return "".join(out)


def _more(links: _Links, what: str, where: str, anchor: str = "") -> Callable[[int], str]:
    return lambda n: f"\n… {n:,} more {what}, see [{where}]({links.index(anchor)}).\n"


def _category(p: PropertyView) -> str:
    """A verdict's column in the per-spec table."""
    if p.status == "unknown":
        return "unknown"
    if not p.as_expected:
        return "unexpected"
    return {"holds": "reached" if p.kind == "sometimes" else "holds"}.get(
        p.status, "unreached" if p.kind == "sometimes" else "violated")


_COLUMNS = (("holds", "holds ✓"), ("violated", "violated ✓"), ("reached", "reached ✓"),
            ("unreached", "unreached ✓"), ("unexpected", "⚠️ unexpected"), ("unknown", "unknown"))


def _spec_table(models: list[ModelView], links: _Links, room: int) -> str:
    by_spec: dict[str, Counter[str]] = {}
    counts: Counter[str] = Counter()
    for mv in models:
        counts[mv.result.spec] += 1
        c = by_spec.setdefault(mv.result.spec, Counter())
        c.update(_category(p) for p in mv.properties)
    head = ("## Verdicts by spec\n\n✓: as the model's `[expect]` says (a property with no expectation is "
            "expected not to be violated).\n\n| spec | models |" + "".join(f" {t} |" for _k, t in _COLUMNS)
            + "\n|---|---|" + "---|" * len(_COLUMNS) + "\n")
    rows = [f"| {_name(spec)} | {counts[spec]} |" + "".join(f" {c[k] or '·'} |" for k, _t in _COLUMNS) + "\n"
            for spec, c in by_spec.items()]
    return head + _fit(rows, len(rows), room - len(head), _more(links, "specs", "the matrix", "matrix"))


def _headline(models: list[ModelView], view: ReportView, links: _Links) -> str:
    unexpected = [mv for mv in models if any(p.status != "unknown" and not p.as_expected for p in mv.properties)]
    bounded = [mv for mv in models if any(p.status == "unknown" for p in mv.properties)]
    verdicts = sum(len(mv.properties) for mv in models)
    bad = sum(1 for mv in models for p in mv.properties if p.status != "unknown" and not p.as_expected)
    ok = len(models) - len({id(mv) for mv in [*unexpected, *bounded]})
    mark = "❌" if unexpected else "⚠️" if bounded else "✅"
    line = (f"{mark} **{len(models):,} model{'s' if len(models) != 1 else ''}: {ok:,} as expected, "
            f"{len(unexpected):,} with an unexpected verdict ({bad:,} of {verdicts:,} verdicts), "
            f"{len(bounded):,} stopped by a bound** (unknown verdicts).")
    extra = []
    runs = len(view.models) - len(models)
    if runs:
        extra.append(f"{runs:,} ablation run{'s' if runs != 1 else ''} (not judged: no expectation applies to a "
                     "step switched off)")
    if view.proofs:
        not_ok = sum(1 for pr in view.proofs if not pr.ok)
        extra.append(f"{len(view.proofs):,} `prove` record{'s' if len(view.proofs) != 1 else ''}, "
                     f"{not_ok:,} with a query not ok")
    tail = f" Also in the report: {'; '.join(extra)}." if extra else ""
    return (f"# ordercheck summary\n\n{line}{tail}\n\nFull report: [index.html]({links.index()}) "
            f"(every model, verdict and trace).\n")


def _now_is(v: VerdictChange) -> str:
    if v.after is None:
        return "—"
    return "unknown" if v.unknown else "✓ as expected" if v.as_expected else "⚠️ unexpected"


def _word(w: str | None) -> str:
    return "not checked" if w is None else w


def _diff_section(ch: Changes, models: dict[str, ModelView], links: _Links, room: int) -> str:
    def label(key: str) -> str:
        mv = models.get(key)
        name = _name(Path(key).name.removesuffix(".toml"))
        return f"[{name}]({links.model(mv)})" if mv is not None else name

    head = (f"## Since the baseline\n\nCompared with `{_cut(Path(ch.baseline).name, NAME_CUT).replace('`', chr(39))}` "
            f"({ch.baseline_models:,} model{'s' if ch.baseline_models != 1 else ''}): {len(ch.verdicts):,} verdict{'s' if len(ch.verdicts) != 1 else ''} "
            f"changed, {len(ch.added):,} model{'s' if len(ch.added) != 1 else ''} added, {len(ch.removed):,} removed, "
            f"{len(ch.states):,} state count{'s' if len(ch.states) != 1 else ''} changed.\n")
    if ch.empty:
        return head
    parts = [head]
    left = room - len(head)
    # verdicts first: up to two thirds of the room, the rest shared by the other lists
    if ch.verdicts:
        rows = (f"| {label(v.model)} | {_name(v.prop)} | {_word(v.before)} | {_word(v.after)} | "
                f"{_now_is(v)} |\n"
                for v in sorted(ch.verdicts, key=lambda v: v.as_expected))
        text = "\n### Verdicts changed\n\n| model | property | before | now | now is |\n|---|---|---|---|---|\n"
        text += _fit(rows, len(ch.verdicts), left * 2 // 3 - len(text),
                     _more(links, "changed verdicts", "the matrix", "matrix"))
        parts.append(text)
        left -= len(text)
    lists = [(ch.added, "Models added", "added models"), (ch.removed, "Models removed", "removed models")]
    for keys, title, what in lists:
        if keys:
            text = f"\n### {title}\n\n"
            text += _fit((f"- {label(k)}\n" for k in keys), len(keys), left // 2 - len(text),
                         _more(links, what, "the report"))
            parts.append(text)
            left -= len(text)
    if ch.states:
        rows = (f"| {label(s.model)} | {s.before:,} | {s.after:,} | "
                f"{(s.after - s.before) / s.before:+.1%} | {s.note} |\n" if s.before else
                f"| {label(s.model)} | {s.before:,} | {s.after:,} | | {s.note} |\n" for s in ch.states)
        text = "\n### State counts changed\n\n| model | before | now | change | note |\n|---|---|---|---|---|\n"
        text += _fit(rows, len(ch.states), left - len(text),
                     _more(links, "models whose state count changed", "the report", "models"))
        parts.append(text)
    return "".join(parts)


def _fence(lines: list[str]) -> str:
    """``lines`` as a fenced code block whose fence no line can close."""
    ticks = 3
    for line in lines:
        run = 0
        for ch in line:
            run = run + 1 if ch == "`" else 0
            ticks = max(ticks, run + 1)
    fence = "`" * ticks
    return f"{fence}text\n" + "".join(f"{line}\n" for line in lines) + f"{fence}\n"


def _cell(text: str | None, width: int = 48) -> str:
    text = "—" if text is None else text
    return text if len(text) <= width else text[: width - 1] + "…"


def _step(s: StepView, most: int = 3) -> list[str]:
    """One step as the CI log shows it (:func:`ordercheck.reports.diff.step_lines`): its number and
    action, and below it at most ``most`` of its changes."""
    lines = [f"{s.number:>3}. {s.action}" + ("  ⬅" if s.hot else "")]
    shown = [f"{c.path}: {_cell(c.after)} (new)" if c.added else f"{c.path}: gone" if c.removed
             else f"{c.path}: {_cell(c.before)} → {_cell(c.after)}" for c in s.changes[:most]]
    if len(s.changes) > most:
        shown.append(f"+{len(s.changes) - most} more")
    if shown:
        lines.append("       " + "; ".join(shown))
    return lines


def _code_line(line: str) -> str:
    """``line`` as one line of a code block: its indentation kept, any line break or run
    of white space inside it one space, at most :data:`LINE_CUT` characters."""
    indent = len(line) - len(line.lstrip(" "))
    text = " " * indent + " ".join(line.split())
    return text if len(text) <= LINE_CUT else text[: LINE_CUT - 1] + "…"


def trace_lines(t: TraceView) -> list[str]:
    """A trace as the CI log shows it (:func:`ordercheck.reports.diff.step_lines`), the steps the
    diagram highlights marked ``⬅``, in at most :data:`TRACE_CUT` characters, no line
    longer than :data:`LINE_CUT`. A trace of more than :data:`TRACE_STEPS` steps keeps
    its first two, its last ones and the highlighted ones; one still too long loses its
    earliest middle steps first, so its end, where the property breaks, always shows.
    A line says which steps were left out."""
    groups = [[_code_line(line) for line in _step(s)] for s in t.steps]
    n = len(groups)
    tail = TRACE_STEPS - 2
    hot = {s.number for s in t.steps if s.hot}
    keep = {k for k in range(n) if k < 2 or k >= n - tail or k in hot}
    # dropped first: the middle steps not highlighted, earliest first; then highlighted ones; then step 1
    order = sorted((k for k in keep if 0 < k < n - 1), key=lambda k: (k == 1, k in hot, k))

    def gap(a: int, b: int) -> str:
        return f"     … step {a} left out" if a == b else f"     … steps {a}–{b} left out (see the trace page)"

    def render(shown: set[int]) -> list[str]:
        out: list[str] = []
        prev = -1
        for k in sorted(shown):
            if k > prev + 1:
                out.append(gap(prev + 1, k - 1))
            out += groups[k]
            prev = k
        if t.loop_start is not None:
            out.append(f"     (a run that never ends: steps {t.loop_start + 1}–{n - 1} repeat for ever)")
        return out

    lines = render(keep)
    while sum(len(line) + 1 for line in lines) > TRACE_CUT and order:
        keep.discard(order.pop(0))
        lines = render(keep)
    return lines


def _unexpected_item(mv: ModelView, p: PropertyView, links: _Links) -> str:
    expected = verdict_word(p.kind, p.expected)
    want = f"expected {expected}" if expected else "no expectation, so not to be violated"
    text = f"### ⚠️ {_name(mv.label)} · {_name(p.name)}: {p.word}, {want}\n\n"
    if p.explanation:
        text += f"> {md(_cut(p.explanation, TEXT_CUT))}\n\n"
    if p.trace is not None:
        t = p.trace
        text += (f"[trace page]({links.trace(t)}) ({len(t.steps) - 1} steps) · "
                 f"[{_name(mv.label)} in the report]({links.model(mv)})\n\n")
        text += _fence(trace_lines(t)) + "\n"
    else:
        why = {"holds": "a property that holds has no counterexample",
               "unreached": "no reachable state satisfies it, so there is no witness"}.get(p.word, "none recorded")
        text += f"No trace ({why}). [{_name(mv.label)} in the report]({links.model(mv)})\n\n"
    return text


def _bound_item(mv: ModelView, links: _Links) -> str:
    undecided = [p.name for p in mv.properties if p.status == "unknown"]
    st = mv.result.stats
    how = mv.result.bound_text() or "stopped before deciding"
    return (f"- [{_name(mv.label)}]({links.model(mv)}): {md(_cut(how, NAME_CUT * 2))}, after "
            f"{st.distinct_states:,} states to depth {st.depth}; unknown: "
            f"{_name(', '.join(undecided)) or 'none'}\n")


def render_summary(view: ReportView, changes: Changes | None = None, base: str = "",
                   limit: int = SUMMARY_LIMIT) -> str:
    """The summary of ``view`` as Markdown, shorter than ``limit`` characters (the
    sections described in the module docstring; ``changes`` from :func:`compare` adds
    what changed since a baseline). Links lead to the report directory's pages,
    relative to it, or under ``base`` (the address it is published at)."""
    links = _Links(base[:URL_CUT])
    models = [mv for mv in view.models if mv.judged]
    room = limit - 2_000  # the headings and fixed sentences, with a margin
    head = _headline(models, view, links)
    room -= len(head)
    table = _spec_table(models, links, min(8_000, room // 4))
    room -= len(table)
    by_key = dict(zip(_keyed([mv.result for mv in models]), models, strict=True))
    since = _diff_section(changes, by_key, links, min(18_000, room // 2)) if changes is not None else ""
    room -= len(since)
    bounded = [mv for mv in models if any(p.status == "unknown" for p in mv.properties)]
    bounds = ""
    if bounded:
        bounds = "## Stopped by a bound\n\n" + _fit((_bound_item(mv, links) for mv in bounded), len(bounded),
                                                   min(4_000, room // 4),
                                                   _more(links, "models stopped by a bound", "the report", "models"))
        room -= len(bounds)
    bad = [(mv, p) for mv in models for p in mv.properties if p.status != "unknown" and not p.as_expected]
    bad.sort(key=lambda mp: mp[1].trace is None)  # those with a trace first: a broken guarantee, a new witness
    if bad:
        unexpected = f"## Unexpected verdicts ({len(bad):,})\n\n" + _fit(
            (_unexpected_item(mv, p, links) for mv, p in bad), len(bad), room,
            _more(links, "unexpected verdicts", "the report", "models"))
    else:
        unexpected = "No unexpected verdict.\n"
    parts = [head, since, unexpected, bounds, table]
    text = "\n".join(part for part in parts if part)
    if len(text) >= limit:  # cannot happen by the rooms above; never let it reach a forge anyway
        tail = f"\n\n… cut here, see [the report]({links.index()}).\n"
        text = text[: limit - len(tail) - 1].rsplit("\n", 1)[0] + tail
    return text

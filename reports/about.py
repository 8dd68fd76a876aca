"""What a model's result says of the model itself, in the words every artifact uses.

A result carries its model's description, constants, bounds, the reductions asked for
and applied, its ``[evidence]``, the properties not checked and why, and where it comes
from (:class:`ordercheck.checker.api.result.Result`). :func:`about` gathers these into an
:class:`About` that the report index, each trace page and the JUnit XML print, so the
three say the same; a record written before these fields existed says "not recorded"
where it has nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ordercheck.checker.api.result import Result

NOT_RECORDED = "not recorded"
NO_REASON = "no reason given in the model file"

_NOTE_PREFIX = {"symmetry": "symmetry:", "por": "partial-order reduction:"}
_NAMES = {"symmetry": "symmetry", "por": "partial-order reduction"}


@dataclass
class EvidenceRow:
    """One ``[evidence]`` entry: the property it backs, ``mutant`` or ``witness``, the
    file or property named, and ``href``, a link to it in the report (``None`` when the
    report does not hold it)."""

    prop: str
    kind: str
    name: str
    href: str | None = None


@dataclass
class About:
    """A model's self-description, as printed (see the module docstring)."""

    description: str
    constants: str
    bounds: str
    reductions: list[str]
    evidence: list[EvidenceRow] = field(default_factory=list)
    not_checked: list[tuple[str, str]] = field(default_factory=list)
    version: str = NOT_RECORDED
    commit: str = NOT_RECORDED
    date: str = NOT_RECORDED

    def lines(self) -> list[tuple[str, str]]:
        """``(name, text)`` for each item, the evidence and the properties not checked
        in one line each: what the JUnit XML and a console print."""
        evidence = "; ".join(f"{e.prop} <- {e.kind} {e.name}" for e in self.evidence) or "none"
        unchecked = "; ".join(f"{p}: {why}" for p, why in self.not_checked) or "none"
        return [("description", self.description or "(none)"), ("constants", self.constants),
                ("bounds", self.bounds), ("reductions", "; ".join(self.reductions)), ("evidence", evidence),
                ("not_checked", unchecked), ("ordercheck_version", self.version), ("commit", self.commit),
                ("date", self.date)]


def constants_text(constants: dict[str, Any]) -> str:
    """``peers = 3, sends = 1``, or ``(none)``."""
    return ", ".join(f"{k} = {v!r}" for k, v in constants.items()) or "(none)"


def bounds_text(result: Result) -> str:
    """The bounds the search ran under and, when one stopped it, which; ``none
    (exhaustive search)`` for a search with none that finished."""
    set_ = [f"{k} = {v:,}" if isinstance(v, int) and not isinstance(v, bool) else f"{k} = {v:g} s"
            if isinstance(v, float) else f"{k} = {v}" for k, v in result.bounds.items() if v is not None]
    stopped = result.bound_text() if result.stats.bound else ""
    if not result.bounds and not stopped:
        return NOT_RECORDED if result.engine != "simulate" else "a simulation's budget of walks"
    text = ", ".join(set_) or "none"
    if stopped:
        return f"{text}; {stopped}"
    return f"{text} (exhaustive search)" if text == "none" else f"{text}; the search finished within them"


def reduction_lines(result: Result) -> list[str]:
    """For symmetry and partial-order reduction, whether it was asked for and whether
    it applied (with the warning that says why not); then the refinements applied."""
    if result.engine == "simulate":
        return ["none: a simulation walks the unreduced state graph"]
    out = []
    asked = result.reductions_requested
    for key in ("symmetry", "por"):
        name = _NAMES[key]
        applied = bool(result.reductions.get(key))
        if key not in asked:
            out.append(f"{name}: {'applied' if applied else 'not applied'} (whether it was asked for: {NOT_RECORDED})")
        elif not asked[key]:
            out.append(f"{name}: off (not asked for)")
        elif applied:
            out.append(f"{name}: on, applied")
        else:
            why = next((w.split(":", 1)[1].strip().replace("; not applied", "", 1)
                        for w in result.warnings if w.startswith(_NOTE_PREFIX[key])), "")
            if not why and result.engine == "spark":
                why = "the Spark engine applies no reduction"
            out.append(f"{name}: asked for, not applied" + (f" ({why})" if why else ""))
    refinements = [name for key, name in (("deferred_arrivals", "deferred arrivals"), ("solo_steps", "solo steps"))
                   if result.reductions.get(key)]
    if refinements:
        out.append("with " + " and ".join(refinements))
    return out


def about(result: Result, links: dict[str, str] | None = None, anchors: dict[str, str] | None = None) -> About:
    """The :class:`About` of ``result``. ``links`` maps a model file's resolved path to
    its section in the report (a mutant's link); ``anchors`` maps a property of this
    model to its trace (a witness's link)."""
    links, anchors = links or {}, anchors or {}
    evidence = []
    for prop, entry in result.evidence.items():
        kind, name = next(iter(entry.items())) if entry else ("", "")
        href = None
        if kind == "mutant":
            href = links.get(_resolved(Path(result.model).parent / name))
        elif kind == "witness":
            href = anchors.get(name)
        evidence.append(EvidenceRow(prop, kind, name, href))
    prov = result.provenance
    return About(
        description=result.description,
        constants=constants_text(result.constants),
        bounds=bounds_text(result),
        reductions=reduction_lines(result),
        evidence=evidence,
        not_checked=[(p, why or NO_REASON) for p, why in result.not_checked.items()],
        version=prov.version or NOT_RECORDED if prov is not None else NOT_RECORDED,
        commit=(prov.commit or "none (the model file is not in a git checkout)") if prov is not None else NOT_RECORDED,
        date=prov.date or NOT_RECORDED if prov is not None else NOT_RECORDED,
    )


def _resolved(path: Path) -> str:
    try:
        return str(path.resolve())
    except OSError:  # pragma: no cover - a path that cannot be resolved links nowhere
        return str(path)


def provenance_line(results: list[Result]) -> str:
    """One line for a page's header: the ordercheck versions, the commits and the
    dates the results record (each distinct value once)."""
    provs = [r.provenance for r in results if r.provenance is not None]
    if not provs:
        return f"ordercheck version, commit and date: {NOT_RECORDED} in these results"
    versions = sorted({p.version for p in provs if p.version})
    commits = sorted({p.commit for p in provs if p.commit})
    dates = sorted({p.date for p in provs if p.date})
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}" if dates else NOT_RECORDED
    commit = ", ".join(c[:12] for c in commits) if commits else "none (not in a git checkout)"
    if len(provs) < len(results):
        commit += f"; {len(results) - len(provs)} result(s) record none"
    return f"checked by ordercheck {', '.join(versions) or NOT_RECORDED} at commit {commit}, {when}"


def model_about(models: list[Any], mv: Any, prefix: str = "") -> About:
    """:func:`about` for the model view ``mv`` of a report whose models are ``models``
    (:class:`ordercheck.reports.view.ModelView`), its evidence linked: a mutant to its section
    when the report holds it (judged, not an ablation run), a witness to its trace;
    ``prefix`` leads to the index page (``../index.html`` from a trace page)."""
    links: dict[str, str] = {}
    for m in models:
        if m.judged:
            links.setdefault(_resolved(Path(m.result.model)), f"{prefix}#model-{m.slug}")
    anchors = {p.name: f"{prefix}#{p.trace.anchor}" for p in mv.properties if p.trace is not None}
    return about(mv.result, links, anchors)

"""Writing a report directory: HTML pages, Markdown, traces as ITF and ShiViz logs.

Layout of ``DIR``::

    index.html              matrix, ablation tables, every model with its traces
    matrix.html             the protocol x property matrix alone, linked to index.html
    report.md               the same as Markdown
    results.json            the results the report was made from
    traces/SLUG.html        each trace on its own page
    traces/SLUG.itf.json    each trace in the Informal Trace Format
    traces/SLUG.shiviz.log  each trace as a ShiViz log (when the spec keeps a history)

The pages are self-contained: inline CSS and SVG, no script, no network resource, and a
Content-Security-Policy that forbids both, so they open the same from ``file://``.
Jinja2 autoescaping covers every name, label and value.
"""

from __future__ import annotations

import json
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from ordercheck.checker.api.expectation import CATEGORIES
from ordercheck.checker.api.result import Result
from ordercheck.reports.about import model_about, provenance_line
from ordercheck.reports.itf import itf_trace
from ordercheck.reports.markdown import render_markdown
from ordercheck.reports.shiviz import shiviz_log
from ordercheck.reports.timeline import TimelineUnavailable, load_spec
from ordercheck.reports.view import ReportView, TraceView, initial_state, trace_view


def environment() -> Environment:
    """The HTML template environment (autoescaping on for every template)."""
    env = Environment(
        loader=PackageLoader("ordercheck.reports", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        extensions=["jinja2.ext.do"],
    )
    env.globals["initial_state"] = initial_state
    env.globals["model_about"] = model_about
    env.globals["provenance_line"] = provenance_line
    env.globals["categories"] = CATEGORIES  # the matrix legend (matrix.html.j2)
    try:
        env.globals["version"] = version("ordercheck")
    except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
        env.globals["version"] = ""
    return env


def trace_svg(result: Result, prop: str, uid: str) -> str:
    """The space-time diagram of ``result``'s trace for property ``prop`` as a standalone SVG
    document (the report's drawing; ``uid`` prefixes its marker ids). Raises
    :class:`~ordercheck.reports.timeline.TimelineUnavailable` when the property has no trace
    or the trace cannot be replayed through the result's spec."""
    pr = result.properties[prop]
    if not pr.trace:
        raise TimelineUnavailable(f"{result.model}: {prop} has no trace")
    spec = load_spec(result.spec, result.constants)
    view = trace_view(result, pr, spec, spec.property_map().get(prop), result.model, uid, None)
    if view.diagram is None:
        raise TimelineUnavailable(view.note or f"{result.model}: the trace of {prop} has no diagram")
    env = environment()
    svg = env.get_template("diagram.svg.j2").render(diagram=view.diagram)
    # the report's styling of the drawing (its fonts), which a page around it would give
    source = env.loader.get_source(env, "style.css.j2")[0] if env.loader is not None else ""
    css = "\n".join(line for line in source.splitlines() if line.startswith("svg.spacetime "))
    return svg.replace("<defs>", f"<style>\n{css}\n  </style>\n  <defs>", 1) + "\n"


def render_index(view: ReportView) -> str:
    return environment().get_template("index.html.j2").render(r=view)


def render_matrix_page(view: ReportView) -> str:
    """The matrix alone (``matrix.html``), its links into the index page beside it."""
    return environment().get_template("matrix_page.html.j2").render(r=view)


def render_trace_page(trace: TraceView, view: ReportView | None = None) -> str:
    """A trace on its own page, headed by what its model is (:mod:`ordercheck.reports.about`),
    the mutants its evidence names linked into ``view``'s index page."""
    owner = next((mv for mv in view.models if any(p.trace is trace for p in mv.properties)), None) if view else None
    return environment().get_template("trace.html.j2").render(t=trace, r=view, mv=owner)


def trace_itf(trace: TraceView) -> dict[str, Any]:
    return itf_trace(
        trace.raw.trace or [],
        source=trace.source or trace.model,
        description=f"{trace.title}: {trace.explanation}",
        extra_meta={"spec": trace.spec, "constants": trace.constants, "property": trace.prop, "status": trace.status},
        loop=trace.loop_start,
    )


def write_report(view: ReportView, out_dir: str | Path, payload: Any | None = None) -> Path:
    """Write every file of the report into ``out_dir``; returns the index page."""
    out = Path(out_dir)
    traces = out / "traces"
    traces.mkdir(parents=True, exist_ok=True)
    index = out / "index.html"
    index.write_text(render_index(view), encoding="utf-8")
    (out / "matrix.html").write_text(render_matrix_page(view), encoding="utf-8")
    (out / "report.md").write_text(render_markdown(view), encoding="utf-8")
    if payload is not None:
        (out / "results.json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    for t in view.traces:
        (traces / f"{t.slug}.html").write_text(render_trace_page(t, view), encoding="utf-8")
        (traces / f"{t.slug}.itf.json").write_text(json.dumps(trace_itf(t), indent=1) + "\n", encoding="utf-8")
        if t.timeline is not None:
            (traces / f"{t.slug}.shiviz.log").write_text(shiviz_log(t.timeline), encoding="utf-8")
    return index

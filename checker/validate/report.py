"""``validate``'s output directory: the verdict table and a report.

``-o DIR`` writes:

- ``verdicts.parquet``: one row per (log, property), the columns of
  :data:`~ordercheck.checker.validate.verdicts.COLUMNS`, for dataframe tools and Spark;
- ``verdicts.json``: every log's full record (the ``--json`` form), a list;
- ``report.md`` and ``index.html``: a summary table (one line per log), then for
  each violation its sentence, the lines of its window and, in the HTML page, the
  window drawn as a space-time diagram.

The files are staged with the command's other outputs (``--json``) and renamed into
place only when all of them were written (:mod:`ordercheck.checker.api.outputs`), so after a
failure none of them is new. The HTML page is self-contained (inline SVG, no script)
and escapes every name and sentence.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ordercheck.checker.api.outputs import Outputs, naming
from ordercheck.checker.validate.verdicts import COLUMNS, LogVerdict
from ordercheck.reports.markdown import md

MAX_DETAILS = 200
"""Violations described in full in a report (the table lists every log)."""


def table_bytes(verdicts: Sequence[LogVerdict]) -> bytes:
    """The verdict table as Parquet bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([
        ("log", pa.string()), ("format", pa.string()), ("events", pa.int64()), ("peers", pa.int64()),
        ("messages", pa.int64()), ("property", pa.string()), ("status", pa.string()), ("line", pa.int64()),
        ("explanation", pa.string()), ("window", pa.string()), ("seconds", pa.float64()),
    ])
    rows = [row for v in verdicts for row in v.rows()]
    table = pa.Table.from_pylist([{c: r.get(c) for c in COLUMNS} for r in rows], schema=schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def stage_outputs(out: Outputs, out_dir: str | Path, verdicts: Sequence[LogVerdict], engine: str) -> list[Path]:
    """Stage the table, the records and the report as files of ``out_dir`` in ``out``
    (:class:`~ordercheck.checker.api.outputs.Outputs`: they are put in place with the command's
    other outputs, all or none); returns the paths they will have."""
    target = Path(out_dir)
    files = {
        "verdicts.parquet": table_bytes(verdicts),
        "verdicts.json": json.dumps([v.to_json() for v in verdicts], indent=1) + "\n",
        "report.md": markdown(verdicts, engine),
        "index.html": html_page(verdicts, engine),
    }
    paths = []
    for name, content in files.items():
        path = target / name
        staged = out.file(path)
        with naming(path):
            if isinstance(content, bytes):
                staged.write_bytes(content)
            else:
                staged.write_text(content, encoding="utf-8")
        paths.append(path)
    return paths


def load_table(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a ``verdicts.parquet`` (or of the directory holding it)."""
    import pyarrow.parquet as pq

    p = Path(path)
    if p.is_dir():
        p = p / "verdicts.parquet"
    return pq.read_table(p).to_pylist()


def _summary(v: LogVerdict) -> str:
    unit = "state" if v.format == "itf" else "line"
    parts = [f"{name} {p['status']}" + (f" ({unit} {p['line']})" if p.get("line") is not None else "")
             for name, p in v.properties.items()]
    if v.conformance is not None:
        c = v.conformance
        parts.append(f"conformance {c['status']}" + (f" ({unit} {c['line']})" if c.get("line") is not None else ""))
    return ", ".join(parts)


def _details(verdicts: Sequence[LogVerdict]) -> list[tuple[LogVerdict, str, dict[str, Any]]]:
    out = []
    for v in verdicts:
        for name, p in v.properties.items():
            if p["status"] == "violated":
                out.append((v, name, p))
        if v.conformance is not None and v.conformance["status"] != "conforms":
            out.append((v, "conformance", v.conformance))
    return out


def _headline(verdicts: Sequence[LogVerdict], engine: str) -> str:
    bad = sum(1 for v in verdicts if v.violated)
    unknown = sum(1 for v in verdicts if v.unknown and not v.violated)
    events = sum(v.events for v in verdicts)
    return (f"{len(verdicts)} logs ({events:,} events), engine {engine}: {len(verdicts) - bad - unknown} clean, "
            f"{bad} with violations, {unknown} undecided")


def markdown(verdicts: Sequence[LogVerdict], engine: str) -> str:
    """The report as Markdown."""
    lines = ["# Trace validation", "", md(_headline(verdicts, engine)), "", "| log | events | verdicts |", "|---|---:|---|"]
    for v in verdicts:
        lines.append(f"| {md(v.log)} | {v.events:,} | {md(_summary(v))} |")
    details = _details(verdicts)
    if details:
        lines += ["", "## Violations", ""]
    for v, name, p in details[:MAX_DETAILS]:
        lines += [f"### {md(v.log)} · {md(name)}", "", md(p.get("explanation") or ""), ""]
        for w in p.get("window", []):
            lines.append(f"- {'state' if v.format == 'itf' else 'line'} {w['line']}: {md(w['event'])}")
        for c in p.get("could", []):
            lines.append(f"- the spec could record instead: {md(c)}")
        lines.append("")
    if len(details) > MAX_DETAILS:
        lines.append(f"({len(details) - MAX_DETAILS} more violations are in verdicts.json)")
    return "\n".join(lines).rstrip() + "\n"


def html_page(verdicts: Sequence[LogVerdict], engine: str) -> str:
    """The report as one self-contained HTML page."""
    e = html.escape
    out = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        "<title>Trace validation</title><style>body{font-family:sans-serif;margin:2em}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
        ".violated{color:#d62728;font-weight:bold}.window{font-family:monospace}</style></head><body>",
        "<h1>Trace validation</h1>", f"<p>{e(_headline(verdicts, engine))}</p>",
        "<table><tr><th>log</th><th>events</th><th>verdicts</th></tr>",
    ]
    for v in verdicts:
        cls = ' class="violated"' if v.violated else ""
        out.append(f"<tr><td>{e(v.log)}</td><td>{v.events:,}</td><td{cls}>{e(_summary(v))}</td></tr>")
    out.append("</table>")
    details = _details(verdicts)
    if details:
        out.append("<h2>Violations</h2>")
    for v, name, p in details[:MAX_DETAILS]:
        out.append(f"<h3>{e(v.log)} · {e(name)}</h3><p>{e(p.get('explanation') or '')}</p>")
        window = p.get("window", [])
        if window:
            out.append('<ul class="window">' + "".join(f"<li>{'state' if v.format == 'itf' else 'line'} {w['line']}: {e(w['event'])}</li>" for w in window) + "</ul>")
        for c in p.get("could", []):
            out.append(f"<p>The spec could record instead: {e(c)}</p>")
        svg = v.diagrams.get(name)
        if svg:
            out.append(svg)
    if len(details) > MAX_DETAILS:
        out.append(f"<p>{len(details) - MAX_DETAILS} more violations are in verdicts.json.</p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"

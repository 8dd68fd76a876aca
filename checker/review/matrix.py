"""The protocol x property matrix: one row per checked model, one column per property.

Built from :class:`~ordercheck.checker.api.result.Result` records (fresh from the engine, or read back
from a ``check --json`` file), so the command line and the reports layer share it. A
matrix is plain data: :meth:`Matrix.to_json` gives the JSON the ``matrix`` command
writes, :meth:`Matrix.from_json` reads it back.

Each cell carries its *category* (:mod:`ordercheck.checker.api.expectation`): what the verdict
means against the model's ``[expect]``, the mutant models apart from the others. The
text table (:func:`render_text`) has one block per spec, guarantee models before
mutants and guarantees before witnesses, numbered columns with their names in a key, and
wraps its columns so that no line is wider than :data:`WIDTH`.
"""

from __future__ import annotations

import textwrap
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ordercheck.checker.api.expectation import CATEGORIES, category, console_word, mutant_steps, property_order
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.result import Result, combined_exit_code, verdict_word

WIDTH = 120
"""The widest line :func:`render_text` writes (a model name longer than
:data:`NAME_MAX` is cut to fit)."""

NAME_MAX = 60
"""The widest model name in the text table; a longer one ends in ``...``."""


@dataclass(frozen=True)
class Cell:
    """One verdict: ``status`` is holds, violated or unknown; ``expected`` is the
    model's ``[expect]`` (``None`` when it has none); ``kind`` the property's kind
    (``None`` in a matrix file written before it was recorded); ``category`` what the
    verdict means against the expectation (:func:`ordercheck.checker.api.expectation.category`)."""

    status: str
    expected: str | None
    as_expected: bool
    explanation: str | None = None
    trace_steps: int | None = None  # length of the counterexample or witness
    kind: str | None = None
    category: str = ""

    @property
    def word(self) -> str:
        """The verdict as printed: ``reached``/``unreached`` for a ``sometimes``
        property (:func:`ordercheck.checker.api.result.verdict_word`)."""
        return verdict_word(self.kind, self.status) or self.status


@dataclass
class Row:
    """One checked model. ``mutant`` says what makes it a mutant (empty for the
    algorithm itself, :func:`ordercheck.checker.api.expectation.mutant_steps`); ``not_checked``
    maps each property of the spec it leaves out to the model file's reason ("" for
    none given)."""

    model: str
    spec: str
    description: str
    cells: dict[str, Cell]
    distinct_states: int
    seconds: float
    mutant: list[str] = field(default_factory=list)
    not_checked: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return Path(self.model).stem


@dataclass
class SpecTable:
    """The part of a matrix for one spec: its guarantee ``models`` before its
    ``mutants``, and its properties, ``guarantees`` (always and eventually) before
    ``witnesses`` (sometimes)."""

    spec: str
    models: list[Row]
    mutants: list[Row]
    guarantees: list[str]
    witnesses: list[str]

    @property
    def columns(self) -> list[str]:
        return [*self.guarantees, *self.witnesses]


@dataclass
class Matrix:
    """Rows (models) by columns (property names)."""

    columns: list[str]
    rows: list[Row] = field(default_factory=list)
    exit_code: int = 0

    def cell(self, model: str, prop: str) -> Cell | None:
        """The verdict of ``prop`` in the row whose model path or name is ``model``."""
        for row in self.rows:
            if model in (row.model, row.name):
                return row.cells.get(prop)
        raise KeyError(model)

    @property
    def unexpected(self) -> list[tuple[str, str]]:
        """``(model, property)`` pairs whose verdict differs from the expectation."""
        return [
            (row.model, name)
            for row in self.rows
            for name, c in row.cells.items()
            if c.status != "unknown" and not c.as_expected
        ]

    def by_spec(self) -> list[SpecTable]:
        """One :class:`SpecTable` per spec, in the order the rows meet them."""
        specs: dict[str, list[Row]] = {}
        for row in self.rows:
            specs.setdefault(row.spec, []).append(row)
        tables = []
        for spec, rows in specs.items():
            props = [c for c in self.columns if any(c in r.cells for r in rows)]
            witness = {c for c in props if any(r.cells[c].kind == "sometimes" for r in rows if c in r.cells)}
            tables.append(SpecTable(
                spec,
                [r for r in rows if not r.mutant],
                [r for r in rows if r.mutant],
                [c for c in props if c not in witness],
                [c for c in props if c in witness],
            ))
        return tables

    def to_json(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "exit_code": self.exit_code,
            "rows": [
                {
                    "model": r.model,
                    "spec": r.spec,
                    "description": r.description,
                    "distinct_states": r.distinct_states,
                    "seconds": r.seconds,
                    "mutant": list(r.mutant),
                    "not_checked": dict(r.not_checked),
                    "cells": {name: {**asdict(c), "shown": c.word} for name, c in r.cells.items()},
                }
                for r in self.rows
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Matrix:
        """The matrix a :meth:`to_json` record holds; a record written before cells had
        a category gets it computed (the row counts as a mutant when it says so)."""
        rows = []
        for r in data["rows"]:
            mutant = list(r.get("mutant", []))
            cells = {}
            for name, c in r["cells"].items():
                fields = {k: v for k, v in c.items() if k != "shown"}
                if not fields.get("category"):
                    fields["category"] = category(fields.get("kind"), fields["status"], fields.get("expected"),
                                                  fields["as_expected"], bool(mutant))
                cells[name] = Cell(**fields)
            rows.append(Row(
                r["model"],
                r["spec"],
                r.get("description", ""),
                cells,
                r.get("distinct_states", 0),
                r.get("seconds", 0.0),
                mutant,
                dict(r.get("not_checked", {})),
            ))
        return cls(list(data["columns"]), rows, data.get("exit_code", 0))


def build_matrix(
    results: list[Result],
    descriptions: dict[str, str] | None = None,
    models: list[Model] | None = None,
) -> Matrix:
    """The matrix of ``results``, rows sorted by spec then model path.

    ``descriptions`` maps a model path to its one-line description. ``models`` are the
    loaded models the results come from: a result whose model is among them gets its
    description and, when the model is a mutant
    (:func:`ordercheck.checker.api.expectation.mutant_steps`), its row is a mutant's; without
    them every row is a guarantee model's.
    """
    descriptions = dict(descriptions or {})
    mutants: dict[str, list[str]] = {}
    for m in models or []:
        descriptions.setdefault(m.path, m.description)
        mutants[m.path] = mutant_steps(type(m.spec), m.constants)
    seen: list[str] = []
    for r in results:
        for name in r.properties:
            if name not in seen:
                seen.append(name)
    columns = property_order(seen)  # library properties first; spec-specific ones follow as met
    rows = []
    for r in sorted(results, key=lambda r: (r.spec, r.model)):
        mutant = mutants.get(r.model, [])
        cells = {
            name: Cell(
                p.status,
                p.expected,
                p.as_expected,
                p.explanation,
                len(p.trace) - 1 if p.trace else None,
                p.kind,
                category(p.kind, p.status, p.expected, p.as_expected, bool(mutant)),
            )
            for name, p in r.properties.items()
        }
        # Each property the model file says it leaves out, with the reason it gives
        # (Result.not_checked; a result recorded without it has none).
        not_checked = dict(r.not_checked)
        rows.append(Row(r.model, r.spec, descriptions.get(r.model, ""), cells, r.stats.distinct_states,
                        r.stats.seconds, mutant, not_checked))
    return Matrix(columns, rows, combined_exit_code(results))


def cell_text(cell: Cell | None) -> str:
    """A cell as the text table shows it (:func:`ordercheck.checker.api.expectation.console_word`):
    ``holds``, ``broke``, ``n/p``, ``reached``, ``unreached``, the verdict in capitals
    with ``!`` when it differs from the expectation, ``unknown?``, ``(holds)`` without
    an expectation; ``-`` when the model does not check the property."""
    if cell is None:
        return "-"
    name = cell.category or category(cell.kind, cell.status, cell.expected, cell.as_expected, False)
    return console_word(name, cell.kind, cell.status)


def _wrap(text: str, indent: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width``; a no-break space (U+00A0) joins what
    must stay on one line and becomes a plain space."""
    lines = textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "  ",
                          break_on_hyphens=False, break_long_words=True)
    return [line.replace("\xa0", " ") for line in lines]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


def _name(row: Row) -> str:
    name = row.name
    return name if len(name) <= NAME_MAX else name[:NAME_MAX - 3] + "..."


def _spec_block(t: SpecTable, width: int) -> list[str]:
    """One spec's table: a key of the numbered columns, then the rows, the columns
    wrapped into as many bands as the width needs."""
    cols = t.columns
    number = {c: str(i + 1) for i, c in enumerate(cols)}
    rows = [*t.models, *t.mutants]
    words = {(id(r), c): cell_text(r.cells.get(c)) for r in rows for c in cols}
    name_w = max([len("model"), len("mutants:"), *(len(_name(r)) for r in rows)])
    col_w = {c: max([len(number[c]), *(len(words[id(r), c]) for r in rows)]) for c in cols}
    out = [f"{t.spec}: {_count(len(t.models), 'model')}" + (f", {_count(len(t.mutants), 'mutant')}" if t.mutants else "")]
    out += _wrap("guarantees: " + ", ".join(f"{number[c]}\xa0{c}" for c in t.guarantees), "  ", width)
    if t.witnesses:
        out += _wrap("witnesses: " + ", ".join(f"{number[c]}\xa0{c}" for c in t.witnesses), "  ", width)
    bands: list[list[str]] = [[]]
    used = 2 + name_w
    for c in cols:
        if bands[-1] and used + 2 + col_w[c] > width:
            bands.append([])
            used = 2 + name_w
        bands[-1].append(c)
        used += 2 + col_w[c]

    def line(first: str, cells: list[str], band: list[str]) -> str:
        return ("  " + first.ljust(name_w) + "".join("  " + v.ljust(col_w[c]) for v, c in zip(cells, band))).rstrip()

    for band in bands:
        out.append(line("model", [number[c] for c in band], band))
        out.append(line("-" * name_w, ["-" * col_w[c] for c in band], band))
        for group, label in ((t.models, None), (t.mutants, "mutants:")):
            if label and group:
                out.append("  " + label)
            for r in group:
                out.append(line(_name(r), [words[id(r), c] for c in band], band))
    return out


def legend_lines(width: int = WIDTH) -> list[str]:
    """What each cell of the text table means, one line each."""
    shown = {"unexpected": "WORD!", "unjudged": "(WORD)"}
    keys = [shown.get(c.name) or c.word or "" for c in CATEGORIES]
    w = max(len(k) for k in keys)
    out = ["legend:"]
    for key, c in zip(keys, CATEGORIES):
        out += _wrap(f"{key.ljust(w)}  {c.legend}", "  ", width)
    return out


def render_text(matrix: Matrix, width: int = WIDTH) -> str:
    """The matrix as fixed-width text no wider than ``width``: one block per spec, the
    verdicts not as expected listed below in words, and a legend."""
    lines: list[str] = []
    tables = matrix.by_spec()
    for t in tables:
        lines += [*_spec_block(t, width), ""]
    models = sum(len(t.models) for t in tables)
    mutants = sum(len(t.mutants) for t in tables)
    bad = [(row, name, c) for row in matrix.rows for name, c in row.cells.items()
           if c.status != "unknown" and not c.as_expected]
    unknown = sum(1 for row in matrix.rows for c in row.cells.values() if c.status == "unknown")
    found = ([f"{len(bad)} unexpected"] if bad else []) + (
        [f"{unknown} unknown (a bound stopped the search)"] if unknown else [])
    summary = (f"{_count(len(matrix.rows), 'model')} ({_count(models, 'guarantee model')}, "
               f"{_count(mutants, 'mutant')}): " + (", ".join(found) or "every verdict as expected"))
    lines += _wrap(summary, "", width)
    for row, name, c in bad:
        want = verdict_word(c.kind, c.expected)
        lines += _wrap(f"{row.name} {name}: {c.word}, " + (f"expected {want}" if want else "no expectation"),
                       "  ", width)
    lines += legend_lines(width)
    return "\n".join(lines)

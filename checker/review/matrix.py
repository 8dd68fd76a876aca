"""The protocol x property matrix: one row per checked model, one column per property.

Built from :class:`~checker.api.result.Result` records (fresh from the engine, or read back
from a ``check --json`` file), so the command line and the reports layer share it. A
matrix is plain data: :meth:`Matrix.to_json` gives the JSON the ``matrix`` command
writes, :meth:`Matrix.from_json` reads it back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from checker.api.result import Result, combined_exit_code, verdict_word

LIBRARY_ORDER = (
    "fifo", "causal", "integrity", "total", "total_global", "total_prefix", "global_lock", "synchronous",
    "eventual_delivery",
)
"""Library properties first, in this order; spec-specific ones follow as met."""


@dataclass(frozen=True)
class Cell:
    """One verdict: ``status`` is holds, violated or unknown; ``expected`` is the
    model's ``[expect]`` (``None`` when it has none); ``kind`` the property's kind
    (``None`` in a matrix file written before it was recorded)."""

    status: str
    expected: str | None
    as_expected: bool
    explanation: str | None = None
    trace_steps: int | None = None  # length of the counterexample or witness
    kind: str | None = None

    @property
    def word(self) -> str:
        """The verdict as printed: ``unreached`` for a ``sometimes`` property never
        reached (:func:`checker.api.result.verdict_word`)."""
        return verdict_word(self.kind, self.status) or self.status


@dataclass
class Row:
    """One checked model."""

    model: str
    spec: str
    description: str
    cells: dict[str, Cell]
    distinct_states: int
    seconds: float

    @property
    def name(self) -> str:
        return Path(self.model).stem


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
                    "cells": {name: {**asdict(c), "shown": c.word} for name, c in r.cells.items()},
                }
                for r in self.rows
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Matrix:
        rows = [
            Row(
                r["model"],
                r["spec"],
                r.get("description", ""),
                {name: Cell(**{k: v for k, v in c.items() if k != "shown"}) for name, c in r["cells"].items()},
                r.get("distinct_states", 0),
                r.get("seconds", 0.0),
            )
            for r in data["rows"]
        ]
        return cls(list(data["columns"]), rows, data.get("exit_code", 0))


def build_matrix(results: list[Result], descriptions: dict[str, str] | None = None) -> Matrix:
    """The matrix of ``results``, rows sorted by spec then model path.

    ``descriptions`` maps a model path to its one-line description.
    """
    descriptions = descriptions or {}
    seen: list[str] = []
    for r in results:
        for name in r.properties:
            if name not in seen:
                seen.append(name)
    columns = [p for p in LIBRARY_ORDER if p in seen] + [p for p in seen if p not in LIBRARY_ORDER]
    rows = []
    for r in sorted(results, key=lambda r: (r.spec, r.model)):
        cells = {
            name: Cell(
                p.status,
                p.expected,
                p.as_expected,
                p.explanation,
                len(p.trace) - 1 if p.trace else None,
                p.kind,
            )
            for name, p in r.properties.items()
        }
        rows.append(Row(r.model, r.spec, descriptions.get(r.model, ""), cells, r.stats.distinct_states, r.stats.seconds))
    return Matrix(columns, rows, combined_exit_code(results))


def cell_text(cell: Cell | None) -> str:
    """A cell as the text table shows it: the verdict, with ``!`` and capitals when it
    differs from the expectation; ``-`` when the model does not check the property."""
    if cell is None:
        return "-"
    text = cell.word
    if cell.status == "unknown":
        return "unknown?"
    if not cell.as_expected:
        return text.upper() + "!"
    return text


def render_text(matrix: Matrix) -> str:
    """The matrix as a fixed-width text table with a legend."""
    header = ["model", "spec", *matrix.columns]
    body = [[row.name, row.spec, *(cell_text(row.cells.get(c)) for c in matrix.columns)] for row in matrix.rows]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip() for line in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    bad = matrix.unexpected
    lines.append("")
    lines.append(
        f"{len(matrix.rows)} models; verdicts as expected unless marked NAME! "
        f"({len(bad)} unexpected); - not checked; unknown? a bound stopped the search; "
        "unreached: no reachable state satisfies a sometimes property"
    )
    return "\n".join(lines)

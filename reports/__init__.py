"""Report rendering: HTML, Markdown, JUnit XML, ITF traces, ShiViz logs, state graphs.

This layer reads :class:`ordercheck.checker.api.result.Result` records (as JSON or in memory) and the
specs they name; it never touches the search engine. Entry points:

- :func:`load_items` reads ``ordercheck check --json``, ``ordercheck ablate --json``
  and ``ordercheck prove --json`` files;
- :func:`ordercheck.reports.view.build_report` gathers them into one view, with every trace
  replayed through its spec and laid out as a space-time diagram;
- :func:`ordercheck.reports.html.write_report` writes the report directory (HTML, Markdown, ITF,
  ShiViz); :func:`ordercheck.reports.junit.junit_xml` renders JUnit XML.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.inputs import DATA_LIMIT, parse_json, read_input, text_of
from ordercheck.checker.api.result import RecordError, Result
from ordercheck.reports.proofs import ProofRecord
from ordercheck.reports.view import Ablation

RESULT_NESTING = 500
"""A result file nested deeper than this is refused: a result nests a dozen levels (its
traces' states a few more), and a fixed limit answers the same whatever Python's
recursion limit is at the time."""


def items_from_json(data: Any, where: str) -> list[Result | Ablation | ProofRecord]:
    """Results, ablation runs and ``prove`` records from parsed JSON: one record or a
    list of them."""
    records = data if isinstance(data, list) else [data]
    out: list[Result | Ablation | ProofRecord] = []
    for i, rec in enumerate(records):
        field = f"[{i}]" if isinstance(data, list) else ""
        if not isinstance(rec, dict):
            raise InputError(where, field, "expected a result record (a JSON object)")
        try:
            if rec.get("kind") == "ablation":
                out.append(Ablation.from_json(rec, field))
            elif rec.get("engine") == "z3":
                out.append(ProofRecord.from_json(rec, where, field))
            else:
                for key in ("model", "spec", "properties"):
                    if key not in rec:
                        raise InputError(where, f"{field}.{key}".lstrip("."), "missing: is this an `ordercheck check --json` file?")
                out.append(Result.from_json(rec, field))
        except RecordError as exc:  # a field of the wrong type: named, with what it should be
            raise InputError(where, exc.field, exc.message) from None
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(where, field, f"is not a result record ({exc.__class__.__name__}: {exc})") from None
    return out


def load_items(paths: list[str | Path]) -> list[Result | Ablation | ProofRecord]:
    """Read result files; :class:`InputError` names the file that cannot be read."""
    out: list[Result | Ablation | ProofRecord] = []
    for path in paths:
        where = str(path)
        text = text_of(read_input(path, "a result file", DATA_LIMIT, where), where)
        data = parse_json(text, where, "a result file", RESULT_NESTING)
        out.extend(items_from_json(data, where))
    return out


def payload_of(items: list[Result | Ablation | ProofRecord]) -> Any:
    """The JSON a report keeps as ``results.json`` (readable by :func:`load_items`)."""
    records = [i.to_json() for i in items]
    return records[0] if len(records) == 1 else records

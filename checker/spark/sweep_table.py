"""The sweep table: one row per (model, variant, property), as Parquet and JSON.

``ordercheck sweep ... -o DIR`` writes three files:

- ``DIR/sweep.parquet``: the table (columns below), for dataframe tools and Spark;
- ``DIR/sweep.json``: the same rows as a JSON list of objects;
- ``DIR/results.json``: the full :class:`~ordercheck.checker.api.result.Result` of every check (traces
  included), a list in the ``check --json`` format with one extra key, ``variant``.

Columns (:data:`COLUMNS`): ``model`` (file path), ``variant`` ("" for the model itself,
else the ablation flag switched off), ``spec``, ``engine``, ``constants`` (JSON text),
``property``, ``kind``, ``status`` (holds/violated/unknown), ``shown`` (the verdict as
every artifact prints it: ``reached``/``unreached`` for a ``sometimes`` property,
:func:`ordercheck.checker.api.result.verdict_word`), ``expected`` (null for
mutants and unexpected properties), ``as_expected`` (null for mutants),
``trace_length`` (steps of the counterexample or witness, null without one),
``explanation``, ``distinct_states``, ``transitions``, ``depth``, ``seconds`` and
``bound``.

Readers: :func:`load_sweep` gives the rows (from a directory, a ``.parquet`` or a
``.json`` file); :func:`load_sweep_results` gives the Results. A protocol × property
matrix is the rows with ``variant == ""`` pivoted on ``property``; an ablation table is
the rows of one model pivoted on ``variant``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.inputs import DATA_LIMIT, parse_json, read_input
from ordercheck.checker.api.outputs import Outputs, naming
from ordercheck.checker.api.result import Result, verdict_word

COLUMNS = (
    "model", "variant", "spec", "engine", "constants", "property", "kind", "status", "shown", "expected",
    "as_expected", "trace_length", "explanation", "distinct_states", "transitions", "depth", "seconds", "bound",
)


@dataclass(frozen=True)
class SweepRow:
    """One row of the sweep table: the verdict on one property of one check."""

    model: str
    variant: str
    spec: str
    engine: str
    constants: str
    property: str
    kind: str
    status: str
    shown: str
    expected: str | None
    as_expected: bool | None
    trace_length: int | None
    explanation: str | None
    distinct_states: int
    transitions: int
    depth: int
    seconds: float
    bound: str | None


SWEEP_NESTING = 500
"""A sweep's JSON nested deeper than this is refused (:func:`~ordercheck.checker.api.inputs.parse_json`)."""

def rows_from_result(data: dict[str, Any], *, engine: str | None = None) -> list[SweepRow]:
    """The rows of one check's Result JSON (with its ``variant`` key).

    ``engine`` names the engine that scheduled the sweep (``spark`` when each check ran
    as a Spark task), else the Result's own engine is used.
    """
    variant = data.get("variant", "")
    st = data["stats"]
    result = Result.from_json(data)
    rows = []
    for name, p in result.properties.items():
        rows.append(
            SweepRow(
                model=data["model"],
                variant=variant,
                spec=data["spec"],
                engine=engine or data.get("engine", "local"),
                constants=json.dumps(data.get("constants", {}), sort_keys=True),
                property=name,
                kind=p.kind,
                status=p.status,
                shown=p.word,
                expected=p.expected,
                as_expected=None if variant else p.as_expected,
                trace_length=None if p.trace is None else len(p.trace) - 1,
                explanation=p.explanation,
                distinct_states=int(st["distinct_states"]),
                transitions=int(st["transitions"]),
                depth=int(st["depth"]),
                seconds=float(st["seconds"]),
                bound=st.get("bound"),
            )
        )
    return rows


def write_sweep(out_dir: str | Path, rows: list[SweepRow], results: list[dict[str, Any]]) -> list[Path]:
    """Write ``sweep.parquet``, ``sweep.json`` and ``results.json`` into ``out_dir``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out_dir)
    records = [asdict(r) for r in rows]
    schema = pa.schema(
        [
            ("model", pa.string()), ("variant", pa.string()), ("spec", pa.string()), ("engine", pa.string()),
            ("constants", pa.string()), ("property", pa.string()), ("kind", pa.string()), ("status", pa.string()),
            ("shown", pa.string()), ("expected", pa.string()), ("as_expected", pa.bool_()), ("trace_length", pa.int64()),
            ("explanation", pa.string()), ("distinct_states", pa.int64()), ("transitions", pa.int64()),
            ("depth", pa.int64()), ("seconds", pa.float64()), ("bound", pa.string()),
        ]
    )
    table = pa.Table.from_pylist(records, schema=schema)
    parquet = out / "sweep.parquet"
    table_json = out / "sweep.json"
    results_json = out / "results.json"
    with Outputs() as staged:  # all three or none (ordercheck.checker.api.outputs)
        tmp = staged.file(parquet)
        with naming(parquet):
            pq.write_table(table, tmp)
        staged.write_json(table_json, records)
        staged.write_json(results_json, results)
    return [parquet, table_json, results_json]


def load_sweep(path: str | Path) -> list[SweepRow]:
    """The rows of a sweep table: ``path`` is the sweep's output directory (its
    ``sweep.parquet``), a ``.parquet`` file or a ``sweep.json`` file."""
    p = Path(path)
    if p.is_dir():
        p = p / "sweep.parquet"
    if not p.exists():
        raise InputError(str(p), "", "no such sweep table (run `ordercheck sweep ... -o DIR` first)")
    if p.suffix == ".parquet":
        import pyarrow.parquet as pq

        records = pq.read_table(p).to_pylist()
    else:
        records = parse_json(read_input(p, "a sweep table", DATA_LIMIT), str(p), "a sweep table", SWEEP_NESTING)
    if not isinstance(records, list):
        raise InputError(str(p), "", "expected a list of rows")
    rows = []
    for i, rec in enumerate(records):
        if isinstance(rec, dict) and "shown" not in rec and isinstance(rec.get("status"), str):
            # a table written before the column: the verdict word from kind and status
            rec = {**rec, "shown": verdict_word(rec.get("kind"), rec["status"])}
        missing = [c for c in COLUMNS if c not in rec]
        if missing:
            raise InputError(str(p), f"[{i}]", f"row lacks column(s) {', '.join(missing)}")
        rows.append(SweepRow(**{c: rec[c] for c in COLUMNS}))
    return rows


def load_sweep_results(path: str | Path) -> list[tuple[str, Result]]:
    """``(variant, Result)`` for every check of a sweep, from its directory or its
    ``results.json``; traces included, for reports."""
    p = Path(path)
    if p.is_dir():
        p = p / "results.json"
    data = parse_json(read_input(p, "a sweep's results", DATA_LIMIT), str(p), "a sweep's results", SWEEP_NESTING)
    if not isinstance(data, list):
        raise InputError(str(p), "", "expected a list of results")
    return [(d.get("variant", ""), Result.from_json(d)) for d in data]

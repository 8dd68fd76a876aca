"""What a check produces: per-property verdicts, traces and statistics, as JSON."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["holds", "violated", "unknown"]

EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_INPUT = 2
EXIT_BOUND = 3
EXIT_ENGINE = 4  # the engine failed for good (ordercheck.checker.api.errors.EngineError)
EXIT_SPEC = 5  # a spec raised an exception (ordercheck.checker.api.spec_errors.SpecRaised)
EXIT_OS = 6  # an operating-system error on an output or work path (ordercheck.checker.api.outputs.OutputError)
EXIT_SIGINT = 130  # interrupted by SIGINT (128 + 2)
EXIT_SIGTERM = 143  # terminated by SIGTERM (128 + 15)


def verdict_word(kind: str | None, status: str | None) -> str | None:
    """A verdict as every artifact prints it: for a ``sometimes`` property (a witness)
    ``reached`` when its status is ``holds`` (a reachable state satisfies it) and
    ``unreached`` when it is ``violated`` (none does), else the status itself
    (``holds``, ``violated``, ``unknown``); ``None`` stays ``None``, so an expectation
    can go through it too."""
    if kind == "sometimes" and status == "violated":
        return "unreached"
    if kind == "sometimes" and status == "holds":
        return "reached"
    return status


@dataclass
class Step:
    """One step of a trace: the action taken (``None`` for the initial state) and the
    state it led to, as the spec describes it."""

    action: str | None
    label: list[Any] | None
    state: dict[str, Any]
    index: int = 0  # position of the action among the enabled ones (replay key)


@dataclass
class PropertyResult:
    """The verdict on one property.

    For ``always``/``eventually`` properties ``trace`` is the shortest counterexample;
    for ``sometimes`` properties it is the shortest witness.
    """

    name: str
    kind: str
    status: Status
    expected: str | None = None
    explanation: str | None = None
    trace: list[Step] | None = None
    loop_start: int | None = None  # for a lasso: the trace position the loop returns to

    @property
    def as_expected(self) -> bool:
        """True when the verdict equals ``[expect]`` (or nothing was expected and the
        property was not violated)."""
        if self.expected is None:
            return self.status != "violated"
        return self.status == self.expected

    @property
    def word(self) -> str:
        """The verdict as printed (:func:`verdict_word`): ``unreached`` for a
        ``sometimes`` property never reached."""
        return verdict_word(self.kind, self.status) or self.status

    @property
    def expected_word(self) -> str | None:
        """The expectation as printed (:func:`verdict_word`)."""
        return verdict_word(self.kind, self.expected)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "status": self.status,
            "shown": self.word,
            "expected": self.expected,
            "explanation": self.explanation,
            "trace": [asdict(s) for s in self.trace] if self.trace is not None else None,
        }
        if self.loop_start is not None:
            out["loop_start"] = self.loop_start
        return out


@dataclass
class LevelTiming:
    """Where one breadth-first level's wall time went, so the next bottleneck is visible.

    The phases are the engine's: ``expand_s`` decodes frontier states and generates their
    successors, ``exchange_s`` moves successors between processes (workers, shards or Spark
    partitions; 0 when everything runs in one process), ``dedup_s`` tests them against the
    visited set and stores the new ones, ``check_s`` evaluates the properties on the new
    states. ``other_s`` is the rest of the level's wall time (orchestration, checkpoints).

    With workers each phase is the mean over the workers, and ``busiest_s`` is the most
    seconds one worker spent expanding, deduplicating and checking in the level: beyond
    the mean of those three phases, it is how long the others waited for that worker
    (their share of ``exchange_s``). It is 0 in one process and on Spark.
    """

    depth: int
    frontier: int
    """States expanded at this level."""
    new_states: int
    """Distinct states first reached at this level."""
    expand_s: float = 0.0
    exchange_s: float = 0.0
    dedup_s: float = 0.0
    check_s: float = 0.0
    other_s: float = 0.0
    busiest_s: float = 0.0


@dataclass
class Stats:
    distinct_states: int = 0
    transitions: int = 0
    depth: int = 0
    seconds: float = 0.0
    states_per_second: float = 0.0
    peak_memory_bytes: int = 0
    bytes_per_state: float = 0.0
    collision_probability: float = 0.0
    bound: str | None = None  # which bound cut the search short, if any
    levels: list[LevelTiming] = field(default_factory=list)
    """Per-level time split, when the engine records it (empty otherwise)."""


@dataclass
class Provenance:
    """Where a result comes from: ``version``, ordercheck's; ``commit``, the ``HEAD``
    commit of the git checkout that holds the model file (``None`` when it is in none,
    git is missing or did not answer in time); ``date``, when the result was made (UTC,
    ISO 8601, to the second)."""

    version: str = ""
    commit: str | None = None
    date: str = ""


@dataclass
class Result:
    """The outcome of checking one model.

    Besides the verdicts, a result describes the model it comes from, so that every
    artifact made of it (JSON, report pages, JUnit) says what was checked: its
    ``description``, ``constants``, ``bounds``, the reductions asked for
    (``reductions_requested``) and applied (``reductions``), its ``[evidence]`` table,
    the spec's properties it does ``not_checked`` (with the model file's reason) and its
    ``provenance``. The fields after ``bounds`` are empty in a record written before
    they were recorded."""

    model: str
    spec: str
    constants: dict[str, Any]
    engine: str
    reductions: dict[str, bool]
    properties: dict[str, PropertyResult] = field(default_factory=dict)
    stats: Stats = field(default_factory=Stats)
    warnings: list[str] = field(default_factory=list)
    coverage: dict[str, int] | None = None
    """Transitions generated per action name (TLC's coverage); ``None`` when the engine did
    not record them."""
    bounds: dict[str, Any] = field(default_factory=dict)
    """The bounds the search ran under (``max_states``, ``max_depth``, ``time_limit``;
    ``None`` for one not set); empty when the engine did not record them."""
    description: str = ""
    """The model file's ``description``."""
    reductions_requested: dict[str, bool] = field(default_factory=dict)
    """The reductions the model file and the command line asked for (``symmetry``,
    ``por``); :attr:`reductions` says which were applied."""
    evidence: dict[str, dict[str, str]] = field(default_factory=dict)
    """The model file's ``[evidence]``: property -> ``{"mutant": FILE}`` or ``{"witness": NAME}``."""
    not_checked: dict[str, str] = field(default_factory=dict)
    """Each property of the spec the model does not check -> the reason its
    ``[not_checked]`` table gives (empty when it gives none)."""
    provenance: Provenance | None = None
    """ordercheck's version, the model's git commit and the date (:class:`Provenance`)."""

    def bound_text(self) -> str:
        """Which bound stopped the search, and its limit when recorded (empty for a
        complete search): ``stopped by max_states (max_states = 1,000)``; with the
        statistics line's states and depth it says how far the search got."""
        st = self.stats
        if not st.bound:
            return ""
        limit = self.bounds.get(st.bound)
        shown = (f" ({st.bound} = {limit:,})" if isinstance(limit, int) and not isinstance(limit, bool)
                 else f" ({st.bound} = {limit:g} s)" if isinstance(limit, float) else "")
        return f"stopped by {st.bound}{shown}"

    def exit_code(self) -> int:
        """1 if a verdict differs from its expectation, else 3 if a bound left a
        verdict unknown, else 0."""
        return verdicts_exit_code(self.properties.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "spec": self.spec,
            "constants": self.constants,
            "engine": self.engine,
            "reductions": self.reductions,
            "properties": {name: p.to_json() for name, p in self.properties.items()},
            "stats": asdict(self.stats),
            "warnings": self.warnings,
            "coverage": self.coverage,
            "bounds": self.bounds,
            "description": self.description,
            "reductions_requested": self.reductions_requested,
            "evidence": self.evidence,
            "not_checked": self.not_checked,
            "provenance": asdict(self.provenance) if self.provenance is not None else None,
        }

    @classmethod
    def from_json(cls, data: Any, path: str = "") -> Result:
        """The result a ``check --json`` record holds. Every field is checked against its
        type here (the record may come from anyone's file): :class:`RecordError` names the
        field (``path`` prefixes it) and what is wrong. Fields this version does not know
        are ignored at the top level."""
        data = _object(data, path)
        known = {f.name: hint for f, hint in _hints(cls)}
        for name in ("model", "spec"):
            if name not in data:
                raise RecordError(_join(path, name), "missing")
        values = {name: _typed(data[name], known[name], _join(path, name))
                  for name in ("model", "spec", "constants", "engine", "reductions", "warnings", "coverage", "bounds",
                               "description", "reductions_requested", "evidence", "not_checked", "provenance")
                  if name in data}
        props = {}
        for name, p in _object(data.get("properties", {}), _join(path, "properties")).items():
            where = _join(path, f"properties.{name}")
            # `shown` is derived from kind and status (PropertyResult.word), not a field
            record = {k: v for k, v in _object(p, where).items() if k != "shown"}
            props[name] = _dataclass(PropertyResult, {**record, "name": name}, where)
        return cls(
            values["model"],
            values["spec"],
            values.get("constants", {}),
            values.get("engine", "local"),
            values.get("reductions", {}),
            props,
            _dataclass(Stats, data.get("stats", {}), _join(path, "stats")),
            list(values.get("warnings", [])),
            values.get("coverage"),
            dict(values.get("bounds") or {}),
            values.get("description", ""),
            values.get("reductions_requested", {}),
            values.get("evidence", {}),
            values.get("not_checked", {}),
            values.get("provenance"),
        )


class RecordError(ValueError):
    """A field of a result record that does not have its type: ``field`` names it
    (``properties.fifo.trace[2].state``), ``message`` says what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path and not name.startswith("[") else f"{path}{name}"


def _hints(cls: type) -> list[tuple[Any, Any]]:
    import dataclasses
    import typing

    hints = typing.get_type_hints(cls)
    return [(f, hints[f.name]) for f in dataclasses.fields(cls)]


def _object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordError(path, f"expected a JSON object, found {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _dataclass(cls: type, data: Any, path: str) -> Any:
    """``cls`` built from the JSON object ``data``, every field checked against its type;
    an unknown field or a missing required one is a :class:`RecordError`."""
    import dataclasses

    data = _object(data, path)
    fields = _hints(cls)
    names = {f.name for f, _hint in fields}
    for name in data:
        if name not in names:
            raise RecordError(_join(path, name), "is not a field of this record")
    values = {}
    for f, hint in fields:
        if f.name in data:
            values[f.name] = _typed(data[f.name], hint, _join(path, f.name))
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise RecordError(_join(path, f.name), "missing")
    return cls(**values)


def _typed(value: Any, hint: Any, path: str) -> Any:
    """``value`` as a field of type ``hint`` (the JSON types: str, int, float, bool,
    None, Literal, lists, objects, unions and the records above), or :class:`RecordError`."""
    import dataclasses
    import types
    import typing

    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return value
    if dataclasses.is_dataclass(hint):
        return _dataclass(hint, value, path)  # type: ignore[arg-type]
    if origin in (typing.Union, types.UnionType):
        problems: list[RecordError] = []
        for option in args:
            try:
                return _typed(value, option, path)
            except RecordError as exc:
                problems.append(exc)
        deeper = [exc for exc in problems if exc.field != path]
        if deeper:  # the value has the shape of one option and is wrong inside it: say where
            raise deeper[0]
        raise RecordError(path, " or ".join(dict.fromkeys(exc.message for exc in problems)))
    if origin is typing.Literal:
        if value in args and type(value) is type(args[0]):
            return value
        raise RecordError(path, f"expected one of {', '.join(map(repr, args))}, found {value!r:.60}")
    if origin is list:
        if not isinstance(value, list):
            raise RecordError(path, f"expected an array, found {_kind(value)}")
        return [_typed(v, args[0] if args else Any, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        mapping = _object(value, path)
        return {k: _typed(v, args[1] if args else Any, _join(path, k)) for k, v in mapping.items()}
    if hint is type(None):
        if value is None:
            return value
        raise RecordError(path, f"expected null, found {_kind(value)}")
    if hint is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if hint in (str, int, bool) and isinstance(value, hint) and (hint is bool or not isinstance(value, bool)):
        return value
    names = {str: "a string", int: "an integer", float: "a number", bool: "a boolean"}
    raise RecordError(path, f"expected {names.get(hint, hint)}, found {_kind(value)}")


def verdicts_exit_code(verdicts: Iterable[Any]) -> int:
    """1 if a definite verdict differs from its expectation, else 3 if any verdict is
    unknown, else 0. Each item has ``status`` and ``as_expected``."""
    items = list(verdicts)
    if any(v.status != "unknown" and not v.as_expected for v in items):
        return EXIT_MISMATCH
    if any(v.status == "unknown" for v in items):
        return EXIT_BOUND
    return EXIT_OK


def combined_exit_code(results: list[Result]) -> int:
    codes = [r.exit_code() for r in results]
    if EXIT_MISMATCH in codes:
        return EXIT_MISMATCH
    if EXIT_BOUND in codes:
        return EXIT_BOUND
    return EXIT_OK


def write_json_atomic(path: str | os.PathLike[str], payload: Any) -> None:
    """Write ``payload`` as JSON so that ``path`` is either the old file or the whole
    new one, never half-written (see :mod:`ordercheck.checker.api.outputs`)."""
    from ordercheck.checker.api.outputs import write_json_atomic as write

    write(path, payload)

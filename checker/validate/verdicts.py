"""Validating one log: what the local engine and each Spark task run, and its record.

A :class:`Job` says what to check (properties, an optional model for conformance, the
search bounds); :func:`validate_log` applies it to a log and gives a
:class:`LogVerdict`, whose :meth:`~LogVerdict.rows` are the rows of the verdict table
(one per property, plus one for conformance) and whose JSON is what ``--json``
writes. Both engines call the same functions, so their answers are the same.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field
from typing import Any

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.spec import Spec
from ordercheck.checker.loading.modelfile import model_from_dict
from ordercheck.checker.monitors import check_log
from ordercheck.checker.monitors.violation import Violation
from ordercheck.checker.validate.conformance import DEFAULT_BOUND, DEFAULT_MAX_STATES, Conformance, conformance
from ordercheck.checker.validate.log import Log
from ordercheck.checker.validate.readers import read_log, read_text

COLUMNS = ("log", "format", "events", "peers", "messages", "property", "status", "line", "explanation", "window", "seconds")
"""The verdict table's columns: one row per (log, property); ``property`` is
``conformance`` for the conformance row, whose ``status`` is ``conforms``,
``violated`` or ``unknown``; ``window`` is the lines of the events that show a
violation (JSON text of a list), ``seconds`` the time spent on the log."""


@dataclass(frozen=True)
class Job:
    """What to check on every log: ``props`` by name, and with ``model_path`` (and its
    parsed TOML ``model_raw``, so a Spark task can rebuild it) conformance to that
    model's spec, with the search's ``bound``, ``max_states`` and ``unrecorded`` kinds;
    ``peers_by_position``: the log's peers are the spec's in order, whatever their names
    (:func:`~ordercheck.checker.validate.conformance.conformance`)."""

    props: tuple[str, ...]
    fmt: str = "auto"
    model_path: str | None = None
    model_raw: dict[str, Any] | None = None
    bound: int = DEFAULT_BOUND
    max_states: int = DEFAULT_MAX_STATES
    unrecorded: frozenset[int] = frozenset()
    spec_ref: str | None = None
    peers_by_position: bool = False

    def model(self) -> Model | None:
        """The model to conform to, rebuilt from its TOML (``None`` without one)."""
        if self.model_path is None or self.model_raw is None:
            return None
        return model_from_dict(self.model_raw, self.model_path)

    def itf_spec(self, model: Model | None) -> Spec | type[Spec] | None:
        """What ITF traces replay through: the model's spec, else the class of
        ``spec_ref`` (the canonical reference of ``validate --spec``, which the user
        typed: resolving it imports it), else ``None`` (each trace's own
        ``#meta.spec``, a built-in or registered name only)."""
        if model is not None:
            return model.spec
        if self.spec_ref is None:
            return None
        from ordercheck.checker.loading.specref import spec_class_of

        return spec_class_of(self.spec_ref)


@dataclass
class LogVerdict:
    """Everything ``validate`` says about one log."""

    log: str
    format: str
    events: int
    peers: int
    messages: int
    properties: dict[str, dict[str, Any]]
    conformance: dict[str, Any] | None = None
    model: str | None = None
    seconds: float = 0.0
    diagrams: dict[str, str] = field(default_factory=dict)  # property -> SVG of its window

    @property
    def violated(self) -> list[str]:
        """The properties violated (and ``conformance`` when the log does not conform)."""
        out = [n for n, p in self.properties.items() if p["status"] == "violated"]
        if self.conformance is not None and self.conformance["status"] == "violated":
            out.append("conformance")
        return out

    @property
    def unknown(self) -> bool:
        return self.conformance is not None and self.conformance["status"] == "unknown"

    def rows(self) -> list[dict[str, Any]]:
        """The verdict table's rows for this log (see :data:`COLUMNS`)."""
        import json

        base = {"log": self.log, "format": self.format, "events": self.events, "peers": self.peers,
                "messages": self.messages, "seconds": self.seconds}
        out = []
        for name, p in self.properties.items():
            window = [w["line"] for w in p.get("window", [])]
            out.append(dict(base, property=name, status=p["status"], line=p.get("line"),
                            explanation=p.get("explanation"), window=json.dumps(window) if window else None))
        if self.conformance is not None:
            c = self.conformance
            out.append(dict(base, property="conformance", status=c["status"], line=c.get("line"),
                            explanation=c.get("explanation"), window=None))
        return out

    def to_json(self) -> dict[str, Any]:
        """The log's record for ``--json`` (diagrams left out)."""
        return {
            "log": self.log, "format": self.format, "events": self.events, "peers": self.peers,
            "messages": self.messages, "seconds": self.seconds, "properties": self.properties,
            "model": self.model, "conformance": self.conformance,
        }


NO_EVENTS = "no events (an empty file, blank lines or a header alone; a recording of nothing is no pass)"
"""The message of the input error for a log without events."""


def judge(log: Log, job: Job, *, model: Model | None = None, diagrams: bool = False) -> LogVerdict:
    """Check ``job`` on an already read ``log``. A log with no events is bad input
    (:class:`~ordercheck.checker.InputError`, :data:`NO_EVENTS`): a verdict on it would be a pass
    that nothing earned."""
    if not len(log):
        raise InputError(log.source, "", NO_EVENTS)
    started = time.perf_counter()
    found = check_log(log, job.props)
    props: dict[str, dict[str, Any]] = {}
    svgs: dict[str, str] = {}
    for name, v in found.items():
        props[name] = _prop_record(log, v)
        if v is not None and diagrams:
            from ordercheck.checker.validate.diagram import window_svg

            svgs[name] = window_svg(log, v, f"{name}-{zlib.crc32(log.source.encode()):08x}")
    conf: dict[str, Any] | None = None
    if model is None and job.model_path is not None:
        model = job.model()
    if model is not None:
        answer: Conformance = conformance(model.spec, log, bound=job.bound, max_states=job.max_states,
                                          unrecorded=job.unrecorded, by_position=job.peers_by_position)
        conf = answer.to_json(log)
    return LogVerdict(
        log=log.source, format=log.fmt, events=len(log), peers=len(log.peers), messages=log.messages,
        properties=props, conformance=conf, model=job.model_path,
        seconds=round(time.perf_counter() - started, 6), diagrams=svgs,
    )


def _prop_record(log: Log, v: Violation | None) -> dict[str, Any]:
    if v is None:
        return {"status": "holds"}
    return dict(v.to_json(log), status="violated")


def validate_path(path: str, job: Job, *, model: Model | None = None, diagrams: bool = False) -> LogVerdict:
    """Read the log at ``path`` and check ``job`` on it (bad input raises
    :class:`~ordercheck.checker.InputError`)."""
    spec = job.itf_spec(model)
    log = read_log(path, job.fmt, spec)
    return judge(log, job, model=model, diagrams=diagrams)


def validate_merged(paths: list[str], job: Job, *, model: Model | None = None, diagrams: bool = False) -> LogVerdict:
    """Read the logs at ``paths``, one execution's per-process logs, merge them
    (:func:`~ordercheck.checker.validate.merge.merge_logs`) and check ``job`` on the result (bad
    input, and logs that cannot be merged, raise :class:`~ordercheck.checker.InputError`)."""
    from ordercheck.checker.validate.merge import merge_logs

    spec = job.itf_spec(model)
    logs = [read_log(path, job.fmt, spec) for path in paths]
    return judge(merge_logs(logs), job, model=model, diagrams=diagrams)


def validate_text(source: str, text: str, job: Job, *, diagrams: bool = False) -> LogVerdict:
    """Read a log from its whole text (a Spark task's input) and check ``job`` on it."""
    model = job.model()
    log = read_text(text, source, job.fmt, job.itf_spec(model))
    return judge(log, job, model=model, diagrams=diagrams)

"""``validate --engine spark``: one Spark task per log (large logs split), the local engine's answers.

Local paths (files, directories, globs) are expanded here as the local engine expands
them, and each log becomes one task that reads it and runs
:func:`~ordercheck.checker.validate.verdicts.validate_path`, the local engine's own function, so
both engines see the same logs under the same names (the executors must see the same
file system: true on ``local[...]`` masters and for shared mounts). URIs
(``hdfs://``, ``s3a://``, ``file://``..., with Hadoop's glob syntax) are read by
Spark (:meth:`SparkContext.wholeTextFiles`), one record per log, never split, each
validated by :func:`~ordercheck.checker.validate.verdicts.validate_text` and named by its URI. A
log that is bad input comes back as its one line, and the first one (in the logs'
order) is raised as the local engine would raise it.

A local log of more than ``split_above`` events (:data:`SPLIT_ABOVE` by default) is
split where the property allows it (:mod:`ordercheck.checker.validate.split`): its first task
checks the other properties (and conformance) and counts its peers, then one task per
receiving peer reads the log again and checks ``fifo`` and ``integrity`` on that peer's
part; the driver keeps each property's earliest violation, which is the whole log's
first violation with the same sentence and window. Logs read through URIs are not
split (Spark hands each one to a task as one string).
"""

from __future__ import annotations

import dataclasses
import re
import time
from functools import partial
from typing import Any

from ordercheck.checker.api.errors import EngineError, InputError
from ordercheck.checker.validate.readers import expand_logs, read_log
from ordercheck.checker.validate.split import SPLITTABLE, check_part, combine
from ordercheck.checker.validate.verdicts import Job, LogVerdict, judge, validate_path, validate_text

SPLIT_ABOVE = 200_000
"""Logs of more events than this are split across tasks (``--split-above``)."""

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _is_uri(path: str) -> bool:
    return bool(_URI.match(path))


def _read_task(job: Job, diagrams: bool, split_above: int, item: tuple[str, str]) -> tuple[str, Any]:
    """One local log: read here (the file system is the driver's) and validate it; a
    log of more than ``split_above`` events is checked here for every property but
    :data:`~ordercheck.checker.validate.split.SPLITTABLE` ones, which are left to its parts
    (``("split", verdict, peers)``)."""
    source, _path = item
    split = [p for p in job.props if p in SPLITTABLE]
    try:
        if not split:
            return source, ("ok", validate_path(source, job, model=job.model(), diagrams=diagrams))
        model = job.model()
        log = read_log(source, job.fmt, job.itf_spec(model))
        if len(log) <= split_above:
            return source, ("ok", judge(log, job, model=model, diagrams=diagrams))
        rest = dataclasses.replace(job, props=tuple(p for p in job.props if p not in SPLITTABLE))
        return source, ("split", judge(log, rest, model=model, diagrams=diagrams), len(log.peers))
    except InputError as exc:
        return source, ("error", exc.where, exc.field, exc.message)


def _part_task(job: Job, diagrams: bool, item: tuple[str, int]) -> tuple[str, int, dict[str, Any], float]:
    """Part ``peer`` of a split log: the log read again, then fifo and integrity (those
    of them asked) on that peer's events."""
    source, peer = item
    started = time.perf_counter()
    model = job.model()
    log = read_log(source, job.fmt, job.itf_spec(model))
    found = check_part(log, peer, [p for p in job.props if p in SPLITTABLE], diagrams=diagrams)
    return source, peer, found, time.perf_counter() - started


def _join(job: Job, verdict: LogVerdict, parts: list[tuple[str, int, dict[str, Any], float]]) -> LogVerdict:
    """A split log's verdict: its first task's, with each split property's earliest
    violation among the parts, the properties in the job's order."""
    split = [p for p in job.props if p in SPLITTABLE]
    best = combine([found for _s, _p, found, _t in parts], split)
    props: dict[str, dict[str, Any]] = {}
    for name in job.props:
        if name in best:
            answer = best[name]
            props[name] = {"status": "holds"} if answer is None else dict(answer[1], status="violated")
            if answer is not None and answer[2] is not None:
                verdict.diagrams[name] = answer[2]
        else:
            props[name] = verdict.properties[name]
    verdict.properties = props
    verdict.diagrams = {name: verdict.diagrams[name] for name in job.props if name in verdict.diagrams}
    verdict.seconds = round(verdict.seconds + sum(t for _s, _p, _f, t in parts), 6)
    return verdict


def _text_task(job: Job, diagrams: bool, item: tuple[str, str]) -> tuple[str, Any]:
    """One log Spark read (a URI and its whole text)."""
    source, text = item
    try:
        verdict = validate_text(source, text, job, diagrams=diagrams)
    except InputError as exc:
        return source, ("error", exc.where, exc.field, exc.message)
    return source, ("ok", verdict)


def validate_spark(paths: list[str], job: Job, *, master: str = "local[*]", diagrams: bool = False,
                   split_above: int = SPLIT_ABOVE) -> list[LogVerdict]:
    """Validate every log ``paths`` name, one Spark task per log and, for a local log
    of more than ``split_above`` events, one more per receiving peer (see the module's
    docstring); verdicts in the order the local engine gives them (local logs as
    expanded, then the logs of URIs, by URI), equal to its verdicts but for
    ``seconds``. Raises :class:`~ordercheck.checker.InputError` for the first bad log and
    :class:`~ordercheck.checker.api.errors.EngineError` when Spark fails."""
    from ordercheck.checker.spark.session import SparkUnavailable, executor_python_problem, get_spark

    local = [p for p in paths if not _is_uri(p)]
    uris = [p for p in paths if _is_uri(p)]
    files = [str(f) for f in expand_logs(local)] if local else []
    try:
        sc = get_spark(master)
    except SparkUnavailable as exc:
        raise EngineError("spark", str(exc)) from None
    out: list[tuple[str, Any]] = []
    try:
        if files:
            rdd = sc.parallelize([(f, f) for f in files], len(files))
            out += rdd.map(partial(_read_task, job, diagrams, split_above)).collect()
            work = [(source, peer) for source, (status, *rest) in out if status == "split" for peer in range(rest[1])]
            if work:
                parts = sc.parallelize(work, len(work)).map(partial(_part_task, job, diagrams)).collect()
                by_log: dict[str, list[Any]] = {}
                for part in parts:
                    by_log.setdefault(part[0], []).append(part)
                out = [(source, ("ok", _join(job, rest[0], by_log[source]))) if status == "split"
                       else (source, (status, *rest)) for source, (status, *rest) in out]
        for uri in uris:
            texts = sc.wholeTextFiles(uri)
            try:
                found = texts.map(partial(_text_task, job, diagrams)).collect()
            except Exception as exc:
                if "InvalidInputException" in str(exc):  # Hadoop: the path or pattern names nothing
                    raise InputError(uri, "", "no file matches this URI") from None
                raise
            if not found:
                raise InputError(uri, "", "no file matches this URI")
            out += sorted(found, key=lambda pair: pair[0])
    except InputError:
        raise
    except Exception as exc:  # a task that failed for good, or Spark itself
        unfit = executor_python_problem(str(exc))
        raise EngineError("spark", unfit or f"the validation job failed: {_first_line(exc)}") from None
    for _source, (status, *rest) in out:
        if status == "error":
            where, field, message = rest
            raise InputError(where, field, message)
    return [rest[0] for _source, (_status, *rest) in out]


def _first_line(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    for ln in lines:
        if "Error:" in ln or "Exception:" in ln:
            return ln[:300]
    return (lines[0] if lines else type(exc).__name__)[:300]

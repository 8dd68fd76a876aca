"""``validate --engine spark``: one Spark task per log, the same answers as the local engine.

Local paths (files, directories, globs) are expanded here as the local engine expands
them, and each log becomes one task that reads it and runs
:func:`~checker.validate.verdicts.validate_path`, the local engine's own function, so
both engines see the same logs under the same names (the executors must see the same
file system: true on ``local[...]`` masters and for shared mounts). URIs
(``hdfs://``, ``s3a://``, ``file://``..., with Hadoop's glob syntax) are read by
Spark (:meth:`SparkContext.wholeTextFiles`), one record per log, never split, each
validated by :func:`~checker.validate.verdicts.validate_text` and named by its URI. A
log that is bad input comes back as its one line, and the first one (in the logs'
order) is raised as the local engine would raise it.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from checker.api.errors import EngineError, InputError
from checker.validate.readers import expand_logs
from checker.validate.verdicts import Job, LogVerdict, validate_path, validate_text

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _is_uri(path: str) -> bool:
    return bool(_URI.match(path))


def _read_task(job: Job, diagrams: bool, item: tuple[str, str]) -> tuple[str, Any]:
    """One local log: read here (the file system is the driver's) and validate it."""
    source, _path = item
    try:
        verdict = validate_path(source, job, model=job.model(), diagrams=diagrams)
    except InputError as exc:
        return source, ("error", exc.where, exc.field, exc.message)
    return source, ("ok", verdict)


def _text_task(job: Job, diagrams: bool, item: tuple[str, str]) -> tuple[str, Any]:
    """One log Spark read (a URI and its whole text)."""
    source, text = item
    try:
        verdict = validate_text(source, text, job, diagrams=diagrams)
    except InputError as exc:
        return source, ("error", exc.where, exc.field, exc.message)
    return source, ("ok", verdict)


def validate_spark(paths: list[str], job: Job, *, master: str = "local[*]", diagrams: bool = False) -> list[LogVerdict]:
    """Validate every log ``paths`` name, one Spark task per log; verdicts in the
    order the local engine gives them (local logs as expanded, then the logs of URIs,
    by URI). Raises :class:`~checker.InputError` for the first bad log and
    :class:`~checker.api.errors.EngineError` when Spark fails."""
    from checker.spark.session import SparkUnavailable, get_spark

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
            out += rdd.map(partial(_read_task, job, diagrams)).collect()
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
        raise EngineError("spark", f"the validation job failed: {_first_line(exc)}") from None
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

"""``validate --engine spark``: one Spark task per log, the same answers as the local engine.

The logs are read by Spark (:meth:`SparkContext.wholeTextFiles`), so they may live on
any file system Spark reads (``hdfs://``, ``s3a://``, local paths on ``local[...]``
masters); each log is one record, never split, and each task runs
:func:`~checker.validate.verdicts.validate_text`, the function the local engine runs
on the same text. Local paths (files, directories, globs) are expanded here as the
local engine expands them, so both engines see the same logs under the same names;
other URIs go to Spark as they are. A log that is bad input comes back as its one
line, and the first one (in the logs' order) is raised as the local engine would
raise it.
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from typing import Any

from checker.api.errors import EngineError, InputError
from checker.validate.readers import expand_logs
from checker.validate.verdicts import Job, LogVerdict, validate_text

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _is_remote(path: str) -> bool:
    return bool(_URI.match(path)) and not path.startswith("file://")


def _task(job: Job, diagrams: bool, names: dict[str, str], item: tuple[str, str]) -> tuple[str, Any]:
    key, text = item
    local = key[5:] if key.startswith("file:") else key
    while local.startswith("//"):
        local = local[1:]
    source = names.get(local, key)
    try:
        verdict = validate_text(source, text, job, diagrams=diagrams)
    except InputError as exc:
        return source, ("error", exc.where, exc.field, exc.message)
    return source, ("ok", verdict)


def validate_spark(paths: list[str], job: Job, *, master: str = "local[*]", diagrams: bool = False) -> list[LogVerdict]:
    """Validate every log ``paths`` name, one Spark task per log; verdicts in the
    order the local engine gives them (local logs as expanded, then remote ones by
    URI). Raises :class:`~checker.InputError` for the first bad log and
    :class:`~checker.api.errors.EngineError` when Spark fails."""
    from checker.spark.session import SparkUnavailable, get_spark

    local = [p for p in paths if not _is_remote(p)]
    remote = [p for p in paths if _is_remote(p)]
    files = expand_logs(local) if local else []
    names = {str(f.resolve()): str(f) for f in files}
    order = {str(f): i for i, f in enumerate(files)}
    inputs = [_escape(Path(f).resolve().as_uri()) for f in files] + remote
    try:
        sc = get_spark(master)
    except SparkUnavailable as exc:
        raise EngineError("spark", str(exc)) from None
    try:
        rdd = sc.wholeTextFiles(",".join(inputs), minPartitions=max(1, len(inputs)))
        out = rdd.map(partial(_task, job, diagrams, names)).collect()
    except Exception as exc:  # a task that failed for good, or Spark itself
        raise EngineError("spark", f"the validation job failed: {_first_line(exc)}") from None
    out.sort(key=lambda pair: (order.get(pair[0], len(order)), pair[0]))
    for _source, (status, *rest) in out:
        if status == "error":
            where, field, message = rest
            raise InputError(where, field, message)
    return [rest[0] for _source, (_status, *rest) in out]


def _escape(uri: str) -> str:
    """A path for Hadoop's comma-separated, glob-aware input list: commas and glob
    characters in the name itself are escaped."""
    return re.sub(r"([,{}\[\]*?\\])", r"\\\1", uri)


def _first_line(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    for ln in lines:
        if "Error:" in ln or "Exception:" in ln:
            return ln[:300]
    return (lines[0] if lines else type(exc).__name__)[:300]

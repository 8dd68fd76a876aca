"""``validate --engine spark``: logs batched per task, large logs read and checked in parts, the local engine's answers.

Local paths (files, directories, globs) are expanded here as the local engine expands
them. The logs are packed into about as many batches as Spark has cores (by size:
the largest first, each into the lightest batch so far), and each batch is one task
that reads and validates its logs one after the other with
:func:`~ordercheck.checker.validate.verdicts.validate_path`, the local engine's own function, so
both engines see the same logs under the same names (the executors must see the same
file system: true on ``local[...]`` masters and for shared mounts), and a log costs
its own work rather than a task's start. URIs (``hdfs://``, ``s3a://``,
``file://``..., with Hadoop's glob syntax) are read by Spark
(:meth:`SparkContext.wholeTextFiles`), one record per log, never split, each validated
by :func:`~ordercheck.checker.validate.verdicts.validate_text` and named by its URI. A log
that is bad input comes back as its one line, and the first one (in the logs' order)
is raised as the local engine would raise it.

A local JSON Lines log of more than ``split_above`` lines (:data:`SPLIT_ABOVE` by
default) is not put in a batch: it is cut into as many byte ranges as there are
cores, each read by a task of the same job
(:mod:`ordercheck.checker.validate.chunks`), which hands back its part pickled. Its
properties (and conformance) are then shared out among the tasks of a second job
(:func:`property_groups`), the parts sent once to each executor (a Spark broadcast
per log, which the driver never unpickles); each task joins the parts into the log a
sequential read gives and checks its properties, each whole, on the whole log. If a
part holds bad input, or the parts do not join (an id sent in two of them), the
driver reads the file itself, which raises the sequential read's error. No property
is checked in pieces here: each monitor reads the whole log in order, so a property's
answer is the sequential one by construction (``causal``, the costliest of the
default ones, is therefore the floor of a split log's time). A checking task fetches
only its own log's broadcast (Spark fetches a broadcast where a task reads it), so a
task's memory holds one large log, however many are validated together.
Logs read through URIs are not split (Spark hands each one to a task as one string).

Local logs of fewer bytes together than ``driver_bytes`` (:data:`DRIVER_BYTES` by
default) are validated by the driver itself, none split, one after the other, with the
same function: a Spark job costs about a quarter of a second however little it does,
more than such logs take to check (as the check engine keeps a search's small first
levels on the driver).
"""

from __future__ import annotations

import dataclasses
import pickle
import re
from functools import partial
from typing import Any

from ordercheck.checker.api.errors import EngineError, InputError
from ordercheck.checker.validate.chunks import count_lines, join, plan, read_part
from ordercheck.checker.validate.readers import expand_logs, format_of
from ordercheck.checker.validate.verdicts import Job, LogVerdict, judge, validate_path, validate_text

SPLIT_ABOVE = 200_000
"""JSON Lines logs of more lines than this are read and checked in parts (``--split-above``)."""

DRIVER_BYTES = 4 << 20
"""Local logs of fewer bytes than this together (4 MiB: about two thirds of a second of
checking ``validate``'s default properties, measured at 6 to 7 MB a second, which two
tasks would halve, against a job's quarter of a second) are validated on the driver,
none split."""

DRIVER_BYTES_ENV = "ORDERCHECK_SPARK_DRIVER_BYTES"
"""Sets ``driver_bytes`` where the caller does not: a whole number of bytes, ``0`` for
every log in a Spark task (what a test of the tasks uses)."""

COST: dict[str, float] = {"fifo": 0.5, "integrity": 0.35, "total": 0.75, "total_global": 0.75, "total_prefix": 0.75,
                          "causal": 2.1, "global_lock": 3.2, "synchronous": 6.3, "eventual_delivery": 0.5,
                          "conformance": 10.0}
"""Rough CPU seconds per million events of each check (the measured ones from
docs/explanation/performance.md, "Trace validation"; ``total_global``,
``total_prefix`` and ``eventual_delivery`` guessed like ``total`` and ``fifo``,
conformance guessed high), for sharing them out among tasks: a wrong guess costs
time, never an answer."""

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _is_uri(path: str) -> bool:
    return bool(_URI.match(path))


def _one(job: Job, diagrams: bool, model: Any, source: str) -> tuple[str, Any]:
    """One local log read and validated as the local engine does: ``("ok", verdict)``
    or ``("error", where, field, message)`` for bad input."""
    try:
        return "ok", validate_path(source, job, model=model, diagrams=diagrams)
    except InputError as exc:
        return "error", exc.where, exc.field, exc.message


def _task(job: Job, diagrams: bool, item: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """One task of the reading job: a batch of logs (``("batch", sources)``: each
    source with :func:`_one`'s answer) or one part of a large log (``("part", source,
    k, part)``: the source, ``k`` and the part read, pickled, so that the driver passes
    it on to the checking tasks without unpickling it; ``None`` if it holds bad input)."""
    if item[0] == "batch":
        model = job.model()
        return [(source, _one(job, diagrams, model, source)) for source in item[1]]
    _kind, source, k, part = item
    found = read_part(source, part)
    return [(source, k, None if found is None else pickle.dumps(found, protocol=pickle.HIGHEST_PROTOCOL))]


def _check_task(job: Job, diagrams: bool, parts: Any, item: tuple[str, int, Job]) -> tuple[str, int, LogVerdict | None]:
    """Group ``g`` of the checks of a large log, joined here from its parts (``parts``:
    by source, a broadcast of that log's pickled parts, of which only ``source``'s is
    read); ``None`` when the parts do not join into a log with events (bad input, which
    the driver's sequential read reports)."""
    source, g, group = item
    log = join([pickle.loads(raw) for raw in parts[source].value])
    if log is None or not len(log):
        return source, g, None
    return source, g, judge(log, group, diagrams=diagrams)


def batches(sizes: list[int], count: int) -> list[list[int]]:
    """Indices ``0..len(sizes)-1`` packed into at most ``count`` batches of about equal
    total size (the largest first, each into the lightest batch so far; ties to the
    lower batch), each batch in increasing order; empty batches left out."""
    loads = [0] * max(1, count)
    out: list[list[int]] = [[] for _ in loads]
    for i in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        b = min(range(len(loads)), key=lambda b: (loads[b], b))
        loads[b] += max(1, sizes[i])
        out[b].append(i)
    return [sorted(b) for b in out if b]


def property_groups(job: Job, count: int) -> list[Job]:
    """``job``'s checks shared out among at most ``count`` jobs of about equal
    :data:`COST` (the costliest first, each to the cheapest group so far), each whole
    property (and conformance, if asked) in exactly one of them, in ``job``'s order;
    only the group with conformance keeps the model."""
    units = list(job.props) + (["conformance"] if job.model_path is not None else [])
    loads = [0.0] * max(1, min(count, len(units)))
    groups: list[set[str]] = [set() for _ in loads]
    for name in sorted(units, key=lambda n: (-COST.get(n, 1.0), units.index(n))):
        g = min(range(len(loads)), key=lambda g: (loads[g], g))
        loads[g] += COST.get(name, 1.0)
        groups[g].add(name)
    out = []
    for names in groups:
        props = tuple(p for p in job.props if p in names)
        if "conformance" in names:
            out.append(dataclasses.replace(job, props=props))
        else:
            out.append(dataclasses.replace(job, props=props, model_path=None, model_raw=None))
    return out


def combine(job: Job, parts: list[LogVerdict]) -> LogVerdict:
    """One log's verdict from its groups' verdicts (:func:`property_groups`): the
    properties and diagrams in ``job``'s order, the conformance of the group that
    checked it, the seconds of all."""
    props = {name: p for v in parts for name, p in v.properties.items()}
    svgs = {name: svg for v in parts for name, svg in v.diagrams.items()}
    conf = next((v.conformance for v in parts if v.conformance is not None), None)
    first = parts[0]
    return LogVerdict(
        log=first.log, format=first.format, events=first.events, peers=first.peers, messages=first.messages,
        properties={name: props[name] for name in job.props}, conformance=conf, model=job.model_path,
        seconds=round(sum(v.seconds for v in parts), 6),
        diagrams={name: svgs[name] for name in job.props if name in svgs},
    )


def _large(files: list[str], job: Job, split_above: int) -> set[str]:
    """The files read and checked in parts: JSON Lines (by ``--format`` or as the local
    engine's reader would guess) of more than ``split_above`` lines."""
    out = set()
    for f in files:
        if count_lines(f, split_above) is None:
            continue
        if job.fmt == "auto":
            with open(f, "rb") as fh:
                head = fh.read(4 * 4096).decode("utf-8", "ignore")[:4096]
            if format_of(f, head) != "jsonl":
                continue
        elif job.fmt != "jsonl":
            continue
        out.add(f)
    return out


def _text_task(job: Job, diagrams: bool, item: tuple[str, str]) -> tuple[str, Any]:
    """One log Spark read (a URI and its whole text)."""
    source, text = item
    try:
        verdict = validate_text(source, text, job, diagrams=diagrams)
    except InputError as exc:
        return source, ("error", exc.where, exc.field, exc.message)
    return source, ("ok", verdict)


def validate_spark(paths: list[str], job: Job, *, master: str = "local[*]", diagrams: bool = False,
                   split_above: int = SPLIT_ABOVE, driver_bytes: int | None = None) -> list[LogVerdict]:
    """Validate every log ``paths`` name: local logs in batches, one task per batch,
    and each local JSON Lines log of more than ``split_above`` lines read and checked in
    parts, or all on the driver (none split) when they hold fewer than
    ``driver_bytes`` bytes together (``None``: ``ORDERCHECK_SPARK_DRIVER_BYTES``, else
    :data:`DRIVER_BYTES`; see the module's docstring); verdicts in the order the local
    engine gives them (local logs as expanded, then the logs of URIs, by URI), equal to
    its verdicts but for ``seconds``. Raises :class:`~ordercheck.checker.InputError` for
    the first bad log and :class:`~ordercheck.checker.api.errors.EngineError` when Spark
    fails."""
    from ordercheck.checker.spark.session import (
        SparkUnavailable,
        executor_python_problem,
        get_spark,
        whole_number_env,
    )

    if driver_bytes is None:
        driver_bytes = whole_number_env(DRIVER_BYTES_ENV, "bytes")
    if driver_bytes is None:
        driver_bytes = DRIVER_BYTES

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
            out = _local_logs(sc, files, job, diagrams, split_above, driver_bytes)
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


def _local_logs(sc: Any, files: list[str], job: Job, diagrams: bool, split_above: int,
                driver_bytes: int = 0) -> list[tuple[str, Any]]:
    """Each of ``files`` with :func:`_one`'s answer, in order: small logs in batches,
    large ones (more than ``split_above`` lines, where Spark has more than one core)
    read and checked in parts, all the reading in one job and the parts' checking in a
    second; or, when they hold fewer than ``driver_bytes`` bytes together, each on the
    driver (none split), with no job, up to the first bad one."""
    import os

    sizes = []
    for f in files:
        try:
            sizes.append(os.path.getsize(f))
        except OSError:
            sizes.append(0)
    if sum(sizes) < driver_bytes:
        model = job.model()
        done: list[tuple[str, Any]] = []
        for f in files:  # up to the first bad log, which the caller raises
            done.append((f, _one(job, diagrams, model, f)))
            if done[-1][1][0] == "error":
                break
        return done
    cores = max(1, sc.defaultParallelism)
    large = _large(files, job, split_above) if cores > 1 else set()
    small = [f for f in files if f not in large]
    sizes = [size for f, size in zip(files, sizes) if f not in large]
    items: list[tuple[Any, ...]] = [("batch", [small[i] for i in b]) for b in batches(sizes, cores)]
    for f in sorted(large):
        items += [("part", f, k, part) for k, part in enumerate(plan(f, cores))]
    answers: dict[str, Any] = {}
    pieces: dict[str, dict[int, bytes | None]] = {}
    if items:
        for answer in sc.parallelize(items, len(items)).flatMap(partial(_task, job, diagrams)).collect():
            if len(answer) == 2:
                answers[answer[0]] = answer[1]
            else:
                pieces.setdefault(answer[0], {})[answer[1]] = answer[2]
    joined: dict[str, list[bytes]] = {}
    for f, found in pieces.items():
        parts = [found[k] for k in sorted(found)]
        if any(p is None for p in parts):  # bad input: the sequential read names it
            answers[f] = _one(job, diagrams, job.model(), f)
        else:
            joined[f] = parts  # type: ignore[assignment]
    if joined:
        groups = property_groups(job, cores)
        work = [(f, g, group) for f in sorted(joined) for g, group in enumerate(groups)]
        shared = {f: sc.broadcast(parts) for f, parts in joined.items()}
        try:
            checked = sc.parallelize(work, len(work)).map(partial(_check_task, job, diagrams, shared)).collect()
        finally:
            for broadcast in shared.values():
                broadcast.destroy()
        by_log: dict[str, list[tuple[int, LogVerdict | None]]] = {}
        for f, g, verdict in checked:
            by_log.setdefault(f, []).append((g, verdict))
        for f, found_groups in by_log.items():
            verdicts = [v for _g, v in sorted(found_groups, key=lambda pair: pair[0])]
            if any(v is None for v in verdicts):  # an id sent in two parts, or no events
                answers[f] = _one(job, diagrams, job.model(), f)
            else:
                answers[f] = ("ok", combine(job, verdicts))  # type: ignore[arg-type]
    return [(f, answers[f]) for f in files]


def _first_line(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    for ln in lines:
        if "Error:" in ln or "Exception:" in ln:
            return ln[:300]
    return (lines[0] if lines else type(exc).__name__)[:300]

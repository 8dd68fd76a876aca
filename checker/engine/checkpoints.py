"""Checkpoints of the local engine, written so that a resume can trust them.

A checkpoint is the search as it stood at the start of a level: the fingerprints of
every state visited, each state's parent and action, the level's frontier and the
counters (see :mod:`ordercheck.checker.engine.levels`). It is a directory ``level-DEPTH-PID`` inside the
model's checkpoint directory (:func:`checkpoint_dir`: one per model file path), with::

    fingerprints.npy  parents.npy  actions.npy  frontier.bin  meta.json
    manifest.json     the format version, each file's size and SHA-256, and the
                      digests of the sources the search was computed from
    edges-*.npy       optional: the edge log of the levels before it (:data:`LOG_FILES`),
                      which a resume goes on with (one process or workers), so the
                      check of an ``acyclic`` declaration needs no walk of the graph

Every file is data that nothing turns into code: the arrays are NumPy ``.npy`` files
read with ``allow_pickle=False``, ``frontier.bin`` holds length-prefixed JSON records of
states (:func:`ordercheck.checker.engine.frontier.encode_json`), the rest is JSON
(docs/reference/checkpoints.md describes each file). A checkpoint of an older format
(:data:`OLDER_FORMATS`) is refused from its manifest, before any other file is read.

Writing (:func:`save`) goes to ``level-…-XXXXXXXX.tmp`` (a name of this writer's own),
which is synced and renamed, and then a small ``CURRENT`` file is replaced (through a
temporary file of its own too) to name it; the checkpoint before it is kept as
well, older ones are removed. A write that fails (no space, a file too large) removes
its temporary directory, keeps the previous checkpoint and reports a warning; the
search goes on.

Reading (:func:`load`) verifies the manifest (every size and checksum, the format) and
then the contents (lengths agree, every parent precedes its child, the frontier holds
the level's states), so a damaged checkpoint is refused with exit code 2 naming the
file (:class:`DamagedCheckpoint`), with the newest intact checkpoint offered (its level,
and the one step that resumes from it; the advice never removes an intact checkpoint),
rather than resumed into a wrong count or a trace that loops for ever.

A run holds the directory's lock while it uses it (:mod:`ordercheck.checker.engine.ckptlock`,
taken by :func:`prepare`): a second run is refused, naming the holder's pid.

The sources are what :mod:`ordercheck.checker.loading.sources` digests when it loads a model:
ordercheck's version, the model file and the spec's source files (the engine takes them
as the ``sources`` entry of the identity it is given, and keeps them in the manifest
rather than in ``meta.json``). Before a resume, :func:`recorded_sources` reads them
back and :func:`source_changes` names each that differs from the resuming run's; the
caller (:func:`ordercheck.checker.engine.run.prepare_work_dirs`) refuses the resume, or with
``--resume-anyway`` warns. A checkpoint of format 2 (written before sources were
recorded) is refused as written by another version.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.inputs import DATA_LIMIT, check_input, parse_json, read_input
from ordercheck.checker.api.outputs import writable_dir
from ordercheck.checker.engine.ckptlock import acquire
from ordercheck.checker.engine.frontier import Frontier, UnwritableState

FORMAT = 4
"""The checkpoint format this version writes and reads (1 had no manifest, 2 no
digests of the sources, 3 a pickled frontier; 4 keeps the frontier as JSON,
:func:`ordercheck.checker.engine.frontier.encode_json`)."""

OLDER_FORMATS = (2, 3)
"""Formats earlier versions of ordercheck wrote: refused as another version's, not as
damage, and before any of their files but the manifest is read (format 3's
``frontier.bin`` is a pickle, which ordercheck never loads: a crafted one runs code)."""

SOURCES = "sources"
"""The identity's entry (and the manifest's) holding the digests of the sources."""

DATA_FILES = ("fingerprints.npy", "parents.npy", "actions.npy", "frontier.bin", "meta.json")
LOG_FILES = ("edges-states.npy", "edges-sources.npy", "edges-targets.npy")
"""The edge log of the levels before the checkpoint (:mod:`ordercheck.checker.engine.edges`),
written where the search kept one and read where the manifest lists all three: each
state's fingerprint by number, each edge's source number and target fingerprint."""
MANIFEST = "manifest.json"
POINTER = "CURRENT"
_NAME = re.compile(r"level-(\d+)-(\d+)")


class DamagedCheckpoint(InputError):
    """A checkpoint that fails verification: ``where`` names the file at fault."""


def checkpoint_dir(root: str | os.PathLike[str], model_path: str | os.PathLike[str]) -> Path:
    """The directory under ``root`` for the model file ``model_path``: its name plus a
    digest of its absolute path, so that two models of the same file name in different
    folders never share one."""
    absolute = os.path.abspath(os.fspath(model_path))
    digest = hashlib.sha256(absolute.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return Path(root) / f"{Path(model_path).stem}-{digest}"


def prepare(ckpt: Path) -> None:
    """Make sure checkpoints can be written into ``ckpt`` before a search starts
    (an :class:`OSError` naming the path otherwise), take its lock
    (:func:`ordercheck.checker.engine.ckptlock.acquire`: :class:`~ordercheck.checker.engine.ckptlock.CheckpointBusy`
    when another run holds it; the caller releases it), and remove the temporary files
    a killed run left there (no other run can be writing them: it would hold the lock)."""
    writable_dir(ckpt)
    acquire(ckpt)
    for stale in (*ckpt.glob("level-*.tmp"), *ckpt.glob(POINTER + ".*tmp")):
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            _unlink(stale)


def current(ckpt: Path) -> str | None:
    """The name of the checkpoint ``CURRENT`` points at, or ``None``."""
    path = ckpt / POINTER
    if not os.path.lexists(path):
        return None
    try:
        return read_input(path, "a checkpoint's CURRENT file", POINTER_LIMIT).decode("utf-8", errors="replace").strip()
    except InputError as exc:
        raise _refuse(ckpt, "", DamagedCheckpoint(exc.where, "", exc.message)) from None


POINTER_LIMIT = 4096
"""Bytes a ``CURRENT`` file may hold (it names one directory)."""

JSON_NESTING = 64
"""A checkpoint's ``manifest.json`` or ``meta.json`` nested deeper than this is damaged
(they nest three levels)."""


def _json_file(path: Path, what: str) -> Any:
    """The JSON in ``path``, a regular file of at most :data:`~ordercheck.checker.api.inputs.DATA_LIMIT`
    bytes nested at most :data:`JSON_NESTING` deep (:mod:`ordercheck.checker.api.inputs`);
    :class:`InputError` says what is wrong."""
    return parse_json(read_input(path, what, DATA_LIMIT), str(path), what, JSON_NESTING)


def describe(ckpt: Path) -> str | None:
    """``DIR (level N)`` for the checkpoint in force, or ``None`` when there is none."""
    try:
        name = current(ckpt)
    except InputError:
        return None
    m = _NAME.fullmatch(name or "")
    if not m:
        return None
    return f"{ckpt} (level {int(m.group(1))})"


def level_start_fingerprints(values: np.ndarray, added: np.ndarray) -> np.ndarray:
    """``values`` (a store's fingerprints) without ``added`` (those this level added):
    the fingerprints as they were at the level's start."""
    if not len(added):
        return values
    added = np.sort(np.where(added == 0, np.uint64(1), added).astype(np.uint64))
    keep = np.ones(len(values), dtype=bool)
    block = 1 << 20
    for i in range(0, len(values), block):
        part = values[i : i + block]
        at = np.minimum(np.searchsorted(added, part), len(added) - 1)
        keep[i : i + block] = added[at] != part
    return values[keep]


class _Stream:
    """A file seen by numpy as a plain stream: it then writes in blocks through
    ``write``, whose failures carry the operating system's reason (``tofile``'s only
    say how much was written)."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh

    def write(self, data: bytes) -> int:
        return self.fh.write(data)


def _save_array(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as fh:
        np.save(_Stream(fh), array)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _sync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save(
    ckpt: Path,
    ident: dict[str, Any],
    meta: dict[str, Any],
    fingerprints: np.ndarray,
    parents: np.ndarray,
    actions: np.ndarray,
    frontier: Any,
    warn: Callable[[str], None],
    log: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> bool:
    """Write a checkpoint (see the module docstring); ``True`` once ``CURRENT`` names it.

    ``frontier`` is anything with ``dump(fh)`` (a :class:`~ordercheck.checker.engine.frontier.Frontier`).
    ``log``, when given, is the edge log of the levels before it (:data:`LOG_FILES`).
    An operating-system error leaves the previous checkpoint in force, calls ``warn``
    with one line and returns ``False``; any other exception removes the temporary
    directory and propagates.
    """
    name = f"level-{meta['depth']:05d}-{os.getpid()}"
    unique = secrets.token_hex(4)  # temporary names of this writer's own, whatever else writes here
    tmp = ckpt / f"{name}-{unique}.tmp"
    final = ckpt / name
    pointer = ckpt / f"{POINTER}.{os.getpid()}-{unique}.tmp"
    try:
        ckpt.mkdir(parents=True, exist_ok=True)
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
        _save_array(tmp / "fingerprints.npy", fingerprints)
        _save_array(tmp / "parents.npy", parents)
        _save_array(tmp / "actions.npy", actions)
        with open(tmp / "frontier.bin", "wb") as fh:
            frontier.dump(fh)
        (tmp / "meta.json").write_text(json.dumps({"identity": _without_sources(ident), **meta}), encoding="utf-8")
        written = DATA_FILES
        if log is not None:
            for f, array in zip(LOG_FILES, log):
                _save_array(tmp / f, array)
            written = (*DATA_FILES, *LOG_FILES)
        files = {f: {"bytes": (tmp / f).stat().st_size, "sha256": _sha256(tmp / f)} for f in written}
        manifest = {"format": FORMAT, "level": meta["depth"], "states": int(len(parents)), "files": files,
                    SOURCES: ident.get(SOURCES) or {}}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        for f in (*written, MANIFEST):
            _sync(tmp / f)
        try:
            previous = current(ckpt)
        except InputError:
            previous = None
        if final.exists():
            shutil.rmtree(final)
        os.rename(tmp, final)
        pointer.write_text(name, encoding="utf-8")
        _sync(pointer)
        os.replace(pointer, ckpt / POINTER)
        _sync(ckpt)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        _unlink(pointer)
        kept = describe(ckpt)
        where = exc.filename if exc.filename is not None else tmp
        warn(
            f"checkpoint not written ({os.fsdecode(where)}: {exc.strerror or exc}); "
            + (f"the previous checkpoint, {kept}, is kept" if kept else "there is no earlier checkpoint")
            + "; the search goes on"
        )
        return False
    except UnwritableState as exc:  # a state outside the vocabulary: no checkpoint, the search goes on
        shutil.rmtree(tmp, ignore_errors=True)
        kept = describe(ckpt)
        warn(f"checkpoint not written ({exc}); "
             + (f"the previous checkpoint, {kept}, is kept" if kept else "there is no earlier checkpoint")
             + "; the search goes on")
        return False
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _unlink(pointer)
        raise
    for other in ckpt.glob("level-*"):  # keep this checkpoint and the one before it
        if _NAME.fullmatch(other.name) and other.name not in (name, previous) and other.is_dir():
            shutil.rmtree(other, ignore_errors=True)
    return True


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def verify(where: Path) -> bool:
    """Check a checkpoint directory against its manifest; :class:`DamagedCheckpoint`
    names the first file that differs. Whether the manifest lists an edge log
    (:data:`LOG_FILES`, then checked too)."""
    manifest_path = where / MANIFEST
    if not where.is_dir():
        raise DamagedCheckpoint(str(where), "", "is missing (CURRENT names it)")
    if not os.path.lexists(manifest_path):
        raise DamagedCheckpoint(str(manifest_path), "", "is missing (a checkpoint of an older format, or a damaged one)")
    try:
        manifest = _json_file(manifest_path, "a checkpoint manifest")
    except InputError as exc:
        raise DamagedCheckpoint(str(manifest_path), "", f"cannot be read: {exc.message}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise DamagedCheckpoint(str(manifest_path), "", "is not a checkpoint manifest")
    if manifest.get("format") in OLDER_FORMATS:
        raise InputError(str(manifest_path), "format", older_version(manifest.get("format")))
    if manifest.get("format") != FORMAT:
        raise DamagedCheckpoint(str(manifest_path), "format",
                                f"is {manifest.get('format')!r}; this ordercheck reads format {FORMAT}")
    files = manifest["files"]
    logged = all(f in files for f in LOG_FILES)
    for f in (*DATA_FILES, *LOG_FILES) if logged else DATA_FILES:
        path = where / f
        entry = files.get(f)
        if not isinstance(entry, dict):
            raise DamagedCheckpoint(str(manifest_path), f"files.{f}", "is missing")
        try:
            size = check_input(path).st_size  # a regular file: no FIFO, no device to read for ever
        except InputError as exc:
            raise DamagedCheckpoint(str(path), "", exc.message) from None
        if size != entry.get("bytes"):
            raise DamagedCheckpoint(str(path), "", f"has {size:,} bytes, the manifest says {entry.get('bytes')!r}")
        if _sha256(path) != entry.get("sha256"):
            raise DamagedCheckpoint(str(path), "", "does not match its checksum in the manifest")
    return logged


def _intact_before(ckpt: Path, damaged: str) -> str | None:
    """The newest other checkpoint in ``ckpt`` that verifies."""
    found = []
    for d in ckpt.glob("level-*"):
        m = _NAME.fullmatch(d.name)
        if m and d.name != damaged and d.is_dir():
            found.append((int(m.group(1)), d))
    for _level, d in sorted(found, key=lambda x: x[0], reverse=True):
        try:
            verify(d)
        except InputError:
            continue
        return d.name
    return None


def _refuse(ckpt: Path, name: str, exc: InputError) -> DamagedCheckpoint:
    """The refusal of the damaged checkpoint ``name`` in ``ckpt`` (``""`` when ``CURRENT``
    itself is damaged), with advice that never removes an intact checkpoint: the newest
    intact one is named, with its level, and the one step that resumes from it (delete
    the damaged level, or put the intact one's name into ``CURRENT``)."""
    other = _intact_before(ckpt, name)
    if other is None:
        offer = "; no intact checkpoint is left: run again without --resume to start afresh"
    else:
        level = int(_NAME.fullmatch(other).group(1))  # type: ignore[union-attr]
        if _NAME.fullmatch(name):
            offer = (f"; the previous checkpoint {ckpt / other} is intact (level {level}): delete {ckpt / name} "
                     f"(the damaged one, alone) and run again with --resume to continue from level {level}")
        else:
            offer = (f"; the checkpoint {ckpt / other} is intact (level {level}): put its name into "
                     f"{ckpt / POINTER} (printf {other} > {ckpt / POINTER}) and run again with --resume to "
                     f"continue from level {level}")
    return DamagedCheckpoint(exc.where, exc.field, f"damaged checkpoint: {exc.message}{offer}")


def load(ckpt: Path, ident: dict[str, Any], spill_dir: str | Path | None, spill_after: int | None) -> tuple | None:
    """The checkpoint in force in ``ckpt`` as ``(meta, fingerprints, parents, actions,
    frontier, log)``, verified (``log``: the edge log's states, sources and targets, or
    ``None`` where the checkpoint has none); ``None`` when there is none. The frontier is kept as the
    engine keeps a level (in ``spill_dir`` past ``spill_after`` states). When the
    checkpoint ``CURRENT`` names was deleted (as a refusal suggests), the newest intact
    one is in force."""
    name = current(ckpt)
    if name is None:
        return None
    where = in_force(ckpt, name)
    try:
        logged = verify(where)
        loaded = _read(where, spill_dir, spill_after, logged)
    except DamagedCheckpoint as exc:
        raise _refuse(ckpt, name, exc) from None
    meta = loaded[0]
    if meta.get("identity") != json.loads(json.dumps(_without_sources(ident))):
        raise InputError(
            str(ckpt),
            "checkpoint",
            "was written for another model, property set or reduction setting, or by another version of "
            "ordercheck; resume with the same ones, or run again without --resume to start afresh",
        )
    return loaded


def in_force(ckpt: Path, name: str) -> Path:
    """The directory of the checkpoint in force in ``ckpt``, whose ``CURRENT`` names
    ``name``: that one, or when it was deleted (as a refusal suggests) the newest intact
    one. :class:`DamagedCheckpoint` when ``name`` is no checkpoint's name."""
    if not _NAME.fullmatch(name):
        raise _refuse(ckpt, "", DamagedCheckpoint(str(ckpt / POINTER), "", f"names no checkpoint ({name[:40]!r})"))
    where = ckpt / name
    if not where.exists():  # deleted as a refusal suggested: the newest intact one is in force
        other = _intact_before(ckpt, name)
        if other is not None:
            where = ckpt / other
    return where


def _without_sources(ident: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in ident.items() if k != SOURCES}


def older_version(fmt: object) -> str:
    """The refusal of a checkpoint an older version of ordercheck wrote, in format ``fmt``."""
    if fmt == 3:
        return ("is checkpoint format 3, written by an older version of ordercheck, whose frontier.bin is a "
                "pickle, which this version never loads (a pickle can run code); run again without --resume to "
                "start afresh")
    return (f"is checkpoint format {fmt!r}, written by another version of ordercheck, which recorded no "
            "digests of the spec's sources to check a resume against; run again without --resume to start afresh")


def recorded_sources(ckpt: Path) -> dict[str, Any] | None:
    """The digests of the sources the checkpoint in force in ``ckpt`` was written from
    (see the module docstring); ``None`` when there is no checkpoint or its manifest
    cannot be read (:func:`load` then refuses it as damaged). :class:`InputError` for a
    checkpoint of an older format, :class:`DamagedCheckpoint` for a manifest whose
    record of the sources is not a table."""
    name = current(ckpt)
    if name is None:
        return None
    manifest_path = in_force(ckpt, name) / MANIFEST
    try:
        manifest = _json_file(manifest_path, "a checkpoint manifest")
    except InputError:
        return None
    if not isinstance(manifest, dict):
        return None
    if manifest.get("format") in OLDER_FORMATS:
        raise InputError(str(manifest_path), "format", older_version(manifest.get("format")))
    if manifest.get("format") != FORMAT:
        return None  # refused by load() as damaged
    recorded = manifest.get(SOURCES)
    if not isinstance(recorded, dict):
        raise _refuse(ckpt, name, DamagedCheckpoint(str(manifest_path), SOURCES, "is not a record of the sources"))
    return recorded


def source_changes(recorded: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs between the sources a checkpoint ``recorded`` and those of the run
    resuming it (``now``), one phrase each: ordercheck's version, the model file, each
    spec source file changed, no longer imported or newly imported. Empty when none."""
    changes = []
    old_version, new_version = recorded.get("ordercheck"), now.get("ordercheck")
    if old_version != new_version:
        changes.append(f"ordercheck is version {new_version}, the checkpoint was written by {old_version}")
    old_model, new_model = recorded.get("model"), now.get("model")
    if old_model != new_model:
        path = (new_model or {}).get("path") if isinstance(new_model, dict) else None
        changes.append(f"the model file {path or '(none)'} changed")
    old_files = recorded.get("spec_files") if isinstance(recorded.get("spec_files"), dict) else {}
    new_files = now.get("spec_files") or {}
    for path in sorted(set(old_files) | set(new_files)):
        if path not in new_files:
            changes.append(f"the spec no longer imports {path}")
        elif path not in old_files:
            changes.append(f"the spec now imports {path}")
        elif old_files[path] != new_files[path]:
            changes.append(f"the spec's source file {path} changed")
    return changes


def _read(where: Path, spill_dir: str | Path | None, spill_after: int | None, logged: bool = False) -> tuple:
    def damaged(f: str, why: str) -> DamagedCheckpoint:
        return DamagedCheckpoint(str(where / f), "", why)

    try:
        meta = _json_file(where / "meta.json", "a checkpoint's meta.json")
    except InputError as exc:
        raise damaged("meta.json", f"cannot be read: {exc.message}") from None
    arrays = {}
    read = (("fingerprints.npy", "u"), ("parents.npy", "i"), ("actions.npy", "u"))
    if logged:
        read += tuple(zip(LOG_FILES, ("u", "i", "u")))
    for f, kinds in read:
        try:
            a = np.load(where / f, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise damaged(f, f"cannot be read ({exc.__class__.__name__}: {exc})") from None
        if a.ndim != 1 or a.dtype.kind != kinds:
            raise damaged(f, f"holds {a.dtype}[{a.ndim}d], not a list of {'signed' if kinds == 'i' else 'unsigned'} integers")
        arrays[f] = a
    fps, parents, actions = arrays["fingerprints.npy"], arrays["parents.npy"], arrays["actions.npy"]
    n = len(parents)
    if len(fps) != n or len(actions) != n:
        raise damaged("parents.npy", f"{n:,} parents for {len(fps):,} fingerprints and {len(actions):,} actions")
    if not isinstance(meta, dict):
        raise damaged("meta.json", "is not a table")
    for key in ("level_start", "depth", "transitions", "initial_states"):
        v = meta.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise damaged("meta.json", f"{key} is {v!r}, not a count")
    seconds = meta.get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
        raise damaged("meta.json", f"seconds is {seconds!r}")
    init, start = meta["initial_states"], meta["level_start"]
    if not 0 < init <= n or start > n:
        raise damaged("meta.json", f"{init} initial states and level start {start} for {n:,} states")
    if not (parents[:init] == -1).all():
        raise damaged("parents.npy", "an initial state has a parent")
    if n > init and not ((parents[init:] >= 0) & (parents[init:] < np.arange(init, n))).all():
        raise damaged("parents.npy", "a state's parent does not precede it")
    decisions = meta.get("decisions")
    if not isinstance(decisions, dict) or not all(
        isinstance(d, list) and len(d) == 2 and isinstance(d[0], int) and 0 <= d[0] < n and isinstance(d[1], str)
        for d in decisions.values()
    ):
        raise damaged("meta.json", "decisions are malformed")
    try:
        with open(where / "frontier.bin", "rb") as fh:
            frontier = Frontier.load(fh, spill_dir, spill_after=spill_after)
    except ValueError as exc:  # JSON that is not a list of states, a truncated record
        raise damaged("frontier.bin", f"cannot be read ({exc})") from None
    except OSError as exc:
        raise damaged("frontier.bin", f"cannot be read ({exc.__class__.__name__}: {exc.strerror or exc})") from None
    if len(frontier) != n - start:
        frontier.discard()
        raise damaged("frontier.bin", f"holds {len(frontier):,} states, the level has {n - start:,}")
    why = _log_damage(*(arrays[f] for f in LOG_FILES), fps, start) if logged else None
    if why is not None:
        frontier.discard()
        raise damaged(*why)
    log = tuple(arrays[f] for f in LOG_FILES) if logged else None
    return meta, fps, parents, actions, frontier, log


def _log_damage(states: np.ndarray, sources: np.ndarray, targets: np.ndarray, fps: np.ndarray,
                start: int) -> tuple[str, str] | None:
    """What is wrong with a checkpoint's edge log (the file and why), if anything: its
    states must be the checkpoint's, its edges as many sources as targets, each from a
    state before the level (only those were expanded)."""
    known = np.sort(fps)
    if len(known) > 1 and bool((known[1:] == known[:-1]).any()):
        return None  # a fingerprint twice: the store refuses it (restore), naming its file
    as_stored = np.where(states == 0, np.uint64(1), states)  # as the store keeps them (0 is its empty slot)
    if len(states) != len(fps) or not np.array_equal(np.sort(as_stored), known):
        return LOG_FILES[0], "does not hold the checkpoint's states"
    if len(sources) != len(targets):
        return LOG_FILES[1], f"{len(sources):,} sources for {len(targets):,} targets"
    if len(sources) and (int(sources.min()) < 0 or int(sources.max()) >= start):
        return LOG_FILES[1], "an edge's source is not a state before the level"
    return None


def restore(store: Any, fps: np.ndarray, parents: np.ndarray, actions: np.ndarray, ckpt: Path) -> None:
    """Fill an empty :class:`~ordercheck.checker.engine.table.CompactStore` from the checkpoint in force in
    ``ckpt``; a fingerprint that occurs twice means the checkpoint is damaged."""
    store.table.reserve(len(fps))
    store.table.insert(fps)
    if len(store.table) != len(fps):
        raise duplicate_refusal(ckpt)
    store.parents.extend(parents)
    store.actions.extend(actions)


def duplicate_refusal(ckpt: Path) -> DamagedCheckpoint:
    """The refusal of the checkpoint in force in ``ckpt`` because its fingerprints hold
    one twice (with the previous intact checkpoint offered)."""
    name = current(ckpt) or ""
    return _refuse(ckpt, name, DamagedCheckpoint(str(ckpt / name / "fingerprints.npy"), "", "holds a fingerprint twice"))


def require(ckpt: Path) -> None:
    """For ``--resume``: :class:`InputError` when ``ckpt`` holds no checkpoint."""
    if current(ckpt) is None:
        raise InputError(str(ckpt), "--resume", "no checkpoint to resume from (run without --resume to start afresh)")

"""Finding logs and reading them in any of the formats ``validate`` knows.

Formats: ``jsonl`` (the documented format, :mod:`ordercheck.checker.validate.jsonl`), ``shiviz``
(:mod:`ordercheck.checker.validate.shiviz_log`) and ``itf`` (:mod:`ordercheck.checker.validate.itf_log`).
``auto`` goes by the file name (``.jsonl``/``.ndjson``, ``.shiviz.log``/``.shiviz``,
``.itf.json``), else by the content: an ITF document is one JSON object with
``states``, a ShiViz log starts with an expression holding ``(?<``, anything else is
read as JSON Lines.
"""

from __future__ import annotations

import codecs
import fnmatch
import glob
import io
import os
import stat
from collections import deque
from pathlib import Path

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.inputs import DATA_LIMIT, bounded_lines, limit_of, open_input, text_stream, too_large
from ordercheck.checker.api.spec import Spec
from ordercheck.checker.validate.itf_log import read_itf
from ordercheck.checker.validate.jsonl import read_jsonl
from ordercheck.checker.validate.log import Log
from ordercheck.checker.validate.shiviz_log import read_shiviz

FORMATS = ("auto", "jsonl", "shiviz", "itf")
SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".shiviz.log": "shiviz", ".shiviz": "shiviz", ".itf.json": "itf"}
"""File names ``validate`` picks from a directory, and the format each one implies."""


def format_of(name: str, head: str) -> str:
    """The format of a file called ``name`` whose text starts with ``head``."""
    lower = name.lower()
    for suffix, fmt in SUFFIXES.items():
        if lower.endswith(suffix):
            return fmt
    first = head.lstrip().split("\n", 1)[0]
    if "(?<" in first:
        return "shiviz"
    if first.startswith("{") and '"states"' in head and '"kind"' not in first:
        return "itf"
    return "jsonl"


def read_text(text: str, source: str, fmt: str = "auto", spec: Spec | type[Spec] | None = None) -> Log:
    """Read a log from its whole text; ``source`` names it in errors and reports.
    ``spec`` (a spec, or a class built with the trace's constants) replaces the one an
    ITF trace names."""
    if fmt == "auto":
        fmt = format_of(source, text[:4096])
    if fmt == "shiviz":
        return read_shiviz(text, source)
    if fmt == "itf":
        return read_itf(text, source, spec)
    if fmt == "jsonl":
        return read_jsonl(io.StringIO(text), source)
    raise ValueError(f"unknown log format {fmt!r} (one of {', '.join(FORMATS)})")


def read_log(path: str | Path, fmt: str = "auto", spec: Spec | type[Spec] | None = None) -> Log:
    """Read the log in file ``path``; :class:`~ordercheck.checker.InputError` names what is wrong.
    JSON Lines files are read line by line (a million-event log is never one string),
    each line within :data:`~ordercheck.checker.api.inputs.LINE_LIMIT`; a log of another format is
    read whole, within :data:`~ordercheck.checker.api.inputs.DATA_LIMIT`. Only a regular file is
    opened (:func:`~ordercheck.checker.api.inputs.open_input`: no named pipe, no device)."""
    where = str(path)
    p = Path(path)
    raw = open_input(p, where, directory="is a directory, not a log file")
    try:
        with text_stream(raw) as fh:
            head = fh.read(4096)
            kind = format_of(where, head) if fmt == "auto" else fmt
            fh.seek(0)
            if kind == "jsonl":
                return read_jsonl(bounded_lines(fh, where, "one line of a log"), where)
            limit = limit_of(DATA_LIMIT)
            text = fh.read(limit + 1)
            if len(text) > limit:
                raise too_large(where, limit, f"a log in the {kind} format (a JSON Lines log has no limit but one per line)")
    except UnicodeDecodeError as exc:
        line, offset = _first_bad_utf8(p)
        raise InputError(f"{where}:{line}", "", f"is not UTF-8 text ({exc.reason} at byte {offset} of the file)") from None
    except OSError as exc:
        raise InputError(where, "", f"cannot be read ({exc.__class__.__name__}: {exc.strerror or exc})") from None
    return read_text(text, where, kind, spec)


def _first_bad_utf8(path: Path) -> tuple[int, int]:
    """The line (from 1) and the byte offset in the file of its first byte that is not
    UTF-8: a decoding error's own offset counts from the chunk being decoded."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, done = 1, 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 16):
            pending = len(decoder.getstate()[0])  # bytes of a character begun in the last chunk
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                at = exc.start - pending  # in this chunk (negative: in the bytes carried over)
                return line + chunk.count(b"\n", 0, max(0, at)), done + at
            line += chunk.count(b"\n")
            done += len(chunk)
    return line, done


def expand_logs(paths: list[str]) -> list[Path]:
    """The log files named by ``paths``: files as they are, directories by the file
    names of :data:`SUFFIXES` (recursively, sorted), glob patterns by their matches.
    A walk follows symbolic links to directories but enters each directory once (a link
    that loops is not followed round), and each file is named once, by the first path
    that reaches it (a file reached by two paths, a link to it, is the same log).
    Raises :class:`~ordercheck.checker.InputError` for a path that names nothing."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = [f for f in _walk(raw, ["**", "*"]) if _known(f.name)]
            if not found:
                raise InputError(raw, "", f"no log files in this directory (names ending {', '.join(SUFFIXES)})")
            out.extend(found)
        elif p.exists() or p.is_symlink():
            out.append(p)
        elif any(ch in raw for ch in "*?["):
            found = _glob(raw)
            if not found:
                raise InputError(raw, "", "no file matches this pattern")
            out.extend(found)
        else:
            raise InputError(raw, "", "no such file or directory")
    return _once(out)


def _once(files: list[Path]) -> list[Path]:
    """``files`` without a file named a second time (by any path: the same device and
    inode); a path that cannot be looked at is kept, for the reader to name."""
    seen: set[tuple[int, int]] = set()
    out = []
    for f in files:
        try:
            st = os.stat(f)
        except (OSError, ValueError):
            out.append(f)
            continue
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            out.append(f)
    return out


def _glob(pattern: str) -> list[Path]:
    """The regular files ``pattern`` matches (``*``, ``?``, ``[...]`` within a name,
    ``**`` for any number of directories, names starting with a dot only where the
    pattern's part does), sorted, as :func:`glob.glob` with ``recursive=True`` gives
    them, but for symbolic links that loop."""
    parts = pattern.split("/")
    fixed = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    root = "/".join(parts[:fixed]) or ("/" if pattern.startswith("/") else "")
    return _walk(root, [part for part in parts[fixed:] if part], hidden=False)


def _walk(root: str, parts: list[str], hidden: bool = True) -> list[Path]:
    """The regular files under directory ``root`` (``""``: the working directory) whose
    path below it matches the pattern ``parts`` (one per path component; ``**`` for any
    number of them), sorted; names starting with a dot only when ``hidden`` or the
    part starts with one. Each (directory, position in the pattern) is visited once,
    directories known by device and inode, so symbolic links that loop end the walk
    instead of repeating it."""
    found: set[str] = set()
    visited: set[tuple[int, int, int]] = set()
    todo: deque[tuple[str, int]] = deque([(root, 0)])  # breadth first: a directory by its shortest path
    while todo:
        here, at = todo.popleft()
        try:
            st = os.stat(here or ".")
        except (OSError, ValueError):
            continue
        if not stat.S_ISDIR(st.st_mode):
            continue
        key = (st.st_dev, st.st_ino, at)
        if key in visited:
            continue
        visited.add(key)
        part = parts[at]
        last = at == len(parts) - 1
        if part == "**":
            if not last:
                todo.append((here, at + 1))  # ** standing for no directory at all
            for name in _names(here, hidden):
                path = os.path.join(here, name)
                if last and os.path.isfile(path):  # "dir/**": every file below
                    found.add(path)
                todo.append((path, at))
            continue
        magic = glob.has_magic(part)
        names = _names(here, hidden or part.startswith(".")) if magic else [part]
        for name in names:
            if magic and not fnmatch.fnmatchcase(name, part):
                continue
            path = os.path.join(here, name)
            if not last:
                todo.append((path, at + 1))
            elif os.path.isfile(path):
                found.add(path)
    return sorted(Path(f) for f in found)


def _names(directory: str, hidden: bool) -> list[str]:
    """The entries of ``directory`` (none when it cannot be listed); names starting with
    a dot only when ``hidden``, as :mod:`glob` does."""
    try:
        names = os.listdir(directory or ".")
    except (OSError, ValueError):
        return []
    return sorted(n for n in names if hidden or not n.startswith("."))


def _known(name: str) -> bool:
    lower = name.lower()
    return any(lower.endswith(s) for s in SUFFIXES)

"""Finding logs and reading them in any of the formats ``validate`` knows.

Formats: ``jsonl`` (the documented format, :mod:`checker.validate.jsonl`), ``shiviz``
(:mod:`checker.validate.shiviz_log`) and ``itf`` (:mod:`checker.validate.itf_log`).
``auto`` goes by the file name (``.jsonl``/``.ndjson``, ``.shiviz.log``/``.shiviz``,
``.itf.json``), else by the content: an ITF document is one JSON object with
``states``, a ShiViz log starts with an expression holding ``(?<``, anything else is
read as JSON Lines.
"""

from __future__ import annotations

import codecs
import glob
import io
from pathlib import Path

from checker.api.errors import InputError
from checker.api.spec import Spec
from checker.validate.itf_log import read_itf
from checker.validate.jsonl import read_jsonl
from checker.validate.log import Log
from checker.validate.shiviz_log import read_shiviz

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
    """Read the log in file ``path``; :class:`~checker.InputError` names what is wrong.
    JSON Lines files are read line by line (a million-event log is never one string)."""
    where = str(path)
    p = Path(path)
    if not p.is_file():
        raise InputError(where, "", "no such file" if not p.exists() else "is not a file")
    try:
        with p.open(encoding="utf-8") as fh:
            head = fh.read(4096)
            kind = format_of(where, head) if fmt == "auto" else fmt
            fh.seek(0)
            if kind == "jsonl":
                return read_jsonl(fh, where)
            text = fh.read()
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
    Raises :class:`~checker.InputError` for a path that names nothing."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and _known(f.name))
            if not found:
                raise InputError(raw, "", f"no log files in this directory (names ending {', '.join(SUFFIXES)})")
            out.extend(found)
        elif p.exists():
            out.append(p)
        elif any(ch in raw for ch in "*?["):
            found = sorted(Path(f) for f in glob.glob(raw, recursive=True) if Path(f).is_file())
            if not found:
                raise InputError(raw, "", "no file matches this pattern")
            out.extend(found)
        else:
            raise InputError(raw, "", "no such file or directory")
    return out


def _known(name: str) -> bool:
    lower = name.lower()
    return any(lower.endswith(s) for s in SUFFIXES)

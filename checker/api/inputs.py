"""Reading the files a command is given, within bounds.

Every file ordercheck reads as input (a model file, a log, a result file, a file of a
checkpoint) goes through this module, so that no input can make a command wait for
ever or read without end:

- :func:`check_input` looks at the path with ``stat`` before anything opens it, and
  refuses whatever is not a regular file: a named pipe (FIFO, whose opening waits for a
  writer), a character or block device (``/dev/zero`` never ends), a socket, and a
  symbolic link that leads to one of those or loops. A command that takes a model
  through a pipe (``check /dev/stdin``, ``check <(...)``) may allow an anonymous pipe,
  which is never a FIFO in the file system.
- :func:`read_input` and :func:`open_input` open it without blocking, check again what
  was opened, and read at most a limit (:data:`MODEL_LIMIT`, :data:`DATA_LIMIT`), named
  in the error past it; :func:`bounded_lines` reads a log line by line with a limit per
  line (:data:`LINE_LIMIT`), since a log may be as long as it likes. The environment
  variable :data:`LIMIT_VARIABLE` raises every limit (``ORDERCHECK_MAX_INPUT=4G``).
- :func:`parse_json` parses JSON and refuses a document nested deeper than the reader's
  limit, counted without recursion (:func:`nesting`), so the answer does not depend on
  Python's recursion limit at the time.

Every refusal is an :class:`~ordercheck.checker.api.errors.InputError` naming the file (exit code 2).
"""

from __future__ import annotations

import errno
import io
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ordercheck.checker.api.errors import InputError

MODEL_LIMIT = 1 << 20
"""Bytes a model file may hold (1 MiB; a real one holds a few hundred)."""

DATA_LIMIT = 256 << 20
"""Bytes a file read whole may hold: a result file, an ITF or ShiViz log, a checkpoint's
JSON (256 MiB)."""

LINE_LIMIT = 1 << 20
"""Bytes one line of a JSON Lines log may hold (1 MiB; an event holds a hundred or so).
A log is read line by line, so the log itself has no limit."""

LIMIT_VARIABLE = "ORDERCHECK_MAX_INPUT"
"""The environment variable that, when set to a size (``4G``, ``512M``, ``100000``),
replaces every limit of this module."""

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def limit_of(default: int) -> int:
    """``default``, or the size :data:`LIMIT_VARIABLE` sets; :class:`InputError` for a
    value that is not a size."""
    raw = os.environ.get(LIMIT_VARIABLE, "").strip()
    if not raw:
        return default
    text = raw.upper().removesuffix("B").removesuffix("I")
    unit = text[-1:] if text[-1:] in _UNITS else ""
    number = text[: len(text) - len(unit)]
    try:
        value = int(float(number) * _UNITS[unit])
    except (ValueError, OverflowError):
        value = 0
    if value < 1:
        raise InputError(LIMIT_VARIABLE, "", f"expected a size such as 4G, 512M or 100000 (bytes), got {raw!r}")
    return value


def size_text(n: int) -> str:
    """``n`` bytes in the largest binary unit that divides it (``1 MiB``, ``256 MiB``)."""
    for unit, name in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= unit and n % unit == 0:
            return f"{n // unit} {name}"
    return f"{n:,} bytes"


_PIPE_DEV: list[int] = []


def _anonymous_pipe(st: os.stat_result) -> bool:
    """Whether ``st`` is an anonymous pipe (a shell's ``<(...)``, a piped standard input):
    one on the pipe file system, whose device every pipe of this machine shares. A named
    pipe (FIFO) lives on the file system it was made in."""
    if not stat.S_ISFIFO(st.st_mode):
        return False
    if not _PIPE_DEV:
        r, w = os.pipe()
        try:
            _PIPE_DEV.append(os.fstat(r).st_dev)
        finally:
            os.close(r)
            os.close(w)
    return st.st_dev == _PIPE_DEV[0]


def _kind_problem(st: os.stat_result, pipe: bool) -> str | None:
    mode = st.st_mode
    if stat.S_ISREG(mode) or (pipe and _anonymous_pipe(st)):
        return None
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO), not a regular file (reading one waits for a writer)"
    if stat.S_ISCHR(mode):
        return "is a character device, not a regular file"
    if stat.S_ISBLK(mode):
        return "is a block device, not a regular file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file"
    return "is not a regular file"


def _leads_to(path: str) -> str:
    """`` (a symbolic link to TARGET)`` when ``path`` is a symbolic link, else ``""``."""
    try:
        if os.path.islink(path):
            return f" (a symbolic link to {os.path.realpath(path)})"
    except (OSError, ValueError):
        pass
    return ""


def check_input(path: str | Path, where: str | None = None, *, directory: str | None = None,
                pipe: bool = False) -> os.stat_result:
    """The ``stat`` of ``path`` (following symbolic links), once it is known to be a
    regular file; nothing is opened. :class:`InputError` names ``where`` (the path
    itself by default) and what is wrong: no such file, a symbolic link that loops, a
    NUL in the name, a named pipe, a device, a socket. A directory is refused with the
    message ``directory`` (``"is a directory"`` by default) unless ``directory`` is the
    empty string, which accepts it. ``pipe`` accepts an anonymous pipe (``/dev/stdin``
    piped, ``<(...)``), never a named one."""
    name = str(path)
    where = name if where is None else where
    try:
        st = os.stat(name)
    except ValueError:  # a NUL in the name
        raise InputError(where, "", "is not a file name (it holds a NUL character)") from None
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            why = "no such file" + (" (a symbolic link to nothing)" if os.path.islink(name) else "")
        elif exc.errno == errno.ELOOP:
            why = "is a symbolic link that loops (too many levels of symbolic links)"
        elif exc.errno == errno.ENOTDIR:
            why = "no such file (a part of the path is not a directory)"
        else:
            why = f"cannot be read ({exc.strerror or exc})"
        raise InputError(where, "", why) from None
    if stat.S_ISDIR(st.st_mode):
        if directory == "":
            return st
        raise InputError(where, "", directory or "is a directory, not a file")
    problem = _kind_problem(st, pipe)
    if problem is not None:
        raise InputError(where, "", problem + _leads_to(name))
    return st


def open_input(path: str | Path, where: str | None = None, *, directory: str | None = None,
               pipe: bool = False) -> IO[bytes]:
    """``path`` opened for reading in binary, once :func:`check_input` accepts it. The
    opening never blocks (a path that became a named pipe since it was looked at is
    refused, not waited on)."""
    name = str(path)
    where = name if where is None else where
    check_input(name, where, directory=directory, pipe=pipe)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(where, "", f"cannot be read ({exc.strerror or exc})") from None
    try:
        problem = _kind_problem(os.fstat(fd), pipe)
        if problem is not None:
            raise InputError(where, "", problem + _leads_to(name))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def too_large(where: str, limit: int, what: str, field: str = "") -> InputError:
    """The refusal of an input past its ``limit`` (bytes) for ``what`` (``"a model file"``)."""
    return InputError(where, field, f"is larger than {size_text(limit)}, the limit for {what} "
                                    f"(set {LIMIT_VARIABLE}, e.g. {LIMIT_VARIABLE}=4G, to raise it)")


def read_input(path: str | Path, what: str, limit: int, where: str | None = None, *,
               directory: str | None = None, pipe: bool = False) -> bytes:
    """The bytes of the file ``path`` (:func:`open_input`), at most ``limit`` of them
    (raised by :data:`LIMIT_VARIABLE`); past it :class:`InputError` names the limit
    and ``what`` the file is (``"a result file"``)."""
    where = str(path) if where is None else where
    limit = limit_of(limit)
    with open_input(path, where, directory=directory, pipe=pipe) as fh:
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise InputError(where, "", f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise too_large(where, limit, what)
    return data


def bounded_lines(fh: IO[str], where: str, what: str, limit: int = LINE_LIMIT) -> Iterator[str]:
    """The lines of the text file ``fh``, each at most ``limit`` characters (raised by
    :data:`LIMIT_VARIABLE`); a longer one is :class:`InputError` naming ``where`` and
    the line (``FILE:LINE``), the limit and ``what`` a line is (``"a log event"``)."""
    limit = limit_of(limit)
    number = 0
    while True:
        line = fh.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit and not (len(line) == limit + 1 and line.endswith("\n")):
            raise InputError(f"{where}:{number}", "", f"is longer than {size_text(limit)}, the limit for {what} "
                                                      f"(set {LIMIT_VARIABLE}, e.g. {LIMIT_VARIABLE}=64M, to raise it)")
        yield line


def nesting(doc: Any, limit: int) -> int:
    """How deeply ``doc`` (parsed JSON) nests lists and objects, counted without
    recursion; counting stops as soon as it passes ``limit``."""
    deepest = 0
    stack = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (list, dict)):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
            stack.extend((v, depth) for v in (value.values() if isinstance(value, dict) else value))
    return deepest


def too_deep(where: str, what: str, limit: int, field: str = "") -> InputError:
    """The refusal of JSON nested deeper than ``limit`` for ``what`` (``"an event"``)."""
    return InputError(where, field, f"is nested too deeply to be {what} (more than {limit} levels of arrays and objects)")


def parse_json(text: str | bytes, where: str, what: str, max_depth: int, field: str = "") -> Any:
    """``text`` parsed as JSON, refused (:class:`InputError` naming ``where``, ``field``,
    ``what`` the text should be and the limit) when it nests lists and objects more than
    ``max_depth`` deep, whatever Python's recursion limit is; a text that is not JSON is
    :class:`InputError` too (``is not valid JSON (...)``)."""
    try:
        doc = json.loads(text)
    except RecursionError:
        raise too_deep(where, what, max_depth, field) from None
    except UnicodeDecodeError as exc:
        raise InputError(where, field, f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        at = f"column {exc.colno}" if exc.lineno == 1 else f"line {exc.lineno} column {exc.colno}"
        raise InputError(where, field, f"is not valid JSON ({exc.msg}, {at})") from None
    except ValueError as exc:
        raise InputError(where, field, f"is not valid JSON ({exc})") from None
    opening = ("[", "{") if isinstance(text, str) else (b"[", b"{")
    if text.count(opening[0]) + text.count(opening[1]) <= max_depth:  # cannot nest deeper: no count needed
        return doc
    if nesting(doc, max_depth) > max_depth:
        raise too_deep(where, what, max_depth, field)
    return doc


def text_of(data: bytes, where: str) -> str:
    """``data`` decoded as UTF-8; :class:`InputError` names ``where`` otherwise."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(where, "", f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def text_stream(fh: IO[bytes]) -> IO[str]:
    """A binary file from :func:`open_input` read as UTF-8 text."""
    return io.TextIOWrapper(fh, encoding="utf-8")

"""Writing a command's output files all or nothing.

Every file or directory a command writes (``--json``, ``--report``, ``--junit``, exports,
graphs, sweep tables) is first written under a temporary name beside its target and
put in place by renaming only once every output of the command was written, so a
reader never sees a half-written file and a failure leaves nothing new behind.
Temporary files get the modes the process's umask gives an ordinary file
(``tempfile`` would make them private), and an operating-system error names the path
it happened on (:class:`OutputError`).

A directory output (a report) is staged as a whole; when the target exists, each of
the new directory's entries replaces the entry of the same name and the entries an
earlier run of the same writer left (``owned``) that this run did not write are
removed, so the directory holds only this run's pages while files of other origin stay.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

STAGING = ".ordercheck-staging-"
"""Prefix of the temporary names outputs are written under."""


class OutputError(OSError):
    """An operating-system error on a named path; the command line prints
    :meth:`line` and exits with code 6."""

    def __init__(self, path: str | os.PathLike[str], error: OSError) -> None:
        super().__init__(error.errno, error.strerror or str(error), str(path))
        self.path = str(path)

    def line(self) -> str:
        """``PATH: reason``, e.g. ``out/report: Permission denied``."""
        return f"{self.path}: {self.strerror}"


def os_error_line(exc: OSError) -> str:
    """One line for an operating-system error: the path it names, if any, and the reason."""
    reason = exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc))
    path = exc.filename
    if path is None:
        return reason
    extra = f" -> {exc.filename2}" if exc.filename2 is not None else ""
    return f"{os.fsdecode(path)}{extra}: {reason}"


@contextmanager
def naming(path: str | os.PathLike[str]) -> Iterator[None]:
    """Re-raise an :class:`OSError` raised in the block as an :class:`OutputError` on
    ``path`` unless it already names a path (a failed ``write`` names none)."""
    try:
        yield
    except OutputError:
        raise
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise OutputError(path, exc) from None


_UMASK: int | None = None


def umask() -> int:
    """The process's umask (read once; the process never changes it)."""
    global _UMASK
    if _UMASK is None:
        value = None
        try:
            with open("/proc/self/status", encoding="ascii") as fh:
                for line in fh:
                    if line.startswith("Umask:"):
                        value = int(line.split()[1], 8)
        except (OSError, ValueError):
            value = None
        if value is None:  # no /proc: read it by setting it (and back at once)
            value = os.umask(0o022)
            os.umask(value)
        _UMASK = value
    return _UMASK


def file_mode() -> int:
    """The mode an ordinary new file gets under the umask (``0o666 & ~umask``)."""
    return 0o666 & ~umask()


def dir_mode() -> int:
    """The mode a new directory gets under the umask (``0o777 & ~umask``)."""
    return 0o777 & ~umask()


def _makedirs(path: Path, made: list[Path]) -> None:
    """Create ``path`` and missing parents, recording the ones created (outermost first)."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    if p.exists() and not p.is_dir():
        raise OutputError(p, OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)))
    for d in reversed(missing):
        try:
            d.mkdir()
        except FileExistsError:
            if not d.is_dir():
                raise OutputError(d, OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))) from None
            continue
        except OSError as exc:
            raise OutputError(d, exc) from None
        made.append(d)


class Outputs:
    """The output files of one command, staged and then put in place together.

    Use as a context manager: the outputs are put in place when the block ends
    normally and every temporary name is removed when it raises::

        with Outputs() as out:
            out.write_json("results.json", payload)
            write_report(..., out.directory("report", owned=REPORT_ENTRIES))

    Staging order is commit order.
    """

    def __init__(self) -> None:
        self._files: list[tuple[Path, Path]] = []  # (temporary, target)
        self._dirs: list[tuple[Path, Path, frozenset[str]]] = []  # (temporary, target, owned)
        self._order: list[tuple[str, int]] = []
        self._made: list[Path] = []  # directories created for targets, removed on abort
        self.done = False

    def __enter__(self) -> Outputs:
        return self

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        if kind is None:
            self.commit()
        else:
            self.abort()

    def file(self, target: str | os.PathLike[str]) -> Path:
        """A temporary path (an empty file with the umask's mode) to write ``target``'s
        contents into; it becomes ``target`` at :meth:`commit`."""
        path = Path(target)
        if path.is_dir():
            raise OutputError(path, OSError(errno.EISDIR, os.strerror(errno.EISDIR)))
        _makedirs(path.parent, self._made)
        try:
            fd, tmp = tempfile.mkstemp(prefix=f"{STAGING}{path.name}.", dir=path.parent)
        except OSError as exc:
            raise OutputError(path.parent, exc) from None
        os.close(fd)
        staged = Path(tmp)
        self._files.append((staged, path))
        self._order.append(("file", len(self._files) - 1))
        try:
            os.chmod(staged, file_mode())
        except OSError as exc:
            raise OutputError(path, exc) from None
        return staged

    def write_text(self, target: str | os.PathLike[str], text: str) -> Path:
        """Stage ``text`` (UTF-8) as ``target``; returns ``target``."""
        staged = self.file(target)
        with naming(target):
            with open(staged, "w", encoding="utf-8") as fh:
                fh.write(text)
        return Path(target)

    def write_json(self, target: str | os.PathLike[str], payload: Any) -> Path:
        """Stage ``payload`` as indented JSON at ``target``; returns ``target``."""
        return self.write_text(target, json.dumps(payload, indent=2) + "\n")

    def directory(self, target: str | os.PathLike[str], owned: Iterable[str] = ()) -> Path:
        """An empty temporary directory to write ``target``'s contents into.

        At :meth:`commit` it becomes ``target``; when ``target`` exists, its entries of
        the same names are replaced and those named in ``owned`` that were not written
        this time are removed.
        """
        path = Path(target)
        if path.exists() and not path.is_dir():
            raise OutputError(path, OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)))
        home = path if path.is_dir() else path.parent
        _makedirs(home, self._made)
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f"{STAGING}{path.name}.", dir=home))
        except OSError as exc:
            raise OutputError(home, exc) from None
        self._dirs.append((tmp, path, frozenset(owned)))
        self._order.append(("dir", len(self._dirs) - 1))
        try:
            os.chmod(tmp, dir_mode())
        except OSError as exc:
            raise OutputError(path, exc) from None
        return tmp

    def commit(self) -> None:
        """Rename every staged output into place, in staging order."""
        if self.done:
            return
        try:
            for kind, i in self._order:
                if kind == "file":
                    tmp, target = self._files[i]
                    try:
                        os.replace(tmp, target)
                    except OSError as exc:
                        raise OutputError(target, exc) from None
                else:
                    self._commit_dir(*self._dirs[i])
        except BaseException:
            self.abort()
            raise
        self.done = True

    def _commit_dir(self, tmp: Path, target: Path, owned: frozenset[str]) -> None:
        if not target.exists():
            try:
                os.rename(tmp, target)
            except OSError as exc:
                raise OutputError(target, exc) from None
            return
        old = Path(tempfile.mkdtemp(prefix=f"{STAGING}old.", dir=target))
        try:
            new_names = {p.name for p in tmp.iterdir()}
            for name in sorted(new_names | owned):
                here = target / name
                if here.exists() or here.is_symlink():
                    os.rename(here, old / name)
                if name in new_names:
                    os.rename(tmp / name, here)
        except OSError as exc:
            raise OutputError(target, exc) from None
        finally:
            shutil.rmtree(old, ignore_errors=True)
            shutil.rmtree(tmp, ignore_errors=True)

    def abort(self) -> None:
        """Remove every temporary name (and the directories made for the targets)."""
        for tmp, _target in self._files:
            try:
                tmp.unlink()
            except OSError:
                pass
        for tmp, _target, _owned in self._dirs:
            shutil.rmtree(tmp, ignore_errors=True)
        for d in reversed(self._made):
            try:
                d.rmdir()
            except OSError:
                pass
        self.done = True


def writable_dir(path: str | os.PathLike[str]) -> Path:
    """Create the work directory ``path`` (and its parents) if needed and make sure a
    file can be created in it; :class:`OutputError` names the path otherwise."""
    d = Path(path)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if exc.filename is None:
            raise OutputError(d, exc) from None
        raise
    probe_dir(d)
    return d


def probe_dir(d: Path) -> None:
    """Raise :class:`OutputError` unless ``d`` is a directory a file can be created in
    (a probe file is created and removed)."""
    if not d.is_dir():
        raise OutputError(d, OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)))
    try:
        fd, probe = tempfile.mkstemp(prefix=".ordercheck-probe-", dir=d)
    except OSError as exc:
        raise OutputError(d, exc) from None
    os.close(fd)
    os.unlink(probe)


def write_json_atomic(path: str | os.PathLike[str], payload: Any) -> None:
    """Write ``payload`` as JSON so that ``path`` is either the old file or the whole
    new one, never half-written (the file gets the umask's mode)."""
    with Outputs() as out:
        out.write_json(path, payload)

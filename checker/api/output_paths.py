"""Every output path of a command, checked before the command does its work.

A command names its outputs (``--json``, ``--report``, ``--junit``, ``-o``, ``--checkpoint``,
``--spill-dir``, ...) as :class:`Output` and the files it reads as :class:`Input`, and
calls :func:`check_outputs` once its inputs are known and before any search starts:

* an output that is the same file as an input (by path, through a symbolic link or as
  a hard link of it), the same file as another output, or a file an output directory
  writes (one of its ``entries``) is refused with :class:`~ordercheck.checker.api.errors.InputError`
  (exit code 2), one line naming both options and the file, before anything is written;
* an output named ``-`` is refused with :class:`~ordercheck.checker.api.errors.InputError`
  (exit code 2): ordercheck writes its outputs to files, and ``-`` (standard output by
  the Unix convention) would otherwise become a file named ``-``;
* an output that cannot be written (a path under a file, a file output that is a
  directory or a directory output that is a file, a directory where no file can be
  created) is refused with :class:`~ordercheck.checker.api.outputs.OutputError` (exit code 6)
  naming the path, so that a search of hours does not end in exit 6 at its last step.

Missing parent directories are no error: they are created when the outputs are put in
place (:mod:`ordercheck.checker.api.outputs`); the nearest one that exists must be a directory in
which a file can be created.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.outputs import OutputError, probe_dir


@dataclass(frozen=True)
class Output:
    """One output of a command: ``option`` as the user typed it (``--json``), the path,
    whether it is a directory, and for a directory the names it writes or replaces
    inside it (``entries``)."""

    option: str
    path: str | os.PathLike[str]
    directory: bool = False
    entries: tuple[str, ...] = ()


@dataclass(frozen=True)
class Input:
    """A file a command reads: ``what`` says how the user named it (``MODEL.toml``,
    ``--model``, ``the spec source of m.toml``)."""

    what: str
    path: str | os.PathLike[str]


def model_inputs(models: Iterable[Model], what: str = "a model file") -> list[Input]:
    """The files ``models`` were read from, as inputs no output may overwrite: each
    model file and its spec's source files."""
    found: list[Input] = []
    for m in models:
        found.append(Input(what, m.path))
        files = (m.sources or {}).get("spec_files") or {}
        found += [Input(f"a source file of {m.path}'s spec", f) for f in files]
    return found


def outputs_of(*given: tuple[str, str | os.PathLike[str] | None, bool, Iterable[str]]) -> list[Output]:
    """:class:`Output` for each ``(option, path, directory, entries)`` whose path was given."""
    return [Output(o, p, d, tuple(e)) for o, p, d, e in given if p]


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(path))


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether ``a`` and ``b`` name one file: the same path once symbolic links are
    resolved, or (both existing) the same inode (a hard link)."""
    if _real(a) == _real(b):
        return True
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _within(path: str | os.PathLike[str], top: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is ``top`` or lies under it (symbolic links resolved), or is a
    hard link of ``top`` itself."""
    p, t = Path(_real(path)), Path(_real(top))
    return p == t or p.is_relative_to(t) or same_file(path, top)


def _written(out: Output) -> list[str]:
    """The paths ``out`` writes: the file itself, or a directory's entries."""
    if not out.directory:
        return [os.fspath(out.path)]
    return [os.path.join(os.fspath(out.path), e) for e in out.entries]


def _name(out: Output) -> str:
    return f"{out.option} ({os.fspath(out.path)})"


def conflicts(outputs: Iterable[Output], inputs: Iterable[Input] = ()) -> InputError | None:
    """The first output that would overwrite an input or another output (see the module
    docstring), as the :class:`InputError` to raise; ``None`` when there is none."""
    outs = list(outputs)
    ins = list(inputs)
    for out in outs:
        for inp in ins:
            if not os.path.exists(inp.path):
                continue
            hit = same_file(out.path, inp.path) or any(_within(inp.path, w) for w in _written(out) if out.directory)
            if hit:
                return InputError(
                    os.fspath(inp.path), "",
                    f"{out.option} {os.fspath(out.path)} would overwrite this file, which is read as {inp.what}; "
                    f"write {out.option} somewhere else",
                )
    for i, a in enumerate(outs):
        for b in outs[i + 1:]:
            if _clash(a, b):
                return InputError(
                    os.fspath(b.path), "",
                    f"{_name(a)} and {_name(b)} name the same file; give each output a path of its own",
                )
    return None


def _clash(a: Output, b: Output) -> bool:
    if not a.directory and not b.directory:
        return same_file(a.path, b.path)
    if a.directory and b.directory:
        return same_file(a.path, b.path) and bool(set(a.entries) & set(b.entries))
    file, folder = (a, b) if b.directory else (b, a)
    return same_file(file.path, folder.path) or any(_within(file.path, w) for w in _written(folder))


def check_outputs(outputs: Iterable[Output], inputs: Iterable[Input] = ()) -> None:
    """Refuse, before the command's work, outputs that would overwrite an input or each
    other (:class:`InputError`, exit code 2) or that cannot be written
    (:class:`OutputError`, exit code 6); see the module docstring."""
    outs = list(outputs)
    for out in outs:
        if os.fspath(out.path) == "-":
            kind = "directory" if out.directory else "file"
            raise InputError(
                out.option, "",
                f"'-' is not standard output here: this output is written as a {kind}; give it a path of its own",
            )
    found = conflicts(outs, inputs)
    if found is not None:
        raise found
    for out in outs:
        writable(out)


def writable(out: Output) -> None:
    """:class:`OutputError` naming the path when ``out`` cannot be written: a file
    output that is a directory, a directory output that is a file, a path under a file,
    or a nearest existing directory in which no file can be created."""
    path = Path(out.path)
    if path.exists():
        if out.directory and not path.is_dir():
            raise OutputError(path, OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)))
        if not out.directory and path.is_dir():
            raise OutputError(path, OSError(errno.EISDIR, os.strerror(errno.EISDIR)))
    home = path if out.directory else path.parent
    home = Path(os.path.abspath(home))
    while not home.exists() and not home.is_symlink() and home.parent != home:
        home = home.parent
    probe_dir(home)

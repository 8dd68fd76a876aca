"""Digests of what a model's verdicts are computed from, for checkpoints.

A checkpoint holds a search half done. Resumed by a process whose spec, model file or
ordercheck differs from the one that wrote it, the search would mix two models: the
states found so far by one, the rest and the verdicts by the other (a property edited to
fail at depth 2 would "hold", because depth 2 was searched before the edit). So the
loader records, with every :class:`~ordercheck.checker.api.model.Model` it builds from a model
file, the digests a checkpoint keeps and a resume compares
(:func:`ordercheck.checker.engine.checkpoints.source_changes`):

- ``ordercheck``: the version of ordercheck;
- ``model``: the model file's path and the SHA-256 of its bytes;
- ``spec_files``: the SHA-256 of each of the spec's source files, by absolute path.

The spec's source files are found by one rule, the same in every process (see
:func:`spec_files`): the file of the module that defines the spec class (and of each
module defining one of its base classes), then, transitively, every module those files
import with an ``import`` or ``from ... import`` statement (anywhere in the file,
inside functions too) that is *the user's code or a built-in spec*:

- a module of ordercheck's ``specs`` package (the built-in specs and what they share);
- any other module whose file lies outside the standard library and outside installed
  packages (a ``site-packages`` or ``dist-packages`` directory), and outside
  ordercheck's own packages (``checker``, ``reports``, ``tla``, which the version
  stands for).

So a helper module beside the spec file, a package of the user's project on
``sys.path`` (installed in editable mode too) and the ``specs`` modules a spec builds
on are digested; the standard library, installed packages and ordercheck's engine are
not (an installed package's upgrade is not noticed; ordercheck's is, by its version).
Code a spec reaches without an import statement (``importlib.import_module``,
``exec``, data files it reads) is not digested either.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.machinery
import sys
import sysconfig
from pathlib import Path
from types import ModuleType
from typing import Any

import ordercheck
import ordercheck.checker

_BASE = Path(ordercheck.checker.__file__).resolve().parent.parent
_OWN = (Path(ordercheck.__file__).resolve(), *(_BASE / name for name in ("checker", "reports", "tla")))
"""ordercheck's own modules other than ``ordercheck.specs``: the version stands for them."""

_STDLIB = tuple(
    Path(p).resolve() for p in {sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib")} if p
)
_INSTALLED = ("site-packages", "dist-packages")
BUILTIN_PACKAGE = "ordercheck.specs"


def digest_file(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, in hexadecimal."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def model_sources(spec_cls: type, model_path: str | Path | None, start_modules: tuple[str, ...] = ()) -> dict[str, Any]:
    """The digests a checkpoint of a model records (see the module docstring):
    ordercheck's version, the model file's (``None`` when ``model_path`` is no file:
    a model built in memory) and the spec's source files (:func:`spec_files`).
    ``start_modules``: further modules the spec was loaded from (the spec file the
    model names, when it re-exports a class defined elsewhere)."""
    model: dict[str, str] | None = None
    if model_path is not None and Path(model_path).is_file():
        path = Path(model_path).resolve()
        model = {"path": str(path), "sha256": digest_file(path)}
    return {
        "ordercheck": ordercheck.__version__,
        "model": model,
        "spec_files": spec_files(spec_cls, start_modules),
    }


def spec_files(spec_cls: type, start_modules: tuple[str, ...] = ()) -> dict[str, str]:
    """The spec's source files by absolute path, each with its SHA-256, sorted by path:
    the modules of ``spec_cls`` and its base classes (and ``start_modules``), then
    every module they import that is the user's code or a built-in spec (the rule of
    the module docstring), transitively. The modules are looked up in ``sys.modules``
    (the spec is loaded); one imported only inside a function not yet called is found
    on ``sys.path`` without being imported."""
    starts: list[tuple[str, str]] = []  # (module name, file)
    for name in (*start_modules, spec_cls.__module__, *(c.__module__ for c in spec_cls.__mro__[1:])):
        found = _located(name)
        if found is not None:
            starts.append(found)
    files: dict[str, str] = {}
    todo = list(reversed(starts))
    # The spec's own module is digested wherever it lies (an installed package's spec
    # too); its base classes' modules and every import go by the rule.
    first = {f for n, f in starts if n in (*start_modules, spec_cls.__module__)}
    while todo:
        name, file = todo.pop()
        if file in files:
            continue
        if file not in first and not _digested(name, Path(file)):
            continue
        try:
            data = Path(file).read_bytes()
        except OSError:
            continue  # a module whose file is gone: nothing to compare
        files[file] = hashlib.sha256(data).hexdigest()
        if not file.endswith(".py"):
            continue
        package = _package_of(name, file)
        for imported in _imports(file, data, files[file], package):
            found = _located(imported)
            if found is not None and found[1] not in files:
                todo.append(found)
    return dict(sorted(files.items()))


def _digested(name: str, path: Path) -> bool:
    """Whether the module ``name`` at ``path`` is the user's code or a built-in spec."""
    key = (name, str(path))
    if key not in _DIGESTED:
        _DIGESTED[key] = _by_rule(name, path)
    return _DIGESTED[key]


_DIGESTED: dict[tuple[str, str], bool] = {}
_RESOLVED: dict[str, str] = {}
"""Per process: each module's verdict under the rule, each module file's absolute path."""


def _by_rule(name: str, path: Path) -> bool:
    if name == BUILTIN_PACKAGE or name.startswith(BUILTIN_PACKAGE + "."):
        return True
    if any(part in _INSTALLED for part in path.parts):
        return False
    return not any(path.is_relative_to(root) for root in (*_STDLIB, *_OWN))


def _located(name: str) -> tuple[str, str] | None:
    """``(name, absolute file)`` of the module ``name``: the one in ``sys.modules``, else
    the file the import system would load (without importing anything); ``None`` for
    a name that is no module (an attribute imported with ``from``), a built-in module
    or one not found."""
    module = sys.modules.get(name)
    if module is not None:
        return _file_of(name, module)
    parent, _dot, _last = name.rpartition(".")
    try:
        if parent:
            holder = sys.modules.get(parent)
            path = getattr(holder, "__path__", None)
            if path is None:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, list(path))
        else:
            spec = importlib.machinery.PathFinder.find_spec(name)
    except (ImportError, ValueError, OSError):
        return None
    if spec is None or not spec.has_location or not spec.origin:
        return None
    return name, str(Path(spec.origin).resolve())


def _file_of(name: str, module: ModuleType) -> tuple[str, str] | None:
    file = getattr(module, "__file__", None)
    if not isinstance(file, str):
        return None
    if file not in _RESOLVED:
        _RESOLVED[file] = str(Path(file).resolve())
    return name, _RESOLVED[file]


def _package_of(name: str, file: str) -> str:
    """The package relative imports in module ``name`` are resolved against."""
    module = sys.modules.get(name)
    package = getattr(module, "__package__", None) if module is not None else None
    if isinstance(package, str):
        return package
    return name if Path(file).name == "__init__.py" else name.rpartition(".")[0]


_IMPORTS: dict[tuple[str, str], list[str]] = {}
"""The import list of each file's contents (by digest) and package, parsed once per process."""


def _imports(file: str, data: bytes, digest: str, package: str) -> list[str]:
    """The module names ``file``'s import statements may load, in the order written:
    each dotted name and its parent packages, and for ``from M import a`` also
    ``M.a`` (a submodule, when it is one). ``data`` is the file's contents and
    ``digest`` their SHA-256: the list is kept per contents."""
    key = (digest, package)
    if key not in _IMPORTS:
        _IMPORTS[key] = _parse_imports(file, data, package)
    return _IMPORTS[key]


def _parse_imports(file: str, data: bytes, package: str) -> list[str]:
    try:
        tree = ast.parse(data, filename=file)
    except (SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names.extend(_with_parents(alias.name))
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module or "", node.level, package)
            if base is None:
                continue
            if base:
                names.extend(_with_parents(base))
            names.extend(f"{base}.{a.name}" if base else a.name for a in node.names if a.name != "*")
    return list(dict.fromkeys(names))


def _statements(tree: ast.AST) -> list[ast.AST]:
    """Every statement of ``tree``, nested ones included (function and class bodies,
    branches, loops, ``try`` and ``match`` blocks), in source order: where an import
    statement can be. Expressions are not entered (no statement lies inside one)."""
    found: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        found.append(node)
        for field in ("cases", "handlers", "finalbody", "orelse", "body"):
            children = getattr(node, field, None)
            if isinstance(children, list):
                todo.extend(reversed(children))
    return found


def _with_parents(dotted: str) -> list[str]:
    parts = dotted.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _absolute(module: str, level: int, package: str) -> str | None:
    """The absolute name of ``from <level dots><module> import``, in ``package``."""
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts) or not package:
        return None
    base = ".".join(parts[: len(parts) - (level - 1)])
    return f"{base}.{module}" if module else base

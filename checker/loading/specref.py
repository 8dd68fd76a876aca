"""Spec references: how a model file's ``spec`` field names the spec it checks.

A spec can live in ordercheck (the built-in ``specs`` package) or in the user's own
project. The ``spec`` field takes four forms:

- ``"bus1"``: a built-in spec (module ``ordercheck.specs.bus1``), or else a name an installed
  package registers in the entry-point group :data:`ENTRY_POINT_GROUP`
  (``[project.entry-points."ordercheck.specs"] token = "mypkg.token:TokenRing"``);
- ``"specs/token.py"`` or ``"specs/token.py:TokenRing"``: a Python file, relative to
  the model file's directory (or absolute);
- ``"mypkg.ordering:Spec"``: an importable module and the class in it;
- ``"mypkg.ordering"``: an importable module with a dotted name, and its ``SPEC``.

Without ``:Class``, the module's ``SPEC`` is taken, or its one :class:`~ordercheck.checker.Spec`
subclass defined there. An import path is tried as it is and then with the model
file's directory and the working directory on ``sys.path``, so a package beside the
models imports without being installed.

Each resolved class remembers its *canonical* reference (:func:`reference_of`), a
string that resolves to the same class from any directory and in any process: the
built-in or registered name, the import path, or the file's absolute path. Results
record it (``spec`` in the JSON record), and the Spark executors build the spec from it.

:func:`resolve` imports what it is given, so it is called only on what the user chose
to run: a model file's ``spec`` field or a ``--spec`` option. A reference read from a
data file (a log's ``#meta.spec``, a result's ``spec``) goes through :func:`named`,
which selects among the built-in specs, the installed entry points and the specs this
process has already resolved, and never imports a file or module the data names
(docs/explanation/security.md).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.inputs import check_input
from ordercheck.checker.api.spec import Spec
from ordercheck.checker.api.spec_errors import source_of

ENTRY_POINT_GROUP = "ordercheck.specs"
"""The entry-point group through which installed packages register specs by name."""

BUILTIN_PACKAGE = "ordercheck.specs"
USER_MODULE_PREFIX = "ordercheck_user_spec_"
"""Spec files are imported under this prefix plus their stem and a hash of their path."""

_REFS: dict[type, str] = {}


class BadSpecRef(LookupError):
    """A ``spec`` reference that does not name a spec; the message says why, in one
    sentence the model loader puts after the file and field names."""


@dataclass(frozen=True)
class SpecRef:
    """A resolved reference: the class, the canonical reference and the spec's file.

    ``form`` is ``"builtin"``, ``"entry-point"``, ``"file"`` or ``"import"``. ``source``
    is the file defining the class (``None`` when it has none, e.g. a class built in
    memory); TLA+ templates and adapters of a user's spec are looked up beside it.
    ``module`` is the name of the module the reference loaded (a spec file's, an
    import path's), where the class may have been imported from another.
    """

    text: str
    canonical: str
    form: str
    cls: type[Spec]
    source: Path | None
    module: str | None = None


def is_file_reference(text: str) -> bool:
    """Whether ``text`` names a file (``.py``, possibly with ``:Class``, or any path
    with a slash) rather than a name or an import path."""
    path = text.rsplit(":", 1)[0] if _has_class_suffix(text) else text
    return path.endswith(".py") or "/" in path or "\\" in path


def _has_class_suffix(text: str) -> bool:
    head, sep, tail = text.rpartition(":")
    return bool(sep) and tail.isidentifier() and bool(head) and not (len(head) == 1 and head.isalpha())


def resolve(text: str, base: str | Path | None = None) -> SpecRef:
    """Resolve a ``spec`` reference; :class:`BadSpecRef` says what is wrong.

    ``base`` is the directory relative file references are read from (the model file's
    directory); without it, the working directory.
    """
    text = text.strip()
    if not text:
        raise BadSpecRef("is empty: name a built-in spec, a file (specs/token.py) or an import path (pkg.mod:Class)")
    where = Path(base) if base is not None else Path.cwd()
    if is_file_reference(text):
        return _from_file(text, where)
    if ":" in text or "." in text:
        return _from_import(text, where)
    if not text.isidentifier():
        raise BadSpecRef(f"{text!r} is neither a spec name, a .py file nor an import path (pkg.mod:Class)")
    return _from_name(text)


class NotImported(BadSpecRef):
    """A data file names a spec by a file path or an import path that this process
    has not resolved from a model file or an option: it is not imported. ``ref`` is
    the reference as the data gives it."""

    def __init__(self, ref: str) -> None:
        super().__init__(
            f"names {ref[:200]!r}, a spec file or module: ordercheck never imports code a data file names; "
            "if you trust that spec, pass it with --spec"
        )
        self.ref = ref


def named(text: str) -> type[Spec]:
    """The spec class a reference read from a data file selects, without importing
    anything the data names: a built-in spec or an installed entry point by its name,
    or a spec this process already resolved (:func:`resolve`, from a model file or a
    ``--spec`` option) by its canonical reference. :class:`NotImported` for any other
    file or import path, :class:`BadSpecRef` for an unknown name."""
    for cls, ref in list(_REFS.items()):
        if ref == text:
            return cls
    if not text.isidentifier():
        raise NotImported(text)
    if text.startswith("_"):
        raise BadSpecRef(f"unknown spec {text!r}")
    return _from_name(text).cls


def option_spec(text: str, option: str = "--spec") -> SpecRef:
    """The spec a command-line ``option`` names (a built-in or registered name, a file
    relative to the working directory, an import path), imported because the user
    typed it; :class:`~ordercheck.checker.InputError` naming the option when it names none."""
    from ordercheck.checker.api.errors import InputError

    try:
        return resolve(text)
    except BadSpecRef as exc:
        raise InputError(option, "", str(exc)) from None


def spec_class_of(text: str, base: str | Path | None = None) -> type[Spec]:
    """The class a reference names (see :func:`resolve`)."""
    return resolve(text, base).cls


def reference_of(cls: type[Spec]) -> str:
    """The canonical reference of ``cls``: what :func:`resolve` gives back ``cls`` for,
    from any directory. A class never resolved through this module is taken to be a
    built-in one and is named by its ``name``."""
    return _REFS.get(cls, cls.name)


# -- the four forms ----------------------------------------------------------------------


def _from_name(name: str) -> SpecRef:
    module = _import_builtin(name)
    if module is not None and isinstance(getattr(module, "SPEC", None), type):
        cls = _check_class(module.SPEC, f"built-in module specs.{name}'s SPEC")
        _REFS.setdefault(cls, name)
        return SpecRef(name, name, "builtin", cls, source_of(cls), module.__name__)
    point = _entry_point(name)
    if point is None:
        raise BadSpecRef(
            f"unknown spec {name!r}: neither built in ({', '.join(spec_modules())}) nor registered by an "
            f"installed package (entry-point group {ENTRY_POINT_GROUP}); name a spec file of yours by its "
            'path, e.g. spec = "specs/token.py"'
        )
    try:
        loaded = point.load()
    except Exception as exc:  # a broken installed package: one line
        raise BadSpecRef(f"the entry point {name} = {point.value!r} cannot be loaded ({_one_line(exc)})") from None
    if isinstance(loaded, ModuleType):
        loaded = _spec_in(loaded, None, f"entry point {name} = {point.value!r}")
    cls = _check_class(loaded, f"entry point {name} = {point.value!r}")
    _REFS.setdefault(cls, name)
    return SpecRef(name, name, "entry-point", cls, source_of(cls))


def _from_import(text: str, base: Path) -> SpecRef:
    module_name, _sep, attr = text.partition(":")
    if not all(part.isidentifier() for part in module_name.split(".")) or (attr and not attr.isidentifier()):
        raise BadSpecRef(f"{text!r} is not an import path of the form package.module:Class")
    module = _import(module_name, base, text)
    cls = _spec_in(module, attr or None, f"module {module_name}")
    canonical = f"{module_name}:{attr or cls.__name__}"
    _REFS.setdefault(cls, canonical)
    return SpecRef(text, canonical, "import", cls, source_of(cls), module.__name__)


def _from_file(text: str, base: Path) -> SpecRef:
    path_text, attr = (text.rsplit(":", 1) if _has_class_suffix(text) else (text, ""))
    if "\0" in path_text:
        raise BadSpecRef(f"{path_text!r} is not a file name (it holds a NUL character)")
    try:
        path = Path(path_text).expanduser()
        if not path.is_absolute():
            path = base / path
        path = path.resolve()
        found = path.is_file()
    except (OSError, RuntimeError) as exc:  # a name too long, a user ~name that does not exist
        raise BadSpecRef(f"{path_text[:80]!r} cannot be looked up ({getattr(exc, 'strerror', None) or exc})") from None
    if not found:
        why = "does not exist"
        if path.exists():  # a named pipe, a device, a socket, a directory: named, never opened
            try:
                check_input(path, directory="is a directory")
                why = "is not a regular file"
            except InputError as exc:
                why = exc.message
        raise BadSpecRef(f"{path_text!r} is not a file ({path} {why})")
    if path.suffix != ".py":
        raise BadSpecRef(f"{path_text!r} is not a Python file (a spec file ends in .py)")
    module = load_file(path)
    cls = _spec_in(module, attr or None, f"{path_text}")
    canonical = f"{path}:{cls.__name__}"
    _REFS.setdefault(cls, canonical)
    return SpecRef(text, canonical, "file", cls, path, module.__name__)


# -- helpers ---------------------------------------------------------------------------


def spec_modules() -> list[str]:
    """The names of the built-in specs: the modules of the ``specs`` package that define
    ``SPEC``."""
    import pkgutil

    import ordercheck.specs as specs

    names = []
    for info in pkgutil.iter_modules(specs.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{BUILTIN_PACKAGE}.{info.name}")
        if isinstance(getattr(module, "SPEC", None), type) and issubclass(module.SPEC, Spec):
            names.append(info.name)
    return sorted(names)


def _import_builtin(name: str) -> ModuleType | None:
    full = f"{BUILTIN_PACKAGE}.{name}"
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as exc:
        if exc.name == full:
            return None
        raise


def _entry_point(name: str) -> importlib.metadata.EntryPoint | None:
    for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if point.name == name:
            return point
    return None


def registered_names() -> list[str]:
    """Spec names installed packages register through :data:`ENTRY_POINT_GROUP`."""
    return sorted({p.name for p in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)})


def module_name_for(path: Path) -> str:
    """The module name a spec file is imported under: unique per absolute path, so two
    ``token.py`` files in two projects never clash, and stable across processes."""
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    stem = "".join(ch if ch.isalnum() else "_" for ch in path.stem)
    return f"{USER_MODULE_PREFIX}{stem}_{digest}"


def load_file(path: Path, name: str | None = None) -> ModuleType:
    """Import the Python file ``path`` (once per process) under :func:`module_name_for`
    (or ``name``). Its directory is not put on ``sys.path``: a spec file imports
    ordercheck and installed packages, or its own package through an import path."""
    name = name or module_name_for(path)
    module = sys.modules.get(name)
    if module is not None:
        return module
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise BadSpecRef(f"{path} cannot be imported")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise BadSpecRef(f"{path.name} cannot be imported ({_one_line(exc)})") from None
    except BaseException:  # sys.exit at import...: the spec's error (ordercheck.checker.loading.modelfile), not bad input
        sys.modules.pop(name, None)
        raise
    return module


def _import(module_name: str, base: Path, text: str) -> ModuleType:
    """Import ``module_name``; if its top package is missing, again with ``base`` and
    the working directory on ``sys.path``."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if not _missing_self(exc, module_name):
            raise BadSpecRef(f"{text!r} cannot be imported ({_one_line(exc)})") from None
    except Exception as exc:
        raise BadSpecRef(f"{text!r} cannot be imported ({_one_line(exc)})") from None
    added = [str(p) for p in dict.fromkeys([base.resolve(), Path.cwd().resolve()]) if str(p) not in sys.path]
    sys.path[:0] = added
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        for p in added:
            sys.path.remove(p)
        if _missing_self(exc, module_name):
            raise BadSpecRef(
                f"no module {module_name!r} (not installed, and not found beside the model file or in the "
                "working directory)"
            ) from None
        raise BadSpecRef(f"{text!r} cannot be imported ({_one_line(exc)})") from None
    except Exception as exc:
        raise BadSpecRef(f"{text!r} cannot be imported ({_one_line(exc)})") from None


def _missing_self(exc: ModuleNotFoundError, module_name: str) -> bool:
    """Whether ``exc`` says ``module_name`` (or a package on its way) is missing, rather
    than something it imports."""
    parts = module_name.split(".")
    return exc.name in {".".join(parts[: i + 1]) for i in range(len(parts))}


def _spec_in(module: ModuleType, attr: str | None, what: str) -> type[Spec]:
    if attr is not None:
        if not hasattr(module, attr):
            raise BadSpecRef(f"{what} has no {attr!r}")
        return _check_class(getattr(module, attr), f"{what}:{attr}")
    if hasattr(module, "SPEC"):
        return _check_class(module.SPEC, f"{what}'s SPEC")
    defined = [
        obj for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, Spec) and obj.__module__ == module.__name__ and obj.name
    ]
    if len(defined) == 1:
        return defined[0]
    if not defined:
        raise BadSpecRef(f"{what} defines no spec (a subclass of checker.Spec with a name, or SPEC = YourSpec)")
    names = ", ".join(sorted(c.__name__ for c in defined))
    raise BadSpecRef(f"{what} defines several specs ({names}): say which, e.g. \"...:{defined[0].__name__}\"")


def _check_class(obj: object, what: str) -> type[Spec]:
    if not (isinstance(obj, type) and issubclass(obj, Spec)):
        raise BadSpecRef(f"{what} is not a spec class (a subclass of checker.Spec)")
    if not obj.name:
        raise BadSpecRef(f"{what} ({obj.__name__}) has no name: set the class attribute name = \"...\"")
    return obj


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    if isinstance(exc, SyntaxError) and exc.lineno:
        first = f"{exc.msg}, line {exc.lineno}"
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__

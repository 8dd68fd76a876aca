"""Finding specs by name and the built-in model files."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

from checker.api.spec import Spec


class UnknownSpec(LookupError):
    pass


def spec_names() -> list[str]:
    """Names of every spec module in the ``specs`` package (those defining ``SPEC``)."""
    import specs

    names = []
    for info in pkgutil.iter_modules(specs.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"specs.{info.name}")
        if isinstance(getattr(module, "SPEC", None), type) and issubclass(module.SPEC, Spec):
            names.append(info.name)
    return sorted(names)


def spec_class(name: str) -> type[Spec]:
    """The spec class named ``name``; :class:`UnknownSpec` if there is none."""
    if not name.isidentifier():
        raise UnknownSpec(name)
    try:
        module = importlib.import_module(f"specs.{name}")
    except ModuleNotFoundError as exc:
        if exc.name in (f"specs.{name}",):
            raise UnknownSpec(name) from None
        raise
    cls = getattr(module, "SPEC", None)
    if not (isinstance(cls, type) and issubclass(cls, Spec)):
        raise UnknownSpec(name)
    return cls


def models_dir() -> Path | None:
    """Where the built-in models live: the source tree's ``models/``, or the installed
    copy under ``share/ordercheck/models``."""
    here = Path(__file__).resolve().parents[2] / "models"
    if here.is_dir():
        return here
    installed = Path(sys.prefix) / "share" / "ordercheck" / "models"
    if installed.is_dir():
        return installed
    return None


def builtin_models() -> list[Path]:
    root = models_dir()
    if root is None:
        return []
    return sorted(root.glob("*.toml"))

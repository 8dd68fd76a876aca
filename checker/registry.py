"""Finding specs by name and the built-in model files."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

from checker.spec import Spec


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
    """The spec class a canonical reference names: a built-in or registered name, an
    import path or a spec file's absolute path (see :mod:`checker.specref`);
    :class:`UnknownSpec` if there is none."""
    from checker.specref import BadSpecRef, resolve

    try:
        return resolve(name).cls
    except BadSpecRef:
        raise UnknownSpec(name) from None


def models_dir() -> Path | None:
    """Where the built-in models live: the source tree's ``models/``, or the installed
    copy under ``share/ordercheck/models``."""
    here = Path(__file__).resolve().parent.parent / "models"
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

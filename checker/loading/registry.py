"""Finding specs by name and the built-in model files."""

from __future__ import annotations

import sys
from pathlib import Path

from ordercheck.checker.api.spec import Spec


class UnknownSpec(LookupError):
    """No spec of that name (the one argument)."""


class SpecNotImported(UnknownSpec):
    """The name is a spec file or module path, which a data file cannot make ordercheck
    import (:class:`ordercheck.checker.loading.specref.NotImported`); ``str()`` says so."""


def spec_names() -> list[str]:
    """Names of every spec module in the ``specs`` package (those defining ``SPEC``)."""
    from ordercheck.checker.loading.specref import spec_modules

    return spec_modules()


def spec_class(name: str) -> type[Spec]:
    """The spec class a name read from data selects (:func:`ordercheck.checker.loading.specref.named`):
    a built-in or registered name, or the canonical reference of a spec this process
    already resolved from a model file or an option. :class:`SpecNotImported` for any
    other file or import path (nothing is imported), :class:`UnknownSpec` for an unknown
    name."""
    from ordercheck.checker.loading.specref import BadSpecRef, NotImported, named

    try:
        return named(name)
    except NotImported as exc:
        raise SpecNotImported(str(exc)) from None
    except BadSpecRef:
        raise UnknownSpec(name) from None


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

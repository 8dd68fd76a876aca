"""Finding specs by name and the built-in model files."""

from __future__ import annotations

import sys
from pathlib import Path

from checker.api.spec import Spec


class UnknownSpec(LookupError):
    pass


def spec_names() -> list[str]:
    """Names of every spec module in the ``specs`` package (those defining ``SPEC``)."""
    from checker.loading.specref import spec_modules

    return spec_modules()


def spec_class(name: str) -> type[Spec]:
    """The spec class a canonical reference names: a built-in or registered name, an
    import path or a spec file's absolute path (see :mod:`checker.loading.specref`);
    :class:`UnknownSpec` if there is none."""
    from checker.loading.specref import BadSpecRef, resolve

    try:
        return resolve(name).cls
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

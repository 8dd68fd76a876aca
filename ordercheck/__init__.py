"""ordercheck: model checking for message-ordering protocols.

Everything ordercheck installs is under this one name. A spec imports its API from here::

    from ordercheck import Spec, Property, Constant, HoldBackSpec

The public API is the spec API of :mod:`ordercheck.checker` (:class:`Spec`, :class:`Property`,
:class:`Constant`, :class:`ConstantError`, :class:`Fields`, :class:`Record`, :func:`tag_action`,
the opt-in protocols :class:`Symmetry`, :class:`PartialOrder` and :class:`Rendering`) and the
base classes and helpers of the built-in specs a user's spec builds on (:class:`PeerSpec`,
:class:`AsyncPeerSpec`, :class:`HoldBackSpec`, :func:`peer_constants`,
:func:`broadcast_constants`, :func:`channel_constants`, :data:`CHANS`). They are loaded when
first asked for, so ``import ordercheck`` loads nothing else.

The sub-packages hold the rest: :mod:`ordercheck.checker` (the spec API, engine, loading,
command line), :mod:`ordercheck.specs` (the built-in specs and the property library),
:mod:`ordercheck.reports` and :mod:`ordercheck.tla`. In a source checkout they are the
repository's top-level folders ``checker/``, ``specs/``, ``reports/`` and ``tla/``; an
installed wheel holds them under ``ordercheck/``.
"""

from __future__ import annotations

import importlib
import sys
from importlib.abc import MetaPathFinder
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ordercheck._version import __version__ as __version__

_SUBPACKAGES = ("checker", "specs", "reports", "tla")

# A source checkout: this folder holds only this file, its sub-packages are the
# repository's top-level folders beside it (the wheel maps them here, see pyproject.toml).
_here = Path(__file__).resolve().parent
if not (_here / "checker").is_dir() and (_here.parent / "checker" / "__init__.py").is_file():
    __path__.append(str(_here.parent))  # noqa: F821 (the package's own search path)

_EXPORTS: dict[str, str] = {
    **{name: "ordercheck.checker" for name in (
        "Action", "Constant", "ConstantError", "Fields", "InputError", "PartialOrder", "Property", "Record",
        "Rendering", "Spec", "State", "Symmetry", "tag_action",
    )},
    "PeerSpec": "ordercheck.specs.base",
    "peer_constants": "ordercheck.specs.base",
    "AsyncPeerSpec": "ordercheck.specs.async_peers",
    "broadcast_constants": "ordercheck.specs.async_peers",
    "CHANS": "ordercheck.specs.async_peers",
    "HoldBackSpec": "ordercheck.specs.holdback",
    "channel_constants": "ordercheck.specs.channels",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # what the names are, for type checkers and readers
    from ordercheck.checker import (  # noqa: F401
        Action,
        Constant,
        ConstantError,
        Fields,
        InputError,
        PartialOrder,
        Property,
        Record,
        Rendering,
        Spec,
        State,
        Symmetry,
        tag_action,
    )
    from ordercheck.specs.async_peers import CHANS, AsyncPeerSpec, broadcast_constants  # noqa: F401
    from ordercheck.specs.base import PeerSpec, peer_constants  # noqa: F401
    from ordercheck.specs.channels import channel_constants  # noqa: F401
    from ordercheck.specs.holdback import HoldBackSpec  # noqa: F401


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ordercheck' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


class _MovedPackages(MetaPathFinder):
    """Turns an import of one of the old top-level names (``checker``, ``specs``,
    ``reports``, ``tla``) that nothing else provides into an error naming the new one.

    It sits last on :data:`sys.meta_path`, so a package of the same name the user has
    (their own ``specs/`` folder, another distribution) is found first and wins."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        top = fullname.partition(".")[0]
        if top in _SUBPACKAGES and path is None:
            new = f"ordercheck.{fullname}"
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: ordercheck's modules moved under one name; import {new!r} "
                f"instead (a spec's API: 'from ordercheck import Spec, Property, ...')",
                name=fullname,
            )
        return None


if not any(isinstance(f, _MovedPackages) for f in sys.meta_path):
    sys.meta_path.append(_MovedPackages())

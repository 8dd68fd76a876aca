"""Per-spec adapters: what the exporter needs to know about one spec.

An adapter names the spec's Jinja2 template, gives the template its context (constants,
script, which properties are exported under which TLA+ names) and translates states
both ways between the Python spec and its TLA+ module, so that TLC's traces can be read
back and our traces replayed in TLC. The adapter of spec ``NAME`` lives in module
``ordercheck.tla.adapters.NAME`` and is that module's ``ADAPTER`` class.
"""

from __future__ import annotations

import importlib

from ordercheck.tla.adapters.base import Adapter, ExportedProperty, camel

__all__ = ["Adapter", "ExportedProperty", "adapter_for", "camel", "refusal"]


def _module(spec_name: str) -> object | None:
    if not spec_name.isidentifier():
        return None
    try:
        return importlib.import_module(f"ordercheck.tla.adapters.{spec_name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"ordercheck.tla.adapters.{spec_name}":
            return None
        raise


def adapter_for(spec_name: str) -> type[Adapter] | None:
    """The adapter class of a spec, or ``None`` when the spec has no TLA+ template yet."""
    return getattr(_module(spec_name), "ADAPTER", None)


def refusal(spec_name: str) -> str | None:
    """Why a spec has no TLA+ export by design (its adapter module's ``REFUSED``), or ``None``."""
    return getattr(_module(spec_name), "REFUSED", None)

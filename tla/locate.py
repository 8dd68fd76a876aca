"""Where a spec's TLA+ template and adapter are, for built-in specs and users' specs.

A built-in spec ``NAME`` has its template in ``tla/templates/NAME.tla.j2`` and its
adapter in ``ordercheck.tla.adapters.NAME`` (``ADAPTER``). A spec of the user's own (named in a
model by file path, import path or entry point: :mod:`ordercheck.checker.loading.specref`) keeps both
beside its Python file, found the same way whatever form named it:

- the template: ``<stem>.tla.j2`` next to ``<stem>.py``, or the file the spec class's
  ``tla_template`` names (relative to the spec's file);
- the adapter: ``ADAPTER`` in ``<stem>_tla.py`` next to it, or what the class's
  ``tla_adapter`` names: ``"file.py"`` / ``"file.py:Class"`` relative to the spec's
  file, or an import path ``"package.module:Class"``.

A user's template may include the shared pieces (``_peers.tla.j2``,
``_channels.tla.j2``, ``_properties.tla.j2``...): the template directory comes first,
then ordercheck's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ordercheck.checker.api.spec import Spec
from ordercheck.checker.loading.specref import BadSpecRef, is_file_reference, load_file, source_of

GUIDE = "docs/howto/export-tla.md"
"""The guide a refusal names: how to write a template and an adapter."""

TEMPLATES = Path(__file__).resolve().parent / "templates"


@dataclass(frozen=True)
class TlaFiles:
    """A spec's template (its directory and file name) and adapter class."""

    template_dir: Path
    template: str
    adapter: type


class Missing(LookupError):
    """The spec has no template or adapter; the message names the two files to add and
    the guide, in one sentence."""


def is_builtin(cls: type[Spec]) -> bool:
    """Whether ``cls`` is one of ordercheck's own specs (module ``specs.*``)."""
    return cls.__module__.startswith("ordercheck.specs.")


def user_files(cls: type[Spec]) -> TlaFiles:
    """The template and adapter of a user's spec class; :class:`Missing` if absent."""
    source = source_of(cls)
    if source is None:
        raise Missing(f"spec {cls.name!r} has no TLA+ template yet: its class has no source file to look beside")
    template = template_path(cls, source)
    adapter_text = getattr(cls, "tla_adapter", "") or f"{source.stem}_tla.py"
    adapter_file = _adapter_file(adapter_text, source)
    missing = []
    if not template.is_file():
        missing.append(f"{_rel(template)} (the TLA+ module, a Jinja2 template)")
    if adapter_file is not None and not adapter_file.is_file():
        missing.append(f"{_rel(adapter_file)} (its adapter: ADAPTER = a ordercheck.tla.adapters.Adapter subclass)")
    if missing:
        raise Missing(
            f"spec {cls.name!r} has no TLA+ template yet: add {' and '.join(missing)}; "
            f"`ordercheck new NAME --tla` writes skeletons of both, and {GUIDE} says how to fill them in"
        )
    try:
        adapter = _load_adapter(adapter_text, source)
    except BadSpecRef as exc:
        raise Missing(f"spec {cls.name!r}: its TLA+ adapter {adapter_text!r} {exc}") from None
    return TlaFiles(template.parent, template.name, adapter)


def builtin_missing(name: str) -> str:
    """The refusal for a built-in spec without a template."""
    return (
        f"spec {name!r} has no TLA+ template yet: add tla/templates/{name}.tla.j2 and tla/adapters/{name}.py "
        f"(ADAPTER = a ordercheck.tla.adapters.Adapter subclass); {GUIDE} says how"
    )


def template_path(cls: type[Spec], source: Path) -> Path:
    """Where the template of a user's spec is (it may not exist)."""
    named = getattr(cls, "tla_template", "") or f"{source.stem}.tla.j2"
    path = Path(named)
    return (path if path.is_absolute() else source.parent / path).resolve()


def _adapter_file(text: str, source: Path) -> Path | None:
    if not is_file_reference(text):
        return None
    path_text = text.rsplit(":", 1)[0] if text.count(":") and not text.endswith(".py") else text
    path = Path(path_text)
    return (path if path.is_absolute() else source.parent / path).resolve()


def _load_adapter(text: str, source: Path) -> type:
    from ordercheck.tla.adapters.base import Adapter

    file = _adapter_file(text, source)
    if file is not None:
        attr = text.rsplit(":", 1)[1] if text.count(":") and not text.endswith(".py") else "ADAPTER"
        module = load_file(file)
        obj = getattr(module, attr, None)
        what = f"{file.name}:{attr}" if attr != "ADAPTER" else f"{file.name}'s ADAPTER"
    else:
        module_name, _sep, attr = text.partition(":")
        import importlib

        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise BadSpecRef(f"cannot be imported ({type(exc).__name__}: {exc})") from None
        obj = getattr(module, attr or "ADAPTER", None)
        what = text
    if not (isinstance(obj, type) and issubclass(obj, Adapter)):
        raise BadSpecRef(f"names no adapter class ({what} is missing or not a ordercheck.tla.adapters.Adapter subclass)")
    return obj


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)

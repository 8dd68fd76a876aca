"""Rendering a model as a TLA+ module and a TLC configuration (``export-tla``).

Each spec has a Jinja2 template in ``tla/templates`` (``<spec>.tla.j2``), which includes
the shared pieces (``_peers.tla.j2``, ``_properties.tla.j2``); the configuration comes
from ``model.cfg.j2`` for every spec, and the ordering library is the static module
``OrderingProperties.tla``, written beside each export.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.outputs import Outputs
from ordercheck.tla.adapters import Adapter, ExportedProperty, adapter_for, refusal
from ordercheck.tla.adapters.base import module_name
from ordercheck.tla.locate import Missing, builtin_missing, is_builtin, user_files

TEMPLATES = Path(__file__).resolve().parent / "templates"
LIBRARY_MODULE = "OrderingProperties.tla"


class NoTemplate(InputError):
    """The model's spec has no TLA+ template yet."""


@dataclass
class Export:
    """A rendered export: module text, configuration text and what they contain."""

    name: str
    module: str
    config: str
    properties: list[ExportedProperty]  # the model's properties, as checked in the cfg
    symmetry: bool
    adapter: Adapter
    files: dict[str, str] = field(default_factory=dict)

    @property
    def invariants(self) -> list[str]:
        return [p.checked for p in self.properties if not p.temporal]

    @property
    def temporal(self) -> list[str]:
        return [p.checked for p in self.properties if p.temporal]

    def write(self, directory: str | Path, outputs: Outputs | None = None) -> list[Path]:
        """Write ``Name.tla``, ``Name.cfg`` and the library module into ``directory``
        (staged in ``outputs`` when given, to be put in place with the command's other
        files; see :mod:`ordercheck.checker.api.outputs`)."""
        if outputs is None:
            with Outputs() as own:
                return self.write(directory, own)
        out = Path(directory)
        return [outputs.write_text(out / filename, text) for filename, text in self.files.items()]


def template_environment(first: str | Path | None = None) -> jinja2.Environment:
    """The Jinja2 environment over ``tla/templates`` (undefined names are errors); with
    ``first``, that directory (a user's spec's) is searched before it."""
    dirs = [str(first)] if first is not None else []
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader([*dirs, str(TEMPLATES)]),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def adapter_of(model: Model) -> Adapter:
    """The model's adapter; :class:`NoTemplate` when its spec has no TLA+ template, or
    none by design (the refusal says why and what to use instead). A user's spec has
    them beside its file (:mod:`ordercheck.tla.locate`); the adapter instance then carries the
    template's directory as ``template_dir``."""
    cls = type(model.spec)
    if not is_builtin(cls):
        try:
            found = user_files(cls)
        except Missing as exc:
            raise NoTemplate(model.path, "spec", str(exc)) from None
        adapter = found.adapter(model.spec)
        adapter.template = found.template
        adapter.template_dir = found.template_dir
        return adapter
    why = refusal(model.spec_name)
    if why is not None:
        raise NoTemplate(model.path, "spec", why)
    cls_adapter = adapter_for(model.spec_name)
    if cls_adapter is None or not (TEMPLATES / cls_adapter.template).exists():
        raise NoTemplate(model.path, "spec", builtin_missing(model.spec_name))
    refused = cls_adapter.refuse(model.spec)
    if refused is not None:
        raise NoTemplate(model.path, f"constants.{refused[0]}", refused[1])
    return cls_adapter(model.spec)


def render_config(export_name: str, model: Model, adapter: Adapter, props: list[ExportedProperty],
                  symmetry: bool) -> str:
    """The TLC configuration checking ``props`` (a subset of the model's, for reruns)."""
    template = template_environment().get_template("model.cfg.j2")
    return template.render(
        model_path=Path(model.path).name,
        description=model.description or model.spec.name,
        constants=adapter.cfg_constants(),
        invariants=[p.checked for p in props if not p.temporal],
        temporal=[p.checked for p in props if p.temporal],
        symmetry=symmetry,
    )


def export_model(model: Model, *, symmetry: bool | None = None) -> Export:
    """Render ``model``. ``symmetry`` overrides the model's setting (the cross-check
    turns it off); a SYMMETRY clause is written only where permuting peers is a true
    symmetry of the model."""
    adapter = adapter_of(model)
    name = module_name(Path(model.path).stem)
    wanted = model.symmetry if symmetry is None else symmetry
    sound, why = adapter.symmetry()
    use_symmetry = wanted and sound
    every = adapter.exported_properties()
    chosen = {p.name for p in model.properties}
    props = [p for p in every if p.name in chosen]
    order = {p.name: i for i, p in enumerate(model.properties)}
    props.sort(key=lambda p: order[p.name])
    header = (
        f"{'-' * 20} MODULE {name} {'-' * 20}\n"
        f"(* Exported by ordercheck from {Path(model.path).name}: {model.description or model.spec.name} *)"
    )
    if wanted and not sound:
        header += f"\n(* No SYMMETRY: {why}. *)"
    context = {
        "header": header,
        "properties": every,
        "symmetry": use_symmetry,
        "fairness": adapter.fairness(),
        "spec_class": type(model.spec).__name__,
        **adapter.context(),
    }
    env = template_environment(getattr(adapter, "template_dir", None))
    module = env.get_template(adapter.template).render(**context)
    config = render_config(name, model, adapter, props, use_symmetry)
    library = (TEMPLATES / LIBRARY_MODULE).read_text(encoding="utf-8")
    files = {f"{name}.tla": module, f"{name}.cfg": config, LIBRARY_MODULE: library}
    return Export(name, module, config, props, use_symmetry, adapter, files)

"""Rendering a model as a TLA+ module and its TLC configurations (``export-tla``).

Each spec has a Jinja2 template in ``tla/templates`` (``<spec>.tla.j2``), which includes
the shared pieces (``_peers.tla.j2``, ``_properties.tla.j2``); the configurations come
from ``model.cfg.j2`` for every spec, and the ordering library is the static module
``OrderingProperties.tla``, written beside each export.

An export has several configurations (:class:`TlcConfig`), so that plain TLC on each one
ends as expected: the main one, ``Name.cfg``, checks ``TypeOK`` and every property
expected to hold, to the end; each property expected to be violated, and each witness
(a ``sometimes`` property expected to be reached), has a configuration of its own,
``Name_violates_<property>.cfg`` or ``Name_witness_<property>.cfg``, where TLC is meant
to stop with that violation. ``Name.manifest.json`` lists them with the outcome each
should have (:func:`manifest`).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.outputs import Outputs
from ordercheck.tla.adapters import Adapter, ExportedProperty, adapter_for, refusal
from ordercheck.tla.adapters.base import module_name
from ordercheck.tla.locate import Missing, builtin_missing, is_builtin, user_files
from ordercheck.tla.views import Counts, our_counts

if TYPE_CHECKING:
    from ordercheck.checker.api.result import Result

TEMPLATES = Path(__file__).resolve().parent / "templates"
LIBRARY_MODULE = "OrderingProperties.tla"
HAPPENED_BEFORE_MODULE = "HappenedBefore.tla"
"""The ordering properties written from happened-before over the logs, which the
``Name_happened_before.cfg`` configuration checks against the library's."""


class NoTemplate(InputError):
    """The model's spec has no TLA+ template yet."""


NO_ERROR = "no error"
"""A configuration's expected outcome: TLC explores every state and reports nothing."""
INVARIANT_VIOLATED = "invariant violated"
"""Expected outcome: TLC stops at a violation of the configuration's one invariant."""
TEMPORAL_VIOLATED = "temporal property violated"
"""Expected outcome: TLC reports a behaviour violating the configuration's one temporal property."""
ACTION_VIOLATED = "action property violated"
"""Expected outcome: TLC stops at a step violating the configuration's one action property
(a per-step check, :attr:`~ordercheck.tla.adapters.base.ExportedProperty.step`)."""
UNKNOWN = "not predicted"
"""Expected outcome of a property neither our engine nor the model file has a verdict for."""


@dataclass(frozen=True)
class TlcConfig:
    """One TLC configuration of an export and what TLC should make of it.

    ``role`` is ``"main"`` (``TypeOK`` and every property expected to hold),
    ``"violation"`` (one property expected to be violated), ``"witness"`` (one
    ``sometimes`` property expected to be reached: TLC's counterexample to
    ``Never<P>`` is the witness), ``"unknown"`` (one property no verdict is known for)
    or ``"happened_before"`` (the invariants that the library's ordering properties
    agree with ``HappenedBefore.tla``'s in every state and, where the spec stores a
    causal past, that it is the happened-before past; no property of the model).
    ``distinct_states`` and ``depth`` are those of a run that explores everything (the
    main configuration; ``None`` when no verdicts of our engine were given), ``steps``
    the length of the shortest counterexample (an invariant violation or a witness, which
    TLC with one worker finds by breadth-first search; ``None`` otherwise).
    """

    file: str
    role: str
    properties: tuple[ExportedProperty, ...]
    expect: str
    distinct_states: int | None = None
    depth: int | None = None
    steps: int | None = None

    @property
    def checks(self) -> list[str]:
        """What the configuration lists, in order: ``TypeOK`` first in the main one, then
        the invariants, then the temporal and action properties."""
        props = ([p.checked for p in self.properties if not p.listed_as_property]
                 + [p.checked for p in self.properties if p.listed_as_property])
        return (["TypeOK"] if self.role == "main" else []) + props

    def entry(self) -> dict[str, Any]:
        """The configuration's entry in the manifest."""
        out: dict[str, Any] = {
            "config": self.file,
            "shows": self.role,
            "properties": [p.name for p in self.properties],
            "checks": self.checks,
            "expect": self.expect,
        }
        if self.distinct_states is not None:
            out["distinct_states"] = self.distinct_states
            out["depth"] = self.depth
        if self.steps is not None:
            out["steps"] = self.steps
        return out


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
    configs: list[TlcConfig] = field(default_factory=list)
    """The main configuration first, then one per violation or witness."""
    protocol: str | None = None
    """The parameterised protocol module's text, where the spec has one
    (:attr:`~ordercheck.tla.adapters.base.Adapter.protocol_module`); ``module`` is then the
    model's small module that extends it."""
    counts: Counts | None = None
    """Our engine's counts of a complete search as TLC should find them on the main
    configuration (:func:`ordercheck.tla.views.our_counts`); ``None`` without our result."""

    @property
    def invariants(self) -> list[str]:
        return [p.checked for p in self.properties if not p.listed_as_property]

    @property
    def temporal(self) -> list[str]:
        """The temporal and action properties the configuration lists as PROPERTY."""
        return [p.checked for p in self.properties if p.listed_as_property]

    @property
    def verdict_configs(self) -> list[TlcConfig]:
        """The configurations after the main one that decide one property each (a
        violation, a witness, an unknown), without the happened-before agreement."""
        return [c for c in self.configs[1:] if c.role != "happened_before"]

    @property
    def happened_before(self) -> TlcConfig | None:
        """The ``Name_happened_before.cfg`` configuration, where the export has one."""
        return next((c for c in self.configs if c.role == "happened_before"), None)

    @property
    def main(self) -> TlcConfig:
        """The main configuration, ``Name.cfg``."""
        return self.configs[0]

    def write(self, directory: str | Path, outputs: Outputs | None = None) -> list[Path]:
        """Write ``Name.tla``, ``Name.cfg``, the other configurations, the manifest and
        the library module into ``directory``
        (staged in ``outputs`` when given, to be put in place with the command's other
        files; see :mod:`ordercheck.checker.api.outputs`)."""
        if outputs is None:
            with Outputs() as own:
                return self.write(directory, own)
        out = Path(directory)
        return [outputs.write_text(out / filename, text) for filename, text in self.files.items()]


def template_environment(first: str | Path | None = None) -> jinja2.Environment:
    """The Jinja2 environment over ``tla/templates`` (undefined names are errors); with
    ``first``, that directory (a user's spec's) is searched before it. One environment
    per directory and process, so each template is compiled once (Jinja2 still reloads
    a template whose file changed)."""
    return _environment(str(first) if first is not None else None)


@functools.lru_cache(maxsize=32)
def _environment(first: str | None) -> jinja2.Environment:
    dirs = [first] if first is not None else []
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


def render_config(export_name: str, model: Model, adapter: Adapter, props: list[ExportedProperty] | tuple,
                  symmetry: bool, *, type_ok: bool = True, purpose: str = "") -> str:
    """The TLC configuration checking ``props`` (with ``TypeOK`` first when ``type_ok``);
    ``purpose`` is the comment line saying what TLC should make of it."""
    template = template_environment().get_template("model.cfg.j2")
    return template.render(
        model_path=Path(model.path).name,
        description=model.description or model.spec.name,
        purpose=purpose,
        constants=adapter.cfg_constants(),
        type_ok=type_ok,
        invariants=[p.checked for p in props if not p.listed_as_property],
        temporal=[p.checked for p in props if p.listed_as_property],
        symmetry=symmetry,
    )


def _verdicts(model: Model, ours: Result | None) -> dict[str, tuple[str | None, int | None]]:
    """Property name -> (expected verdict, shortest counterexample's steps): our engine's
    verdicts when given, else the model file's ``[expect]`` (no steps)."""
    if ours is not None:
        out: dict[str, tuple[str | None, int | None]] = {}
        for name, res in ours.properties.items():
            status = res.status if res.status in ("holds", "violated") else None
            out[name] = (status, len(res.trace) - 1 if res.trace and res.loop_start is None else None)
        return out
    return {p.name: (model.expect.get(p.name), None) for p in model.properties}


def plan_configs(name: str, props: list[ExportedProperty], model: Model, ours: Result | None,
                 counts: Counts | None = None) -> list[TlcConfig]:
    """The export's configurations: the main one (every property expected to hold: an
    invariant or ``eventually`` property that holds, a ``sometimes`` one never reached,
    whose ``Never<P>`` then holds), and one per other property, named for what it shows.
    ``counts`` are the main configuration's expected counts (:func:`ordercheck.tla.views.our_counts`
    of ``ours``)."""
    verdicts = _verdicts(model, ours)
    main: list[ExportedProperty] = []
    others: list[TlcConfig] = []
    for prop in props:
        verdict, steps = verdicts.get(prop.name, (None, None))
        tlc_holds = None if verdict is None else (verdict == "holds") != (prop.kind == "sometimes")
        slug = prop.name.replace("-", "_")
        if tlc_holds:
            main.append(prop)
        elif tlc_holds is None:
            others.append(TlcConfig(f"{name}_unknown_{slug}.cfg", "unknown", (prop,), UNKNOWN))
        elif prop.kind == "sometimes":
            expect = ACTION_VIOLATED if prop.step else INVARIANT_VIOLATED
            others.append(TlcConfig(f"{name}_witness_{slug}.cfg", "witness", (prop,), expect, steps=steps))
        else:
            expect = TEMPORAL_VIOLATED if prop.temporal else ACTION_VIOLATED if prop.step else INVARIANT_VIOLATED
            others.append(TlcConfig(f"{name}_violates_{slug}.cfg", "violation", (prop,), expect,
                                    steps=None if prop.temporal else steps))
    first = TlcConfig(
        f"{name}.cfg", "main", tuple(main), NO_ERROR,
        distinct_states=counts.distinct if counts else None,
        depth=counts.depth if counts else None,
    )
    return [first, *others]


PURPOSE = {
    "main": "checks TypeOK and every property expected to hold: TLC should explore every state and report no error",
    "violation": "checks {checks}, expected to be violated: TLC should stop with its counterexample",
    "witness": "checks {checks}, whose counterexample is the witness of {name}: TLC should stop with it",
    "unknown": "checks {checks}; no verdict is expected (the model file states none)",
    "happened_before": "checks {checks}: the ordering library agrees with HappenedBefore.tla in every state; "
                       "TLC should explore every state and report no error",
}


def happened_before_config(name: str, adapter: Adapter, main: TlcConfig) -> TlcConfig | None:
    """The configuration checking the adapter's :attr:`~ordercheck.tla.adapters.base.Adapter.happened_before`
    invariants, expected to hold in every state (with the main configuration's counts:
    the same spec explored to the end); ``None`` for a spec without any."""
    if not adapter.happened_before:
        return None
    props = tuple(ExportedProperty(inv, "always", inv, inv) for inv in adapter.happened_before)
    return TlcConfig(f"{name}_happened_before.cfg", "happened_before", props, NO_ERROR,
                     distinct_states=main.distinct_states, depth=main.depth)


def manifest(export_name: str, model: Model, configs: list[TlcConfig]) -> str:
    """``Name.manifest.json``: the model, the command that runs TLC on one configuration,
    and each configuration with its expected outcome (see :class:`TlcConfig`)."""
    data = {
        "model": Path(model.path).name,
        "module": f"{export_name}.tla",
        "command": f'java -cp "$TLA2TOOLS_JAR" tlc2.TLC -workers 1 -config CONFIG {export_name}.tla',
        "configs": [c.entry() for c in configs],
    }
    return json.dumps(data, indent=2) + "\n"


def export_model(model: Model, *, symmetry: bool | None = None, ours: Result | None = None) -> Export:
    """Render ``model``. ``symmetry`` overrides the model's setting (the cross-check
    turns it off); a SYMMETRY clause is written only where permuting peers is a true
    symmetry of the model. ``ours``, our engine's result on the model with reductions
    off, gives each configuration its expected outcome and the manifest its state counts;
    without it the model file's ``[expect]`` decides the outcomes and no counts are given."""
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
    protocol = adapter.protocol_module
    mc_header = header
    if protocol is not None:
        header = (
            f"{'-' * 20} MODULE {protocol} {'-' * 20}\n"
            f"(* Exported by ordercheck: the spec {model.spec_name}, for every model of it; a model's own\n"
            f"   module extends this one and gives the constants their values. *)"
        )
    context = {
        "header": header,
        "properties": every,
        "symmetry": use_symmetry,
        "fairness": adapter.fairness(),
        "optional": adapter.optional(),
        "drops": adapter.drops,
        "spec_class": type(model.spec).__name__,
        **adapter.context(),
    }
    env = template_environment(getattr(adapter, "template_dir", None))
    module = env.get_template(adapter.template).render(**context)
    complete = ours is not None and ours.stats.bound is None
    counts = our_counts(adapter, ours) if complete and ours is not None else None
    configs = plan_configs(name, props, model, ours, counts)
    # The agreement configuration, where the module defines what it checks (a user's
    # template that leaves out _properties.tla.j2 does not).
    agreement = happened_before_config(name, adapter, configs[0])
    if agreement is not None and all(f"\n{inv} ==" in module for inv in adapter.happened_before):
        configs.append(agreement)
    protocol_text = None
    if protocol is not None:
        protocol_text = module
        module = env.get_template("mc.tla.j2").render(
            header=mc_header, protocol=protocol, peers=adapter.mc_model_values(),
            definitions=adapter.mc_definitions(), about=adapter.mc_about,
        )
    files = {f"{name}.tla": module}
    if protocol_text is not None:
        files[f"{protocol}.tla"] = protocol_text
    for cfg in configs:
        purpose = PURPOSE[cfg.role].format(checks=", ".join(cfg.checks), name=cfg.properties[0].name if cfg.properties else "")
        files[cfg.file] = render_config(name, model, adapter, cfg.properties, use_symmetry,
                                        type_ok=cfg.role == "main", purpose=purpose)
    files[f"{name}.manifest.json"] = manifest(name, model, configs)
    files[LIBRARY_MODULE] = (TEMPLATES / LIBRARY_MODULE).read_text(encoding="utf-8")
    if "INSTANCE HappenedBefore" in (protocol_text or module):  # beside every module that instantiates it
        files[HAPPENED_BEFORE_MODULE] = (TEMPLATES / HAPPENED_BEFORE_MODULE).read_text(encoding="utf-8")
    return Export(name, module, files[f"{name}.cfg"], props, use_symmetry, adapter, files, configs, protocol_text,
                  counts)

"""The ``[evidence]`` table of a model file: why a "holds" is not vacuous.

A model that expects a property to hold claims something about a protocol, and the
claim is only worth as much as the configuration's ability to break it. The table names,
per property expected to hold, one piece of evidence that it could fail here::

    [evidence]
    causal = { mutant = "bss-mutant-no-causal-condition.toml" }
    total = { witness = "total_race" }

- ``mutant``: a sibling model file (a path relative to this model's directory): the
  same spec with the same constants but for the spec's ablation flags
  (:meth:`ordercheck.checker.Spec.ablations`, at least one of them different) and the constants
  that only shape an ablation (:attr:`ordercheck.checker.Spec.ablation_parameters`); it expects
  the property ``violated``.
- ``witness``: a ``sometimes`` property of the spec, checked by this model and expected
  to hold: the run it finds reaches the situation the property constrains. One of the
  library's witnesses (:mod:`ordercheck.specs.witnesses`) backs only the ordering properties it
  stands for (:data:`ordercheck.specs.witnesses.WITNESSES_FOR`).

:func:`evidence_table` checks the table's shape and what the file alone can show;
:func:`check_mutants` loads each mutant and checks it against the model (every model
file read by :func:`ordercheck.checker.loading.modelfile.load_model`, built-in or not). A mutant's
own mutants are not loaded in turn (no chains, no cycles): each is checked when that
file is loaded itself. That a mutant *does* violate is a run:
``check --with-evidence`` (:func:`evidence_mutants`, :func:`judge_evidence`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.evidence import EvidenceCheck
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.result import Result
from ordercheck.checker.api.spec import Property
from ordercheck.specs.witnesses import WITNESSES, WITNESSES_FOR

KINDS = ("mutant", "witness")

ORDERING = ("fifo", "causal", "integrity", "total", "total_global", "total_prefix", "global_lock", "synchronous")
"""The ordering properties whose "holds" needs evidence in a built-in model."""


def evidence_table(
    table: Any,
    where: str,
    expect: dict[str, str],
    available: dict[str, Property],
    checked: list[str],
) -> dict[str, dict[str, str]]:
    """Validate ``[evidence]``; returns ``{property: {"mutant" | "witness": name}}``.

    ``where`` is the model's path (a sibling is looked up beside it when it names an
    existing file), ``expect`` its expectations, ``available`` the spec's properties by
    name and ``checked`` the names the model checks. :class:`InputError` names the
    first entry at fault.
    """
    if not isinstance(table, dict):
        raise InputError(where, "evidence", 'expected a table [evidence] of property = { mutant = "FILE.toml" } '
                                            'or { witness = "PROPERTY" }')
    here = Path(where)
    out: dict[str, dict[str, str]] = {}
    for prop, entry in table.items():
        field = f"evidence.{prop}"
        if prop not in available:
            raise InputError(where, field, f"the spec has no property {prop!r}")
        if expect.get(prop) != "holds":
            raise InputError(where, field, f"{prop} is not expected to hold here; evidence backs a \"holds\" expectation")
        if not isinstance(entry, dict) or len(entry) != 1 or next(iter(entry)) not in KINDS:
            raise InputError(where, field, 'expected one of { mutant = "FILE.toml" } or { witness = "PROPERTY" }')
        kind, name = next(iter(entry.items()))
        if not isinstance(name, str) or not name:
            raise InputError(where, f"{field}.{kind}", f"expected a non-empty string, got {name!r}")
        if kind == "mutant":
            _check_mutant(here, where, f"{field}.mutant", name)
        else:
            _check_witness(where, f"{field}.witness", prop, name, expect, available, checked)
        out[prop] = {kind: name}
    return out


def _check_mutant(here: Path, where: str, field: str, name: str) -> None:
    if not name.endswith(".toml"):
        raise InputError(where, field, f"expected a model file name ending in .toml, got {name!r}")
    if "\0" in name:
        raise InputError(where, field, f"{name!r} is not a file name (it holds a NUL character)")
    if here.is_file():
        sibling = here.parent / name
        try:
            itself = sibling.resolve() == here.resolve()
            found = sibling.is_file()
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symbolic link that loops
            raise InputError(where, field, f"{name[:80]!r} cannot be looked up ("
                             f"{'a symbolic link that loops' if isinstance(exc, RuntimeError) else exc.strerror or exc})") from None
        if itself:
            raise InputError(where, field, "names this model itself; the evidence must be another model")
        if not found:
            raise InputError(where, field, f"no model file {name!r} beside this one")


LIBRARY_WITNESSES = tuple(w.name for w in WITNESSES)
"""The library's witnesses (:mod:`ordercheck.specs.witnesses`), which stand only for the ordering
properties :data:`ordercheck.specs.witnesses.WITNESSES_FOR` names."""

LIBRARY_BY_NAME: dict[str, Property] = {w.name: w for w in WITNESSES}
"""The library's witnesses by name: a spec's property of one of these names is the
library's only when it is that property (a ``sometimes`` of one's own named
``causal_race`` stands for nothing)."""

WITNESS_HINT = {
    name: " (a spec offers the library's witnesses by listing ordercheck.specs.witnesses.WITNESSES in its properties())"
    for name in LIBRARY_WITNESSES
}
"""What a message about a missing library witness adds: how a spec offers it."""


def _check_witness(
    where: str, field: str, backed: str, name: str, expect: dict[str, str], available: dict[str, Property],
    checked: list[str],
) -> None:
    prop = available.get(name)
    if prop is None:
        raise InputError(where, field, f"the spec has no property {name!r}{WITNESS_HINT.get(name, '')}")
    if prop.kind != "sometimes":
        raise InputError(where, field, f"{name} is an {prop.kind} property; a witness is a sometimes property")
    if name not in checked or expect.get(name) != "holds":
        raise InputError(where, field, f"a witness must be checked and expected to hold here: add {name} = \"holds\" to [expect]")
    if name in LIBRARY_WITNESSES and prop != LIBRARY_BY_NAME[name]:
        raise InputError(where, field, f"the spec's {name} is its own property, not the library's "
                                       f"(ordercheck.specs.witnesses.{name.upper()}); list the library's in properties(), "
                                       "or name your own witness otherwise")
    if backed in ORDERING and name not in WITNESSES_FOR.get(backed, ()):
        fits = WITNESSES_FOR.get(backed, ())
        instead = f"its witnesses: {', '.join(fits)}" if fits else "it has no witness; give a mutant"
        if name not in LIBRARY_WITNESSES:
            use = f"name {' or '.join(fits)}, or give a mutant" if fits else "it has no witness; give a mutant"
            raise InputError(where, field, f"{name} is not a library witness (ordercheck.specs.witnesses); only those are "
                                           f"evidence for an ordering property such as {backed} ({use})")
        raise InputError(where, field, f"{name} is not a witness for {backed} ({instead})")


def check_mutants(model: Model, load: Callable[[Path], Model]) -> None:
    """Check each mutant ``model``'s ``[evidence]`` names against the model.

    ``load`` reads a mutant's file (without loading *its* mutants in turn). A mutant
    must check the same spec class, have the same constants but for the spec's
    ablation flags and :attr:`~ordercheck.checker.Spec.ablation_parameters`, differ in at least
    one ablation flag, and expect the property it backs ``violated``. Nothing is
    checked when the model's path is not a file (a model built in memory).
    :class:`InputError` names the model file and the field ``evidence.PROP.mutant``.
    """
    here = Path(model.path)
    if not here.is_file():
        return
    cls = type(model.spec)
    flags = cls.ablations()
    free = {*flags, *cls.ablation_parameters}
    not_bool = [c for c in cls.constants if c.ablation and c.kind is not bool]
    if not_bool and any("mutant" in entry for entry in model.evidence.values()):
        bad = not_bool[0]
        prop = next(p for p, entry in model.evidence.items() if "mutant" in entry)
        raise InputError(model.path, f"evidence.{prop}.mutant",
                         f"{model.spec_name} marks constant {bad.name!r} ({bad.kind.__name__}) as an ablation; an "
                         "ablation flag is a bool that switches a step off, so a mutant may not change it")
    for prop, entry in model.evidence.items():
        name = entry.get("mutant")
        if name is None:
            continue
        field = f"evidence.{prop}.mutant"
        try:
            mutant = load(here.parent / name)
        except InputError as exc:
            raise InputError(model.path, field, f"{name} cannot be loaded ({exc.line()})") from None
        if type(mutant.spec) is not cls:
            raise InputError(model.path, field, f"{name} checks spec {mutant.spec_name!r}, not {model.spec_name!r}; "
                                                "a mutant is this model's spec with ablation flags switched")
        mine, theirs = model.constants, mutant.constants
        listed = ", ".join(flags) if flags else f"{model.spec.name} declares none"
        for key in sorted(mine.keys() | theirs.keys()):
            if key not in free and not same_value(mine.get(key), theirs.get(key)):
                raise InputError(model.path, field,
                                 f"{name} differs in constant {key!r} ({mine.get(key)!r} vs {theirs.get(key)!r}); "
                                 f"a mutant may change only ablation flags ({listed})")
        if all(mine.get(flag) == theirs.get(flag) for flag in flags):
            raise InputError(model.path, field,
                             f"{name} switches no ablation flag ({listed}): it is this configuration again, "
                             f"which cannot both hold and violate {prop}")
        if mutant.expect.get(prop) != "violated":
            got = mutant.expect.get(prop)
            said = f"expects {prop} {got!r}" if got else f"has no expectation for {prop}"
            raise InputError(model.path, field, f"{name} {said}; a mutant must expect {prop} = \"violated\"")


def same_value(a: Any, b: Any) -> bool:
    """Whether two constants' values are the same, types included at every level: ``1``,
    ``1.0`` and ``true`` are equal in Python but not the same constant (a spec may read
    them differently)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return bool(a == b)


def mutant_path(model: Model, name: str) -> Path:
    """The file of the mutant ``name`` named by ``model``'s ``[evidence]``."""
    return Path(model.path).parent / name


def evidence_mutants(models: list[Model]) -> list[Path]:
    """The mutant files the ``[evidence]`` of ``models`` names, each once (by resolved
    path), in the order first named."""
    seen: dict[Path, Path] = {}
    for model in models:
        for entry in model.evidence.values():
            if "mutant" in entry:
                path = mutant_path(model, entry["mutant"])
                seen.setdefault(path.resolve(), path)
    return list(seen.values())


def judge_evidence(models: list[Model], results: dict[Path, Result]) -> list[EvidenceCheck]:
    """One :class:`EvidenceCheck` per ``[evidence]`` entry of ``models``.

    ``results`` maps each resolved model path, the models' and their mutants', to its
    result. A mutant's status is its verdict on the property it backs (``unknown`` if
    its result lacks the property); a witness's, the model's own verdict on it."""
    out: list[EvidenceCheck] = []
    for model in models:
        own = results[Path(model.path).resolve()]
        for prop, entry in model.evidence.items():
            (kind, name), = entry.items()
            if kind == "mutant":
                verdict = results[mutant_path(model, name).resolve()].properties.get(prop)
                status = verdict.status if verdict is not None else "unknown"
                out.append(EvidenceCheck(model.path, prop, "mutant", name, status, "violated"))
            else:
                verdict = own.properties.get(name)
                status = verdict.status if verdict is not None else "unknown"
                out.append(EvidenceCheck(model.path, prop, "witness", name, status, "holds"))
    return out

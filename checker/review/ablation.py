"""The ablation run: which step of an algorithm protects which property.

A spec names the steps a reviewer may question as boolean constants
(``Spec.ablations()``). For a model, :func:`run_ablation` checks the full algorithm
(every ablation flag on) and then each flag switched off alone, against the model's
properties, and returns the results for :mod:`ordercheck.reports` to tabulate: a property the
full algorithm keeps and a mutant breaks is protected by the step switched off, and
the mutant's shortest counterexample shows how.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.model import Model
from ordercheck.checker.api.result import Result
from ordercheck.checker.engine.run import Options, check_model, resume_where_saved, variant_options
from ordercheck.checker.loading.modelfile import model_from_dict


@dataclass
class AblationRun:
    """The full algorithm's result, then ``(flag, what the step does, result)`` per flag."""

    model: str
    spec: str
    baseline: Result
    mutants: list[tuple[str, str, Result]]
    note: str = ""


def mutant_model(model: Model, flags_off: set[str], label: str) -> Model:
    """``model`` with every ablation flag on except ``flags_off``, and no ``[expect]``
    or ``[evidence]`` (the mutants' verdicts are what the table reports, not what a
    file pins)."""
    data = copy.deepcopy(model.raw)
    constants = data.setdefault("constants", {})
    for flag in type(model.spec).ablations():
        constants[flag] = flag not in flags_off
    data.pop("expect", None)
    data.pop("evidence", None)  # it backs the file's expectations, which a mutant drops
    check = data.setdefault("check", {})
    check["properties"] = [p.name for p in model.properties]
    return model_from_dict(data, label)


def run_ablation(
    model: Model,
    options: Options | None = None,
    on_result: Callable[[str | None, Result], None] | None = None,
    check: Callable[[Model, Options], Result] = check_model,
) -> AblationRun:
    """Check the full algorithm, then each ablation flag switched off alone.

    ``on_result(flag, result)`` is called after each check (``flag`` ``None`` for the
    full algorithm), for progress output. ``check`` runs one check (the local engine by
    default; the command line passes one that also runs Spark for ``--engine spark``).
    Each check keeps its checkpoints apart (:func:`ordercheck.checker.engine.run.variant_options`).
    :class:`InputError` if the spec has no ablation flags.
    """
    options = options or Options()
    flags = type(model.spec).ablations()
    if not flags:
        raise InputError(model.path, "spec", f"{model.spec_name} names no ablation steps, so there is nothing to switch off")
    off_in_file = [f for f in flags if model.constants.get(f) is False]
    note = ""
    if off_in_file:
        note = (
            f"The model file switches {', '.join(off_in_file)} off; the table starts from the full algorithm "
            "with every step on."
        )
    base = check(mutant_model(model, set(), model.path), variant_options(options, None))
    if on_result:
        on_result(None, base)
    docs = {c.name: c.doc for c in type(model.spec).constants}
    mutants = []
    for flag in flags:
        result = check(mutant_model(model, {flag}, model.path),
                       resume_where_saved(variant_options(options, flag), model.path))
        if on_result:
            on_result(flag, result)
        mutants.append((flag, docs.get(flag, ""), result))
    return AblationRun(model.path, model.spec_name, base, mutants, note)

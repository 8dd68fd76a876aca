"""Sweeps: every model of a suite and every ablation mutant, one check per task.

``ordercheck sweep models/ -o DIR`` checks each model file and, for each one, every
mutant made by switching one of its spec's ablation flags off (:meth:`Spec.ablations`;
a flag the model already has off makes no new mutant). With ``--engine spark`` each
check is a Spark task running the local engine inside it; with ``--engine local`` they
run one after the other here. Mutants carry no expectations: their verdicts are
findings. The results are gathered into one table (see :mod:`ordercheck.checker.spark.sweep_table`);
the ``sweep`` command is in :mod:`ordercheck.checker.cli.sweep`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ordercheck.checker.api.model import Model
from ordercheck.checker.loading.modelfile import model_from_dict


@dataclass(frozen=True)
class SweepTask:
    """One check of a sweep: a model file, optionally with one ablation flag off."""

    model: str  # the model file's path
    variant: str  # "" for the model itself, else the ablation flag switched off
    raw: dict[str, Any]  # the model file's parsed TOML
    spec_ref: str = ""  # the canonical reference of its spec (ordercheck.checker.loading.specref)

    def build(self, spec_class: type | None = None) -> Model:
        """The model this task checks (for a mutant: the flag off, no expectations);
        ``spec_class`` stands for the class :attr:`spec_ref` names (an executor's copy)."""
        spec = (spec_class, self.spec_ref) if spec_class is not None else None
        if not self.variant:
            return model_from_dict(self.raw, self.model, spec)
        base = model_from_dict(self.raw, self.model, spec)
        raw = copy.deepcopy(self.raw)
        raw.setdefault("constants", {})[self.variant] = False
        raw["check"] = dict(raw.get("check", {}), properties=[p.name for p in base.properties])
        raw["expect"] = {}
        raw.pop("evidence", None)  # it backs the expectations the mutant drops
        return model_from_dict(raw, self.model, spec)


def sweep_tasks(models: Sequence[Model], *, ablations: bool = True) -> list[SweepTask]:
    """The tasks of a sweep, in a fixed order: each model, then its mutants."""
    from ordercheck.checker.loading.specref import reference_of

    tasks = []
    for model in models:
        ref = reference_of(type(model.spec))
        tasks.append(SweepTask(model.path, "", model.raw, ref))
        if not ablations:
            continue
        for flag in type(model.spec).ablations():
            if model.constants.get(flag) is False:
                continue
            tasks.append(SweepTask(model.path, flag, model.raw, ref))
    return tasks


def run_task(task: SweepTask, options: Any, spec_class: type | None = None, later: bool = False) -> dict[str, Any]:
    """Check one task with the local engine; its Result as JSON, with ``variant``
    (``spec_class`` as for :meth:`SweepTask.build`). A ``later`` task of a resumed
    sweep without a checkpoint starts afresh (:func:`ordercheck.checker.engine.run.resume_where_saved`)."""
    from ordercheck.checker.engine.run import check_model, resume_where_saved, variant_options

    options = variant_options(options, task.variant)
    if later:
        options = resume_where_saved(options, task.model)
    result = check_model(task.build(spec_class), options)
    data = result.to_json()
    data["variant"] = task.variant
    return data


def _spark_task(options: Any, inject: frozenset[str], item: tuple[int, SweepTask]) -> tuple[int, dict[str, Any]]:
    from ordercheck.checker.spark.ship import task_spec_class
    from ordercheck.checker.spark.tasks import maybe_fail

    index, task = item
    data = run_task(task, options, task_spec_class(task.spec_ref) if task.spec_ref else None)
    maybe_fail(inject, "sweep")
    return index, data


def run_sweep(tasks: Sequence[SweepTask], options: Any, *, engine: str = "local", master: str = "local[*]") -> list[dict[str, Any]]:
    """Run every task; results (Result JSON with ``variant``) in task order.

    ``options`` is a :class:`ordercheck.checker.engine.run.Options` for the local engine inside each task.
    """
    if engine == "local":
        return [run_task(t, options, later=i > 0) for i, t in enumerate(tasks)]
    from functools import partial

    from ordercheck.checker.spark.bfs import SparkOptions, job_error
    from ordercheck.checker.spark.session import get_spark
    from ordercheck.checker.spark.ship import ship_specs, task_spec_class

    spark_options = SparkOptions(master=master)
    sc = get_spark(master)
    ship_specs(sc, {task_spec_class(t.spec_ref) for t in tasks if t.spec_ref})  # users' spec files, to the executors
    rdd = sc.parallelize(list(enumerate(tasks)), max(1, len(tasks)))
    try:
        out = rdd.map(partial(_spark_task, options, spark_options.inject_failures)).collect()
    except Exception as exc:
        raise job_error(exc) from None
    return [data for _i, data in sorted(out, key=lambda pair: pair[0])]

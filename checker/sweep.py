"""Sweeps: every model of a suite and every ablation mutant, one check per task.

``ordercheck sweep models/ -o DIR`` checks each model file and, for each one, every
mutant made by switching one of its spec's ablation flags off (:meth:`Spec.ablations`;
a flag the model already has off makes no new mutant). With ``--engine spark`` each
check is a Spark task running the local engine inside it; with ``--engine local`` they
run one after the other here. Mutants carry no expectations: their verdicts are
findings. The results are gathered into one table (see :mod:`checker.sweep_table`).
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from checker.model import Model, model_from_dict
from checker.result import Result, combined_exit_code
from checker.sweep_table import rows_from_result, write_sweep


@dataclass(frozen=True)
class SweepTask:
    """One check of a sweep: a model file, optionally with one ablation flag off."""

    model: str  # the model file's path
    variant: str  # "" for the model itself, else the ablation flag switched off
    raw: dict[str, Any]  # the model file's parsed TOML

    def build(self) -> Model:
        """The model this task checks (for a mutant: the flag off, no expectations)."""
        if not self.variant:
            return model_from_dict(self.raw, self.model)
        base = model_from_dict(self.raw, self.model)
        raw = copy.deepcopy(self.raw)
        raw.setdefault("constants", {})[self.variant] = False
        raw["check"] = dict(raw.get("check", {}), properties=[p.name for p in base.properties])
        raw["expect"] = {}
        raw.pop("evidence", None)  # it backs the expectations the mutant drops
        return model_from_dict(raw, self.model)


def sweep_tasks(models: Sequence[Model], *, ablations: bool = True) -> list[SweepTask]:
    """The tasks of a sweep, in a fixed order: each model, then its mutants."""
    tasks = []
    for model in models:
        tasks.append(SweepTask(model.path, "", model.raw))
        if not ablations:
            continue
        for flag in type(model.spec).ablations():
            if model.constants.get(flag) is False:
                continue
            tasks.append(SweepTask(model.path, flag, model.raw))
    return tasks


def run_task(task: SweepTask, options: Any) -> dict[str, Any]:
    """Check one task with the local engine; its Result as JSON, with ``variant``."""
    from checker.run import check_model

    result = check_model(task.build(), options)
    data = result.to_json()
    data["variant"] = task.variant
    return data


def _spark_task(options: Any, inject: frozenset[str], item: tuple[int, SweepTask]) -> tuple[int, dict[str, Any]]:
    from checker.spark_tasks import maybe_fail

    index, task = item
    data = run_task(task, options)
    maybe_fail(inject, "sweep")
    return index, data


def run_sweep(tasks: Sequence[SweepTask], options: Any, *, engine: str = "local", master: str = "local[*]") -> list[dict[str, Any]]:
    """Run every task; results (Result JSON with ``variant``) in task order.

    ``options`` is a :class:`checker.run.Options` for the local engine inside each task.
    """
    if engine == "local":
        return [run_task(t, options) for t in tasks]
    from functools import partial

    from checker.spark_bfs import SparkOptions, job_error
    from checker.spark_session import get_spark

    spark_options = SparkOptions(master=master)
    sc = get_spark(master)
    rdd = sc.parallelize(list(enumerate(tasks)), max(1, len(tasks)))
    try:
        out = rdd.map(partial(_spark_task, options, spark_options.inject_failures)).collect()
    except Exception as exc:
        raise job_error(exc) from None
    return [data for _i, data in sorted(out, key=lambda pair: pair[0])]


def add_commands(main: click.Group) -> None:
    """Register ``ordercheck sweep`` on the command group."""
    from checker.cli import engine_options, load_models, options_from

    @main.command()
    @click.argument("models", nargs=-1, required=True, metavar="MODEL.toml|DIR ...")
    @engine_options
    @click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False),
                  help="Write sweep.parquet, sweep.json and results.json here.")
    @click.option("--no-ablations", is_flag=True, help="Check the models only, not their mutants.")
    def sweep(models: tuple[str, ...], out_dir: str, no_ablations: bool, **kw: Any) -> None:
        """Check every model and every ablation mutant; write one results table."""
        from dataclasses import replace

        loaded = load_models(list(models))
        options = replace(options_from(kw), engine="local", progress=False)
        tasks = sweep_tasks(loaded, ablations=not no_ablations)
        click.echo(f"sweep: {len(tasks)} checks ({len(loaded)} models), engine {kw['engine']}", err=True)
        data = run_sweep(tasks, options, engine=kw["engine"], master=kw["master"])
        rows = [row for d in data for row in rows_from_result(d, engine=kw["engine"])]
        paths = write_sweep(out_dir, rows, data)
        for d in data:
            print_line(d)
        base = [Result.from_json(d) for d in data if not d["variant"]]
        bad = [r for r in base if r.exit_code() != 0]
        click.echo(f"\n{len(data)} checks: {len(base)} models ({len(base) - len(bad)} as expected), "
                   f"{len(data) - len(base)} mutants; table in {', '.join(str(p) for p in paths)}")
        sys.exit(combined_exit_code(base))


def print_line(data: dict[str, Any]) -> None:
    """One line per check: model, variant, states, and the verdict of each property."""
    st = data["stats"]
    name = Path(data["model"]).stem + (f" -{data['variant']}" if data["variant"] else "")
    verdicts = []
    for prop, p in data["properties"].items():
        mark = p["status"]
        if p["status"] == "violated" and p.get("trace"):
            mark += f"({len(p['trace']) - 1})"
        if p.get("expected") and p["expected"] != p["status"]:
            mark += "!"
        verdicts.append(f"{prop}={mark}")
    click.echo(f"{name:<44} {st['distinct_states']:>9,} states  {' '.join(verdicts)}")

"""``ordercheck sweep``: every model and every ablation mutant, one results table
(the runs: :mod:`ordercheck.checker.spark.sweep`; the table: :mod:`ordercheck.checker.spark.sweep_table`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ordercheck.checker.api.exits import exit_after_verdicts
from ordercheck.checker.api.output_paths import check_outputs, model_inputs, outputs_of
from ordercheck.checker.api.result import Result, combined_exit_code, verdict_word
from ordercheck.checker.cli.common import engine_options, load_models, options_from, work_dir_outputs
from ordercheck.checker.spark.session import spark_jobs
from ordercheck.checker.spark.sweep import run_sweep, sweep_tasks
from ordercheck.checker.spark.sweep_table import rows_from_result, write_sweep


def add_commands(main: click.Group) -> None:
    """Register ``ordercheck sweep`` on the command group."""

    @main.command()
    @click.argument("models", nargs=-1, required=True, metavar="MODEL.toml|DIR ...")
    @engine_options
    @click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False),
                  help="Write sweep.parquet, sweep.json and results.json here.")
    @click.option("--no-ablations", is_flag=True, help="Check the models only, not their mutants.")
    def sweep(models: tuple[str, ...], out_dir: str, no_ablations: bool, **kw: Any) -> None:
        """Check every model and every ablation mutant; write one results table."""
        from contextlib import nullcontext
        from dataclasses import replace

        loaded = load_models(list(models))
        variants = ("full", *(f"without-{f}" for m in loaded for f in m.spec.ablations()))
        check_outputs([*outputs_of(("-o", out_dir, True, SWEEP_FILES)), *work_dir_outputs(kw, loaded, variants)],
                      model_inputs(loaded))
        options = replace(options_from(kw), engine="local", progress=False)
        tasks = sweep_tasks(loaded, ablations=not no_ablations)
        click.echo(f"sweep: {len(tasks)} checks ({len(loaded)} models), engine {kw['engine']}", err=True)
        with spark_jobs() if kw["engine"] == "spark" else nullcontext():  # a signal cancels Spark's jobs (130/143)
            data = run_sweep(tasks, options, engine=kw["engine"], master=kw["master"])
        rows = [row for d in data for row in rows_from_result(d, engine=kw["engine"])]
        paths = write_sweep(out_dir, rows, data)
        for d in data:
            print_line(d)
        base = [Result.from_json(d) for d in data if not d["variant"]]
        bad = [r for r in base if r.exit_code() != 0]
        click.echo(f"\n{len(data)} checks: {len(base)} models ({len(base) - len(bad)} as expected), "
                   f"{len(data) - len(base)} mutants; table in {', '.join(str(p) for p in paths)}")
        exit_after_verdicts(combined_exit_code(base))


SWEEP_FILES = ("sweep.parquet", "sweep.json", "results.json")
"""What ``sweep -o DIR`` writes (:func:`ordercheck.checker.spark.sweep_table.write_sweep`)."""


def print_line(data: dict[str, Any]) -> None:
    """One line per check: model, variant, states, and the verdict of each property
    (``reached``/``unreached`` for a witness, as in every other artifact)."""
    st = data["stats"]
    name = Path(data["model"]).stem + (f" -{data['variant']}" if data["variant"] else "")
    verdicts = []
    for prop, p in data["properties"].items():
        mark = verdict_word(p.get("kind"), p["status"]) or p["status"]  # reached/unreached for a witness
        if p["status"] == "violated" and p.get("trace"):
            mark += f"({len(p['trace']) - 1})"
        if p.get("expected") and p["expected"] != p["status"]:
            mark += "!"
        verdicts.append(f"{prop}={mark}")
    click.echo(f"{name:<44} {st['distinct_states']:>9,} states  {' '.join(verdicts)}")

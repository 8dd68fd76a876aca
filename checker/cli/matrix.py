"""``ordercheck matrix MODELS... [--json FILE]``: the protocol x property table."""

from __future__ import annotations

from typing import Any

import click

from ordercheck.checker.api.exits import exit_after_verdicts
from ordercheck.checker.api.output_paths import check_outputs, model_inputs, outputs_of
from ordercheck.checker.api.result import write_json_atomic
from ordercheck.checker.cli.common import load_models
from ordercheck.checker.review.matrix import build_matrix, render_text


@click.command(name="matrix")
@click.argument("models", nargs=-1, required=True, metavar="MODEL.toml|DIR ...")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the table as JSON here.")
@click.option("--time-limit", type=click.FloatRange(min=0, min_open=True), help="Per-model time limit in seconds.")
@click.option("--max-states", type=click.IntRange(min=1), help="Per-model bound on distinct states.")
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
def matrix_command(models: tuple[str, ...], json_path: str | None, **kw: Any) -> None:
    """Check models with the local engine and print the model x property verdicts.

    One table per spec, guarantee models before mutants, each cell saying what its
    verdict means against the model's [expect]; no line is wider than 120 characters.

    Exit code as for `check`: 0 when every verdict is as expected, 1 when one is not,
    3 when a bound left one unknown.
    """
    from ordercheck.checker.engine.run import Options, check_model

    loaded = load_models(list(models))
    check_outputs(outputs_of(("--json", json_path, False, ())), model_inputs(loaded))
    options = Options(
        max_states=kw["max_states"],
        time_limit=kw["time_limit"],
        progress=not kw["quiet"],
    )
    results = [check_model(m, options) for m in loaded]
    table = build_matrix(results, models=loaded)
    click.echo(render_text(table))
    if json_path:
        write_json_atomic(json_path, table.to_json())
    exit_after_verdicts(table.exit_code)

"""Report commands: ``report``, ``ablate``, ``graph``, and ``check``'s ``--report``/``--junit``.

:mod:`checker.cli.app` calls :func:`add_commands`; ``check`` calls :func:`emit_outputs`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from checker.api.errors import InputError
from checker.api.result import Result, combined_exit_code, write_json_atomic
from checker.cli.common import check_one, engine_options, options_from


def emit_outputs(results: list[Result], report_dir: str | None, junit_path: str | None) -> None:
    """Write ``check``'s HTML report directory and JUnit XML file, if asked for."""
    if junit_path:
        write_junit(results, junit_path)
    if report_dir:
        write_html(list(results), report_dir)


def write_junit(results: list[Result], path: str) -> None:
    from reports.junit import junit_xml

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(junit_xml(results), encoding="utf-8")
    click.echo(f"JUnit XML: {target}")


def write_html(items: list[Any], out_dir: str) -> None:
    from reports import payload_of
    from reports.html import write_report
    from reports.view import build_report

    index = write_report(build_report(items), out_dir, payload_of(items))
    click.echo(f"report: {index}")


def add_commands(main: click.Group) -> None:
    """Register the report commands on the ``ordercheck`` group."""
    @main.command()
    @click.argument("results", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="RESULT.json ...")
    @click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Report directory.")
    @click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Also write JUnit XML here.")
    def report(results: tuple[str, ...], out_dir: str, junit_path: str | None) -> None:
        """Render `check --json` and `ablate --json` results as an HTML report (with
        Markdown, ITF traces and ShiViz logs beside it)."""
        from reports import load_items
        from reports.view import Ablation

        items = load_items(list(results))
        write_html(items, out_dir)
        if junit_path:
            write_junit([i for i in items if not isinstance(i, Ablation)], junit_path)

    @main.command()
    @click.argument("model_path", metavar="MODEL.toml")
    @engine_options
    @click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the ablation run as JSON here.")
    @click.option("--report", "report_dir", type=click.Path(file_okay=False), help="Write an HTML report here.")
    def ablate(model_path: str, json_path: str | None, report_dir: str | None, **kw: Any) -> None:
        """The ablation table: switch each step of the algorithm off in turn and show
        which properties break, with the shortest counterexample for each."""
        from checker.loading.modelfile import load_model
        from checker.review.ablation import run_ablation
        from reports.ablation_text import ablation_table
        from reports.view import Ablation

        model = load_model(model_path)
        options = options_from(kw)

        def progress(flag: str | None, result: Result) -> None:
            what = "full algorithm" if flag is None else f"without {flag}"
            st = result.stats
            click.echo(f"  {what}: {st.distinct_states:,} states, {st.seconds:.2f}s", err=True)

        run = run_ablation(model, options, on_result=progress, check=check_one)
        record = Ablation(run.model, run.spec, run.baseline, run.mutants, run.note)
        click.echo(ablation_table(record))
        if json_path:
            write_json_atomic(json_path, record.to_json())
        if report_dir:
            write_html([record], report_dir)
        results = [run.baseline] + [r for _f, _d, r in run.mutants]
        sys.exit(3 if combined_exit_code(results) == 3 else 0)

    @main.command()
    @click.argument("model_path", metavar="MODEL.toml")
    @click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output directory.")
    @click.option("--max-states", type=click.IntRange(min=1), default=2000, show_default=True,
                  help="Refuse models with more reachable states than this (at most 100,000).")
    def graph(model_path: str, out_dir: str, max_states: int) -> None:
        """Export a small model's state graph as DOT and GraphML, with every
        counterexample and witness path marked."""
        from checker.engine.run import Options, check_model
        from checker.loading.modelfile import load_model
        from reports.stategraph import HARD_LIMIT, GraphTooLarge, mark_trace, state_graph, write_dot, write_graphml

        if max_states > HARD_LIMIT:
            raise InputError("--max-states", "", f"{max_states:,} is above the limit of {HARD_LIMIT:,} states for a drawing")
        model = load_model(model_path)
        try:
            g, ids = state_graph(model.spec, max_states)
        except GraphTooLarge as exc:
            click.echo(
                f"ordercheck: {model.path} has more than {exc.limit:,} reachable states; a state graph is "
                f"meant for small models. Raise --max-states (up to {HARD_LIMIT:,}) or pick a smaller model.",
                err=True,
            )
            sys.exit(2)
        result = check_model(model, Options(progress=False))
        marked = []
        for name, p in result.properties.items():
            if p.trace:
                mark_trace(g, ids, model.spec, name, p.trace)
                marked.append(f"{name} ({len(p.trace) - 1} steps)")
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        stem = Path(model.path).stem
        write_dot(g, out / f"{stem}.dot", f"{stem}: {g.number_of_nodes()} states")
        write_graphml(g, out / f"{stem}.graphml")
        click.echo(f"{model.path}: {g.number_of_nodes():,} states, {g.number_of_edges():,} transitions")
        click.echo(f"  marked traces: {', '.join(marked) if marked else 'none'}")
        click.echo(f"  wrote {out / (stem + '.dot')} and {out / (stem + '.graphml')}")

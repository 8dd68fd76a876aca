"""Report commands: ``report``, ``ablate``, ``graph``, and ``check``'s ``--report``/``--junit``.

:mod:`ordercheck.checker.cli.app` calls :func:`add_commands`; ``check`` calls :func:`emit_outputs`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NamedTuple

import click

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.evidence import EvidenceCheck
from ordercheck.checker.api.exits import exit_after_verdicts
from ordercheck.checker.api.output_paths import Input, check_outputs, model_inputs, outputs_of
from ordercheck.checker.api.outputs import Outputs, naming
from ordercheck.checker.api.result import Result, combined_exit_code
from ordercheck.checker.cli.common import check_one, engine_options, options_from, work_dir_outputs

REPORT_ENTRIES = ("index.html", "matrix.html", "report.md", "results.json", "traces", "summary.md")
"""What a report directory holds (:func:`ordercheck.reports.html.write_report`): what a new report
replaces, or removes when it has no such entry itself."""


def emit_outputs(results: list[Result], report_dir: str | None, junit_path: str | None,
                 json_path: str | None = None, payload: Any = None, evidence: list[EvidenceCheck] | None = None,
                 quiet: bool = False, summary: Summary | None = None) -> None:
    """Write ``check``'s HTML report directory, JUnit XML file and JSON file, those asked
    for, all or nothing: each is staged, and the JSON file, staged last, is the last
    put in place (see :mod:`ordercheck.checker.api.outputs`). ``evidence`` (``--with-evidence``)
    goes into the JUnit XML as test cases. ``summary`` (``--summary``, read before the
    search by :func:`summary_of`) adds ``summary.md`` to the report directory, as
    ``report --summary`` does. With a report, the path of each trace page follows the
    index's (with ``quiet``, those of unexpected verdicts, and a count of the rest), so
    a CI log leads straight to the page of a failure."""
    pages: list[TracePage] = []
    with Outputs() as out:
        junit = stage_junit(out, results, junit_path, evidence) if junit_path else None
        write_summary = summary.writer(list(results)) if summary is not None else None
        index = stage_html(out, list(results), report_dir, pages=pages, summary=write_summary) if report_dir else None
        if json_path:
            out.write_json(json_path, payload)
    if junit is not None:
        click.echo(f"JUnit XML: {junit}")
    if index is not None:
        click.echo(f"report: {index}")
        if summary is not None and report_dir:
            click.echo(f"summary: {Path(report_dir) / 'summary.md'}")
        print_trace_pages(pages, quiet)


class TracePage(NamedTuple):
    """A trace page a report wrote: its path, what it shows, whether the verdict it
    belongs to is as expected."""

    path: Path
    model: str
    prop: str
    word: str
    as_expected: bool


def print_trace_pages(pages: list[TracePage], quiet: bool = False) -> None:
    """One line per trace page (with ``quiet``, per page of an unexpected verdict, then
    a count of the others)."""
    shown = [p for p in pages if not quiet or not p.as_expected]
    for p in shown:
        flag = "" if p.as_expected else ", UNEXPECTED"
        click.echo(f"  trace: {p.path} ({p.model} · {p.prop} {p.word}{flag})")
    rest = len(pages) - len(shown)
    if rest:
        click.echo(f"  ({rest} more trace page{'s' if rest != 1 else ''} of verdicts as expected in "
                   f"{pages[0].path.parent})")


def emit_error_junit(path: str, where: str, field: str, message: str, kind: str = "input",
                     results: list[Result] | None = None) -> None:
    """Write the JUnit XML of a run that stopped on a model error (bad input, or a
    spec's exception after ``results``; :func:`ordercheck.reports.junit.error_junit_xml`), so a CI
    job's test tab names the file and the field at fault. The caller then exits with
    its error; a JUnit file that cannot be written is said in one line on stderr and
    does not change that exit code."""
    from ordercheck.reports.junit import error_junit_xml

    try:
        with Outputs() as out:
            out.write_text(path, error_junit_xml(where, field, message, kind, results))
    except OSError as exc:
        click.echo(f"ordercheck: JUnit XML not written: {exc}", err=True)
        return
    click.echo(f"JUnit XML: {path}")


def stage_junit(out: Outputs, results: list[Result], path: str, evidence: list[EvidenceCheck] | None = None,
                proofs: list[Any] | None = None) -> Path:
    """Stage the JUnit XML of ``results`` (and ``evidence``, and ``prove``'s ``proofs``)
    as ``path``; returns ``path``."""
    from ordercheck.reports.junit import junit_xml

    return out.write_text(path, junit_xml(results, evidence=evidence, proofs=proofs))


def stage_html(out: Outputs, items: list[Any], out_dir: str, specs: dict[str, Any] | None = None,
               pages: list[TracePage] | None = None, summary: Any = None) -> Path:
    """Stage the HTML report of ``items`` as the directory ``out_dir``; returns the path
    its index page will have. ``specs`` maps a recorded spec reference to the class its
    traces replay through (:func:`report_specs`). ``pages``, when given, receives each
    trace page's :class:`TracePage`, with the path it will have. ``summary``, when
    given, renders the report's view as ``summary.md`` (``report --summary``)."""
    from ordercheck.reports import payload_of
    from ordercheck.reports.html import write_report
    from ordercheck.reports.view import build_report

    staged = out.directory(out_dir, owned=REPORT_ENTRIES)
    view = build_report(items, specs=specs)
    if pages is not None:
        judged = {m.label: m.judged for m in view.models}
        pages += [TracePage(Path(out_dir) / "traces" / f"{t.slug}.html", t.model, t.prop, t.word,
                            t.raw.as_expected or not judged.get(t.model, True)) for t in view.traces]
    with naming(out_dir):
        index = write_report(view, staged, payload_of(items))
        if summary is not None:
            (staged / "summary.md").write_text(summary(view), encoding="utf-8")
    return Path(out_dir) / index.relative_to(staged)


def report_specs(files: list[tuple[str, list[Any]]], typed: tuple[str, ...]) -> dict[str, Any]:
    """The spec classes ``report``'s results replay through, by the reference each
    records (``files``: each result file with the items read from it). A recorded
    built-in or registered name selects its spec (a name not installed here takes a
    ``--spec`` of that spec name, or the only one); a spec file or module a result names
    is never imported: it takes a ``--spec`` the user typed (``typed``), the only one,
    or among several the one whose canonical reference or class name it records.
    :class:`~ordercheck.checker.InputError` naming the file and its ``spec`` field otherwise."""
    from ordercheck.checker.loading.specref import BadSpecRef, NotImported, named, option_spec

    refs = [option_spec(t) for t in typed]
    out: dict[str, Any] = {}
    for path, items in files:
        for i, item in enumerate(items):
            recorded = item.spec
            if recorded in out:
                continue
            try:
                named(recorded)
                continue
            except NotImported as exc:
                refused = exc
            except BadSpecRef:  # an unknown name: a --spec of that name (or the only one), else a note in the report
                given = [r for r in refs if r.cls.name == recorded] or (refs if len(refs) == 1 else [])
                if given:
                    out[recorded] = given[0].cls
                continue
            tail = recorded.rpartition(":")[2]
            chosen = [r for r in refs if r.canonical == recorded] or (
                refs if len(refs) == 1 else [r for r in refs if tail in (r.cls.__name__, r.canonical.rpartition(":")[2])])
            if not chosen:
                field = f"[{i}].spec" if len(items) > 1 else "spec"
                if refs:
                    raise InputError(path, field, f"{refused}; none of the specs given with --spec is {tail!r}")
                raise InputError(path, field, str(refused))
            out[recorded] = chosen[0].cls
    return out


def summary_options(command: Any) -> Any:
    """The options of the pull-request summary, the same on ``report`` and on ``check``
    (with ``--report``): ``--summary``, ``--diff BASELINE.json``, ``--summary-url URL``."""
    for option in reversed((
        click.option("--summary", "summary", is_flag=True,
                     help="Also write summary.md into the report directory: a Markdown summary for a pull-request "
                          "comment, always under 60,000 characters (the unexpected verdicts with their traces, "
                          "verdicts by spec, links to the full pages)."),
        click.option("--diff", "baseline", type=click.Path(dir_okay=False), metavar="BASELINE.json",
                     help="Add to the summary what changed since this earlier `check --json` file: verdicts, "
                          "models added and removed, state counts. Implies --summary."),
        click.option("--summary-url", "summary_url", metavar="URL",
                     help="The address the report directory is published at: the summary's links start with it "
                          "(default: relative to the directory). With --summary or --diff."),
    )):
        command = option(command)
    return command


def summary_asked(summary: bool, baseline: str | None, url: str | None) -> bool:
    """Whether the summary options ask for ``summary.md`` (``--diff`` implies
    ``--summary``); a :class:`click.UsageError` for ``--summary-url`` without either."""
    if url is not None and not (summary or baseline):
        raise click.UsageError("--summary-url sets the summary's links: give --summary (or --diff) too")
    return summary or baseline is not None


class Summary(NamedTuple):
    """What ``summary.md`` is rendered with besides the report's view: the results of
    the ``--diff`` baseline (``None`` without one), read when asked for, and the links'
    start (``--summary-url``)."""

    baseline: str | None
    before: list[Result] | None
    url: str

    def writer(self, items: list[Any]) -> Any:
        """The renderer of a report view of ``items`` as ``summary.md``
        (:func:`ordercheck.reports.summary.render_summary`), with what changed since the
        baseline."""
        from ordercheck.reports.summary import compare, render_summary

        changes = None
        if self.baseline is not None and self.before is not None:
            changes = compare([i for i in items if isinstance(i, Result)], self.before, self.baseline)
        return lambda view: render_summary(view, changes, self.url)


def summary_of(baseline: str | None, url: str | None) -> Summary:
    """The :class:`Summary` of ``--diff baseline`` and ``--summary-url url``: the
    baseline read now, as :func:`ordercheck.reports.load_items` reads a result file, so a
    bad one (or a ``url`` too long) is :class:`~ordercheck.checker.InputError` naming the
    file and the field before anything is written."""
    from ordercheck.reports import load_items
    from ordercheck.reports.summary import URL_CUT

    if url is not None and len(url) > URL_CUT:
        raise InputError("--summary-url", "", f"longer than {URL_CUT:,} characters")
    before = None
    if baseline is not None:
        before = [i for i in load_items([baseline]) if isinstance(i, Result)]
        if not before:
            raise InputError(baseline, "", "holds no `check --json` result to compare with (an `ablate` or "
                                           "`prove` record is not a baseline)")
    return Summary(baseline, before, url or "")


def write_html(items: list[Any], out_dir: str) -> None:
    """Write the HTML report of ``items`` into ``out_dir`` (staged, then put in place)."""
    with Outputs() as out:
        index = stage_html(out, items, out_dir)
    click.echo(f"report: {index}")


def add_commands(main: click.Group) -> None:
    """Register the report commands on the ``ordercheck`` group."""
    @main.command()
    @click.argument("results", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="RESULT.json ...")
    @click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Report directory.")
    @click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Also write JUnit XML here.")
    @click.option("--spec", "specs", multiple=True, metavar="SPEC",
                  help="Replay the traces of results that name a spec file or module through this spec (a file "
                       "or pkg.mod:Class; it is imported). Repeatable. A result file never imports code itself.")
    @summary_options
    def report(results: tuple[str, ...], out_dir: str, junit_path: str | None, specs: tuple[str, ...] = (),
               summary: bool = False, baseline: str | None = None, summary_url: str | None = None) -> None:
        """Render `check --json`, `ablate --json` and `prove --json` results as an HTML
        report (with Markdown, ITF traces and ShiViz logs beside it)."""
        from ordercheck.reports import load_items
        from ordercheck.reports.proofs import ProofRecord

        asked = summary_asked(summary, baseline, summary_url)
        inputs = [Input("a result file", r) for r in results]
        check_outputs(outputs_of(("-o", out_dir, True, REPORT_ENTRIES), ("--junit", junit_path, False, ())),
                      inputs + ([Input("--diff", baseline)] if baseline else []))
        files = [(path, load_items([path])) for path in results]
        items = [item for _path, loaded in files for item in loaded]
        classes = report_specs(files, specs)
        write_summary = summary_of(baseline, summary_url).writer(items) if asked else None
        with Outputs() as out:
            index = stage_html(out, items, out_dir, classes, summary=write_summary)
            junit = stage_junit(out, [i for i in items if isinstance(i, Result)], junit_path,
                                proofs=[i for i in items if isinstance(i, ProofRecord)]) if junit_path else None
        click.echo(f"report: {index}")
        if write_summary is not None:
            click.echo(f"summary: {Path(out_dir) / 'summary.md'}")
        if junit is not None:
            click.echo(f"JUnit XML: {junit}")

    @main.command()
    @click.argument("model_path", metavar="MODEL.toml")
    @engine_options
    @click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the ablation run as JSON here.")
    @click.option("--report", "report_dir", type=click.Path(file_okay=False), help="Write an HTML report here.")
    def ablate(model_path: str, json_path: str | None, report_dir: str | None, **kw: Any) -> None:
        """The ablation table: switch each step of the algorithm off in turn and show
        which properties break, with the shortest counterexample for each."""
        from ordercheck.checker.loading.modelfile import load_model
        from ordercheck.checker.review.ablation import run_ablation
        from ordercheck.reports.ablation_text import ablation_table
        from ordercheck.reports.view import Ablation

        model = load_model(model_path)
        check_outputs([*outputs_of(("--json", json_path, False, ()), ("--report", report_dir, True, REPORT_ENTRIES)),
                       *work_dir_outputs(kw, [model], ("full", *(f"without-{f}" for f in model.spec.ablations())))],
                      model_inputs([model]))
        options = options_from(kw)

        def progress(flag: str | None, result: Result) -> None:
            what = "every step on" if flag is None else f"without {flag}"
            st = result.stats
            click.echo(f"  {what}: {st.distinct_states:,} states, {st.seconds:.2f}s", err=True)

        run = run_ablation(model, options, on_result=progress, check=check_one)
        record = Ablation(run.model, run.spec, run.baseline, run.mutants, run.note)
        click.echo(ablation_table(record))
        with Outputs() as out:
            index = stage_html(out, [record], report_dir) if report_dir else None
            if json_path:
                out.write_json(json_path, record.to_json())
        if index is not None:
            click.echo(f"report: {index}")
        results = [run.baseline] + [r for _f, _d, r in run.mutants]
        exit_after_verdicts(3 if combined_exit_code(results) == 3 else 0)

    @main.command()
    @click.argument("model_path", metavar="MODEL.toml")
    @click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output directory.")
    @click.option("--max-states", type=click.IntRange(min=1), default=2000, show_default=True,
                  help="Refuse models with more reachable states than this (at most 100,000).")
    def graph(model_path: str, out_dir: str, max_states: int) -> None:
        """Export a small model's state graph as DOT and GraphML, with every
        counterexample and witness path marked."""
        from ordercheck.checker.engine.run import Options, check_model
        from ordercheck.checker.loading.modelfile import load_model
        from ordercheck.reports.stategraph import (
            HARD_LIMIT,
            GraphTooLarge,
            mark_trace,
            state_graph,
            write_dot,
            write_graphml,
        )

        if max_states > HARD_LIMIT:
            raise InputError("--max-states", "", f"{max_states:,} is above the limit of {HARD_LIMIT:,} states for a drawing")
        model = load_model(model_path)
        stem = Path(model.path).stem
        check_outputs(outputs_of(("-o", out_dir, True, (f"{stem}.dot", f"{stem}.graphml"))), model_inputs([model]))
        try:
            g, ids = state_graph(model.spec, max_states)
        except GraphTooLarge as exc:
            click.echo(
                f"ordercheck: {model.path} has more than {exc.limit:,} reachable states; a state graph is "
                f"meant for small models. Raise --max-states (up to {HARD_LIMIT:,}) or pick a smaller model.",
                err=True,
            )
            sys.exit(2)
        except Exception as exc:  # the spec's code, or a state that breaks the spec API: one line
            from ordercheck.checker.engine.diagnose import diagnose

            found = diagnose(model, exc)
            if found is exc:
                raise
            raise found from None
        result = check_model(model, Options(progress=False))
        marked = []
        for name, p in result.properties.items():
            if p.trace:
                mark_trace(g, ids, model.spec, name, p.trace)
                marked.append(f"{name} ({len(p.trace) - 1} steps)")
        out = Path(out_dir)
        with Outputs() as staged:
            dot = staged.file(out / f"{stem}.dot")
            with naming(out / f"{stem}.dot"):
                write_dot(g, dot, f"{stem}: {g.number_of_nodes()} states")
            graphml = staged.file(out / f"{stem}.graphml")
            with naming(out / f"{stem}.graphml"):
                write_graphml(g, graphml)
        click.echo(f"{model.path}: {g.number_of_nodes():,} states, {g.number_of_edges():,} transitions")
        click.echo(f"  marked traces: {', '.join(marked) if marked else 'none'}")
        click.echo(f"  wrote {out / (stem + '.dot')} and {out / (stem + '.graphml')}")

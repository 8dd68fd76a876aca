"""The protocol x property matrix: building, categories by expectation, rendering (text
and HTML), JSON, and the CLI command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from seedwalk import MODELS, run_model
from suite_helpers import suite_models, suite_results

from ordercheck.checker.api.expectation import CATEGORIES, category, cell_sentence, mutant_steps
from ordercheck.checker.api.result import PropertyResult, Result
from ordercheck.checker.cli import main
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.review.matrix import WIDTH, Matrix, build_matrix, cell_text, render_text
from ordercheck.reports.html import render_index, render_matrix_page
from ordercheck.reports.view import build_report

SMALL = ["lamport-2", "lamport-mutant-no-wait", "restart-per-queue"]


def test_build_matrix_rows_columns_and_cells() -> None:
    results = [run_model(m) for m in SMALL]
    models = [load_model(MODELS / f"{m}.toml", mutants=False) for m in SMALL]
    # The model file's reasons for the properties it leaves out (Result.not_checked).
    results[0].not_checked = {"fifo": "one send per peer", "integrity": ""}  # type: ignore[attr-defined]
    table = build_matrix(results, {results[0].model: "first"}, models)
    assert table.rows[0].not_checked == {"fifo": "one send per peer", "integrity": ""}
    assert table.to_json()["rows"][0]["not_checked"] == {"fifo": "one send per peer", "integrity": ""}
    assert table.columns[:7] == [
        "causal", "total", "total_global", "total_prefix", "global_lock", "synchronous", "eventual_delivery"]
    assert table.columns[7:9] == ["causal_race", "total_race"]  # the models' witnesses (specs/witnesses.py)
    assert table.columns[9:] == ["no_missed_message", "all_read"]
    assert [r.name for r in table.rows] == ["lamport-2", "lamport-mutant-no-wait", "restart-per-queue"]
    assert table.cell("lamport-mutant-no-wait", "total").status == "violated"
    assert table.cell("lamport-mutant-no-wait", "total").trace_steps == 8
    assert table.cell("lamport-2", "total").status == "holds"
    assert table.cell("restart-per-queue", "total") is None
    assert table.rows[0].description == "first"
    assert table.rows[2].description == models[2].description
    assert table.exit_code == 0 and table.unexpected == []
    # Categories by expectation: the mutant's expected violation is green, the same
    # verdict in a model that expects it (not a mutant) is "not promised".
    assert [r.mutant for r in table.rows] == [[], ["without wait_acks"], []]
    assert table.cell("lamport-2", "total").category == "held"
    assert table.cell("lamport-2", "total_race").category == "reached"
    assert table.cell("lamport-2", "total_race").word == "reached"
    assert table.cell("lamport-mutant-no-wait", "total").category == "broke"
    assert table.cell("restart-per-queue", "no_missed_message").category == "not_promised"
    (lamport, lamport_mutants), restart = [(t.models, t.mutants) for t in table.by_spec()[:1]][0], table.by_spec()[1]
    assert [r.name for r in lamport] == ["lamport-2"] and [r.name for r in lamport_mutants] == ["lamport-mutant-no-wait"]
    assert table.by_spec()[0].witnesses == ["causal_race", "total_race"]
    assert restart.columns == ["no_missed_message", "all_read"]


@pytest.mark.parametrize("kind,status,expected,mutant,want", [
    ("always", "holds", "holds", False, "held"),
    ("always", "holds", "holds", True, "held"),
    ("always", "violated", "violated", True, "broke"),
    ("always", "violated", "violated", False, "not_promised"),
    ("eventually", "violated", "violated", False, "not_promised"),
    ("always", "violated", "holds", True, "unexpected"),
    ("always", "holds", "violated", True, "unexpected"),
    ("always", "violated", None, False, "unexpected"),
    ("always", "holds", None, False, "unjudged"),
    ("always", "unknown", "holds", False, "unknown"),
    ("sometimes", "holds", "holds", False, "reached"),
    ("sometimes", "violated", "violated", True, "unreached"),
    ("sometimes", "violated", "holds", False, "unexpected"),
])
def test_every_category(kind: str, status: str, expected: str | None, mutant: bool, want: str) -> None:
    as_expected = status == expected if expected is not None else status != "violated"
    assert category(kind, status, expected, as_expected, mutant) == want


def test_cell_sentences_state_the_expectation() -> None:
    assert cell_sentence("not_promised", "always", "violated", "violated", 8) == (
        "violated (8-step counterexample); expected violated: the model does not promise it")
    assert cell_sentence("unexpected", "sometimes", "violated", "holds") == "unreached; expected reached"
    assert cell_sentence("reached", "sometimes", "holds", "holds", 3) == "reached (3-step witness); expected reached"
    assert cell_sentence("unjudged", "always", "holds", None) == "holds; no expectation ([expect] does not name it)"


def test_what_makes_a_mutant() -> None:
    def steps(name: str) -> list[str]:
        m = load_model(MODELS / f"{name}.toml", mutants=False)
        return mutant_steps(type(m.spec), m.constants)

    assert steps("bus1-mutant-no-block") == ["without block_destinations"]
    assert steps("lamport-mutant-keep-duplicates") == ["without fifo_links", "without discard_duplicates"]
    assert steps("bus1-impl-mutant-no-staging") == ["mutant = no_staging"]
    assert steps("bus1-2") == [] and steps("bss-4") == []


def test_json_round_trip_and_text() -> None:
    table = build_matrix([run_model("restart-per-queue")])
    again = Matrix.from_json(json.loads(json.dumps(table.to_json())))
    assert again == table
    text = render_text(again)
    assert text.splitlines()[:5] == [
        "restart_clocks: 1 model",
        "  guarantees: 1 no_missed_message, 2 all_read",
        "  model              1    2",
        "  -----------------  ---  ---",
        "  restart-per-queue  n/p  n/p",
    ]
    assert cell_text(None) == "-"
    # A matrix file written before cells had categories gets them on reading.
    old = table.to_json()
    for row in old["rows"]:
        row.pop("mutant")
        for c in row["cells"].values():
            c.pop("category")
    assert Matrix.from_json(old) == table


def test_the_whole_suite_fits_120_columns_and_every_model_and_verdict_is_there() -> None:
    """`ordercheck matrix models/` (its table, of the suite's verdicts): no line over
    120 characters (it was 747), one block per spec, mutants after the other models."""
    results = suite_results()
    table = build_matrix(results, models=list(suite_models()))
    text = render_text(table)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= WIDTH
    assert len(lines) < 500
    names = {Path(r.model).stem for r in results}
    shown = {line.split()[0] for line in lines if line.startswith("  ") and line.split()[0] in names}
    assert shown == names
    # Every checked property of every model is in some band of its spec's block: the
    # cells under the numbered columns, counted per model, are its properties.
    cells = {}
    for line in lines:
        parts = line.split()
        if line.startswith("  ") and parts and parts[0] in names:
            cells[parts[0]] = cells.get(parts[0], 0) + sum(1 for w in parts[1:] if w != "-")
    assert cells == {Path(r.model).stem: len(r.properties) for r in results}
    bss = lines.index("bss: 9 models, 4 mutants")
    block = lines[bss:lines.index("", bss)]
    assert block.index("  mutants:") > max(i for i, line in enumerate(block) if line.startswith("  bss-4 "))
    assert "  bss-4" in text and "n/p" in next(line for line in block if line.startswith("  bss-4 "))
    assert "every verdict as expected" in text
    for c in CATEGORIES:
        assert c.legend in text


def test_an_unknown_verdict_is_not_called_as_expected() -> None:
    result = Result("m.toml", "toy", {}, "local", {}, {
        "a": PropertyResult("a", "always", "unknown", "holds"),
        "w": PropertyResult("w", "sometimes", "holds", "holds"),
    })
    text = render_text(build_matrix([result]))
    assert "1 model (1 guarantee model, 0 mutants): 1 unknown (a bound stopped the search)" in text
    assert "every verdict as expected" not in text and re.search(r"^  m +unknown\? +reached$", text, re.M)


def test_unexpected_verdicts_are_marked(tmp_path: Path) -> None:
    text = (MODELS / "lamport-mutant-no-wait.toml").read_text().replace('total = "violated"', 'total = "holds"')
    bad = tmp_path / "wrong.toml"
    bad.write_text(text)
    result = CliRunner().invoke(main, ["matrix", str(bad), "--quiet"])
    assert result.exit_code == 1
    assert "VIOLATED!" in result.output
    assert "1 unexpected" in result.output
    assert "wrong total: violated, expected holds" in result.output


def test_cli_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    paths = [str(MODELS / f"{m}.toml") for m in SMALL[:2]]
    result = CliRunner().invoke(main, ["matrix", *paths, "--quiet", "--json", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert [r["spec"] for r in data["rows"]] == ["lamport_total", "lamport_total"]
    assert [r["mutant"] for r in data["rows"]] == [[], ["without wait_acks"]]
    assert data["rows"][1]["cells"]["total"] == {
        "status": "violated",
        "expected": "violated",
        "as_expected": True,
        "explanation": "a and b delivered a1 and b1 in different orders: a delivered a1 before b1, "
        "b delivered b1 before a1",
        "trace_steps": 8,
        "kind": "always",
        "category": "broke",
        "shown": "violated",
    }
    assert data["rows"][0]["cells"]["causal_race"]["shown"] == "reached"
    assert "lamport-mutant-no-wait" in result.output
    assert max(len(line) for line in result.output.splitlines()) <= WIDTH


def test_cli_bad_model_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('spec = "skeen"\n[constants]\ntake_max = 3\n')
    result = CliRunner().invoke(main, ["matrix", str(bad)])
    assert result.exit_code == 2
    assert "constants.take_max" in result.output


# -- the HTML matrix ------------------------------------------------------------------


def _suite_view():
    results = suite_results()
    bss4 = next(r for r in results if Path(r.model).name == "bss-4.toml")
    bss4.properties["total_global"].expected = "holds"  # one unexpected cell, red
    # The model file's reason for leaving a property out (Result.not_checked).
    bss4.not_checked = {"fifo": "each peer sends one message: no sender has two to reorder"}  # type: ignore[attr-defined]
    return build_report(results)


def _matrix_tables(html: str) -> dict[str, str]:
    return dict(re.findall(r'<details class="mx-spec" open>\s*<summary><strong>([^<]+)</strong>(.*?)</details>', html, re.S))


def test_html_matrix_one_table_per_spec_grouped_and_coloured_by_expectation() -> None:
    view = _suite_view()
    page = render_matrix_page(view)
    tables = _matrix_tables(page)
    assert len(tables) == 13 and tables.keys() == {r.spec for r in suite_results()}
    bss = tables["bss"]
    # Guarantees before witnesses, models before mutants.
    heads = re.findall(r'<th class="mx-prop[^"]*"><span>([^<]+)</span>', bss)
    assert heads == ["fifo", "causal", "integrity", "total", "total_global", "total_prefix", "global_lock",
                     "synchronous", "eventual_delivery", "fifo_race", "causal_race"]
    rows = re.findall(r'<tr><th class="mx-model"[^>]*><a href="index.html#model-([^"]+)">', bss)
    assert rows.index("bss-mutant-no-fifo-condition") > rows.index("bss-4") > rows.index("bss-2")
    assert bss.index('<tr class="mx-divider"><th colspan="12">mutants</th></tr>') < bss.index("index.html#model-bss-mutant")
    assert '1 unexpected' in bss and "1 verdict not as expected" in page

    def cells(model: str) -> list[tuple[str, str, str]]:
        row = re.search(rf'<tr><th class="mx-model"[^>]*><a href="index.html#model-{model}">.*?</tr>', bss, re.S).group(0)
        return re.findall(r'<td class="mx ([a-z_]+)" title="([^"]*)">(.*?)</td>', row, re.S)

    bss4 = {title.split(":")[0]: (cls, title, body) for cls, title, body in cells("bss-4")}
    assert [c for c, _t, _b in cells("bss-4")] == [
        "not_checked", "held", "not_checked", "not_promised", "unexpected", "not_promised", "not_promised",
        "not_promised", "held", "not_checked", "reached"]
    assert bss4["fifo"][1] == "fifo: not checked: each peer sends one message: no sender has two to reorder"
    assert bss4["fifo"][2] == "·"
    assert bss4["integrity"][1] == "integrity: not checked"
    assert bss4["total"][1] == "total: violated; expected violated: the model does not promise it"
    assert bss4["total_global"][1] == "total_global: violated; expected holds"
    assert bss4["total_global"][2] == '✗<span class="flag">!</span>'
    assert bss4["causal"][1] == "causal: holds; expected holds" and bss4["causal_race"][2] == "◉"
    mutant = {title.split(":")[0]: cls for cls, title, _b in cells("bss-mutant-no-fifo-condition")}
    assert mutant["fifo"] == "broke" and mutant["eventual_delivery"] == "held"
    # Every cell says what was expected (or why it was not checked).
    for cls, title, _body in re.findall(r'<td class="mx ([a-z_]+)" title="([^"]*)">(.*?)</td>', page, re.S):
        assert ("expected" in title or "no expectation" in title) if cls != "not_checked" else "not checked" in title
    # The legend names every category, each with its own style.
    legend = re.search(r'<div class="mx-legend">.*?</div>', page, re.S).group(0)
    assert re.findall(r'<span class="mx-sw ([a-z_]+)">', legend) == [c.name for c in CATEGORIES]
    css = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    for c in CATEGORIES:
        assert f".mx.{c.name}," in css
    # The model's name stays on one line, its path, description and mutant steps in the tooltip.
    assert re.search(r"th\.mx-model \{[^}]*white-space: nowrap[^}]*text-overflow: ellipsis", css)
    assert re.search(r'<th class="mx-model" title="[^"]*/bss-mutant-no-fifo-condition\.toml[^"]*'
                     r' · mutant: without condition_a">', page)


def test_the_index_holds_the_same_matrix_and_ablation_runs_stay_out_of_it() -> None:
    view = _suite_view()
    index = render_index(view)
    assert _matrix_tables(index) == {k: v.replace('href="index.html#', 'href="#') for k, v in
                                     _matrix_tables(render_matrix_page(view)).items()}
    assert '<a href="matrix.html">matrix.html</a>' in index


def test_a_trace_cell_links_into_the_index_from_the_matrix_page() -> None:
    view = build_report([run_model("lamport-mutant-no-wait")])
    page = render_matrix_page(view)
    link = re.search(r'<td class="mx broke" title="total: violated \(8-step counterexample\); expected violated: '
                     r'this mutant breaks it\. a and b delivered[^"]*"><a href="index.html#(trace-[^"]+)">✗</a></td>',
                     page)
    assert link is not None
    assert f'id="{link.group(1)}"' in render_index(view)


def test_sweep_rows_say_reached_and_unreached(tmp_path: Path) -> None:
    """The sweep table's ``shown`` column: the verdict word of every other artifact; a
    table written before the column reads back with it."""
    from ordercheck.checker.spark.sweep_table import COLUMNS, load_sweep, rows_from_result, write_sweep

    result = Result("m.toml", "toy", {}, "local", {}, {
        "w": PropertyResult("w", "sometimes", "violated", "violated"),
        "r": PropertyResult("r", "sometimes", "holds", "holds"),
        "a": PropertyResult("a", "always", "holds", "holds"),
    })
    data = {**result.to_json(), "variant": ""}
    rows = rows_from_result(data)
    assert [(r.property, r.status, r.shown) for r in rows] == [
        ("w", "violated", "unreached"), ("r", "holds", "reached"), ("a", "holds", "holds")]
    write_sweep(tmp_path, rows, [data])
    assert [r["shown"] for r in json.loads((tmp_path / "sweep.json").read_text())] == ["unreached", "reached", "holds"]
    assert load_sweep(tmp_path) == rows == load_sweep(tmp_path / "sweep.json")
    old = [{k: v for k, v in r.items() if k != "shown"} for r in json.loads((tmp_path / "sweep.json").read_text())]
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert load_sweep(tmp_path / "old.json") == rows
    assert "shown" in COLUMNS


def test_a_report_without_judged_models_has_no_matrix_and_says_why() -> None:
    """An ablation run is not judged: no matrix, no "as expected", a sentence instead."""
    from ordercheck.checker.api.result import Stats
    from ordercheck.reports.view import Ablation

    def run(status: str) -> Result:
        return Result("m.toml", "bus1", {"peers": 2}, "local", {}, {
            "causal": PropertyResult("causal", "always", status)}, Stats(distinct_states=10))  # type: ignore[arg-type]

    view = build_report([Ablation("m.toml", "bus1", run("holds"), [("flag", "a step", run("violated"))])])
    assert view.matrices == []
    page, index = render_matrix_page(view), render_index(view)
    assert "No model in this report is judged against an expectation" in page
    assert "No model here is judged against an expectation" in index
    for html in (page, index):
        assert '<div class="mx-legend">' not in html and "as expected" not in html


def test_the_markdown_matrix_states_what_each_verdict_means_against_the_expectation() -> None:
    from ordercheck.reports.markdown import render_markdown

    text = render_markdown(_suite_view())
    matrix = text[text.index("## Protocol × property"):text.index("\n## ", text.index("## Protocol × property") + 5)]
    row = next(line for line in matrix.splitlines() if line.startswith(r"| bss\-4 |"))
    mutant = next(line for line in matrix.splitlines() if line.startswith(r"| bss\-mutant\-no\-fifo\-condition |"))
    assert "➖ not promised" in row and "✅ holds" in row and "🎯 reached" in row
    assert "⚠️ **unexpected**" in row  # total_global, made unexpected above
    assert "✅ broke" in mutant and "➖ not promised" not in mutant.split("|")[3]
    for words in ("✅ broke (a mutant broke it", "➖ not promised", "⚠️ **unexpected**", "· not checked"):
        assert words in matrix

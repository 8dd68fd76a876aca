"""The protocol x property matrix: building, rendering, JSON, and the CLI command."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from seedwalk import MODELS, run_model

from checker.cli import main
from checker.review.matrix import Matrix, build_matrix, cell_text, render_text

SMALL = ["lamport-2", "lamport-mutant-no-wait", "restart-per-queue"]


def test_build_matrix_rows_columns_and_cells() -> None:
    results = [run_model(m) for m in SMALL]
    table = build_matrix(results, {results[0].model: "first"})
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
    assert table.exit_code == 0 and table.unexpected == []


def test_unexpected_verdicts_are_marked(tmp_path: Path) -> None:
    text = (MODELS / "lamport-mutant-no-wait.toml").read_text().replace('total = "violated"', 'total = "holds"')
    bad = tmp_path / "wrong.toml"
    bad.write_text(text)
    result = CliRunner().invoke(main, ["matrix", str(bad), "--quiet"])
    assert result.exit_code == 1
    assert "VIOLATED!" in result.output
    assert "(1 unexpected)" in result.output


def test_json_round_trip_and_text() -> None:
    table = build_matrix([run_model("restart-per-queue")])
    again = Matrix.from_json(json.loads(json.dumps(table.to_json())))
    assert again == table
    text = render_text(again)
    assert text.splitlines()[0].split() == ["model", "spec", "no_missed_message", "all_read"]
    assert "restart-per-queue" in text and "violated" in text
    assert cell_text(None) == "-"


def test_cli_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    paths = [str(MODELS / f"{m}.toml") for m in SMALL[:2]]
    result = CliRunner().invoke(main, ["matrix", *paths, "--quiet", "--json", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert [r["spec"] for r in data["rows"]] == ["lamport_total", "lamport_total"]
    assert data["rows"][1]["cells"]["total"] == {
        "status": "violated",
        "expected": "violated",
        "as_expected": True,
        "explanation": "a and b delivered a1 and b1 in different orders: a delivered a1 before b1, "
        "b delivered b1 before a1",
        "trace_steps": 8,
        "kind": "always",
        "shown": "violated",
    }
    assert "lamport-mutant-no-wait" in result.output


def test_cli_bad_model_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('spec = "skeen"\n[constants]\ntake_max = 3\n')
    result = CliRunner().invoke(main, ["matrix", str(bad)])
    assert result.exit_code == 2
    assert "constants.take_max" in result.output

"""Issue 31, the gate: a red CI job explains itself. JUnit for a model error (exit 2, 5),
failure cases that carry the run's configuration, a bound that says how far the search
got, ``--quiet`` one line per model, trace pages listed in the log."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner

from ordercheck.checker.cli import main

TOYSPECS = (Path(__file__).resolve().parent / "toyspecs.py").as_posix()


def counter(path: Path, limit: int = 3, bad: int = -1, expect: str = "") -> Path:
    path.write_text(f'spec = "{TOYSPECS}:Counter"\n[constants]\nlimit = {limit}\nbad = {bad}\n'
                    f'[check]\nproperties = ["not_bad", "ends_at_limit"]\n{expect}')
    return path


def test_an_evidence_error_writes_a_junit_error_case_naming_file_and_field(tmp_path: Path) -> None:
    model = tmp_path / "m.toml"
    model.write_text('spec = "bus1"\n[constants]\npeers = 2\n[check]\nproperties = ["fifo"]\n'
                     '[expect]\nfifo = "holds"\n[evidence]\nfifo = { mutant = "missing-mutant.toml" }\n')
    junit = tmp_path / "out" / "junit.xml"
    junit.parent.mkdir()
    res = CliRunner().invoke(main, ["check", str(model), "--junit", str(junit), "--json", str(tmp_path / "r.json")])
    assert res.exit_code == 2, res.output
    assert not (tmp_path / "r.json").exists()  # no verdict, no results
    root = ET.parse(junit).getroot()
    assert root.get("errors") == "1" and root.get("tests") == "1"
    case = root.find(".//testcase")
    assert case is not None and case.get("name") == "evidence.fifo.mutant" and case.get("classname") == "m"
    error = case.find("error")
    assert error is not None and error.get("type") == "input"
    assert error.get("message") == f"{model}: evidence.fifo.mutant: no model file 'missing-mutant.toml' beside this one"
    # Without --junit nothing is written.
    assert CliRunner().invoke(main, ["check", str(model)]).exit_code == 2


def test_a_spec_error_writes_junit_with_the_models_checked_before_it(tmp_path: Path) -> None:
    spec = tmp_path / "boom.py"
    spec.write_text("from ordercheck import Spec\n\nclass Boom(Spec):\n    name = 'boom'\n"
                    "    def init_states(self):\n        return [0]\n"
                    "    def next_states(self, state):\n        raise ValueError('no next')\n"
                    "    def properties(self):\n        from ordercheck import Property\n"
                    "        return [Property.always('fine', lambda s: None)]\n")
    first = counter(tmp_path / "a.toml")
    second = tmp_path / "b.toml"
    second.write_text(f'spec = "{spec.as_posix()}:Boom"\n')
    junit = tmp_path / "j.xml"
    res = CliRunner().invoke(main, ["check", str(first), str(second), "--quiet", "--junit", str(junit)])
    assert res.exit_code == 5, res.output
    root = ET.parse(junit).getroot()
    assert [s.get("name") for s in root.findall("testsuite")] == [str(first), str(second)]
    error = root.find(f".//testsuite[@name='{second}']/testcase/error")
    assert error is not None and error.get("type") == "spec" and "raised ValueError: no next" in error.get("message", "")


def test_holds_expected_violated_found_carries_states_and_configuration(tmp_path: Path) -> None:
    """The failure case names the states searched, the constants, the bounds and the
    reductions; the console shows what each trace step changed; the log names the trace
    page of the failure."""
    model = counter(tmp_path / "c.toml", bad=2, expect='[expect]\nnot_bad = "holds"\n')
    junit, rep = tmp_path / "j.xml", tmp_path / "rep"
    res = CliRunner().invoke(main, ["check", str(model), "--quiet", "--junit", str(junit), "--report", str(rep)])
    assert res.exit_code == 1, res.output
    failure = ET.parse(junit).getroot().find(".//testcase[@name='not_bad']/failure")
    assert failure is not None and failure.text is not None
    body = failure.text
    assert "search: 4 distinct states, 3 transitions, depth 4" in body and ", complete" in body
    assert "constants: limit = 3, bad = 2" in body
    assert "bounds: none" in body and "reductions: symmetry off, por off" in body
    assert "    2. inc()\n         state: 1 → 2" in body  # step numbers and what each step changed
    assert "          2. inc()\n               state: 1 → 2" in res.output
    page = rep / "traces" / "c--not_bad.html"
    assert page.exists() and f"  trace: {page} (c · not_bad violated, UNEXPECTED)" in res.output


def test_a_bound_says_how_far_the_search_got(tmp_path: Path) -> None:
    model = counter(tmp_path / "c.toml", limit=10, expect='[expect]\nnot_bad = "holds"\n')
    out, junit = tmp_path / "r.json", tmp_path / "j.xml"
    res = CliRunner().invoke(main, ["check", str(model), "--max-states", "4", "--quiet", "--json", str(out),
                                    "--junit", str(junit)])
    assert res.exit_code == 3, res.output
    header = res.output.splitlines()[0]
    assert ": counter, 4 distinct states, 4 transitions, depth 4, " in header
    assert header.endswith(", stopped by max_states (max_states = 4): 1 of 2 verdicts NOT as expected")
    why = "the search stopped at its max_states bound first (max_states = 4), after 4 distinct states to depth 4"
    assert why in res.output
    record = json.loads(out.read_text())
    assert record["bounds"] == {"max_states": 4, "max_depth": None, "time_limit": None}
    assert record["stats"]["bound"] == "max_states" and record["stats"]["distinct_states"] == 4
    assert why in record["properties"]["not_bad"]["explanation"]
    root = ET.parse(junit).getroot()
    error = root.find(".//testcase[@name='not_bad']/error")
    assert error is not None and why in error.get("message", "")
    props = {p.get("name"): p.get("value") for p in root.findall(".//properties/property")}
    assert props["stopped_by"] == "max_states" and props["bounds"] == "max_states = 4" and props["depth"] == "4"


def test_quiet_prints_one_line_per_model_and_what_is_unexpected(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    for n in (1, 2, 3):
        counter(suite / f"c{n}.toml", limit=n + 1, expect='[expect]\nnot_bad = "holds"\nends_at_limit = "holds"\n')
    res = CliRunner().invoke(main, ["check", str(suite), "--quiet"])
    assert res.exit_code == 0, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 5, res.output  # three models, the summary, the warnings left out
    assert all(line.endswith(": 2 verdicts as expected") for line in lines[:3])
    assert lines[3] == "3 models, 3 as expected, 0 not"
    assert lines[4].startswith("6 warnings (2 distinct) not shown under --quiet")
    assert "warning:" not in res.output and "collision" not in res.output
    # Without --quiet the warnings are there (each once per run).
    loud = CliRunner().invoke(main, ["check", str(suite)])
    assert loud.output.count("  warning: ") == 2
    # One unexpected verdict: its line, explanation and trace follow its model's line.
    counter(suite / "c2.toml", limit=3, bad=2, expect='[expect]\nnot_bad = "holds"\nends_at_limit = "holds"\n')
    red = CliRunner().invoke(main, ["check", str(suite), "--quiet"])
    assert red.exit_code == 1
    out = red.output.splitlines()
    at = next(i for i, line in enumerate(out) if line.startswith(str(suite / "c2.toml")))
    assert out[at].endswith(": 1 of 2 verdicts NOT as expected")
    assert out[at + 1].split() == ["not_bad", "violated", "expected", "holds", "UNEXPECTED"]
    assert not any("ends_at_limit" in line for line in out)


def test_the_junit_of_a_load_error_never_overwrites_an_input(tmp_path: Path) -> None:
    model = tmp_path / "m.toml"
    text = 'spec = "bus1"\n[constants]\npeers = "three"\n'
    model.write_text(text)
    res = CliRunner().invoke(main, ["check", str(model), "--junit", str(model)])
    assert res.exit_code == 2
    assert model.read_text() == text and "JUnit XML not written" in res.output

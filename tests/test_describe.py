"""Issue 31, self-describing artifacts: every JSON record, report page and JUnit case says
what the model is (description, constants, bounds, reductions asked for and applied,
[evidence] linked, the properties not checked and why, ordercheck's version, the git
commit, the date); ``check --quiet`` on one model prints one line and what is unexpected."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

import ordercheck.checker as checker
from ordercheck.checker.api.errors import InputError
from ordercheck.checker.api.result import RecordError, Result
from ordercheck.checker.cli import main
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.loading.provenance import git_commit
from ordercheck.reports.html import write_report
from ordercheck.reports.junit import junit_xml
from ordercheck.reports.view import build_report

MODELS = Path(__file__).resolve().parent.parent / "models"
TOYSPECS = (Path(__file__).resolve().parent / "toyspecs.py").as_posix()
DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def counter(path: Path, extra: str = "", bad: int = -1) -> Path:
    """A Counter model (tests/toyspecs.py) that leaves ``reaches_two`` out, saying why."""
    path.write_text(f'spec = "{TOYSPECS}:Counter"\ndescription = "x counts to 3"\n'
                    f'[constants]\nlimit = 3\nbad = {bad}\n[check]\nproperties = ["not_bad", "ends_at_limit"]\n'
                    f'max_depth = 10\n[expect]\nnot_bad = "holds"\n'
                    f'[not_checked]\nreaches_two = "the counter surely passes 2"\n{extra}')
    return path


def run(path: Path) -> Result:
    return check_model(load_model(path), Options(progress=False))


def test_a_record_says_what_its_model_is_and_reads_back(tmp_path: Path) -> None:
    record = run(counter(tmp_path / "c.toml")).to_json()
    assert record["description"] == "x counts to 3"
    assert record["not_checked"] == {"reaches_two": "the counter surely passes 2"}
    assert record["reductions_requested"] == {"symmetry": True, "por": True}
    assert record["bounds"]["max_depth"] == 10 and record["evidence"] == {}
    prov = record["provenance"]
    assert prov["version"] == checker.__version__ and DATE.fullmatch(prov["date"])
    assert prov["commit"] is None  # tmp_path is in no git checkout
    again = Result.from_json(json.loads(json.dumps(record)))
    assert again.to_json() == record
    # A record written before these fields existed still reads, with empty ones.
    old = {k: v for k, v in record.items()
           if k not in ("description", "reductions_requested", "evidence", "not_checked", "provenance")}
    legacy = Result.from_json(old)
    assert legacy.provenance is None and legacy.not_checked == {} and legacy.description == ""
    # A simulation describes its model too, and says it reduced nothing.
    from ordercheck.checker.simulate.run import simulate
    from ordercheck.reports.about import reduction_lines

    walked = simulate(load_model(tmp_path / "c.toml"), 3, 5, 0, None)
    assert walked.description == "x counts to 3" and walked.provenance.version == checker.__version__
    assert walked.not_checked == record["not_checked"]
    assert reduction_lines(walked) == ["none: a simulation walks the unreduced state graph"]
    # Each new field is type-checked, the field named.
    for field, value, where in (("provenance", {"version": "1", "commit": 5, "date": ""}, "provenance.commit"),
                                ("not_checked", {"reaches_two": 1}, "not_checked.reaches_two"),
                                ("evidence", {"causal": {"mutant": 3}}, "evidence.causal.mutant"),
                                ("description", ["x"], "description"),
                                ("reductions_requested", {"por": "yes"}, "reductions_requested.por")):
        with pytest.raises(RecordError) as exc:
            Result.from_json({**record, field: value})
        assert exc.value.field == where


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_commit_is_the_checkout_s_head_when_there_is_one(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "models").mkdir(parents=True)
    model = counter(repo / "models" / "c.toml")
    assert git_commit(model) is None  # not yet a checkout
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "m"]):
        subprocess.run(["git", *cmd], cwd=repo, env=env, check=True, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()
    other = tmp_path / "elsewhere" / "c.toml"  # another directory: asked afresh, not the cached answer
    other.parent.mkdir()
    assert git_commit(other) is None
    shutil.copytree(repo, tmp_path / "repo2")
    assert run(tmp_path / "repo2" / "models" / "c.toml").provenance.commit == head


@pytest.mark.parametrize("table,field,says", [
    ('nope = "x"', "not_checked.nope", "has no property 'nope'"),
    ('not_bad = "x"', "not_checked.not_bad", "is checked"),
    ("reaches_two = 2", "not_checked.reaches_two", "expected a sentence"),
    ('reaches_two = " "', "not_checked.reaches_two", "expected a sentence"),
])
def test_a_bad_not_checked_entry_is_refused_naming_it(tmp_path: Path, table: str, field: str, says: str) -> None:
    path = counter(tmp_path / "c.toml").read_text().replace('reaches_two = "the counter surely passes 2"', table)
    (tmp_path / "c.toml").write_text(path)
    with pytest.raises(InputError) as exc:
        load_model(tmp_path / "c.toml")
    assert exc.value.field == field and says in exc.value.message


def test_the_index_and_trace_pages_say_what_each_model_is(tmp_path: Path) -> None:
    base, mutant = MODELS / "skeen-tlc-channel-faults.toml", MODELS / "skeen-tlc-mutant-keep-duplicates.toml"
    results = [run(base), run(mutant)]
    view = build_report(results)
    write_report(view, tmp_path / "r", [r.to_json() for r in results])
    index = (tmp_path / "r" / "index.html").read_text()
    section = index[index.index('id="model-skeen-tlc-channel-faults"'):index.index('id="model-skeen-tlc-mutant')]
    assert "Skeen, one message over unordered, lossy, duplicating channels" in section
    assert "<th>constants</th><td>peers = 2, sends = 1, destinations = &#39;others&#39;, script = {&#39;a&#39;: [&#39;b&#39;]}" in section
    assert "<th>bounds</th><td>none (exhaustive search)</td>" in section
    assert ("<th>reductions</th><td>symmetry: asked for, not applied (skeen delivers equal final timestamps in "
            "message-id order") in section
    assert "renaming peers changes its runs (to make it apply" in section  # the warning's reason, once
    assert "<br>partial-order reduction: on, applied</td>" in section
    # The mutant the evidence names is in the report: linked to its section.
    assert ('integrity ← mutant <a href="#model-skeen-tlc-mutant-keep-duplicates">'
            "skeen-tlc-mutant-keep-duplicates.toml</a>") in section
    assert re.search(r"<th>not checked</th><td>fifo_race: <span class=\"muted\">no reason given", section)
    commit = results[0].provenance.commit
    assert f"ordercheck {checker.__version__} · commit <code>{commit or 'none'}" in section
    assert results[0].provenance.date in section
    assert f"checked by ordercheck {checker.__version__} at commit " in index
    # A trace page: its verdict against the expectation, and the model's description.
    page = (tmp_path / "r" / "traces" / "skeen-tlc-channel-faults--eventual_delivery.html").read_text()
    assert 'expected violated: as expected.</p>' in page
    assert "<th>constants</th><td>peers = 2" in page and "lossy = True" in page
    assert 'href="../index.html#model-skeen-tlc-mutant-keep-duplicates"' in page
    # The mutant alone: its evidence's mutant is not in the report, said so.
    results[1].evidence = {"integrity": {"mutant": "elsewhere.toml"}}
    alone = build_report([results[1]])
    write_report(alone, tmp_path / "alone", None)
    assert "<code>elsewhere.toml</code> <span class=\"muted\">(not in this report)" in (
        tmp_path / "alone" / "index.html").read_text()


def test_a_record_from_before_says_not_recorded(tmp_path: Path) -> None:
    """An old record (without the fields) renders, saying what it does not know."""
    record = run(counter(tmp_path / "c.toml", bad=2)).to_json()
    for key in ("description", "reductions_requested", "evidence", "not_checked", "provenance"):
        del record[key]
    view = build_report([Result.from_json(record)])
    write_report(view, tmp_path / "r", record)
    index = (tmp_path / "r" / "index.html").read_text()
    assert "ordercheck version, commit and date: not recorded in these results" in index
    assert "<th>checked by</th><td>ordercheck not recorded · commit <code>not recorded</code> · not recorded" in index
    assert "symmetry: not applied (whether it was asked for: not recorded)" in index
    page = (tmp_path / "r" / "traces" / "c--not_bad.html").read_text()
    assert "<th>constants</th><td>limit = 3, bad = 2</td>" in page


def test_a_trace_page_says_a_verdict_is_not_as_expected(tmp_path: Path) -> None:
    result = run(counter(tmp_path / "c.toml", bad=2))  # not_bad expected to hold, violated at x = 2
    write_report(build_report([result]), tmp_path / "r", None)
    page = (tmp_path / "r" / "traces" / "c--not_bad.html").read_text()
    assert 'expected holds: <span class="flag">NOT as expected</span>' in page
    assert "reaches_two: <span class=\"muted\">the counter surely passes 2</span>" in page
    assert "<th>bounds</th><td>max_depth = 10; the search finished within them</td>" in page


def test_junit_cases_carry_the_model_and_a_failure_its_search(tmp_path: Path) -> None:
    result = run(counter(tmp_path / "c.toml", bad=2, extra='[evidence]\n'))
    result.evidence = {"not_bad": {"witness": "reaches_two"}}  # as a record may hold it
    root = ET.fromstring(junit_xml([result]))
    case = root.find(".//testcase[@name='not_bad']")
    props = {p.get("name"): p.get("value") for p in case.findall("properties/property")}
    assert props["description"] == "x counts to 3" and props["expected"] == "holds"
    assert props["evidence"] == "witness reaches_two" and props["constants"] == "limit = 3, bad = 2"
    assert props["bounds"] == "max_depth = 10" and props["reductions_requested"] == "symmetry on, por on"
    assert props["ordercheck_version"] == checker.__version__ and DATE.fullmatch(props["date"])
    assert props["commit"].startswith("none")
    suite = {p.get("name"): p.get("value") for p in root.findall("testsuite/properties/property")}
    assert suite["not_checked"] == "reaches_two: the counter surely passes 2"
    message = case.find("failure").get("message")
    assert message == ("not_bad: expected holds, got violated, 2-step trace; 4 distinct states searched (depth 4); "
                       "constants limit = 3, bad = 2; reductions applied: none"), message


def test_quiet_on_one_model_prints_one_line_and_what_is_unexpected(tmp_path: Path) -> None:
    model = counter(tmp_path / "c.toml")
    green = CliRunner().invoke(main, ["check", str(model), "--quiet"])
    assert green.exit_code == 0, green.output
    lines = [line for line in green.output.splitlines() if line.strip()]
    assert lines[0].startswith(f"{model}: counter, 4 distinct states") and lines[0].endswith(": 2 verdicts as expected")
    assert all("not shown under --quiet" in line for line in lines[1:]), green.output
    red = CliRunner().invoke(main, ["check", str(counter(tmp_path / "c.toml", bad=2)), "--quiet"])
    assert red.exit_code == 1
    out = red.output.splitlines()
    assert out[0].endswith(": 1 of 2 verdicts NOT as expected")
    assert out[1].split() == ["not_bad", "violated", "expected", "holds", "UNEXPECTED"]
    assert not any("ends_at_limit" in line for line in out)

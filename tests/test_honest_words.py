"""Issue 31, honest words: no artifact says "proved" for a bounded check, a result
conditional on an unproved invariant says so, an ablation that changes nothing is
"inert here", and a ``sometimes`` property never reached is "unreached" everywhere."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner

from ordercheck.checker.api.result import PropertyResult, Result, Stats
from ordercheck.checker.cli import main
from ordercheck.reports.ablation_text import ablation_table
from ordercheck.reports.html import render_index
from ordercheck.reports.markdown import render_markdown
from ordercheck.reports.view import Ablation, build_report

TOYSPECS = (Path(__file__).resolve().parent / "toyspecs.py").as_posix()


def test_prove_bmc_only_never_says_proved_in_any_artifact(tmp_path: Path) -> None:
    """`prove --bmc-only` on bus1 without sync_sender, 2 peers, 6 steps: a counterexample
    the model expects (message_after_block) and nothing found for causal. Console, JSON,
    HTML and Markdown say what was found or not within 6 steps, never "proved"; the
    expected counterexample reads as expected."""
    model = tmp_path / "no-sync.toml"
    model.write_text('spec = "bus1"\n[constants]\npeers = 2\nsends = 1\nsync_sender = false\n'
                     '[check]\nproperties = ["message_after_block", "causal"]\n'
                     '[expect]\nmessage_after_block = "violated"\n')
    out = tmp_path / "prove.json"
    rep = tmp_path / "report"
    res = CliRunner().invoke(main, ["prove", str(model), "--bmc-only", "--depth", "6", "--json", str(out),
                                    "--report", str(rep)])
    assert res.exit_code == 3, res.output  # causal: a bounded search is no proof
    console = res.output
    assert "counterexample in 6 steps" in console and "expected violated  ok, as expected" in console
    assert "no counterexample within 6 steps" in console
    data = json.loads(out.read_text())
    assert data["queries"]["bmc: causal"]["shown"] == "no counterexample within 6 steps"
    assert data["queries"]["bmc: message_after_block"]["shown"] == "counterexample in 6 steps"
    html = (rep / "index.html").read_text()
    md = (rep / "report.md").read_text()
    for text in (html, md):
        assert "no counterexample within 6 steps" in text and "ok, as expected" in text
    for name, text in (("console", console), ("json", out.read_text()), ("html", html), ("markdown", md),
                       ("results.json", (rep / "results.json").read_text())):
        assert "proved" not in text.lower(), name
    # The report command reads the record back into the same report.
    again = CliRunner().invoke(main, ["report", str(out), "-o", str(tmp_path / "again")])
    assert again.exit_code == 0, again.output
    assert "no counterexample within 6 steps" in (tmp_path / "again" / "report.md").read_text()


def test_an_implication_from_an_invariant_not_shown_inductive_is_conditional(tmp_path: Path) -> None:
    from ordercheck.checker.loading.modelfile import model_from_dict
    from ordercheck.checker.symbolic.prove import ProveOptions, prove_model
    from ordercheck.reports.proofs import ProofRecord

    m = model_from_dict({"spec": "bus1", "constants": {"peers": 2, "sends": 1, "block_destinations": False},
                         "check": {"properties": ["causal"]}, "prove": {"queue_bound": 2}}, "m.toml")
    result = prove_model(m, ProveOptions(depth=0))
    assert not result.inductive
    q = next(q for q in result.queries if q.name == "implies: causal_per_queue")
    assert q.status == "proved" and q.shown_status == "conditional" and q.to_json()["shown"] == "conditional"
    view = build_report([ProofRecord.from_json(result.to_json())])
    html, md = render_index(view), render_markdown(view)
    for text in (html, md):
        assert "implies: causal\\_per\\_queue | conditional" in text or "implies: causal_per_queue</td><td>conditional" in text
        assert "invariant NOT shown inductive" in text


def _result(states: int, causal: str, reach: str, transitions: int | None = None) -> Result:
    return Result("m.toml", "bus1", {"peers": 2}, "local", {}, {
        "causal": PropertyResult("causal", "always", causal),  # type: ignore[arg-type]
        "waits_behind_block": PropertyResult("waits_behind_block", "sometimes", reach),  # type: ignore[arg-type]
    }, Stats(distinct_states=states, transitions=transitions if transitions is not None else states * 2))


def test_ablation_inert_unchecked_and_unreached_read_the_same_in_console_html_and_markdown() -> None:
    base = _result(100, "holds", "violated")
    record = Ablation("m.toml", "bus1", base, [
        ("inert_flag", "does nothing here", _result(100, "holds", "violated")),
        ("other_flag", "changes the states", _result(120, "holds", "violated")),
        ("key_flag", "protects causal", _result(90, "violated", "holds")),
    ], note="The model file switches key_flag off; the table starts from the full algorithm with every step on.")
    text = ablation_table(record)
    assert "inert_flag (does nothing here): inert here" in text
    assert "other_flag (changes the states): none of the 2 properties this model checks breaks" in text
    assert "nothing breaks" not in text
    assert "unreached" in text.split("\n\n")[1] and "violated  " not in text.split("\n\n")[1].splitlines()[2]
    view = build_report([record])
    html, md = render_index(view), render_markdown(view)
    for out in (html, md):
        assert "inert here" in out and "none of those checked" in out
        assert "reached" in out and "unreached" in out
        assert "as expected" not in out  # no cell has an expectation
        assert "not judged" in out
        assert "m with every step on" in out and "m (full algorithm)" not in out  # a mutant's file
    # A witness reads reached or unreached in every cell, never holds or violated.
    assert '<span class="verdict reached">reached</span>' in html and "🎯 reached" in md
    assert '<span class="verdict unreached">unreached</span>' in html
    # Four runs, each in the ablation table and in its model's section: causal's 8 cells
    # are holds (6) or violated (2), the witness's 8 reached or unreached.
    assert html.count('class="verdict holds"') == 6 and html.count('class="verdict violated"') == 2
    assert html.count('class="verdict reached"') + html.count('class="verdict unreached"') == 8
    # The breaks column is the console's changed properties, word for word.
    assert ">causal, waits_behind_block reached<" in html
    assert "causal violated" in text and "waits_behind_block reached" in text


def test_a_sometimes_never_reached_is_unreached_in_every_artifact(tmp_path: Path) -> None:
    """Counter to 1 never reaches 2: its `sometimes` property reads "unreached" on the
    console, in the matrix, the JSON, the HTML, the Markdown and JUnit (where the model
    expecting it to hold fails with "got unreached")."""
    model = tmp_path / "counter.toml"
    model.write_text(f'spec = "{TOYSPECS}:Counter"\n[constants]\nlimit = 1\n[expect]\nreaches_two = "holds"\n')
    out, rep, junit = tmp_path / "r.json", tmp_path / "rep", tmp_path / "j.xml"
    res = CliRunner().invoke(main, ["check", str(model), "--quiet", "--json", str(out), "--report", str(rep),
                                    "--junit", str(junit)])
    assert res.exit_code == 1, res.output
    assert "reaches_two  unreached  expected reached   UNEXPECTED" in res.output
    prop = json.loads(out.read_text())["properties"]["reaches_two"]
    assert prop["status"] == "violated" and prop["shown"] == "unreached"
    assert '<span class="verdict unreached">unreached</span>' in (rep / "index.html").read_text()
    assert "⭕ unreached" in (rep / "report.md").read_text()
    failure = ET.parse(junit).getroot().find(".//testcase[@name='reaches_two']/failure")
    assert failure is not None and failure.get("message", "").startswith("reaches_two: expected reached, got unreached; ")
    matrix = CliRunner().invoke(main, ["matrix", str(model), "--quiet", "--json", str(tmp_path / "m.json")])
    assert "UNREACHED!" in matrix.output
    cell = json.loads((tmp_path / "m.json").read_text())["rows"][0]["cells"]["reaches_two"]
    assert cell["shown"] == "unreached"


def test_a_crafted_prove_record_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "p.json"
    bad.write_text(json.dumps({"model": "m.toml", "spec": "bus1", "engine": "z3",
                               "queries": {"bmc: causal": {"kind": "bmc", "seconds": "slow"}}}))
    res = CliRunner().invoke(main, ["report", str(bad), "-o", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    assert "queries.bmc: causal.seconds: expected a number" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "out").exists()

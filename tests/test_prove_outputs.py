"""What `prove` writes besides its console lines: ``[prove] properties`` (what it
judges), JUnit XML (``prove --junit``, ``report --junit`` on ``prove --json``), the JSON
fields a report reads, and the TLA+ module of a proved inductive invariant (``--tla``),
re-checked by SANY and TLC when TLA2TOOLS_JAR is set.

All on sequencer-2 (a 13-variable encoding whose queries take milliseconds)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from ordercheck.checker.cli import main
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.symbolic.prove import ProveOptions, prove_model
from ordercheck.checker.symbolic.tla_inv import invariant_module
from ordercheck.tla.tlc import TlcUnavailable, find_tlc, run_tlc
from tests.conftest import MODELS

SEQUENCER = MODELS / "sequencer-2.toml"

try:
    find_tlc()
    NO_TLC = ""
except TlcUnavailable as exc:
    NO_TLC = f"TLC not available: {exc}"


def sequencer_model(tmp_path: Path, prove: str) -> Path:
    """sequencer-2 with its [prove] table replaced by ``prove`` (and no [evidence]: its
    mutants are not beside the copy)."""
    text = SEQUENCER.read_text().split("[prove]")[0]
    text = re.sub(r"^\[evidence\]\n(?:[^\[].*\n|\n)*", "", text, flags=re.M) + "[prove]\n" + prove
    path = tmp_path / "seq.toml"
    path.write_text(text)
    return path


def test_prove_judges_what_prove_properties_names(tmp_path) -> None:
    """sequencer-2's [prove] properties names the three total orders the proof decides:
    exit 0, each of the other expectations printed as not judged. A listed property no
    query decides is undecided (exit 3); a name the model does not check is exit 2."""
    res = CliRunner().invoke(main, ["prove", str(SEQUENCER)])
    assert res.exit_code == 0, res.output
    assert "not judged: fifo (expected holds), causal (expected holds)" in res.output
    assert "undecided" not in res.output and "UNKNOWN" not in res.output
    assert "(any number of sends, no queue" in res.output  # no signal action in this encoding

    res = CliRunner().invoke(main, ["prove", str(SEQUENCER), "--property", "total"])  # replaces the key
    assert res.exit_code == 0, res.output
    assert "not judged: fifo (expected holds)" in res.output and "total_global (expected holds)" in res.output
    assert "(prove judges total; no part in the exit code)" in res.output
    res = CliRunner().invoke(main, ["prove", str(SEQUENCER), "--property", "nope"])
    assert res.exit_code == 2 and "--property: 'nope' is not a property this model checks" in res.output

    path = sequencer_model(tmp_path, 'properties = ["total", "eventual_delivery"]\n')
    res = CliRunner().invoke(main, ["prove", str(path)])
    assert res.exit_code == 3, res.output
    assert "undecided: eventual_delivery, expected holds" in res.output
    assert "not judged: fifo" in res.output and "not judged: total " not in res.output

    path = sequencer_model(tmp_path, 'properties = ["total", "lamport"]\n')
    junit = tmp_path / "bad.xml"
    res = CliRunner().invoke(main, ["prove", str(path), "--junit", str(junit), "--json", str(tmp_path / "bad.json")])
    assert res.exit_code == 2
    assert "prove.properties: 'lamport' is not a property this model checks" in res.output
    error = _cases(ET.parse(junit).getroot())["prove.properties"].find("error")  # as check --junit on bad input
    assert error is not None and "'lamport' is not a property" in error.get("message", "")
    assert not (tmp_path / "bad.json").exists()


def test_without_prove_properties_every_expectation_is_judged(tmp_path) -> None:
    """No properties key: every expectation is prove's to decide, as before (exit 3)."""
    result = prove_model(load_model(sequencer_model(tmp_path, "depth = 0\n")), ProveOptions())
    assert result.judged is None and not result.not_judged
    assert "eventual_delivery" in result.undecided and result.exit_code() == 3


def _cases(root: ET.Element) -> dict[str, ET.Element]:
    return {c.get("name"): c for c in root.iter("testcase")}


def test_prove_junit_and_json(tmp_path) -> None:
    """--junit: a case per query, a failure for the lemma refuted against an expected
    proof (its counterexample to induction in the body), an error per undecided
    expectation, a skipped case per expectation not judged; the JSON says the encoding
    keeps no queue. report --junit on the JSON writes the same suite."""
    path = sequencer_model(tmp_path, 'properties = ["total", "eventual_delivery"]\n')
    junit, out = tmp_path / "prove.xml", tmp_path / "prove.json"
    res = CliRunner().invoke(main, ["prove", str(path), "--drop", "expect_counts_deliveries",
                                    "--junit", str(junit), "--json", str(out)])
    assert res.exit_code == 1, res.output
    assert f"JUnit XML: {junit}" in res.output
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == str(path)
    cases = _cases(root)
    failure = cases["inductive: delivery_by_number"].find("failure")
    assert failure is not None and "expected proved, got refuted" in failure.get("message", "")
    assert "counterexample to induction" in (failure.text or "") and "state 1:" in (failure.text or "")
    assert cases["inductive: shape"].find("failure") is None and cases["initiation"].find("error") is None
    error = cases["undecided: eventual_delivery"].find("error")
    assert error is not None and "expected holds" in error.get("message", "")
    assert cases["not judged: fifo"].find("skipped") is not None
    assert cases["undecided: total"].find("error") is not None  # no proof once the invariant is not inductive
    assert (suite.get("failures"), suite.get("errors")) == ("1", "2")
    assert int(suite.get("skipped", "0")) == len([n for n in cases if n.startswith("not judged: ")]) > 0
    assert root.get("failures") == "1" and root.get("errors") == "2"

    data = json.loads(out.read_text())
    assert data["queue_free"] is True and data["signals"] is False
    assert data["judged"] == ["total", "eventual_delivery"] and "fifo" in data["not_judged"]

    again = tmp_path / "again.xml"
    res = CliRunner().invoke(main, ["report", str(out), "-o", str(tmp_path / "html"), "--junit", str(again)])
    assert res.exit_code == 0, res.output
    assert set(_cases(ET.parse(again).getroot())) == set(cases)
    html = (tmp_path / "html" / "index.html").read_text()
    assert "not judged: fifo (expected holds)" in html


def test_tla_is_written_only_for_an_inductive_invariant(tmp_path) -> None:
    """--tla writes NAME_inv.tla and .cfg when the invariant is inductive, and nothing
    (with a line saying why) when it is not; a bad --tla-box is exit 2."""
    res = CliRunner().invoke(main, ["prove", str(SEQUENCER), "--tla", str(tmp_path / "ok")])
    assert res.exit_code == 0, res.output
    module = (tmp_path / "ok" / "sequencer_2_inv.tla").read_text()
    assert module.startswith("---- MODULE sequencer_2_inv ----")
    for part in ("TypeOK ==", "Init ==", "Next ==", "Inv ==", "IndInit ==", "T_total_by_number =="):
        assert part in module
    config = (tmp_path / "ok" / "sequencer_2_inv.cfg").read_text()
    assert "INIT IndInit" in config and "INVARIANT Inv" in config and "CONSTRAINT TypeOK" in config
    assert "BoxLo == 0" in module and "BoxHi == 1" in module

    res = CliRunner().invoke(main, ["prove", str(SEQUENCER), "--drop", "expect_counts_deliveries",
                                    "--tla", str(tmp_path / "no")])
    assert res.exit_code == 1
    assert "TLA+: sequencer_2_inv not written: the invariant is not shown inductive" in res.output
    assert not (tmp_path / "no").exists()

    res = CliRunner().invoke(main, ["prove", str(SEQUENCER), "--tla", str(tmp_path / "x"), "--tla-box", "3..1"])
    assert res.exit_code == 2 and "--tla-box" in res.output


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_tlc_rechecks_the_exported_invariant(tmp_path) -> None:
    """SANY parses the export and TLC finds Inv inductive on the box 0..1; the same
    export without the counting lemma (not inductive, Z3 refutes it) is refuted by TLC
    too, so the check can fail."""
    model = load_model(SEQUENCER)
    result = prove_model(model, ProveOptions())
    assert result.inductive
    good = invariant_module(model, result)
    weak = prove_model(model, ProveOptions(drop=("expect_counts_deliveries",)))
    assert not weak.inductive
    bad = invariant_module(model, weak)  # exported anyway, as a control
    for name, export in (("good", good), ("bad", bad)):
        (tmp_path / name).mkdir()
        for filename, text in export.files.items():
            (tmp_path / name / filename).write_text(text)
    others = []  # BSS and matrix clocks: actions that choose a message (several variables at once)
    for name in ("bss-3", "matrix-3"):
        other = load_model(MODELS / f"{name}.toml")
        export = invariant_module(other, prove_model(other, ProveOptions()))
        others.append(export.module_name)
        for filename, text in export.files.items():
            (tmp_path / "good" / filename).write_text(text)
    java, jar = find_tlc()
    names = ["sequencer_2_inv", *others]
    from tests.test_tla_sany import run_sany

    sany = run_sany([f"{n}.tla" for n in names], tmp_path / "good", java, jar, timeout=120)
    for name in names:
        assert f"Semantic processing of module {name}" in sany.stdout, sany.stdout + sany.stderr
    assert not re.search(r"Semantic errors|\*\*\* Errors|Parse Error|Lexical error", sany.stdout), sany.stdout
    run = run_tlc(tmp_path / "good", "sequencer_2_inv", "sequencer_2_inv.cfg", timeout=300)
    assert run.complete and run.distinct and run.distinct > 1, run.output[-2000:]
    run = run_tlc(tmp_path / "bad", "sequencer_2_inv", "sequencer_2_inv.cfg", timeout=300)
    assert run.violated == "Inv" and len(run.trace) == 2, run.output[-2000:]


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_tlc_rechecks_the_scaffolds_invariant_with_shared_subterms(tmp_path) -> None:
    """The scaffold's queue updates repeat a subterm in every slot, which the export
    names once in a LET: TLC finds the exported invariant inductive on its box."""
    res = CliRunner().invoke(main, ["new", "demo", "--base", "holdback", "--symbolic", "--dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    out = tmp_path / "tla"
    res = CliRunner().invoke(main, ["prove", str(tmp_path / "models" / "demo.toml"), "--tla", str(out)])
    assert res.exit_code == 0, res.output
    assert "  LET A_0_1 == " in (out / "demo_inv.tla").read_text()
    run = run_tlc(out, "demo_inv", "demo_inv.cfg", timeout=300)
    assert run.complete and run.distinct and run.distinct > 1, run.output[-2000:]

"""benchmarks/vs_spin.py and benchmarks/promela/bss_2x5.pml: the parser of SPIN's output
on recorded runs (tests/data/spin/), the model files the benchmark writes for ordercheck,
and, where ``spin`` and ``gcc`` are installed, the Promela model at small bounds: the
same state count as ordercheck's unreduced search, the correct protocol holding and the
mutant without condition (a) violating the assertion. Nothing here is timed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.tla.export import export_model
from ordercheck.tla.tlc import TlcUnavailable, find_tlc

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "spin"
sys.path.insert(0, str(ROOT / "benchmarks"))

import scale  # noqa: E402
import vs_spin as bench  # noqa: E402

try:
    find_tlc()
    NO_TLC = ""
except TlcUnavailable as exc:
    NO_TLC = f"TLC not available: {exc}"

FAST = ["-O0"]
"""gcc's optimisation off for these tiny searches: pan.c compiles several times faster."""
needs_spin = pytest.mark.skipif(bench.spin_missing() is not None, reason=f"SPIN: {bench.spin_missing()}")


def recorded(name: str) -> bench.PanRun:
    return bench.parse_pan((DATA / name).read_text(encoding="utf-8"))


def test_parse_a_complete_search() -> None:
    run = recorded("bss-2x2-noreduce.out")
    assert (run.states, run.transitions, run.depth, run.errors) == (198, 321, 8, 0)
    assert run.complete and run.violation is None and run.seconds == 0.0
    assert run.verdict == "holds"


def test_parse_an_assertion_violation() -> None:
    run = recorded("bss-2x2-no-condition-a.out")
    assert (run.states, run.errors) == (9, 1)
    assert not run.complete
    assert run.violation is not None and run.violation.startswith("assertion violated ((((past[")
    assert run.verdict == "violated"


def test_an_error_that_is_no_violation_is_unknown() -> None:
    # An invalid end state stops the search: neither "holds" nor "violated".
    run = recorded("bss-2x1-no-end-label.out")
    assert run.violation == "invalid end state" and run.errors == 1
    assert run.verdict == "unknown"


def test_output_without_statistics_is_refused() -> None:
    with pytest.raises(ValueError, match="no search statistics"):
        bench.parse_pan("pan: out of memory\n")
    # A search stopped at the depth bound is not complete, whatever it found.
    text = (DATA / "bss-2x2-noreduce.out").read_text(encoding="utf-8")
    assert bench.parse_pan("error: max search depth too small\n" + text).verdict == "unknown"


def ordercheck_states(tmp_path: Path, sends: int, condition_a: bool = True) -> tuple[int, str]:
    """Our engine's unreduced count and causal verdict on the model the benchmark writes."""
    path = tmp_path / f"bss-2x{sends}.toml"
    path.write_text(bench.model_text(sends, condition_a, "holds" if condition_a else "violated"), encoding="utf-8")
    model = load_model(path)
    assert [p.name for p in model.properties] == ["causal"]
    # Every constant as the Promela model encodes it (those the file leaves out at the spec's defaults).
    assert {k: getattr(model.spec, k) for k in bench.ENCODED} == {**bench.ENCODED, "sends": sends, "condition_a": condition_a}
    result = check_model(model, Options(symmetry=False, por=False, progress=False))
    return result.stats.distinct_states, result.properties["causal"].status


def test_the_benchmark_writes_the_model_with_its_expectation(tmp_path: Path) -> None:
    assert ordercheck_states(tmp_path, 2) == (198, "holds")
    assert ordercheck_states(tmp_path, 2, condition_a=False)[1] == "violated"


def test_without_spin_it_says_so_and_exits_0(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on it
    assert bench.main(["--sends", "1"]) == 0
    assert "SPIN comparison skipped: spin and gcc not on PATH" in capsys.readouterr().out


def test_sends_out_of_range_is_refused() -> None:
    with pytest.raises(SystemExit) as exc:
        bench.main(["--sends", str(bench.MAX_SENDS + 1)])
    assert exc.value.code == 2


@needs_spin
def test_promela_has_ordercheck_unreduced_state_count(tmp_path: Path) -> None:
    # The Promela model holds what ordercheck's state holds: with SPIN's partial-order
    # reduction off, its stored states are ordercheck's distinct states (at 2 broadcasts
    # the whole benchmark's run below compares them).
    work = tmp_path / "spin"
    work.mkdir()
    spin = bench.run_spin(work, {"SENDS": 3}, [*FAST, "-DNOREDUCE"])
    assert spin.pan.verdict == "holds", spin.search.output
    assert (spin.pan.states, "holds") == ordercheck_states(tmp_path, 3) == (3011, "holds")


def test_tlc_configuration_of_the_benchmark_model(tmp_path: Path) -> None:
    # --tlc runs reduced_vs_tlc's TLC, configured by scale.tlc_config: BSS's export
    # substitutes operators for constants, written "Peers <- MCPeers" (with "=" TLC
    # refuses the file).
    path = tmp_path / "bss.toml"
    path.write_text(bench.model_text(2, True, "holds"), encoding="utf-8")
    model = load_model(path)
    export = export_model(model, symmetry=False)
    cfg = scale.tlc_config(export, model, scale.chosen(model, "invariants")).splitlines()
    assert "    Peers <- MCPeers" in cfg and "    ConditionA = TRUE" in cfg
    assert [line for line in cfg if line.startswith("INVARIANT")] == ["INVARIANT Causal"]


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_tlc_row_counts_the_unreduced_states(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bss.toml"
    path.write_text(bench.model_text(2, True, "holds"), encoding="utf-8")
    bench.tlc_row(path, None)
    line = capsys.readouterr().out.strip()
    assert line.startswith("TLC ") and "TLC -workers 1, unreduced" in line
    assert line.split()[5:7] == ["198", "holds"], line


def fake_ordercheck(states: int, verdict: str) -> bench.OrdercheckRun:
    return bench.OrdercheckRun(bench.Timed("", 0, 2.0, 1.0), states, 321, 0.5, verdict, True)


def fake_spin(name: str) -> bench.SpinRun:
    step = bench.Timed("", 0, 1.0, 0.5)
    return bench.SpinRun(step, step, step, recorded(name))


def test_compare_flags_a_count_or_a_verdict_that_differs(capsys: pytest.CaptureFixture[str]) -> None:
    holds = fake_spin("bss-2x2-noreduce.out")
    assert bench.compare("unreduced", fake_ordercheck(198, "holds"), "ours", holds, "SPIN", True)
    out = capsys.readouterr().out
    assert "states equal" in out and "wall: 0.67 (whole), 2.00 (pan alone); CPU: 0.67" in out
    assert not bench.compare("unreduced", fake_ordercheck(197, "holds"), "ours", holds, "SPIN", True)
    assert "states DIFFER by -1" in capsys.readouterr().out
    # Counts are not compared where the tools reduce differently; verdicts always are.
    assert bench.compare("to verdict", fake_ordercheck(50, "holds"), "ours", holds, "SPIN", False)
    assert not bench.compare("mutant", fake_ordercheck(9, "holds"), "ours", fake_spin("bss-2x2-no-condition-a.out"),
                             "SPIN", False)
    assert "verdicts DISAGREE" in capsys.readouterr().out


@needs_spin
def test_the_whole_benchmark_at_two_broadcasts(capsys: pytest.CaptureFixture[str]) -> None:
    # Both tools on the model and on the mutant without condition (a): the mutant's row
    # says "violated" for SPIN only when pan reported an assertion violated.
    assert bench.main(["--sends", "2", *(f"--cflags={flag}" for flag in FAST)]) == 0
    out = capsys.readouterr().out
    assert "BSS 2 peers x 2 broadcasts" in out and "states equal" in out and "NOT as expected" not in out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("unreduced "))
    # ordercheck, SPIN's three processes, pan alone: the same count, the same verdict.
    for line in lines[at : at + 3]:
        assert "198" in line.split() and "holds" in line.split(), line
    assert sum(line.startswith("mutant ") and "violated" in line for line in lines) == 1

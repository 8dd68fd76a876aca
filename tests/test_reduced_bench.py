"""benchmarks/reduced_vs_tlc.py: its arguments, its verdict bookkeeping, and the
benchmark models it runs (they load, check under a state bound, and export to TLA+
with the configuration TLC is given). Nothing here is timed."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ordercheck.checker.cli import main as cli
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.tla.export import export_model

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import reduced_vs_tlc as bench  # noqa: E402
import scale  # noqa: E402

MODELS = [ROOT / "benchmarks" / "models" / name for name in ("bus1-3x2.toml", "bus1-3-a2b2c1.toml")]


def test_tlc_workers_list() -> None:
    assert bench.parse_workers("1,2") == [1, 2]
    assert bench.parse_workers("2") == [2]
    for bad in ("", "0", "1,x", "-1"):
        with pytest.raises(argparse.ArgumentTypeError):
            bench.parse_workers(bad)


def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        bench.main(["no/such/model.toml"])
    assert exc.value.code == 2
    assert "no/such/model.toml: no such model file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        bench.main([str(MODELS[0]), "--workers", "0"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        bench.main([str(MODELS[0]), "--tlc-workers", "0"])
    assert exc.value.code == 2


def test_tlc_verdicts() -> None:
    props = ["fifo", "causal", "total", "global_lock"]
    done = {"finished": True, "violated": None, "properties": props}
    assert bench.tlc_verdicts(done) == dict.fromkeys(props, "holds")
    # TLC stops at its first violation: the others are unknown, not "holds".
    assert bench.tlc_verdicts({**done, "violated": "causal"}) == {"causal": "violated"}
    assert bench.tlc_verdicts({**done, "finished": False}) == {}


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_benchmark_model_checks_and_exports(path: Path, tmp_path: Path) -> None:
    # The models load and check (bounded, so every verdict is unknown, exit code 3: the
    # full runs take minutes) with partial-order reduction, nothing violated on the way.
    report = tmp_path / "result.json"
    out = CliRunner().invoke(cli, ["check", str(path), "--max-states", "3000", "--quiet", "--json", str(report)])
    assert out.exit_code == 3, out.output
    assert "3,000 distinct states" in out.output and "stopped by max_states" in out.output
    assert "violated" not in out.output and "error" not in out.output.lower()
    assert json.loads(report.read_text())["reductions"] == {"symmetry": False, "por": True, "deferred_arrivals": False,
                                                          "solo_steps": False, "cycle_proviso": False}
    # TLC checks the ordering properties, which are stable, and nothing else.
    model = load_model(str(path))
    props = scale.chosen(model, "invariants")
    assert [p.name for p in props] == ["fifo", "causal", "total", "global_lock"]
    export = export_model(model, symmetry=False)
    cfg = scale.tlc_config(export, model, props)
    assert [line for line in cfg.splitlines() if line.startswith("INVARIANT")] == [
        "INVARIANT Fifo",
        "INVARIANT Causal",
        "INVARIANT Total",
        "INVARIANT GlobalLock",
    ]
    assert "TypeOK" not in cfg and "PROPERTY" not in cfg


def test_our_side_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    # The benchmark's own run of a small model, TLC left out: the row, its verdicts.
    bench.main([str(ROOT / "models" / "bus1-2.toml"), "--no-tlc"])
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.strip().startswith("ours, "))
    assert "states" in row and "s CPU" in row and "as expected: yes" in row
    assert "fifo holds" in row and "waits_behind_block violated" in row
    assert "TLC -workers" not in out

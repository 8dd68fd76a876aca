"""Inputs no run means (issue 18): refused with one line and exit code 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults_helpers import MODELS, invoke, listing, one_error_line

HEAD = 'spec = "fifo"\n[constants]\npeers = 2\n'


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ("[check]\nproperties = []\n", "check.properties", "nothing would be checked"),
        ("[check]\nmax_states = 0\n", "check.max_states", "at least 1"),
        ("[check]\ntime_limit = nan\n", "check.time_limit", "finite"),
        ("[check]\ntime_limit = inf\n", "check.time_limit", "finite"),
        ("[check]\ntime_limit = -inf\n", "check.time_limit", "finite"),
        ("[prove]\ntimeout = nan\n", "prove.timeout", "finite"),
        ("[check]\nmax_depth = inf\n", "check.max_depth", "finite"),
    ],
    ids=["empty-properties", "max-states-0", "nan", "inf", "minus-inf", "prove-nan", "depth-inf"],
)
def test_model_values_refused(tmp_path: Path, body: str, field: str, words: str) -> None:
    model = tmp_path / "m.toml"
    model.write_text(HEAD + body)
    out = invoke("check", model, "--json", tmp_path / "out.json")
    assert out.returncode == 2, out.stderr
    line = one_error_line(out.stderr)
    assert f"{model}: {field}: " in line and words in line, line
    assert listing(tmp_path) == ["m.toml"]


@pytest.mark.parametrize("kind", ["arrays", "tables"])
def test_absurd_nesting_in_a_model(tmp_path: Path, kind: str) -> None:
    model = tmp_path / "m.toml"
    deep = "[" * 5000 + "]" * 5000 if kind == "arrays" else "{a=" * 5000 + "1" + "}" * 5000
    model.write_text(HEAD + f"extra = {deep}\n")
    out = invoke("check", model)
    assert out.returncode == 2, out.stderr
    assert "nested too deeply" in one_error_line(out.stderr)


def test_nesting_below_the_recursion_limit_still_refused(tmp_path: Path) -> None:
    """Deep enough to pass the parser, too deep for any model: named by field."""
    model = tmp_path / "m.toml"
    model.write_text(HEAD.replace("peers = 2", "peers = " + "[" * 40 + "]" * 40))
    out = invoke("check", model)
    assert out.returncode == 2, out.stderr
    line = one_error_line(out.stderr)
    assert "constants.peers" in line and "nested too deeply" in line, line


def test_absurd_nesting_in_a_result_file(tmp_path: Path) -> None:
    result = tmp_path / "r.json"
    result.write_text("[" * 100_000 + "]" * 100_000)
    out = invoke("report", result, "-o", tmp_path / "report")
    assert out.returncode == 2, out.stderr
    assert f"{result}: is nested too deeply" in one_error_line(out.stderr)
    assert listing(tmp_path) == ["r.json"]


def test_resume_without_a_checkpoint(tmp_path: Path) -> None:
    """--resume with an empty (or missing) checkpoint directory is an error, not a fresh start."""
    for root in (tmp_path / "missing", tmp_path):
        out = invoke("check", MODELS / "fifo-4.toml", "--checkpoint", root, "--resume", "--json", tmp_path / "out.json")
        assert out.returncode == 2, out.stderr
        line = one_error_line(out.stderr)
        assert "--resume: no checkpoint to resume from" in line and str(root) in line, line
        assert not (tmp_path / "out.json").exists()


def test_resume_checked_for_every_model_before_any_search(tmp_path: Path) -> None:
    """Two models, a checkpoint for the second only: the first must resume, so the run is
    refused before any search. (A later model without a checkpoint is one the
    interrupted run did not reach: it starts afresh, tests/test_faults_checkpoints.py.)"""
    ckpt = tmp_path / "ckpt"
    assert invoke("check", MODELS / "fifo-4.toml", "--quiet", "--checkpoint", ckpt, "--checkpoint-every", "0").returncode == 0
    out = invoke("check", MODELS / "fifo-3.toml", MODELS / "fifo-4.toml", "--checkpoint", ckpt, "--resume")
    assert out.returncode == 2
    assert "fifo-3" in one_error_line(out.stderr)
    assert out.stdout == ""  # nothing was checked


@pytest.mark.parametrize("value", ["0", "nan", "inf", "-5G", "12Q", "0.5K"])
def test_bad_memory_limit(value: str) -> None:
    out = invoke("check", MODELS / "fifo-4.toml", "--memory-limit", value)
    assert out.returncode == 2, out.stderr
    assert "--memory-limit" in out.stderr and "Traceback" not in out.stderr


def test_more_workers_than_cores_warns() -> None:
    import os

    cores = len(os.sched_getaffinity(0))
    out = invoke("check", MODELS / "fifo-4.toml", "--quiet", "--workers", str(cores + 3))
    assert out.returncode == 0, out.stderr
    assert f"warning: --workers {cores + 3} is more than the {cores} cores" in out.stderr
    quiet = invoke("check", MODELS / "fifo-4.toml", "--quiet", "--workers", "1")
    assert "warning" not in quiet.stderr


@pytest.mark.parametrize("command", ["check", "ablate"])
@pytest.mark.parametrize("option", ["--checkpoint", "--resume"])
def test_checkpoint_options_refused_with_spark(tmp_path: Path, command: str, option: str) -> None:
    """The Spark engine keeps no checkpoint to resume from: --checkpoint and --resume are
    refused with it (exit 2, one line naming the option) rather than ignored, before
    Spark starts or anything is written."""
    extra = ["--checkpoint", tmp_path / "ckpt"] if option == "--checkpoint" else ["--resume"]
    out = invoke(command, MODELS / "synchronous-2.toml", "--engine", "spark", "--quiet", *extra,
                 "--json", tmp_path / "out.json")
    assert out.returncode == 2, out.stderr
    line = one_error_line(out.stderr)
    assert line.startswith(f"ordercheck: error: {option}: not supported by --engine spark"), line
    assert out.stdout == ""
    assert listing(tmp_path) == []


@pytest.mark.parametrize(
    ("extra", "hint"),
    [
        (["--workers", "2"], "--master local[N]"),
        (["--spill-dir", "SPILL"], "spark.local.dir"),
        (["--memory-limit", "2G"], "spark.driver.memory"),
    ],
)
def test_local_engine_options_refused_with_spark(tmp_path: Path, extra: list[str], hint: str) -> None:
    """--workers (above 1), --spill-dir and --memory-limit have no effect on the Spark
    engine: refused with it, naming what to set instead, where they were ignored."""
    extra = [str(tmp_path / "spill") if a == "SPILL" else a for a in extra]
    out = invoke("check", MODELS / "synchronous-2.toml", "--engine", "spark", "--quiet", *extra,
                 "--json", tmp_path / "out.json")
    assert out.returncode == 2, out.stderr
    line = one_error_line(out.stderr)
    assert line.startswith(f"ordercheck: error: {extra[0]}: not supported by --engine spark"), line
    assert hint in line and out.stdout == ""
    assert listing(tmp_path) == []

"""The command line: exit codes 0/1/2/3, bad input as one line, JSON output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MODELS

GOOD = """
spec = "bus1"
[constants]
peers = 2
sends = 1
[expect]
causal = "holds"
total = "holds"
"""


def write(tmp_path, text, name="m.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_expected_verdicts_exit_0(run_cli, tmp_path):
    res = run_cli("check", write(tmp_path, GOOD))
    assert res.exit_code == 0, res.output
    assert "causal" in res.output and "ok" in res.output


def test_unexpected_verdict_exits_1_and_prints_trace(run_cli, tmp_path):
    model = GOOD.replace('total = "holds"', 'total = "violated"')
    res = run_cli("check", write(tmp_path, model), "--quiet")
    assert res.exit_code == 1
    assert "UNEXPECTED" in res.output


def test_violation_without_expectation_exits_1(run_cli, tmp_path):
    model = """
spec = "fifo"
[constants]
peers = 3
destinations = "subsets"
[check]
properties = ["causal"]
"""
    res = run_cli("check", write(tmp_path, model), "--quiet")
    assert res.exit_code == 1
    assert (
        "c delivered b1 while a1, which happened before it, had not been delivered there: "
        "a sent a1 to b,c, b received a1, b sent b1 to c, c received b1"
    ) in res.output
    assert "trace (" in res.output


def test_bound_exits_3_and_never_holds(run_cli, tmp_path):
    out = tmp_path / "r.json"
    res = run_cli("check", MODELS / "bus1-3.toml", "--max-states", "500", "--quiet", "--json", out)
    assert res.exit_code == 3, res.output
    data = json.loads(out.read_text())
    for name, prop in data["properties"].items():
        # A cut search proves nothing holds; only a reached witness or a found violation
        # is definite.
        if prop["kind"] == "sometimes":
            assert prop["status"] in ("holds", "unknown"), name
        else:
            assert prop["status"] in ("violated", "unknown"), name
    assert "unknown" in {p["status"] for p in data["properties"].values()}
    assert data["stats"]["bound"] == "max_states"


def test_json_record_fields(run_cli, tmp_path):
    out = tmp_path / "r.json"
    res = run_cli("check", MODELS / "bus1-mutant-tiebreak-by-arrival.toml", "--quiet", "--json", out)
    assert res.exit_code == 0
    data = json.loads(out.read_text())
    assert data["spec"] == "bus1" and data["engine"] == "local"
    assert data["constants"]["tiebreak_by_sender"] is False
    assert set(data["reductions"]) == {"symmetry", "por", "deferred_arrivals", "solo_steps", "cycle_proviso"}
    total = data["properties"]["total"]
    assert total["status"] == "violated" and total["expected"] == "violated"
    assert "d delivered b1 before a1, c delivered a1 before b1" in total["explanation"]
    assert total["trace"][0]["action"] is None and len(total["trace"]) > 5
    for key in ("distinct_states", "transitions", "depth", "seconds", "states_per_second",
                "peak_memory_bytes", "collision_probability"):
        assert key in data["stats"]


def test_several_models_give_a_list(run_cli, tmp_path):
    out = tmp_path / "r.json"
    a = write(tmp_path, GOOD, "a.toml")
    b = write(tmp_path, GOOD, "b.toml")
    res = run_cli("check", a, b, "--quiet", "--json", out)
    assert res.exit_code == 0
    assert [r["model"] for r in json.loads(out.read_text())] == [str(a), str(b)]


BAD_INPUTS = [
    ("missing", None, "no such file"),
    ("bad toml", "spec = \n", "is not valid TOML"),
    ("unknown spec", 'spec = "nosuch"\n', "spec: unknown spec 'nosuch'"),
    ("unknown property", 'spec = "bus1"\n[expect]\nlamport = "holds"\n', "expect.lamport: bus1 has no property 'lamport'"),
    ("bad verdict", 'spec = "bus1"\n[expect]\ncausal = "fine"\n', 'expect.causal: expected "holds" or "violated"'),
    ("wrong type", 'spec = "bus1"\n[constants]\npeers = "three"\n', "constants.peers: expected an integer, got the string 'three'"),
    ("out of range", 'spec = "bus1"\n[constants]\npeers = 1\n', "constants.peers: must be at least 2"),
    ("unknown constant", 'spec = "bus1"\n[constants]\npeer = 3\n', "constants.peer: bus1 has no such constant"),
    ("bad choice", 'spec = "bus1"\n[constants]\ndestinations = "all"\n', "constants.destinations: expected one of"),
    ("bad script", 'spec = "bus1"\n[constants]\nscript = { a = ["z"] }\n', "constants.script.a: destination 'z' is not a peer"),
    ("unknown key", 'spec = "bus1"\nconstant = 1\n', "constant: unknown key"),
    ("bad bound", 'spec = "bus1"\n[check]\nmax_states = -4\n', "check.max_states: expected an integer of at least 1"),
]


@pytest.mark.parametrize("case,text,message", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_is_one_line_exit_2(case, text, message, tmp_path):
    path = tmp_path / "bad.toml"
    if text is not None:
        path.write_text(text)
    json_out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, "-m", "ordercheck.checker.cli", "check", str(path), "--json", str(json_out)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert lines[0].startswith(f"ordercheck: error: {path}")
    assert message in lines[0]
    assert not json_out.exists()  # nothing half-written


def test_bad_model_stops_before_any_search(run_cli, tmp_path):
    good = write(tmp_path, GOOD, "a.toml")
    bad = write(tmp_path, 'spec = "nosuch"\n', "b.toml")
    proc = subprocess.run(
        [sys.executable, "-m", "ordercheck.checker.cli", "check", str(good), str(bad)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stdout == ""


def test_list_shows_specs_and_models(run_cli):
    res = run_cli("list")
    assert res.exit_code == 0
    assert "bus1" in res.output and "fifo" in res.output
    assert "block_destinations" in res.output
    assert "bus1-3.toml" in res.output


def test_a_spec_that_breaks_the_spec_api_is_one_line_exit_2(tmp_path, run_cli) -> None:
    toyspecs = Path(__file__).resolve().parent / "toyspecs.py"
    path = tmp_path / "chatty.toml"
    path.write_text(f'spec = "{toyspecs.as_posix()}:Chatty"\n')
    result = run_cli("check", path)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "chatty" in lines[0] and "str" in lines[0] and "Traceback" not in result.output


def test_each_command_is_loaded_from_its_module_when_run() -> None:
    """The group lists every command without importing them; asking for one imports its
    module, which gives the command of that name (the table in cli.app names the right
    module for each)."""
    import click
    from click.testing import CliRunner

    from ordercheck.checker.cli import app

    group = app.OrdercheckGroup(name="ordercheck")
    ctx = click.Context(group)
    assert group.list_commands(ctx) == sorted(app.COMMANDS)
    for name in app.COMMANDS:
        command = group.get_command(ctx, name)
        assert command is not None and command.name == name, name
    assert group.get_command(ctx, "no-such-command") is None
    fresh = app.OrdercheckGroup(name="ordercheck")  # nothing loaded: a misspelt name still gets its suggestion
    out = CliRunner().invoke(fresh, ["chek"])
    assert out.exit_code == 2 and "Did you mean 'check'?" in out.output, out.output


def test_version_and_validate_help_do_not_load_the_search_engine() -> None:
    """``ordercheck --version`` and ``ordercheck validate --help`` run without importing
    the search engine or numpy (a quarter of a second of CPU in every process)."""
    probe = ("import sys\n"
             "from ordercheck.checker.cli import main\n"
             "for args in (['--version'], ['validate', '--help']):\n"
             "    try:\n"
             "        main(args)\n"
             "    except SystemExit:\n"
             "        pass\n"
             "loaded = [m for m in ('numpy', 'ordercheck.checker.engine.levels') if m in sys.modules]\n"
             "print('LOADED', loaded)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert "LOADED []" in out.stdout, out.stdout + out.stderr


def test_the_command_starts_numpy_with_one_blas_thread_unless_told_otherwise() -> None:
    """ordercheck does no linear algebra; OpenBLAS's threads, started as numpy loads, only
    spin. The command gives itself and what it starts one, and keeps a value the
    environment sets."""
    import os

    probe = ("import os, sys; from ordercheck.checker.cli import main; sys.argv = ['ordercheck', '--version']\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\nprint(os.environ.get('OPENBLAS_NUM_THREADS'))")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "1"
    out = subprocess.run([sys.executable, "-c", probe], env={**env, "OPENBLAS_NUM_THREADS": "4"}, capture_output=True,
                         text=True, check=True)
    assert out.stdout.splitlines()[-1] == "4"

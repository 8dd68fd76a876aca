"""The tutorial's protocol (examples/token_ring, docs/tutorial/first-spec.md) stays
true: every model meets its [expect], its TLA+ export parses (tree-sitter and SANY),
TLC agrees with our engine, and the numbers the tutorial quotes are the ones we get."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_tla_export import problems
from tests.test_tla_sany import CANARY, CANARY_TEXT, NO_TLC, sany_problems

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "token_ring"
MODELS = sorted((EXAMPLE / "models").glob("*.toml"))
TUTORIAL = ROOT / "docs" / "tutorial" / "first-spec.md"


def cli(*args: str, cwd: Path = EXAMPLE) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ordercheck.checker.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=900)


def test_the_example_has_its_three_models():
    assert [p.stem for p in MODELS] == ["token-ring-3-no-hold-back", "token-ring-3-unfair", "token-ring-3"]


def test_every_model_meets_its_expectations():
    run = cli("check", "models/")  # every verdict line (--quiet on a suite prints only the unexpected)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 models, 3 as expected, 0 not" in run.stdout
    for verdict in ("causal             holds     expected holds     ok",
                    "causal             violated  expected violated  ok",
                    "eventual_delivery  violated  expected violated  ok"):
        assert verdict in run.stdout


def test_the_tutorials_quoted_counts_are_what_the_models_give():
    run = cli("check", "models/", "--quiet")
    text = TUTORIAL.read_text()
    for line in run.stdout.splitlines():
        found = re.match(r"(models/[\w-]+\.toml): token_ring, ([\d,]+) distinct states, ([\d,]+) transitions, depth (\d+)", line)
        if found:
            model, states, transitions, depth = found.groups()
            quoted = f"{model}: token_ring, {states} distinct states, {transitions} transitions, depth {depth}"
            assert quoted in text, quoted


def test_the_export_parses(tmp_path):
    run = cli("export-tla", "models/", "-o", tmp_path)
    assert run.returncode == 0, run.stderr
    names = sorted(p.stem for p in tmp_path.glob("token_ring_3*.tla"))
    assert names == ["token_ring_3", "token_ring_3_no_hold_back", "token_ring_3_unfair"]
    for name in names:
        assert problems((tmp_path / f"{name}.tla").read_text()) == [], name
    if NO_TLC:
        pytest.skip(NO_TLC)
    from tests.test_tla_sany import run_sany

    (tmp_path / f"{CANARY}.tla").write_text(CANARY_TEXT)
    sany = run_sany([f"{n}.tla" for n in [*names, CANARY]], tmp_path)
    found = sany_problems(sany.stdout + sany.stderr)
    assert CANARY in found  # SANY read the files and reports what it should
    del found[CANARY]
    assert found == {}


@pytest.mark.tlc
@pytest.mark.slow
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_tlc_agrees_on_the_ablation():
    run = cli("tlc", "models/token-ring-3-no-hold-back.toml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "TLC 2,154 distinct states" in run.stdout and "agree: same states, same verdicts" in run.stdout


STATISTICS = re.compile(r"^\S+\.toml: \w+, [\d,]+ distinct states")


def tutorial_sessions() -> list[tuple[str, list[str]]]:
    """The ``console`` sessions of the tutorial: the command and the lines it is shown
    to print (the statistics line, whose timings vary, and ``[...]`` left out)."""
    out = []
    for block in re.findall(r"```console\n(\$ ordercheck .*?)```", TUTORIAL.read_text(), flags=re.S):
        command, *shown = block.splitlines()
        out.append((command[2:], [ln for ln in shown if ln.strip() != "[...]" and not STATISTICS.match(ln)]))
    return out


@pytest.mark.parametrize("command, shown", tutorial_sessions(), ids=[c for c, _s in tutorial_sessions()])
def test_the_tutorials_sessions_print_what_it_shows(tmp_path, command, shown):
    import shutil

    assert shown, command
    work = tmp_path / "token_ring"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("__pycache__"))
    exe = Path(sys.executable).with_name("ordercheck")
    argv = [str(exe) if exe.exists() else "ordercheck", *command.split()[1:]]
    run = subprocess.run(argv, capture_output=True, text=True, cwd=work, timeout=900)
    printed = iter(run.stdout.splitlines() + run.stderr.splitlines())
    for line in shown:
        assert any(line == out for out in printed), f"{command}: not printed (in this order): {line!r}\n{run.stdout}"


def test_the_tutorial_shows_sessions():
    commands = [c for c, _s in tutorial_sessions()]
    assert len(commands) >= 5 and any(c.startswith("ordercheck ablate") for c in commands)

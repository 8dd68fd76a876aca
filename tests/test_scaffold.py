"""``ordercheck new``: in an empty directory outside the repository, the skeleton it
writes checks as expected (its model holds, its ablation fails), for every base; it
refuses to overwrite; with ``--tla`` it exports TLA+ that SANY accepts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_tla_sany import NO_TLC, sany_problems

ROOT = Path(__file__).resolve().parent.parent


def ordercheck(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The installed ``ordercheck`` command (beside this Python), run in ``cwd``."""
    exe = Path(sys.executable).with_name("ordercheck")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "ordercheck.checker.cli"]
    return subprocess.run([*command, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    where = tmp_path / "project"
    where.mkdir()
    assert not where.resolve().is_relative_to(ROOT)
    return where


ABLATION = {"peer": "no-atomic-send", "async": "no-hold-back", "holdback": "no-hold-back"}


@pytest.mark.parametrize("base", ["peer", "async", "holdback"])
def test_new_then_check_passes_for_real(empty, base):
    made = ordercheck("new", "my_proto", "--base", base, cwd=empty)
    assert made.returncode == 0, made.stdout + made.stderr
    written = {str(p.relative_to(empty)) for p in empty.rglob("*") if p.is_file()}
    assert written == {
        "specs/my_proto.py", "models/my_proto.toml", f"models/my_proto-{ABLATION[base]}.toml", "tests/test_my_proto.py"
    }
    check = ordercheck("check", "models/my_proto.toml", cwd=empty)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "holds     expected holds     ok" in check.stdout
    # The ablation's [expect] says "violated", and it is: the "holds" above is not vacuous.
    ablated = ordercheck("check", f"models/my_proto-{ABLATION[base]}.toml", cwd=empty)
    assert ablated.returncode == 0, ablated.stdout + ablated.stderr
    assert "violated  expected violated  ok" in ablated.stdout
    # Each "holds" has [evidence]: a library witness (ordercheck.specs.witnesses) the model reaches,
    # and with the peer base the ablation model as the mutant for total.
    shown = ordercheck("check", "models/my_proto.toml", "--with-evidence", cwd=empty)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    witness = {"peer": "causal <- witness causal_race", "async": "fifo <- witness fifo_race",
               "holdback": "fifo <- witness fifo_race"}[base]
    assert f"models/my_proto.toml: {witness}: reached  ok" in shown.stdout
    race = witness.rsplit(" ", 1)[1]
    assert re.search(rf"^  {race} +reached +expected reached +ok$", shown.stdout, re.M), shown.stdout
    if base == "peer":
        assert f"total <- mutant my_proto-{ABLATION[base]}.toml: violated  ok" in shown.stdout
        assert "evidence: 2 of 2 shown" in shown.stdout
    else:
        assert "evidence: 1 of 1 shown" in shown.stdout
    # The declarations the reductions rest on (footprints, symmetry) hold on every state.
    for model in ("models/my_proto.toml", f"models/my_proto-{ABLATION[base]}.toml"):
        checked = ordercheck("check", model, "--quiet", "--check-reductions", cwd=empty)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    if base != "async":
        return
    # The generated test hands both models to the pytest plugin, which collects each as items
    # (verdicts, and the [evidence] entry), and passes. Plugin autoloading is off and the
    # plugin named, so this checkout's plugin runs whether or not its entry point is installed.
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "ordercheck.checker.pytest_plugin", "-p", "no:cacheprovider",
         "tests/test_my_proto.py"],
        capture_output=True, text=True, cwd=empty, timeout=600, env=env,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "5 passed, 1 skipped" in tests.stdout
    for item in ("my_proto.toml::verdicts", "my_proto.toml::evidence[fifo]", "my_proto-no-hold-back.toml::verdicts"):
        assert f"tests/test_my_proto.py::{item} PASSED" in tests.stdout, tests.stdout


def test_the_generated_spec_hooks_are_each_commented(empty):
    ordercheck("new", "ring", "--base", "async", cwd=empty)
    text = (empty / "specs" / "ring.py").read_text()
    for hook in ("init_rest", "may_send", "on_send", "protocol_steps", "properties", "format_action", "describe"):
        body = text.split(f"def {hook}(", 1)[1]
        assert '"""' in body.split("\n", 2)[1], hook  # a docstring right under the def


def test_new_refuses_to_overwrite_and_writes_nothing(empty):
    (empty / "models").mkdir()
    (empty / "models" / "my_proto.toml").write_text("mine\n")
    made = ordercheck("new", "my_proto", cwd=empty)
    assert made.returncode == 2
    lines = made.stderr.strip().splitlines()
    assert len(lines) == 1 and "my_proto.toml" in lines[0] and "exists already" in lines[0]
    assert (empty / "models" / "my_proto.toml").read_text() == "mine\n"
    assert sorted(p.name for p in empty.rglob("*")) == ["models", "my_proto.toml"]


@pytest.mark.parametrize("name", ["My-Proto", "class", "_hidden", "2fast"])
def test_new_refuses_a_name_that_is_no_module_name(empty, name):
    made = ordercheck("new", name, cwd=empty)
    assert made.returncode == 2 and "NAME" in made.stderr and not list(empty.iterdir())


@pytest.mark.parametrize("base", ["peer", "async", "holdback"])
def test_new_with_tla_exports_what_sany_accepts(empty, base):
    made = ordercheck("new", "my_proto", "--base", base, "--tla", cwd=empty)
    assert made.returncode == 0, made.stderr
    assert (empty / "specs" / "my_proto.tla.j2").is_file() and (empty / "specs" / "my_proto_tla.py").is_file()
    out = empty / "tla-out"
    for model in ("my_proto", f"my_proto-{ABLATION[base]}"):
        exported = ordercheck("export-tla", f"models/{model}.toml", "-o", out, cwd=empty)
        assert exported.returncode == 0, exported.stdout + exported.stderr
    if NO_TLC:
        pytest.skip(NO_TLC)
    from tests.test_tla_sany import run_sany

    modules = ["my_proto.tla", f"my_proto_{ABLATION[base].replace('-', '_')}.tla"]
    sany = run_sany(modules, out)
    assert sany.returncode == 0 and not sany_problems(sany.stdout), sany.stdout[-3000:]
    assert "Semantic processing of module my_proto\n" in sany.stdout


# The skeleton on Spark: tests/test_spark.py (in the test session's Spark context).

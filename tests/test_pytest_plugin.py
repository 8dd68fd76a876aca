"""The pytest plugin (``ordercheck.checker.pytest_plugin``): model files collected as test items.

pytest runs in a subprocess with plugin autoloading off and the plugin named with
``-p``, so the tests see this checkout's plugin whether or not the installed
distribution's ``pytest11`` entry point is there (and never load it twice)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ordercheck.checker.loading.modelfile import expand_paths
from ordercheck.checker.pytest_plugin import is_named

ROOT = Path(__file__).resolve().parent.parent


def run_pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "ordercheck.checker.pytest_plugin", "-p", "no:cacheprovider",
                           *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def test_the_entry_point_names_the_plugin():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["entry-points"]["pytest11"] == {"ordercheck": "ordercheck.checker.pytest_plugin"}
    assert project["tool"]["pytest"]["ini_options"]["ordercheck_models"] == ["models/*.toml"]


def test_patterns_name_files_and_the_directories_above_them(tmp_path):
    models = tmp_path / "models"
    assert is_named(models / "a.toml", [models])
    assert is_named(models / "large" / "a.toml", [models])  # a directory: everything under it
    assert is_named(models / "a.toml", [models / "*.toml"])
    assert not is_named(models / "large" / "a.toml", [models / "*.toml"])  # * is one component
    assert not is_named(tmp_path / "pyproject.toml", [models, models / "*.toml"])
    assert not is_named(tmp_path / "models-old" / "a.toml", [models])
    assert is_named(tmp_path / "models-old" / "a.toml", [tmp_path / "models*"])
    assert not is_named(models / "a.toml", [])


def test_collect_only_lists_one_item_per_model_file():
    """In the repository, ``ordercheck_models = ["models/*.toml"]``: ``pytest models/``
    collects what ``ordercheck check models/`` checks (not models/large/ or
    models/simulate/), one ``verdicts`` item per file and one item per [evidence] entry."""
    run = run_pytest("--collect-only", "-q", "models/", cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    ids = [line for line in run.stdout.splitlines() if "::" in line]
    files = [f"models/{p.name}" for p in expand_paths([str(ROOT / "models")])]
    assert sorted(i for i in ids if i.endswith("::verdicts")) == sorted(f"{f}::verdicts" for f in files)
    evidence = {f"{f}::evidence[{prop}]" for f in files
                for prop in tomllib.loads((ROOT / f).read_text()).get("evidence", {})}
    assert evidence and {i for i in ids if not i.endswith("::verdicts")} == evidence
    assert not any("models/large/" in i or "models/simulate/" in i for i in ids)


SEQ = """spec = "sequencer"
[constants]
peers = 2
sends = 1{extra}
[check]
properties = ["total", "eventual_delivery"]
[expect]
total = "{total}"
eventual_delivery = "holds"
"""


def section(out: str, node: str) -> str:
    """The failure or error section of ``node`` in pytest's output."""
    start = re.search(rf"^_+ (?:ERROR at setup of )?ordercheck {re.escape(node)} _+$", out, re.M)
    assert start, f"no section for {node}:\n{out}"
    end = re.search(r"^(_{3,} .* _{3,}|=+ .* =+)$", out[start.end():], re.M)
    text = out[start.end(): start.end() + end.start() if end else None].lstrip("\n")
    return re.sub(r"^\[gw\d+\] .*\n", "", text)  # xdist's line naming the worker


def test_models_run_as_items_under_xdist(tmp_path):
    """One run with ``-n 2``: passing models and evidence pass; a changed verdict fails
    with check's verdict table and its counterexample; a bound fails; a bad model file
    (or one that is not TOML) is an error of one line; a mutant that does not violate fails its evidence item;
    TOML files the option does not name are not collected."""
    (tmp_path / "pytest.ini").write_text("[pytest]\nordercheck_models = models\n")
    (tmp_path / "settings.toml").write_text("name = 'not a model'\n")
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(ROOT / "models" / "fifo-3.toml", models)
    shutil.copy(ROOT / "models" / "fifo-2.toml", models)  # two witness entries
    fifo3 = (ROOT / "models" / "fifo-3.toml").read_text()
    (models / "changed.toml").write_text(fifo3.replace('causal = "violated"', 'causal = "holds"'))
    (models / "bounded.toml").write_text(fifo3.replace("[check]\n", "[check]\nmax_states = 50\n"))
    (models / "broken.toml").write_text('spec = "nope"\n')
    (models / "garbled.toml").write_text('spec = "fifo"\n[evidence\n')  # not TOML: no evidence items read
    (models / "seq.toml").write_text(SEQ.format(extra="", total="holds")
                                     + '[evidence]\ntotal = { mutant = "seq-mutant.toml" }\n')
    (models / "seq-mutant.toml").write_text(SEQ.format(extra="\nown_via_sequencer = false", total="violated"))
    (models / "seq2.toml").write_text(SEQ.format(extra="", total="holds")
                                      + '[evidence]\ntotal = { mutant = "seq-nohold.toml" }\n')
    (models / "seq-nohold.toml").write_text(SEQ.format(extra="\nhold_back = false", total="violated"))

    xdist = importlib.util.find_spec("xdist") is not None  # a dev dependency; without it, one process
    run = run_pytest(*(["-p", "xdist.plugin", "-n", "2"] if xdist else []), "-rA", cwd=tmp_path)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert not xdist or "created: 2/2 workers" in out
    outcomes = dict((node, word) for word, node in re.findall(r"^(PASSED|FAILED|ERROR) (\S+)", run.stdout, re.M))
    assert outcomes == {
        "models/fifo-3.toml::verdicts": "PASSED",
        "models/fifo-2.toml::verdicts": "PASSED",
        "models/fifo-2.toml::evidence[fifo]": "PASSED",
        "models/fifo-2.toml::evidence[global_lock]": "PASSED",
        "models/seq.toml::verdicts": "PASSED",
        "models/seq.toml::evidence[total]": "PASSED",
        "models/seq-mutant.toml::verdicts": "PASSED",
        "models/seq2.toml::verdicts": "PASSED",
        "models/seq2.toml::evidence[total]": "FAILED",
        "models/seq-nohold.toml::verdicts": "FAILED",
        "models/changed.toml::verdicts": "FAILED",
        "models/bounded.toml::verdicts": "FAILED",
        "models/broken.toml::verdicts": "ERROR",
        "models/garbled.toml::verdicts": "ERROR",
    }, out
    assert "settings.toml" not in out

    changed = section(run.stdout, "models/changed.toml::verdicts")
    assert changed.startswith("models/changed.toml: 1 of 4 verdicts not as expected: causal violated, "
                                           "expected holds\nmodels/changed.toml: fifo, 5,293 distinct states"), changed
    assert re.search(r"^  causal +violated +expected holds +UNEXPECTED$", changed, re.M), changed
    assert re.search(r"^  global_lock +violated +expected violated +ok$", changed, re.M), changed
    assert "      trace (6 steps):" in changed and "          6. c receives b1" in changed

    bounded = section(run.stdout, "models/bounded.toml::verdicts")
    assert "50 distinct states" in bounded and "stopped by max_states (max_states = 50)" in bounded, bounded
    assert re.search(r"^  eventual_delivery +unknown +expected holds +UNKNOWN$", bounded, re.M), bounded

    broken = section(run.stdout, "models/broken.toml::verdicts").strip()
    assert broken.startswith("ordercheck: error: models/broken.toml: spec: unknown spec 'nope'"), broken
    assert len(broken.splitlines()) == 1, broken  # the one line, no traceback
    garbled = section(run.stdout, "models/garbled.toml::verdicts").strip()
    assert garbled.startswith("ordercheck: error: models/garbled.toml: is not valid TOML"), garbled

    evidence = section(run.stdout, "models/seq2.toml::evidence[total]")
    assert evidence.startswith("models/seq2.toml: evidence.total: seq-nohold.toml does not violate total (holds)")
    assert "models/seq2.toml: total <- mutant seq-nohold.toml: holds  UNEXPECTED" in evidence, evidence
    assert "seq-nohold.toml does not violate total (holds)" in evidence, evidence
    assert re.search(r"^  total +holds +expected violated +UNEXPECTED$", evidence, re.M), evidence


@pytest.mark.parametrize("marker", ["-m", "-k"])
def test_items_can_be_left_out(tmp_path, marker):
    """A model file named on the command line is collected without the ini option;
    ``-m "not ordercheck"`` leaves every model item out, ``-k "not evidence"`` the
    evidence items (collection only: nothing is checked)."""
    shutil.copy(ROOT / "models" / "fifo-2.toml", tmp_path)
    shutil.copy(ROOT / "models" / "fifo-3.toml", tmp_path)  # in the directory, not named: not collected
    select = "not ordercheck" if marker == "-m" else "not evidence"
    run = run_pytest("--collect-only", "-q", marker, select, "fifo-2.toml", cwd=tmp_path)
    ids = [line for line in run.stdout.splitlines() if "::" in line]
    assert ids == ([] if marker == "-m" else ["fifo-2.toml::verdicts"]), run.stdout + run.stderr

"""The pytest plugin (``ordercheck.checker.pytest_plugin``): model files collected as test items.

pytest runs in a subprocess with plugin autoloading off and the plugin named with
``-p``, so the tests see this checkout's plugin whether or not the installed
distribution's ``pytest11`` entry point is there (and never load it twice)."""

from __future__ import annotations

import importlib.util
import json
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


# -- the engine and the workers: --ordercheck-engine, --ordercheck-workers, their ini options --

RECORD_OPTIONS = """
import json
from pathlib import Path

import ordercheck.checker.cli.common as common

_check_one = common.check_one


def check_one(model, options):  # what the plugin asked of the engine, per model checked
    with open(Path(__file__).parent / "options.jsonl", "a") as fh:
        fh.write(json.dumps([Path(model.path).name, options.engine, options.workers]) + "\\n")
    return _check_one(model, options)


common.check_one = check_one
"""


def test_workers_2_give_the_same_verdicts(tmp_path):
    """``--ordercheck-workers 2`` (or the ini option) reaches the engine, and every item
    ends as with one worker, a changed verdict's table the same."""
    shutil.copy(ROOT / "models" / "fifo-2.toml", tmp_path)
    fifo3 = (ROOT / "models" / "fifo-3.toml").read_text()
    (tmp_path / "changed.toml").write_text(fifo3.replace('causal = "violated"', 'causal = "holds"'))
    (tmp_path / "conftest.py").write_text(RECORD_OPTIONS)
    record = tmp_path / "options.jsonl"
    runs = {}
    for label, args in (("one", []), ("two", ["--ordercheck-workers", "2"]),
                        ("ini", ["-o", "ordercheck_workers=2"]), ("both", ["-o", "ordercheck_workers=3",
                                                                           "--ordercheck-workers", "2"])):
        record.unlink(missing_ok=True)
        run = run_pytest("-rA", "fifo-2.toml", "changed.toml", *args, cwd=tmp_path)
        assert run.returncode == 1, run.stdout + run.stderr
        outcomes = sorted(re.findall(r"^(PASSED|FAILED|ERROR) (\S+)", run.stdout, re.M))
        table = [line for line in section(run.stdout, "changed.toml::verdicts").splitlines()
                 if re.match(r"^  \w+ +(holds|violated|unknown) ", line)]
        asked = {tuple(json.loads(line)) for line in record.read_text().splitlines()}
        runs[label] = (outcomes, table, asked)
    workers = {label: {w for _m, _e, w in asked} for label, (_o, _t, asked) in runs.items()}
    assert workers == {"one": {1}, "two": {2}, "ini": {2}, "both": {2}}  # the command line wins
    assert all(e == "local" for _o, _t, asked in runs.values() for _m, e, _w in asked)
    assert runs["one"][0] == runs["two"][0] == runs["ini"][0] and ("FAILED", "changed.toml::verdicts") in runs["one"][0]
    assert runs["one"][1] == runs["two"][1] and any("UNEXPECTED" in line for line in runs["one"][1])


@pytest.mark.parametrize("args, line", [
    (["--ordercheck-workers", "0"], "--ordercheck-workers: expected a whole number of at least 1, found '0'"),
    (["--ordercheck-workers", "two"], "--ordercheck-workers: expected a whole number of at least 1, found 'two'"),
    (["-o", "ordercheck_workers=1.5"], "ordercheck_workers (ini): expected a whole number of at least 1, found '1.5'"),
    (["--ordercheck-engine", "tlc"], "--ordercheck-engine: expected local or spark, found 'tlc'"),
    (["-o", "ordercheck_engine=Spark"], "ordercheck_engine (ini): expected local or spark, found 'Spark'"),
    (["--ordercheck-engine", "spark", "--ordercheck-workers", "2"],
     "--ordercheck-workers: not supported by --ordercheck-engine spark, which runs as many tasks at once as its "
     "master (local[*]) gives cores; drop it"),
])
def test_a_bad_engine_or_workers_value_is_a_one_line_usage_error(tmp_path, args, line):
    shutil.copy(ROOT / "models" / "fifo-2.toml", tmp_path)
    run = run_pytest("fifo-2.toml", *args, cwd=tmp_path)
    assert run.returncode == 4, run.stdout + run.stderr  # pytest's usage error
    assert [text for text in run.stderr.splitlines() if text.strip()] == [f"ERROR: {line}"], run.stderr
    assert "passed" not in run.stdout, "refused before any model is checked"


BLOCK_SPARK = """
import sys


class Uninstalled:  # PySpark and pandas cannot be imported in this pytest run
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("pyspark", "py4j", "pandas"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Uninstalled())
"""


@pytest.mark.parametrize("args, named", [
    (["--ordercheck-engine", "spark"], "--ordercheck-engine"),
    (["-o", "ordercheck_engine=spark"], "ordercheck_engine (ini)"),
])
def test_spark_without_pyspark_says_how_to_install_it(tmp_path, args, named):
    """The line ``check --engine spark`` prints without PySpark, naming the plugin's option."""
    from ordercheck.checker.spark.session import SPARK_EXTRA

    shutil.copy(ROOT / "models" / "fifo-2.toml", tmp_path)
    (tmp_path / "conftest.py").write_text(BLOCK_SPARK)
    run = run_pytest("fifo-2.toml", *args, cwd=tmp_path)
    assert run.returncode == 4, run.stdout + run.stderr
    assert [text for text in run.stderr.splitlines() if text.strip()] == [
        f"ERROR: {named} spark: needs pyspark and pandas, not installed here; install with: {SPARK_EXTRA}"], run.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None or importlib.util.find_spec("pyspark") is None,
                    reason="the Spark engine needs Java and PySpark")
def test_the_spark_engine_checks_the_models_with_the_same_verdicts(tmp_path):
    fifo3 = (ROOT / "models" / "fifo-3.toml").read_text()
    (tmp_path / "changed.toml").write_text(fifo3.replace('causal = "violated"', 'causal = "holds"'))
    (tmp_path / "conftest.py").write_text(RECORD_OPTIONS)
    tables = {}
    for engine in ("local", "spark"):
        run = run_pytest("changed.toml::verdicts", "--ordercheck-engine", engine, cwd=tmp_path)
        assert run.returncode == 1, run.stdout + run.stderr
        tables[engine] = [line for line in section(run.stdout, "changed.toml::verdicts").splitlines()
                          if re.match(r"^  \w+ +(holds|violated|unknown) ", line)]
    asked = [tuple(json.loads(line)) for line in (tmp_path / "options.jsonl").read_text().splitlines()]
    assert asked == [("changed.toml", "local", 1), ("changed.toml", "spark", 1)]
    assert tables["local"] == tables["spark"] and any("UNEXPECTED" in line for line in tables["spark"])

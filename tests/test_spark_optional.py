"""PySpark is optional (the ``spark`` extra): without it the local engine, reports, TLA+
export, validate and a local sweep work, and every ``--engine spark`` says in one line
how to install it (exit 2, nothing written).

One fresh interpreter runs every command, with an import hook that makes PySpark, Py4J
and pandas unimportable and records every attempt to import them: a local command that
imported PySpark (even inside a ``try``) would show there. (pyarrow looks for pandas and
does without it.)
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ordercheck.checker.spark.session import SPARK_PACKAGES, missing_spark_packages

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "validate"
BLOCKED = ("pyspark", "py4j", "pandas")

# Runs each command line of argv[1] (JSON) in this interpreter; prints, per command, a
# JSON line with its exit code and the blocked imports it attempted.
WITHOUT_SPARK = """
import json, sys

class Uninstalled:
    tried = []

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            Uninstalled.tried.append(name)
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

BLOCKED = tuple(json.loads(sys.argv[2]))
sys.meta_path.insert(0, Uninstalled())
from ordercheck.checker.cli import main

for args in json.loads(sys.argv[1]):
    Uninstalled.tried = []
    try:
        main(args, prog_name="ordercheck")
        code = 0
    except SystemExit as exc:
        code = exc.code
    sys.stderr.flush()
    print("@@" + json.dumps({"args": args, "exit": code, "tried": Uninstalled.tried}), flush=True)
"""

INSTALL = "--engine spark: needs pyspark and pandas, not installed here; install with: pip install 'ordercheck[spark]'"


def test_without_pyspark_the_local_paths_work_and_spark_says_how_to_install_it(tmp_path):
    model = str(ROOT / "models" / "fifo-2.toml")
    log = str(DATA / "fifo-in-order.jsonl")
    out = tmp_path
    local = [
        ["check", model, "--quiet", "--json", str(out / "r.json"), "--report", str(out / "report")],
        ["report", str(out / "r.json"), "-o", str(out / "report2")],
        ["export-tla", model, "-o", str(out / "tla")],
        ["validate", log, "-o", str(out / "validated")],
        ["sweep", model, "--no-ablations", "-o", str(out / "sweep")],
    ]
    spark = [
        ["check", model, "--engine", "spark", "--json", str(out / "s.json")],
        ["sweep", model, "--engine", "spark", "-o", str(out / "s-sweep")],
        ["validate", log, "--engine", "spark", "-o", str(out / "s-validated")],
        ["ablate", model, "--engine", "spark", "--json", str(out / "s-ablate.json")],
    ]
    proc = subprocess.run([sys.executable, "-c", WITHOUT_SPARK, json.dumps(local + spark), json.dumps(BLOCKED)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = [json.loads(line[2:]) for line in proc.stdout.splitlines() if line.startswith("@@")]
    assert [r["args"] for r in runs] == local + spark, proc.stdout + proc.stderr
    for run in runs[: len(local)]:
        assert run["exit"] == 0, (run, proc.stderr)
        # Nothing on a local path imports PySpark or Py4J (pyarrow looks for pandas, and
        # does without it).
        assert [m for m in run["tried"] if not m.startswith("pandas")] == [], run
    assert json.loads((out / "r.json").read_text())["engine"] == "local"
    assert (out / "report" / "index.html").is_file() and (out / "report2" / "index.html").is_file()
    assert (out / "tla" / "OrderingProperties.tla").is_file()
    assert (out / "validated" / "verdicts.parquet").is_file() and (out / "sweep" / "sweep.parquet").is_file()
    for run in runs[len(local):]:
        assert run["exit"] == 2, run
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("ordercheck: error:")]
    assert errors == [f"ordercheck: error: {INSTALL}"] * len(spark), proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in out.iterdir() if p.name.startswith("s")) == ["sweep"]  # no s.json, no s-*


def test_the_spark_packages_are_found_without_importing_them(monkeypatch):
    """With the extra installed (as `make setup` does) nothing is missing; a package that
    cannot be found is named, and finding them imports nothing."""
    for name in SPARK_PACKAGES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert missing_spark_packages() == []
    assert not any(name in sys.modules for name in SPARK_PACKAGES)
    monkeypatch.setitem(sys.modules, "pandas", None)  # what `import pandas` fails on
    assert missing_spark_packages() == ["pandas"]


# -- which masters get the driver's interpreter (no Spark started) --------------------------


def test_which_masters_are_on_this_machine():
    from ordercheck.checker.spark.session import on_this_machine

    here = socket.gethostname()
    for master in ("spark://localhost:7077", "spark://127.0.0.1:7077", f"spark://{here}:7077",
                   "spark://[::1]:7077", "spark://localhost:7077,127.0.0.1:7078"):
        assert on_this_machine(master), master
    for master in ("spark://10.1.2.3:7077", "spark://spark-master:7077", "spark://localhost:7077,10.1.2.3:7077",
                   "yarn", "k8s://https://127.0.0.1:6443", "local[2]"):
        assert not on_this_machine(master), master


def test_the_driver_states_threshold_from_the_environment(monkeypatch):
    from ordercheck.checker.api.errors import InputError
    from ordercheck.checker.spark.bfs import DRIVER_STATES_ENV, driver_states_from_env

    monkeypatch.delenv(DRIVER_STATES_ENV, raising=False)
    assert driver_states_from_env() is None
    for raw, value in (("0", 0), (" 250 ", 250)):
        monkeypatch.setenv(DRIVER_STATES_ENV, raw)
        assert driver_states_from_env() == value
    for raw in ("-1", "1.5", "many"):
        monkeypatch.setenv(DRIVER_STATES_ENV, raw)
        with pytest.raises(InputError, match=f"environment variable {DRIVER_STATES_ENV}: '{re.escape(raw)}' is not"):
            driver_states_from_env()

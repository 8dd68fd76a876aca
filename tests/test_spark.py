"""The Spark engine and sweeps against the local engine (one Spark session, local[2,4]).

The session's master is ``local[2,4]``: two threads like ``local[2]``, and up to four
attempts per task, which the failure-injection tests need (Spark allows one context
per process, so every test here shares it). The UI is off and the shuffles are small.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.cli import main
from checker.encoding import decode, encode
from checker.fingerprint import fingerprint
from checker.model import load_model, model_from_dict
from checker.registry import builtin_models
from checker.result import Result
from checker.run import Options, check_model
from checker.spark_bfs import SparkOptions, check_model_spark
from checker.sweep import sweep_tasks
from checker.sweep_table import COLUMNS, load_sweep, load_sweep_results

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent
# Built-in models up to this many distinct states run on Spark here; larger ones are
# skipped to keep the suite fast (the engine has no such limit). Raise it with
# ORDERCHECK_SPARK_TEST_CAP to compare more models.
STATE_CAP = int(os.environ.get("ORDERCHECK_SPARK_TEST_CAP", "30"))
# Run whatever the cap: bus1 models with violations and the naive FIFO suite model.
ALWAYS = {"bus1-mutant-tiebreak-by-arrival", "fifo-4"}
PLAIN = Options(progress=False, symmetry=False, por=False)


@pytest.fixture(scope="module")
def spark():
    from checker.spark_session import get_spark

    sc = get_spark(
        "local[2,4]",
        {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "2"},
    )
    yield sc
    sc.stop()


def local_and_spark(model, options=PLAIN, spark_options=None):
    local = check_model(model, options)
    remote = check_model_spark(model, replace(options, engine="spark"), spark_options or SparkOptions(partitions=3))
    return local, remote


def assert_same(local: Result, remote: Result) -> None:
    """Counts, depth, verdicts and traces (action by action) are the local engine's."""
    a, b = local.stats, remote.stats
    assert (b.distinct_states, b.transitions, b.depth, b.bound) == (a.distinct_states, a.transitions, a.depth, a.bound)
    assert remote.engine == "spark"
    assert list(remote.properties) == list(local.properties)
    for name, p in local.properties.items():
        q = remote.properties[name]
        assert (q.status, q.explanation) == (p.status, p.explanation), name
        if p.trace is None:
            assert q.trace is None, name
        else:
            assert q.trace is not None, name
            assert [(s.action, s.index) for s in q.trace] == [(s.action, s.index) for s in p.trace], name
            assert q.trace[-1].state == p.trace[-1].state, name


# -- the compact encoding (no Spark) ------------------------------------------------------

atoms = st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.booleans())
states = st.recursive(
    atoms,
    lambda inner: st.one_of(st.lists(inner, max_size=4).map(tuple), st.frozensets(st.integers(-50, 50), max_size=4)),
    max_leaves=20,
)


@given(states)
@settings(max_examples=200, deadline=None)
def test_encoding_round_trips_with_the_same_fingerprint(state):
    data = encode(state)
    assert isinstance(data, bytes)
    back = decode(data)
    assert back == state
    assert fingerprint(back) == fingerprint(state)
    assert encode(back) == data


# -- sweeps: task list and table loader (no Spark) --------------------------------------------


def test_sweep_tasks_add_one_mutant_per_ablation_flag_still_on():
    models = [load_model(ROOT / "models" / "bus1-2.toml"), load_model(ROOT / "models" / "bus1-mutant-no-block.toml")]
    tasks = sweep_tasks(models)
    flags = type(models[0].spec).ablations()
    assert [t.variant for t in tasks if t.model == models[0].path] == ["", *flags]
    assert [t.variant for t in tasks if t.model == models[1].path] == ["", *(f for f in flags if f != "block_destinations")]
    mutant = tasks[1].build()
    assert mutant.constants[flags[0]] is False and mutant.expect == {}
    assert [p.name for p in mutant.properties] == [p.name for p in models[0].properties]
    assert [t.variant for t in sweep_tasks(models, ablations=False)] == ["", ""]


def test_load_sweep_names_a_missing_table(tmp_path):
    from checker.errors import InputError

    with pytest.raises(InputError, match="no such sweep table"):
        load_sweep(tmp_path)
    bad = tmp_path / "sweep.json"
    bad.write_text(json.dumps([{"model": "m"}]))
    with pytest.raises(InputError, match="lacks column"):
        load_sweep(bad)


# -- the Spark engine -----------------------------------------------------------------------------

SMALL = builtin_models()


@pytest.mark.parametrize("path", SMALL, ids=[p.stem for p in SMALL])
def test_spark_agrees_with_local_on_builtin_models(spark, path):
    model = load_model(path)
    if path.stem not in ALWAYS and check_model(model, replace(PLAIN, max_states=STATE_CAP)).stats.bound == "max_states":
        pytest.skip(f"more than {STATE_CAP:,} states: above the suite's cap for Spark runs")
    local = check_model(model, PLAIN)
    remote = check_model_spark(model, replace(PLAIN, engine="spark"), SparkOptions(partitions=3))
    assert_same(local, remote)
    assert remote.exit_code() == local.exit_code() == 0


def _fifo4(**check):
    raw = {
        "spec": "fifo",
        "constants": {"peers": 4, "script": {"a": ["bcd"], "b": ["cd"]}},
        "check": check,
    }
    return model_from_dict(raw, "fifo-4-variant")


@pytest.mark.parametrize("max_states", [1, 57, 120])
def test_spark_stops_at_max_states_where_local_does(spark, max_states):
    local, remote = local_and_spark(_fifo4(properties=["fifo", "causal", "total"], max_states=max_states))
    assert local.stats.bound == "max_states"
    assert_same(local, remote)


def test_spark_stops_at_max_depth_where_local_does(spark):
    local, remote = local_and_spark(_fifo4(properties=["fifo", "causal", "total"], max_depth=6))
    assert local.stats.bound == "max_depth" and local.stats.depth == 7
    assert_same(local, remote)


def test_spark_stops_when_every_property_is_decided_as_local_does(spark):
    # Only violated properties: the local engine stops inside a level, after the parent
    # whose successor decided the last one; the Spark engine must cut at the same place.
    local, remote = local_and_spark(_fifo4(properties=["causal", "total"]))
    assert local.stats.distinct_states < check_model(_fifo4(properties=["fifo"]), PLAIN).stats.distinct_states
    assert_same(local, remote)


def test_spark_survives_injected_task_failures(spark):
    model = load_model(ROOT / "models" / "bus1-mutant-tiebreak-by-arrival.toml")
    local = check_model(model, PLAIN)
    tracker = spark.statusTracker()

    def failed_tasks() -> int:
        total = 0
        for job in tracker.getJobIdsForGroup():
            info = tracker.getJobInfo(job)
            for stage in info.stageIds if info else ():
                si = tracker.getStageInfo(stage)
                total += si.numFailedTasks if si else 0
        return total

    before = failed_tasks()
    options = SparkOptions(partitions=4, inject_failures=frozenset({"expand", "merge"}))
    remote = check_model_spark(model, replace(PLAIN, engine="spark"), options)
    assert failed_tasks() > before  # the hook fired and Spark retried
    assert_same(local, remote)
    assert any(p.status == "violated" for p in remote.properties.values())


def test_check_cli_with_spark_engine(spark, tmp_path):
    model = ROOT / "models" / "fifo-4.toml"
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["check", str(model), "--engine", "spark", "--quiet", "--json", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["engine"] == "spark"
    local = check_model(load_model(model), PLAIN)
    assert data["stats"]["distinct_states"] == local.stats.distinct_states
    assert {n: p["status"] for n, p in data["properties"].items()} == {
        n: p.status for n, p in local.properties.items()
    }


def test_sweep_on_spark_matches_local_and_writes_the_table(spark, tmp_path, monkeypatch):
    suite = tmp_path / "suite"
    suite.mkdir()
    for name in ("fifo-4.toml", "bus1-mutant-tiebreak-by-arrival.toml"):
        shutil.copy(ROOT / "models" / name, suite / name)
    monkeypatch.setenv("ORDERCHECK_SPARK_INJECT_FAILURES", "sweep")
    runner = CliRunner()
    res = runner.invoke(main, ["sweep", str(suite), "--engine", "spark", "-o", str(tmp_path / "spark")])
    assert res.exit_code == 0, res.output
    monkeypatch.delenv("ORDERCHECK_SPARK_INJECT_FAILURES")
    res = runner.invoke(main, ["sweep", str(suite), "--engine", "local", "-o", str(tmp_path / "local")])
    assert res.exit_code == 0, res.output

    rows = load_sweep(tmp_path / "spark")
    assert rows and all(set(COLUMNS) == set(r.__dataclass_fields__) for r in rows[:1])
    json_rows = load_sweep(tmp_path / "spark" / "sweep.json")
    assert json_rows == rows
    variants = {(Path(r.model).stem, r.variant) for r in rows}
    flags = set(load_model(suite / "bus1-mutant-tiebreak-by-arrival.toml").spec.ablations()) - {"tiebreak_by_sender"}
    assert variants == {("fifo-4", "")} | {("bus1-mutant-tiebreak-by-arrival", v) for v in {"", *flags}} | {
        ("fifo-4", f) for f in load_model(suite / "fifo-4.toml").spec.ablations()
    }
    local_rows = load_sweep(tmp_path / "local")

    def key(r):
        return (r.model, r.variant, r.property, r.status, r.trace_length, r.distinct_states, r.depth)

    assert sorted(map(key, rows)) == sorted(map(key, local_rows))
    assert {r.engine for r in rows} == {"spark"}
    base = [r for r in rows if not r.variant]
    assert all(r.as_expected for r in base)
    assert all(r.as_expected is None and r.expected is None for r in rows if r.variant)
    results = load_sweep_results(tmp_path / "spark")
    assert len(results) == len(variants)
    assert all(isinstance(r, Result) for _v, r in results)
    # The matrix and the report read the sweep's results.
    from checker.matrix import build_matrix

    matrix = build_matrix([r for v, r in results if not v])
    assert sorted(Path(row.model).stem for row in matrix.rows) == ["bus1-mutant-tiebreak-by-arrival", "fifo-4"]
    res = runner.invoke(main, ["report", str(tmp_path / "spark" / "results.json"), "-o", str(tmp_path / "report")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "report" / "index.html").exists()

"""The Spark engine and sweeps against the local engine (one Spark session, local[2,4]).

The Spark context is the test session's one (``spark`` in ``conftest.py``): two threads
like ``local[2]``, and up to four attempts per task, which the failure-injection tests
need. Every built-in model is compared with the local engine; all of them (and
early-stopping variants) run as one Spark search, each level one job for every model
still running, which is what keeps the file within a few minutes (one search per model
would pay Spark's per-level overhead about 1,400 times instead of 32). A user's code on
the executors (the skeleton of ``ordercheck new``, a spec's exception, a shipped spec
file) is checked in the same context.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ordercheck.checker.api.result import Result
from ordercheck.checker.cli import main
from ordercheck.checker.engine.encoding import decode, encode
from ordercheck.checker.engine.fingerprint import fingerprint
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.loading.registry import builtin_models
from ordercheck.checker.spark.bfs import SparkOptions, check_models_spark
from ordercheck.checker.spark.sweep import sweep_tasks
from ordercheck.checker.spark.sweep_table import COLUMNS, load_sweep, load_sweep_results
from tests.spark_classes import archive_path
from tests.test_ledger import EARLY, assert_figures, fifo4
from tests.test_spec_api import BUGGY_RING, EXAMPLE
from tests.test_user_specs import COUNTER, MODEL, project

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent
PLAIN = Options(progress=False, symmetry=False, por=False)


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


def test_the_sessions_jvm_maps_the_class_archive_make_test_wrote(spark):
    """Where ``make test`` wrote Spark's class-data archive (tests/spark_classes.py), the
    session's JVM was started with it and mapped it: a JVM whose class path or Java no
    longer matches the archive starts without it, silently, and pays the whole start."""
    from ordercheck.checker.spark.session import _jvm_process

    archive = archive_path()
    if not archive.is_file():
        pytest.skip(f"no class-data archive at {archive.relative_to(ROOT)} (make test writes it)")
    if str(archive) not in os.environ.get("ORDERCHECK_SPARK_JVM_OPTIONS", ""):
        pytest.skip("ORDERCHECK_SPARK_JVM_OPTIONS was set from outside: the suite's JVM options are not in use")
    maps = Path(f"/proc/{_jvm_process().pid}/maps")
    if not maps.exists():
        pytest.skip("no /proc: the JVM's mapped files cannot be read on this system")
    mapped = str(archive) in maps.read_text()
    assert mapped, (
        f"the session's JVM did not map {archive}: write it again with "
        f"`python tests/spark_classes.py {archive.relative_to(ROOT)}` (or `make test`)")


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
    from ordercheck.checker.api.errors import InputError

    with pytest.raises(InputError, match="no such sweep table"):
        load_sweep(tmp_path)
    bad = tmp_path / "sweep.json"
    bad.write_text(json.dumps([{"model": "m"}]))
    with pytest.raises(InputError, match="lacks column"):
        load_sweep(bad)


# -- the Spark engine -----------------------------------------------------------------------------

BUILTIN = builtin_models()


# The shared search's first levels (all models together: 196 states, then 491) run on
# the driver, the rest as Spark jobs: both sides and the hand-over between them are
# compared with the local engine on every model.
SHARED_DRIVER_STATES = 1000


# The four largest built-in models (233,478, 115,856, 115,488 and 93,301 states
# unreduced) are most of the shared search's time; the suite compares them up to these
# many states (bus1-3's and lamport-2-two-sends' first 15 and 13 levels, the last of them
# 12,626 and 6,963 states wide; the synthetic-causality pair's first 21 of 30; the bound
# stops both engines at the same state), and ORDERCHECK_SPARK_ALL=1 compares them whole,
# as it does every other model.
SPARK_ALL = os.environ.get("ORDERCHECK_SPARK_ALL") == "1"
LARGEST = {} if SPARK_ALL else {
    "bus1-3": 40_000, "bus1-impl-synthetic-causality": 30_000, "bus1-impl-synthetic-causality-fixed": 30_000,
    "lamport-2-two-sends": 20_000}

# Each level of the shared search is one Spark job for every model still running, and a
# job costs about as much however few states it has. Most models end within 33 levels;
# ten lock-level bus1_impl models of a few thousand states run to 37-53, and those
# levels alone were a fifth of the shared search. The suite compares every model to this
# depth (a bound that stops both engines at the same level, so the models that end
# sooner are compared whole); ORDERCHECK_SPARK_ALL=1 compares them whole.
DEPTH = None if SPARK_ALL else 34


def builtin_model(path: Path):
    """The model file ``path``, bounded by :data:`LARGEST` where it is one of the largest
    and by :data:`DEPTH`."""
    model = load_model(path)
    bound = LARGEST.get(path.stem)
    if bound is not None:
        model = replace(model, max_states=bound)
    if DEPTH is not None and (model.max_depth is None or model.max_depth > DEPTH):
        model = replace(model, max_depth=DEPTH)
    return model


@pytest.fixture(scope="module")
def shared_search(spark):
    """Every built-in model (the largest up to :data:`LARGEST`), and fifo-4 variants that
    stop early at different levels, checked by the local engine and, in one Spark search
    of all of them together (each level one job for every model still running, once past
    its first levels on the driver), by Spark."""
    models = [builtin_model(p) for p in BUILTIN] + [fifo4(name, **check) for name, check in EARLY.items()]
    local = [check_model(m, PLAIN) for m in models]
    options = SparkOptions(partitions=2, driver_states=SHARED_DRIVER_STATES)
    remote = check_models_spark(models, replace(PLAIN, engine="spark"), options)
    return {m.name: (m, a, b) for m, a, b in zip(models, local, remote)}


@pytest.fixture(scope="module")
def builtin_pairs(shared_search):
    return {p.stem: shared_search[p.stem] for p in BUILTIN}


@pytest.fixture(scope="module")
def early_pairs(shared_search):
    return {name: shared_search[name][1:] for name in EARLY}


@pytest.mark.parametrize("path", BUILTIN, ids=[p.stem for p in BUILTIN])
def test_spark_agrees_with_local_on_every_builtin_model(builtin_pairs, path):
    model, local, remote = builtin_pairs[path.stem]
    assert_same(local, remote)
    if path.stem in LARGEST:  # compared up to its bound: both stopped there, undecided alike
        assert local.stats.bound == "max_states" and local.stats.distinct_states == LARGEST[path.stem]
        assert remote.exit_code() == local.exit_code()
    elif local.stats.bound == "max_depth":  # deeper than DEPTH: compared to that level
        assert DEPTH is not None and local.stats.depth == DEPTH + 1  # levels 0 to DEPTH
        assert remote.exit_code() == local.exit_code()
    else:
        assert remote.exit_code() == local.exit_code() == 0
    # Liveness: `eventually` is decided on terminal states by the executors; fair cycles
    # are searched on the driver by the local checker, and the result says so.
    cyclic = [p for p in model.properties if p.kind == "eventually" and remote.properties[p.name].loop_start is not None]
    if cyclic:
        assert any("fair cycles were searched on the driver" in w for w in remote.warnings)


def test_the_builtin_suite_covers_every_kind_of_verdict(builtin_pairs):
    deep = [stem for stem, (_m, local, _r) in builtin_pairs.items() if local.stats.bound == "max_depth"]
    assert len(deep) <= 12, deep  # DEPTH cuts the tail of a few models, not the suite
    statuses = {(p.kind, p.status) for _m, _a, b in builtin_pairs.values() for p in b.properties.values()}
    assert {("always", "violated"), ("always", "holds"), ("eventually", "violated"), ("eventually", "holds")} <= statuses
    assert any(p.loop_start is not None for _m, _a, b in builtin_pairs.values() for p in b.properties.values())


def test_spark_records_each_levels_time_split(builtin_pairs):
    """Every level of a Spark search has its time split, and its frontier and new states
    add up to the search's counts."""
    for stem in ("fifo-4", "bus1-2"):
        _model, local, remote = builtin_pairs[stem]
        levels = remote.stats.levels
        assert [lv.depth for lv in levels] == list(range(1, len(levels) + 1)), stem
        initial = levels[0].frontier
        assert initial + sum(lv.new_states for lv in levels) == local.stats.distinct_states, stem
        assert all(a.new_states == b.frontier for a, b in zip(levels, levels[1:])), stem
        for lv in levels:
            parts = (lv.expand_s, lv.exchange_s, lv.dedup_s, lv.check_s, lv.other_s)
            assert all(x >= 0 for x in parts), (stem, lv)
        assert sum(lv.expand_s for lv in levels) > 0 and sum(lv.dedup_s for lv in levels) > 0, stem


@pytest.mark.parametrize("name", list(EARLY))
def test_spark_stops_where_local_does_in_a_shared_search(early_pairs, name):
    local, remote = early_pairs[name]
    assert_same(local, remote)
    expected_bound = {"max-states-1": "max_states", "max-states-57": "max_states", "max-states-120": "max_states",
                      "max-depth-6": "max_depth"}.get(name)
    assert local.stats.bound == expected_bound
    if name == "all-decided":
        assert local.stats.distinct_states < early_pairs["full"][0].stats.distinct_states
    assert_figures(name, remote)  # Spark's own figures: the ledger's rules, not only agreement


# Shallow models (a retried task costs a fresh Python worker), violations among them.
RETRIED = ["matrix-mutant-no-fifo-condition", "ses-mutant-no-merge", "synchronous-mutant-no-permission", "retransmit-weak"]


def test_spark_survives_injected_task_failures(spark, builtin_pairs):
    """The first attempt of every even-numbered expand task raises; Spark
    retries them and every answer is the one without failures (and the local one)."""
    tracker = spark.statusTracker()

    def failed_tasks() -> int:
        total = 0
        for job in tracker.getJobIdsForGroup():
            info = tracker.getJobInfo(job)
            for stage in info.stageIds if info else ():
                si = tracker.getStageInfo(stage)
                total += si.numFailedTasks if si else 0
        return total

    models = [builtin_pairs[name][0] for name in RETRIED]
    before = failed_tasks()
    options = SparkOptions(partitions=4, inject_failures=frozenset({"expand"}), driver_states=0)
    remote = check_models_spark(models, replace(PLAIN, engine="spark"), options)
    assert failed_tasks() > before  # the hook fired and Spark retried
    for name, result in zip(RETRIED, remote):
        assert_same(builtin_pairs[name][1], result)
    assert all(any(p.status == "violated" for p in r.properties.values()) for r in remote[:3])


# Small models, with violations, a fair cycle (retransmit-weak) and terminal states
# among them, all together smaller than one task's share in every level.
DRIVER_ONLY = ["retransmit-weak", "bss-3-lossy", "bus1-impl-handle-race", "lamport-mutant-keep-duplicates"]


def test_a_search_that_stays_small_never_leaves_the_driver(spark, builtin_pairs, early_pairs, monkeypatch):
    """By default a level smaller than one task's share is expanded on the driver: a batch
    of small models (and fifo-4 variants that stop early) runs no Spark level at all,
    its traces rebuilt from the levels' keys as on Spark, and every answer is the local
    engine's."""
    from ordercheck.checker.spark import bfs

    spark_levels, driver_levels = [], []
    monkeypatch.setattr(bfs.SparkBatch, "_spark_level", _counting(bfs.SparkBatch._spark_level, spark_levels))
    monkeypatch.setattr(bfs.DriverLevels, "level", _counting(bfs.DriverLevels.level, driver_levels))
    models = [builtin_pairs[name][0] for name in DRIVER_ONLY] + [fifo4(name, **check) for name, check in EARLY.items()]
    remote = check_models_spark(models, replace(PLAIN, engine="spark"), SparkOptions(partitions=2))
    assert spark_levels == [] and len(driver_levels) >= 13
    for name, result in zip(DRIVER_ONLY, remote):
        assert_same(builtin_pairs[name][1], result)
    for name, result in zip(EARLY, remote[len(DRIVER_ONLY):]):
        assert_same(early_pairs[name][0], result)
    assert any(p.loop_start is not None for p in remote[0].properties.values())


def test_a_search_moves_from_the_driver_to_spark_once_its_levels_grow(spark, builtin_pairs, monkeypatch):
    """The levels before the first of at least ``driver_states`` states run on the driver,
    every level from it on as a Spark job (the last ones smaller again), and the answers
    are the local engine's. fifo-4's levels: 1, 2, 3, 6, 10, 15, 21, 31, 41, 44, 38,
    20, 8 states; ``causal`` is decided on the driver, ``total`` on Spark, its trace
    running through the driver's levels."""
    from ordercheck.checker.spark import bfs

    spark_levels, driver_levels = [], []
    monkeypatch.setattr(bfs.SparkBatch, "_spark_level", _counting(bfs.SparkBatch._spark_level, spark_levels))
    monkeypatch.setattr(bfs.DriverLevels, "level", _counting(bfs.DriverLevels.level, driver_levels))
    model, local, _remote = builtin_pairs["fifo-4"]
    (remote,) = check_models_spark([model], replace(PLAIN, engine="spark"), SparkOptions(partitions=2, driver_states=40))
    assert_same(local, remote)
    frontiers = [lv.frontier for lv in local.stats.levels]
    small = next(i for i, f in enumerate(frontiers) if f >= 40)
    assert 0 < small < len(frontiers) - 1 and min(frontiers[small:]) < 40
    assert len(local.properties["causal"].trace) - 1 < small < len(local.properties["total"].trace) - 1
    assert (len(driver_levels), len(spark_levels)) == (small, len(remote.stats.levels) - small)


def _cached_rdds(spark) -> int:
    return len(spark._jsc.sc().getRDDStorageInfo())


def test_the_jvm_keeps_its_temporary_files_in_the_private_scratch_directory(spark):
    """On a local master the JVM's own temporary directory is Spark's scratch directory
    (a private one under ``$TMPDIR``, removed at the end): with the JVM's default, ``/tmp``,
    every run left a directory there. (tests/test_faults_stuck.py starts a run whose
    ``$TMPDIR`` has a space and a quote in its name, and finds nothing left in it.)"""
    import tempfile

    from ordercheck.checker.spark.session import SCRATCH_PREFIX

    jvm_tmp = Path(spark._jvm.java.lang.System.getProperty("java.io.tmpdir"))
    assert jvm_tmp == Path(spark.getConf().get("spark.local.dir"))
    assert jvm_tmp.name.startswith(SCRATCH_PREFIX) and jvm_tmp.parent == Path(tempfile.gettempdir())


def test_spark_releases_each_levels_data_once_nothing_reads_it(spark, builtin_pairs, monkeypatch):
    """A level's candidates (states and all) are dropped once the next level has read
    them, and levels merged into the visited set once it is rewritten: what stays cached
    after a search of many levels does not grow with the levels. fifo-4: 13 levels, each
    a Spark job, spread over both partitions with four states a task."""
    from ordercheck.checker.spark import bfs
    from ordercheck.checker.spark.bfs import COMPACT_EVERY

    monkeypatch.setattr(bfs, "STATES_PER_TASK", 4)
    model, local, _remote = builtin_pairs["fifo-4"]
    before = _cached_rdds(spark)
    (remote,) = check_models_spark([model], replace(PLAIN, engine="spark"), SparkOptions(partitions=2, driver_states=0))
    assert_same(local, remote)
    levels = len(remote.stats.levels)
    assert levels >= 3 * COMPACT_EVERY
    # Kept: the visited set's last rewrite, the levels since, the last level's candidates.
    assert _cached_rdds(spark) - before <= COMPACT_EVERY + 3


def test_a_widening_search_spreads_its_levels_over_the_tasks(spark, builtin_pairs, monkeypatch):
    """A level's candidates stay in the partitions of the tasks that wrote them; a level
    larger than the one before is spread over more tasks (here: any level of at least 8
    states over both partitions), not left in the one partition a small level had."""
    from ordercheck.checker.engine.bfs import Bounds
    from ordercheck.checker.spark import bfs

    monkeypatch.setattr(bfs, "STATES_PER_TASK", 4)
    model, local, _remote = builtin_pairs["fifo-4"]
    search = bfs.SparkSearch(spark, model.spec, model.properties, SparkOptions(partitions=2, driver_states=0))
    outcome = search.run(Bounds(), stop_when_decided=False)
    assert outcome.distinct_states == local.stats.distinct_states
    assert search.stats.driver_levels == 0
    frontiers = [lv.frontier for lv in outcome.levels]
    assert len(frontiers) == len(search.stats.level_tasks)
    assert max(frontiers) >= 8
    assert [tasks for frontier, tasks in zip(frontiers, search.stats.level_tasks) if frontier >= 8] == [
        2 for frontier in frontiers if frontier >= 8
    ]
    assert search.stats.level_tasks[0] == 1  # the initial state: one task


def test_spark_with_reliable_checkpoints_gives_the_same_answers(spark, builtin_pairs, tmp_path, monkeypatch):
    """With a checkpoint directory (files instead of blocks kept on the executors) every
    answer is the local engine's, and the checkpoints are written there. fifo-4 (13
    levels: three rewrites of the visited set) runs to its last level; with four states
    a task its levels are spread over both partitions, as a large model's are (bus1-3
    has 32 levels, each a Spark job writing files)."""
    from ordercheck.checker.spark import bfs

    monkeypatch.setattr(bfs, "STATES_PER_TASK", 4)
    names = ["fifo-4", "bss-mutant-no-causal-condition-max"]
    models = [builtin_pairs[name][0] for name in names]
    options = SparkOptions(partitions=2, checkpoint_dir=str(tmp_path / "ckpt"), driver_states=0)
    remote = check_models_spark(models, replace(PLAIN, engine="spark"), options)
    for name, result in zip(names, remote):
        assert_same(builtin_pairs[name][1], result)
    assert any(f.is_file() for f in (tmp_path / "ckpt").rglob("*"))


def test_check_cli_with_spark_engine_checks_several_models_in_one_search(spark, tmp_path):
    paths = [ROOT / "models" / "matrix-mutant-no-fifo-condition.toml", ROOT / "models" / "retransmit-weak.toml"]
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["check", *map(str, paths), "--engine", "spark", "--quiet", "--json", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert [d["engine"] for d in data] == ["spark", "spark"]
    for path, record in zip(paths, data):
        local = check_model(load_model(path), PLAIN)
        assert record["stats"]["distinct_states"] == local.stats.distinct_states
        assert record["stats"]["depth"] == local.stats.depth
        assert {n: p["status"] for n, p in record["properties"].items()} == {
            n: p.status for n, p in local.properties.items()
        }


def test_a_job_that_fails_for_good_is_one_line_exit_4_and_writes_nothing(tmp_path):
    """Every attempt of every expand task fails: Spark gives up after its retries; the
    command (a process of its own, so Spark's own output is seen too) prints one line,
    no Java or Python traceback, exits 4 and writes none of its outputs."""
    model = ROOT / "models" / "retransmit-weak.toml"
    out, report, junit = tmp_path / "r.json", tmp_path / "report", tmp_path / "junit.xml"
    env = dict(os.environ, ORDERCHECK_SPARK_INJECT_FAILURES="expand!")
    cmd = [sys.executable, "-m", "ordercheck.checker.cli", "check", str(model), "--engine", "spark", "--master", "local[1,2]",
           "--quiet", "--json", str(out), "--report", str(report), "--junit", str(junit)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600, check=False)
    assert proc.returncode == 4, proc.stderr[-3000:]
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr[-3000:]
    assert lines[0].startswith("ordercheck: error: spark: a Spark job failed after its retries")
    assert re.search(r"\.InjectedFailure: injected failure: expand task \d+, every attempt$", lines[0])
    assert proc.stdout == ""
    assert list(tmp_path.iterdir()) == []


# The user's spec of tests/test_user_specs.py, its violation naming the file that ran it.
USER_SPEC = COUNTER.replace('f"{s} > 3"', 'f"{s} > 3, checked by " + __file__')


def test_sweep_on_spark_ships_a_users_spec_file_to_the_executors(spark, tmp_path):
    """A sweep's tasks build their models on the executors, where a user's spec file is
    not on a cluster's disks: they use the copy Spark shipped (ordercheck.checker.spark.ship), as
    the search does. The spec's violation names the file that ran it."""
    from ordercheck.checker.spark.sweep import run_sweep

    (tmp_path / "specs").mkdir()
    original = tmp_path / "specs" / "counter.py"
    original.write_text(USER_SPEC)
    (tmp_path / "models").mkdir()
    path = tmp_path / "models" / "m.toml"
    path.write_text('spec = "../specs/counter.py"\n[constants]\nlimit = 5\n[expect]\nsmall = "violated"\n')
    assert "checked by" in USER_SPEC
    model = load_model(path)
    (data,) = run_sweep(sweep_tasks([model]), Options(progress=False), engine="spark", master="local[2,4]")
    assert data["spec"] == f"{original.resolve()}:Counter"
    small = data["properties"]["small"]
    assert small["status"] == "violated"
    ran = small["explanation"].rsplit("checked by ", 1)[1]
    assert ran != str(original.resolve()) and Path(ran).name.startswith("ordercheck_user_spec_counter_"), ran


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
    from ordercheck.checker.review.matrix import build_matrix

    matrix = build_matrix([r for v, r in results if not v])
    assert sorted(Path(row.model).stem for row in matrix.rows) == ["bus1-mutant-tiebreak-by-arrival", "fifo-4"]
    res = runner.invoke(main, ["report", str(tmp_path / "spark" / "results.json"), "-o", str(tmp_path / "report")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "report" / "index.html").exists()


# -- a user's code on the executors -------------------------------------------------------
# The skeleton `ordercheck new` writes, a spec's exception raised in a task, a user's spec
# file shipped to the executors: in this session's context rather than each in a command
# of its own (a JVM start each). Nothing here needs a fresh process: each spec file is new
# (its module name is unique per absolute path, ordercheck.checker.loading.specref.module_name_for),
# so neither the driver nor a reused Python worker has it imported already; a running
# context ignores the --master a command names (ordercheck.checker.spark.session.get_spark), so the
# commands leave it out. Spark's own console output on a failed job is checked in a
# process of its own (test_a_job_that_fails_for_good_is_one_line_exit_4_and_writes_nothing).


def test_the_skeleton_of_ordercheck_new_runs_on_spark(spark, tmp_path, monkeypatch):
    """The hold-back skeleton, in a project outside the repository, checks on Spark to the
    local engine's state count (Spark applies no reductions, so the local run has them off)."""
    where = tmp_path / "project"
    where.mkdir()
    assert not where.resolve().is_relative_to(ROOT)
    monkeypatch.chdir(where)
    runner = CliRunner()
    made = runner.invoke(main, ["new", "my_proto", "--base", "holdback"])
    assert made.exit_code == 0, made.output
    local = runner.invoke(main, ["check", "models/my_proto.toml", "--quiet", "--no-symmetry", "--no-por"])
    assert local.exit_code == 0, local.output
    remote = runner.invoke(main, ["check", "models/my_proto.toml", "--quiet", "--engine", "spark"])
    assert remote.exit_code == 0, remote.output
    first = local.stdout.splitlines()[0].split(", ")[1]  # "198 distinct states"
    assert "distinct states" in first
    assert first in remote.stdout.splitlines()[0]


@pytest.mark.parametrize("where", ["executor", "driver"])
def test_an_exception_on_a_spark_executor_is_the_same_one_line(spark, tmp_path, monkeypatch, where):
    """A spec that raises inside a Spark task (or on the driver, in a first level it
    expands itself): exit 5 and the one line the local engine prints
    (``test_spec_api.test_an_exception_in_a_spec_is_one_line_with_action_and_trace_exit_5``),
    naming the action that raised."""
    from ordercheck.checker.spark import bfs

    monkeypatch.setattr(bfs, "DRIVER_STATES", 0 if where == "executor" else 10**6)
    levels = []
    monkeypatch.setattr(bfs.SparkBatch, "_hand_over", _counting(bfs.SparkBatch._hand_over, levels))
    (tmp_path / "buggy.py").write_text(BUGGY_RING.format(path=str(EXAMPLE / "token_ring.py")))
    model = tmp_path / "m.toml"
    model.write_text('spec = "buggy.py:Buggy"\n[constants]\nsenders = "ab"\n[expect]\ntotal = "holds"\n')
    run = CliRunner().invoke(main, ["check", str(model), "--quiet", "--engine", "spark"])
    assert run.exit_code == 5, run.output[-2000:]
    assert len(levels) == (1 if where == "executor" else 0)  # the search went to Spark, or never did
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert lines[0].startswith(f"ordercheck: spec error: {model}: spec buggy_ring raised IndexError")
    assert "in action b broadcasts b1 (next_states)" in lines[0]
    assert run.stdout == ""


def _counting(method, calls: list):
    """``method``, recording each call in ``calls``."""

    def counted(self, *args, **kw):
        calls.append(args)
        return method(self, *args, **kw)

    return counted


def test_spark_executors_import_the_shipped_copy_of_a_users_spec(spark, tmp_path, monkeypatch):
    """A search on Spark gives the local engine's answer for a spec file of the user's
    project, and its executors import the copy the driver shipped, not the original file."""
    from ordercheck.checker.loading.specref import reference_of
    from ordercheck.checker.spark import bfs
    from ordercheck.checker.spark.bfs import check_models_spark
    from ordercheck.checker.spark.ship import task_spec_class

    monkeypatch.setattr(bfs, "DRIVER_STATES", 0)  # every level a Spark job

    root = project(tmp_path)
    path = root / "models" / "m.toml"
    path.write_text(MODEL.format(ref="../specs/counter.py", limit=5, verdict="violated"))
    model = load_model(path)
    original = sys.modules[type(model.spec).__module__].__file__
    assert Path(original).resolve() == (root / "specs" / "counter.py").resolve()
    (result,) = check_models_spark([model], Options(progress=False, engine="spark"))
    assert result.engine == "spark"
    assert result.stats.distinct_states == 5  # as the local engine
    assert {n: p.status for n, p in result.properties.items()} == {"small": "violated"}
    ref = reference_of(type(model.spec))

    def where(_: int) -> str:
        cls = task_spec_class(ref)
        return sys.modules[cls.__module__].__file__

    files = spark.parallelize([0, 1], 2).map(where).collect()
    assert len(files) == 2
    for f in files:  # the executors read the copy Spark shipped, not the original file
        assert f != original and Path(f).name.startswith("ordercheck_user_spec_counter_"), f

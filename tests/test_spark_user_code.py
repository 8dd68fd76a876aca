"""A user's code on Spark executors, in the test session's one Spark context (``spark`` in
``conftest.py``): the skeleton ``ordercheck new`` writes, a spec's exception raised in a
task, and a user's spec file that the search ships to the executors.

These run in the test process rather than each in a command of its own: a JVM start per
test cost about 20 seconds each. Nothing they check needs a fresh process. Each spec file
here is new (its module name is unique per absolute path, see
``checker.loading.specref.module_name_for``), so neither the driver nor a reused Python
worker has it imported already; the ``--master`` a command names is ignored while a
context runs (``checker.spark.session.get_spark``), so the commands below leave it out.
Spark's own console output on a failed job is checked where it can only be seen, in a
process of its own (``test_a_job_that_fails_for_good_is_one_line_exit_4_and_writes_nothing``
in ``test_spark.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.cli import main
from checker.engine.run import Options
from checker.loading.modelfile import load_model
from tests.test_spec_api import BUGGY_RING, EXAMPLE
from tests.test_user_specs import MODEL, project

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent


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


def test_an_exception_on_a_spark_executor_is_the_same_one_line(spark, tmp_path):
    """A spec that raises inside a Spark task: exit 5 and the one line the local engine
    prints (``test_spec_api.test_an_exception_in_a_spec_is_one_line_with_action_and_trace_exit_5``),
    naming the action that raised."""
    (tmp_path / "buggy.py").write_text(BUGGY_RING.format(path=str(EXAMPLE / "token_ring.py")))
    model = tmp_path / "m.toml"
    model.write_text('spec = "buggy.py:Buggy"\n[constants]\nsenders = "ab"\n[expect]\ntotal = "holds"\n')
    run = CliRunner().invoke(main, ["check", str(model), "--quiet", "--engine", "spark"])
    assert run.exit_code == 5, run.output[-2000:]
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert lines[0].startswith(f"ordercheck: spec error: {model}: spec buggy_ring raised IndexError")
    assert "in action b broadcasts b1 (next_states)" in lines[0]
    assert run.stdout == ""


def test_spark_executors_import_the_shipped_copy_of_a_users_spec(spark, tmp_path):
    """A search on Spark gives the local engine's answer for a spec file of the user's
    project, and its executors import the copy the driver shipped, not the original file."""
    from checker.loading.specref import reference_of
    from checker.spark.bfs import check_models_spark
    from checker.spark.ship import task_spec_class

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

"""Shared fixtures: paths, a helper to run the command line in-process, and the test
session's one Spark context."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ordercheck.checker.cli.app import limit_blas_threads
from tests.spark_classes import SUITE_JVM_OPTIONS, archive_option

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"

os.environ.setdefault("ORDERCHECK_STRICT_EXIT_CODES", "1")
"""ordercheck.checker.cli.exitcodes: a command ending with an exit code its row does not list fails
the test that ran it (with exit code 70), in this process and in the runs it starts."""


limit_blas_threads()
"""As the ``ordercheck`` command does for itself (ordercheck.checker.cli.app.BLAS_THREADS):
the test processes, the Spark session's Python workers and the scripts the tests run
load numpy without OpenBLAS's spinning threads."""


os.environ.setdefault("ORDERCHECK_SPARK_DRIVER_BYTES", "0")
"""ordercheck.checker.validate.spark_job: the suite's logs are small, and validate on Spark
would check them all on the driver; here they go to Spark's tasks, as larger ones do.
The tests of the driver's share unset it."""


os.environ.setdefault("ORDERCHECK_SPARK_JVM_OPTIONS", f"{SUITE_JVM_OPTIONS} {archive_option()}".rstrip())
"""ordercheck.checker.spark.session: every Spark JVM the tests start (the session's, and
each run's in a process of its own) compiles with the JIT's first tier only: about a
third less CPU for a JVM's start and a short search (measured: a start and two small
models, 33 to 21 CPU seconds; the shared search of tests/test_spark.py, 85 to 72). Where
``make test`` wrote the class-data archive (tests/spark_classes.py), each JVM maps
Spark's classes from it instead of loading them: about half the CPU of a start."""


@pytest.fixture
def run_cli():
    """Run ``ordercheck ARGS`` in-process; returns the click Result (exit_code, output)."""
    from ordercheck.checker.cli import main

    def run(*args: str):
        return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)

    return run


def model_checking(name: str, properties: list[str], **constants):
    """Model file ``name`` (under models/, without ``.toml``) checking only ``properties``,
    its constants updated by ``constants``.

    The file's ``[expect]`` and ``[evidence]`` are left out: they speak of the file's own
    property list (evidence backs a "holds" expectation, which the derived model no longer
    has), so the derived model keeps the spec, the constants and the chosen properties.
    """
    import tomllib

    from ordercheck.checker.loading.modelfile import model_from_dict

    data = tomllib.loads((MODELS / f"{name}.toml").read_text())
    derived = {"spec": data["spec"], "constants": {**data["constants"], **constants},
               "check": {"properties": list(properties)}}
    return model_from_dict(derived, f"{name}.toml")


def proviso_search(name: str, workers: int, bounds=None, stop: bool = True, safety_only: bool = False, **kw):
    """``search`` of model file ``name`` (under models/), whose reduction needs
    visibility, with ``workers`` and the cycle proviso of partial-order reduction.
    These specs declare ``acyclic``, so the command line skips the proviso for them
    (ordercheck.checker.engine.reduce.needs_proviso); it is switched on here, as for a spec
    that does not declare it, to test the engines' proviso on models with many states
    (the proviso only adds full expansions: the search stays sound). With
    ``safety_only``, the model's ``eventually`` properties are left out, so that its
    hold-back peers' arrivals are deferred as well (never with one checked)."""
    from dataclasses import replace

    from ordercheck.checker.engine.bfs import NO_BOUNDS, search
    from ordercheck.checker.engine.reduce import plan
    from ordercheck.checker.loading.modelfile import load_model

    model = load_model(MODELS / name)
    if safety_only:
        model = replace(model, properties=[p for p in model.properties if p.kind != "eventually"])
    reductions, _notes = plan(model.spec, model.properties, model.symmetry, model.por)
    assert reductions.por and reductions.visible and model.spec.acyclic and not reductions.proviso
    return search(model.spec, model.properties, NO_BOUNDS if bounds is None else bounds,
                  reductions=replace(reductions, proviso=True), workers=workers, stop_when_decided=stop, **kw)


@pytest.fixture(scope="session")
def spark():
    """The Spark context every Spark test shares (Spark allows one per process, and each
    start costs a JVM): ``local[2,4]``, two threads like ``local[2]`` and up to four
    attempts per task, which the failure-injection tests need. The UI is off and the
    shuffles are small. Stopped when the test session ends."""
    from ordercheck.checker.spark.session import get_spark

    sc = get_spark(
        "local[2,4]",
        {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "2"},
    )
    yield sc
    sc.stop()


@pytest.fixture(autouse=True)
def _no_stray_runs():
    """After each test, kill what is left of the runs it started in sessions of their own
    (tests/faults_helpers.py: :func:`~tests.faults_helpers.stop_stray_runs`)."""
    yield
    helpers = sys.modules.get("tests.faults_helpers")  # only where a test module imported it
    if helpers is not None:
        helpers.stop_stray_runs()


@pytest.fixture
def blocker(tmp_path: Path) -> Path:
    """A plain file: any output path under it is 'not a directory'."""
    f = tmp_path / "blocker"
    f.write_text("not a directory\n")
    return f


# The files that take longest (per-file wall time of a whole run), longest first. With
# ``--dist loadfile`` each file runs whole on one worker, and pytest-xdist hands out the
# files with the most tests first; a slow file of few tests (test_faults_kill_loop.py
# has two) came last and kept one worker busy while the others had finished. These go
# first instead, and the many quick files fill in at the end, so the workers end
# together. The first ones (one per worker) start together, so the cluster test (three
# JVMs) waits for one of them rather than starting beside test_spark.py's JVM. Any file
# not listed keeps pytest-xdist's order after them.
SLOW_FILES = (
    "test_spark.py",
    "test_reductions.py",
    "test_peer_reductions.py",
    "test_spark_cluster.py",  # mostly waiting on its cluster's JVMs
    "test_faults_memory.py",
    "test_declarations.py",
    "test_workers.py",
    "test_simulate.py",
    "test_faults_kill_loop.py",
    "test_docs.py",
    "test_faults_stuck.py",
    "test_checkpoint_sources.py",
    "test_spec_exits.py",
    "test_bus1_impl.py",
    "test_scaffold.py",
    "test_faults_signals.py",
    "test_history_growth.py",
)


def _starts_session_spark(path: Path) -> bool:
    """Whether a test file uses the session's Spark context: one of its functions (a test
    or a fixture) takes the ``spark`` fixture."""
    import ast

    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError):
        return False
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
               and any(a.arg == "spark" for a in node.args.args) for node in ast.walk(tree))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """With ``--dist loadfile``, pytest-xdist's scheduler with :data:`SLOW_FILES` first, and
    every file that uses the session's Spark context on one worker while another file is
    left for the others: each worker that used it would start a JVM of its own (about ten
    CPU seconds, and its compiler's warm-up again)."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SlowFilesFirst(LoadFileScheduling):
        ordered = False
        spark_node = None
        spark_files: set[str] = set()

        def _assign_work_unit(self, node):
            if not self.ordered:  # the first assignment: the queue is complete
                self.ordered = True
                rank = {name: i for i, name in enumerate(SLOW_FILES)}
                files = sorted(self.workqueue.items(),
                               key=lambda item: rank.get(Path(item[0]).name, len(rank)))
                self.workqueue.clear()
                self.workqueue.update(files)
                self.spark_files = {scope for scope in self.workqueue
                                    if _starts_session_spark(Path(config.rootpath) / scope.split("::")[0])}
            spark = [scope for scope in self.workqueue if scope in self.spark_files]
            if spark and self.spark_node is None:
                self.spark_node = node
            if spark and node is self.spark_node:  # the Spark worker takes them first
                self.workqueue.move_to_end(spark[0], last=False)
            elif spark:  # another worker: the first file without Spark, if one is left
                other = next((scope for scope in self.workqueue if scope not in self.spark_files), None)
                if other is not None:
                    self.workqueue.move_to_end(other, last=False)
            super()._assign_work_unit(node)

    return SlowFilesFirst(config, log)

"""How a failed Spark job becomes one line (:func:`ordercheck.checker.spark.bfs.job_error`), on the
texts Spark's Python API raises; no Spark is started."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ordercheck.checker.engine.bfs import SpecError
from ordercheck.checker.spark.bfs import SparkJobError, job_error

TASK_FAILURE = """An error occurred while calling o123.collectAsArrowToPython.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 1 in stage 7.0 failed 4 times, most recent failure: Lost task 1.3 in stage 7.0 (TID 31) (127.0.0.1 executor driver): org.apache.spark.api.python.PythonException: Traceback (most recent call last):
  File "/site-packages/pyspark/worker.py", line 1, in main
    process()
  File "/site-packages/ordercheck/checker/spark/batches.py", line 2, in expand
    succ = next_states(state)
{raised}
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:1)
"""


def test_a_spec_error_raised_in_a_task_is_the_spec_error_itself() -> None:
    exc = job_error(RuntimeError(TASK_FAILURE.format(raised="ordercheck.checker.engine.bfs.SpecError: ring: a state has 70000 enabled actions")))
    assert isinstance(exc, SpecError)
    assert str(exc) == "ring: a state has 70000 enabled actions"


def test_another_exception_in_a_task_names_it_and_the_attempts() -> None:
    exc = job_error(RuntimeError(TASK_FAILURE.format(raised="IndexError: tuple index out of range")))
    assert isinstance(exc, SparkJobError)
    assert str(exc).endswith("a Spark job failed after its retries (a task failed 4 times): IndexError: tuple index out of range")
    assert "\n" not in str(exc)


def test_spark_failing_itself_is_one_line_naming_its_error() -> None:
    text = "An error occurred while calling o45.toArrow.\n: java.lang.OutOfMemoryError: Java heap space\n\tat java.base/x.y(Z.java:1)"
    exc = job_error(RuntimeError(text))
    assert isinstance(exc, SparkJobError)
    assert str(exc).endswith("Spark failed: java.lang.OutOfMemoryError: Java heap space")


# The text of PySpark's exception for a job whose executors' Python lacks ordercheck (cut).
NO_MODULE = """An error occurred while calling o123.collectToPython.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 1.0 failed 1 times, most recent failure: Lost task 0.0 in stage 1.0 (TID 1) (127.0.0.1 executor 0): org.apache.spark.api.python.PythonException: Traceback (most recent call last):
  File "/work/app-1/0/pyspark.zip/pyspark/serializers.py", line 471, in loads
    return cloudpickle.loads(obj, encoding=encoding)
ModuleNotFoundError: No module named 'ordercheck'
"""
NO_PROGRAM = """Job aborted due to stage failure: Task 0 in stage 0.0 failed 4 times, most recent failure: Lost task 0.3 in stage 0.0 (TID 3) (10.0.0.2 executor 1): java.io.IOException: Cannot run program "/home/me/.venv/bin/python": error=2, No such file or directory
"""
OTHER_VERSION = """Job aborted due to stage failure: ... org.apache.spark.api.python.PythonException: Traceback (most recent call last):
pyspark.errors.exceptions.base.PySparkRuntimeError: [PYTHON_VERSION_MISMATCH] Python in worker has different version (3, 12) than that in driver 3.11, PySpark cannot run with different minor versions.
"""
SPEC_RAISED = """Job aborted due to stage failure: ... org.apache.spark.api.python.PythonException: Traceback (most recent call last):
ZeroDivisionError: division by zero
"""


def test_a_job_the_executors_python_cannot_run_is_one_line_naming_pyspark_python():
    for text, what in ((NO_MODULE, "cannot import ordercheck"),
                       (NO_PROGRAM, "/home/me/.venv/bin/python cannot be run there"),
                       (OTHER_VERSION, f"is not Python {sys.version_info.major}.{sys.version_info.minor}")):
        err = job_error(Exception(text))
        assert isinstance(err, SparkJobError)
        line = err.line()
        assert line.startswith(f"spark: the executors' Python {what}"), line
        assert "set PYSPARK_PYTHON" in line and "docs/howto/spark.md" in line and "\n" not in line, line
    other = job_error(Exception(SPEC_RAISED)).line()  # any other failure: as before
    assert other == "spark: a Spark job failed after its retries: ZeroDivisionError: division by zero", other


def _driver_conf(monkeypatch, master: str = "local[1]") -> dict[str, str]:
    """The Spark settings a start on ``master`` would give its driver JVM (the start
    itself is refused before any JVM runs)."""
    import pyspark
    import pyspark.java_gateway

    from ordercheck.checker.spark.session import SparkUnavailable, get_spark

    seen: list[dict[str, str]] = []

    def launch(conf, popen_kwargs=None):
        seen.append(dict(conf.getAll()))
        raise RuntimeError("no JVM in this test")

    monkeypatch.setattr(pyspark.java_gateway, "launch_gateway", launch)
    monkeypatch.setattr(pyspark.SparkContext, "_active_spark_context", None)
    # Nor the JVM of a context this process already runs (the suite's): a SparkConf made
    # while one is there starts from that JVM's spark.* properties.
    monkeypatch.setattr(pyspark.SparkContext, "_jvm", None)
    try:
        get_spark(master)
    except SparkUnavailable:
        pass
    assert len(seen) == 1
    return seen[0]


def _driver_java_options(monkeypatch) -> str:
    """The ``spark.driver.extraJavaOptions`` a local start would give its JVM."""
    return _driver_conf(monkeypatch)["spark.driver.extraJavaOptions"]


@pytest.mark.parametrize("master", ["local[1]", "spark://127.0.0.1:7077", "spark://cluster.example:7077"])
def test_the_drivers_scratch_is_private_under_tmpdir_on_every_master(monkeypatch, tmp_path, master) -> None:
    """The driver's scratch (``spark.local.dir``) and its JVM's ``java.io.tmpdir`` are one
    private directory under ``$TMPDIR`` on a local master and against a cluster alike
    (against a cluster, Spark alone put the driver's files in ``/tmp``); a scratch the
    user names is left as it is."""
    import tempfile

    from ordercheck.checker.spark.session import SCRATCH_PREFIX

    monkeypatch.setattr(tempfile, "tempdir", None)  # found again, from $TMPDIR
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("SPARK_LOCAL_DIRS", raising=False)
    conf = _driver_conf(monkeypatch, master)
    scratch = Path(conf["spark.local.dir"])
    assert scratch.parent == tmp_path and scratch.name.startswith(SCRATCH_PREFIX) and scratch.is_dir(), conf
    assert f"-Djava.io.tmpdir={scratch}" in conf["spark.driver.extraJavaOptions"], conf
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path / "mine"))
    conf = _driver_conf(monkeypatch, master)
    assert "spark.local.dir" not in conf and "java.io.tmpdir" not in conf["spark.driver.extraJavaOptions"], conf


def test_the_environment_names_the_local_jvms_options(monkeypatch) -> None:
    """ORDERCHECK_SPARK_JVM_OPTIONS replaces the default options of a local[...] JVM
    (the log configuration stays); unset, the default is used."""
    from ordercheck.checker.spark.session import JVM_OPTIONS_ENV, LOCAL_JVM_OPTIONS

    monkeypatch.setenv(JVM_OPTIONS_ENV, "-XX:+UseSerialGC -Xss2m")
    opts = _driver_java_options(monkeypatch)
    assert opts.endswith(" -XX:+UseSerialGC -Xss2m") and "log4j2.configurationFile" in opts
    assert LOCAL_JVM_OPTIONS not in opts
    monkeypatch.delenv(JVM_OPTIONS_ENV)
    assert _driver_java_options(monkeypatch).endswith(" " + LOCAL_JVM_OPTIONS)

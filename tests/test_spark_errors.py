"""How a failed Spark job becomes one line (:func:`checker.spark.bfs.job_error`), on the
texts Spark's Python API raises; no Spark is started."""

from __future__ import annotations

from checker.engine.bfs import SpecError
from checker.spark.bfs import SparkJobError, job_error

TASK_FAILURE = """An error occurred while calling o123.collectAsArrowToPython.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 1 in stage 7.0 failed 4 times, most recent failure: Lost task 1.3 in stage 7.0 (TID 31) (127.0.0.1 executor driver): org.apache.spark.api.python.PythonException: Traceback (most recent call last):
  File "/site-packages/pyspark/worker.py", line 1, in main
    process()
  File "/site-packages/checker/spark/batches.py", line 2, in expand
    succ = next_states(state)
{raised}
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:1)
"""


def test_a_spec_error_raised_in_a_task_is_the_spec_error_itself() -> None:
    exc = job_error(RuntimeError(TASK_FAILURE.format(raised="checker.engine.bfs.SpecError: ring: a state has 70000 enabled actions")))
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

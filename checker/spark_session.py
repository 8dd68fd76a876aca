"""Starting Spark for ordercheck: one SparkContext per process, from the PySpark package.

PySpark brings Spark itself; it needs a Java runtime (17 or later) on ``PATH`` or in
``JAVA_HOME``. With a ``local[...]`` master the executors are Python processes forked
from this interpreter, so they see the same installed ``ordercheck``. On a cluster
(``spark://host:7077``, ``yarn``, ``k8s://...``) every executor needs the same Python
minor version with ``ordercheck`` and its dependencies installed, and
``spark.pyspark.python`` (or ``PYSPARK_PYTHON``) naming that interpreter.
"""

from __future__ import annotations

import os
import sys
from typing import Any

DEFAULT_MASTER = "local[*]"


class SparkUnavailable(RuntimeError):
    """Spark could not start (no Java, or the master cannot be reached)."""


def get_spark(master: str = DEFAULT_MASTER, conf: dict[str, str] | None = None, app_name: str = "ordercheck") -> Any:
    """The process's SparkContext, started on ``master`` if none runs yet.

    The engine needs Spark's core only (RDDs), not Spark SQL, so no SparkSession is
    built. Spark allows one context per process: when one is already running (a test
    session, or an earlier check in the same run) it is reused as it is and ``master``
    and ``conf`` are ignored. Console progress bars are off; ``conf`` entries override
    the defaults.
    """
    try:
        from pyspark import SparkConf, SparkContext
    except ImportError as exc:  # pragma: no cover - pyspark is a dependency
        raise SparkUnavailable(f"pyspark is not installed ({exc})") from None
    active = SparkContext._active_spark_context
    if active is not None:
        return active
    settings: dict[str, str] = {
        "spark.ui.showConsoleProgress": "false",
        "spark.python.worker.reuse": "true",
    }
    if master.startswith("local"):
        settings["spark.driver.host"] = "127.0.0.1"
        settings["spark.driver.bindAddress"] = "127.0.0.1"
        if "PYSPARK_PYTHON" not in os.environ:
            settings["spark.pyspark.python"] = sys.executable
    settings.update(conf or {})
    spark_conf = SparkConf().setMaster(master).setAppName(app_name)
    for key, value in settings.items():
        spark_conf.set(key, value)
    try:
        sc = SparkContext.getOrCreate(spark_conf)
    except Exception as exc:  # Java missing, master unreachable: one clear line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SparkUnavailable(
            f"cannot start Spark on {master!r}: {first} (is Java 17+ on PATH or JAVA_HOME set?)"
        ) from None
    sc.setLogLevel("ERROR")
    return sc

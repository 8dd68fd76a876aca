"""A class-data archive of Spark's JVM for the test suite: ``python tests/spark_classes.py PATH``.

The suite starts about thirty local Spark JVMs (the session's context, and every
``--engine spark`` command line run in a process of its own) and the nine or so of
tests/test_spark_cluster.py's standalone cluster (master, workers, drivers, executors:
their class path is the local JVMs' one, see :func:`archive_option`). Each spends most of its
start loading and verifying the same fifteen thousand classes. Java's application
class-data sharing keeps them parsed in an archive that every later JVM maps instead:
measured on the 2-core development machine, a JVM's start and two small jobs took about
10 CPU seconds without it and 5 with it (docs/explanation/performance.md, "The test
suite"). ``make test`` writes the archive once (build/spark-classes.jsa); tests/conftest.py
adds ``-XX:SharedArchiveFile`` to the suite's JVM options when it is there, and
tests/test_spark_cluster.py to its cluster's.

The archive is written by a JVM as it exits (``-XX:ArchiveClassesAtExit``), here one
that runs a small check and a small validate, the classes the suite's runs load first.
A JVM given a truncated archive crashes, so the archive is written under a temporary
name and renamed into place only after its JVM has exited with status 0. A JVM whose
archive does not match its class path (another PySpark, another Java) says so in its
log and starts without it. Without Java or PySpark nothing is written, and the suite's
Spark tests say why they skip as before.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SUITE_JVM_OPTIONS = "-XX:+UseParallelGC -XX:TieredStopAtLevel=1"
"""The JVM options of every Spark JVM the suite starts (tests/conftest.py): the
throughput collector and the JIT compiler's first tier only. The archive is written with
the same options (a JVM maps an archive only under the options it was written with)."""


def archive_path() -> Path:
    """Where ``make test`` writes the archive and tests/conftest.py looks for it."""
    return ROOT / "build" / "spark-classes.jsa"


def archive_option() -> str:
    """``-XX:SharedArchiveFile=`` naming the archive where ``make test`` wrote it; empty
    where it is missing, or where its path holds whitespace (Spark's launcher splits JVM
    options at whitespace). A JVM maps it only where its class path starts with the one
    it was written with: ``$SPARK_CONF_DIR``, then Spark's jars, where the folder is
    PySpark's ``conf`` (the default, which PySpark does not ship: a JVM cannot map an
    archive whose class path names a folder with files in it)."""
    path = archive_path()
    if not path.is_file() or any(c.isspace() for c in str(path)):
        return ""
    return f"-XX:SharedArchiveFile={path}"


def _workload() -> int:
    """Run a small Spark check and validate in this process's JVM, then let it exit (it
    writes the archive as it does); returns the JVM's exit status."""
    from click.testing import CliRunner

    from ordercheck.checker.cli import main
    from ordercheck.checker.spark import session

    os.environ["ORDERCHECK_SPARK_DRIVER_BYTES"] = "0"  # the small validate as a Spark job, not on the driver
    runner = CliRunner()
    log = ROOT / "tests" / "data" / "validate" / "fifo-in-order.jsonl"
    for args in (["check", str(ROOT / "models" / "fifo-2.toml"), "--engine", "spark", "--quiet"],
                 ["validate", str(log), "--engine", "spark", "--quiet"]):
        result = runner.invoke(main, args)
        if result.exit_code not in (0, 1):
            print(f"spark_classes: ordercheck {' '.join(args[:1])} on Spark ended with exit code "
                  f"{result.exit_code}: {result.output.strip()}", file=sys.stderr)
            return 1
    jvm = session._jvm_process()
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()
    jvm.stdin.close()  # PySpark's gateway exits with status 0 when its input ends
    return jvm.wait(timeout=300)


def write_archive(target: Path) -> bool:
    """Write the archive to ``target`` (renamed into place once complete); False, with a
    line on standard error, where it could not be written."""
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(f"{target.name}.part-{os.getpid()}")
    env = dict(os.environ, ORDERCHECK_SPARK_JVM_OPTIONS=f"{SUITE_JVM_OPTIONS} -XX:ArchiveClassesAtExit={part}")
    try:
        done = subprocess.run([sys.executable, __file__, "--workload"], env=env, cwd=ROOT, timeout=600)
        ok = done.returncode == 0 and part.is_file() and part.stat().st_size > 0
        if ok:
            os.replace(part, target)
        else:
            print(f"spark_classes: no archive written (status {done.returncode}); "
                  "the suite's Spark JVMs start without one", file=sys.stderr)
        return ok
    except subprocess.TimeoutExpired:
        print("spark_classes: no archive written (the run took over 600 s)", file=sys.stderr)
        return False
    finally:
        part.unlink(missing_ok=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--workload"]:
        sys.exit(_workload())
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/spark_classes.py PATH")
    write_archive(Path(sys.argv[1]))

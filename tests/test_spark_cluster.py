"""Spark on a real cluster: a standalone master and two workers, started with the
``spark-class`` PySpark ships, on this machine (localhost, free ports, small memory).

What ``local[...]`` cannot show: the executors are JVMs of their own, started by the
workers, whose Python is not this process's. Against them a check and a sweep of a
spec file from outside the repository run with no ``PYSPARK_PYTHON`` (the driver gives
a master on this machine its own interpreter), and an executor Python without
ordercheck is one line naming ``PYSPARK_PYTHON`` and the how-to.

The cluster's processes lead process groups of their own; the fixture's finalizer kills
them, their groups and everything under them (executors, Python daemons), and waits for
all of them, however the tests end.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

import psutil
import pytest

from ordercheck.checker.spark.session import _kill_with_groups  # the engine's own: SIGKILL each and the group it leads
from tests.spark_classes import ROOT, archive_option, archive_path

pytestmark = pytest.mark.spark

START_TIMEOUT = 120.0  # seconds for the master and both workers to be up (a loaded machine)

# A user's spec: its violation names the file that ran it and the interpreter it ran in.
SPEC = '''
import sys

from ordercheck.checker import Constant, Property, Spec


class Counter(Spec):
    name = "counter"
    constants = (
        Constant("limit", int, 2, "largest value"),
        Constant("guard", bool, True, "stop at the limit", ablation=True),
    )

    def init_states(self):
        return [0]

    def next_states(self, s):
        top = self.limit if self.guard else self.limit + 1
        return [(("inc",), s + 1)] if s < top else []

    def properties(self):
        limit = self.limit
        return [Property.always(
            "small", lambda s: None if s <= limit else f"{s} > {limit}, checked by {__file__} in {sys.executable}")]
'''

HOLDS = 'spec = "../specs/counter.py"\n[constants]\nlimit = 1\n[expect]\nsmall = "holds"\n'
VIOLATED = 'spec = "../specs/counter.py"\n[constants]\nlimit = 1\nguard = false\n[expect]\nsmall = "violated"\n'

# The JVMs' start costs most of this file's time: the JIT's first tier and the serial
# collector only, for the cluster's daemons, the drivers and the executors alike, and
# Spark's classes mapped from the class-data archive where ``make test`` wrote it
# (tests/spark_classes.py: the one the suite's local JVMs map; their class path and the
# cluster's are the same, with no SPARK_CONF_DIR). No performance-counter file in
# /tmp/hsperfdata_USER, which a killed JVM leaves behind.
JVM = f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData {archive_option()}".rstrip()

# Spark's settings for the cluster and the runs against it (a properties file, which
# the daemons and spark-submit are given: the folder SPARK_CONF_DIR names is the first
# entry of a JVM's class path, so with a folder of the test's there no archive matches,
# and Java writes none whose class path holds a folder with files in it). No
# REST server (its fixed port), no UIs, small JVMs, one executor of one core per run (the
# three runs go at once, on both workers), no waiting for a task's preferred executor,
# a task tried once. Each JVM writes its class-data sharing log to ``jvm-logs/ROLE-PID.log``.
DEFAULTS = """\
spark.master.rest.enabled false
spark.ui.enabled false
spark.driver.memory 512m
spark.driver.defaultJavaOptions {driver}
spark.executor.memory 512m
spark.executor.cores 1
spark.executor.defaultJavaOptions {executor}
spark.cores.max 1
spark.locality.wait 0
spark.task.maxFailures 1
spark.sql.shuffle.partitions 2
spark.default.parallelism 2
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "bin" / "spark-class"


def reap(procs: list[subprocess.Popen]) -> None:
    """Kill ``procs``, the process groups they lead and every process under them, and
    wait for all of them."""
    everyone: list[psutil.Process] = []
    for proc in procs:
        try:
            everyone += [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
        except psutil.Error:
            pass
    _kill_with_groups(everyone)
    for proc in procs:
        proc.wait(30)
    _gone, alive = psutil.wait_procs(everyone, timeout=30)
    assert not alive, f"still running after SIGKILL: {alive}"


class Cluster:
    def __init__(self, root: Path, jvm_root: Path) -> None:
        self.root = root
        self.properties = root / "spark.properties"
        self.jvm_root = jvm_root  # in the JVM options: no whitespace (see jvm_root_for)
        self.jvm_logs = jvm_root / "jvm-logs"
        self.procs: list[subprocess.Popen] = []
        self.master = f"spark://127.0.0.1:{free_port()}"
        self.worker_dirs = [root / "worker-1", root / "worker-2"]

    def jvm_options(self, role: str) -> str:
        """The JVM options of the cluster's JVMs of ``role`` (daemon, driver, executor):
        their temporary files (the native library lz4-java unpacks, which a killed JVM
        leaves) under the test's folder, not in /tmp."""
        return f"{JVM} -Djava.io.tmpdir={self.jvm_root / 'jvm-tmp'} -Xlog:cds=info:file={self.jvm_logs / role}-%p.log"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "SPARK_HOME", "SPARK_CONF_DIR")}
        # Scratch files (the executors' blocks, the driver's userFiles) under the test's
        # folder, not the JVMs' /tmp, where the killed daemons would leave them.
        env.update(SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="256m",
                   SPARK_DAEMON_JAVA_OPTS=self.jvm_options("daemon"), SPARK_LOCAL_DIRS=str(self.root / "scratch"),
                   PYSPARK_SUBMIT_ARGS=f"--properties-file {shlex.quote(str(self.properties))} pyspark-shell", **extra)
        return env

    def start(self, name: str, args: list[str], **extra: str) -> None:
        log = open(self.root / f"{name}.log", "wb")  # noqa: SIM115 - kept open by the process
        self.procs.append(subprocess.Popen([str(spark_class()), *args], stdout=log, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, env=self.env(**extra), start_new_session=True))
        log.close()

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in self.root.glob("*.log"))

    def wait_for_workers(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            dead = [p.args[1] for p in self.procs if p.poll() is not None]
            assert not dead, f"{dead} ended\n{self.logs()}"
            if (self.root / "master.log").read_text(errors="replace").count("Registering worker") >= 2:
                return
            time.sleep(0.25)
        raise AssertionError(f"the workers did not register within {START_TIMEOUT:.0f}s\n{self.logs()}")


def jvm_root_for(root: Path) -> Path | None:
    """Where the JVMs' temporary files and logs go: ``root``, or where its path holds
    whitespace (Spark's launcher splits JVM options at whitespace) a new folder in the
    system's temporary directory; ``None`` where that path holds whitespace too."""
    if not any(c.isspace() for c in str(root)):
        return root
    if any(c.isspace() for c in tempfile.gettempdir()):
        return None
    return Path(tempfile.mkdtemp(prefix="ordercheck-cluster-"))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, request):
    """A standalone master and two workers (2 cores, 1g each) on 127.0.0.1, stopped (all
    their processes killed and reaped) when the module's tests end."""
    root = tmp_path_factory.mktemp("cluster")
    jvm_root = jvm_root_for(root)
    if jvm_root is None:
        pytest.skip(f"both the test folder {root} and the system's temporary folder hold whitespace, "
                    "which Spark's launcher splits JVM options at: run pytest with a --basetemp without it")
    if jvm_root != root:
        request.addfinalizer(lambda: shutil.rmtree(jvm_root, ignore_errors=True))
    c = Cluster(root, jvm_root)
    request.addfinalizer(lambda: reap(c.procs))
    c.jvm_logs.mkdir()
    (c.jvm_root / "jvm-tmp").mkdir()
    c.properties.write_text(DEFAULTS.format(driver=c.jvm_options("driver"), executor=c.jvm_options("executor")))
    port = c.master.rsplit(":", 1)[1]
    c.start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", port,
                       "--webui-port", str(free_port()), "--properties-file", str(c.properties)])
    for i, work in enumerate(c.worker_dirs, 1):
        work.mkdir()
        c.start(f"worker-{i}", ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", "0",
                                "--webui-port", str(free_port()), "--cores", "2", "--memory", "1g",
                                "--work-dir", str(work), "--properties-file", str(c.properties), c.master])
    c.wait_for_workers()
    return c


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A user's project outside the repository: specs/counter.py and two models."""
    root = tmp_path_factory.mktemp("project")
    (root / "specs").mkdir()
    (root / "specs" / "counter.py").write_text(SPEC)
    (root / "models").mkdir()
    (root / "models" / "holds.toml").write_text(HOLDS)
    (root / "models" / "violated.toml").write_text(VIOLATED)
    return root


def ordercheck(cluster: Cluster, cwd: Path, *args: str, tmpdir: Path | None = None, **env: str) -> subprocess.Popen:
    """``ordercheck ARGS --engine spark --master CLUSTER``, started (the runs go at once).
    With ``tmpdir``, the driver is left to find its scratch itself, under that ``$TMPDIR``
    (no ``SPARK_LOCAL_DIRS``)."""
    environment = cluster.env(**env)
    if tmpdir is not None:
        del environment["SPARK_LOCAL_DIRS"]
        environment["TMPDIR"] = str(tmpdir)
    return subprocess.Popen([sys.executable, "-m", "ordercheck.checker.cli", *args, "--engine", "spark", "--master", cluster.master],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=environment)


@pytest.fixture(scope="module")
def runs(cluster, project, request):
    """The file's three runs against the cluster, started together: a check, a sweep (its
    driver's scratch under a ``$TMPDIR`` of its own) and a check whose executors run a
    Python without ordercheck (a fresh virtual environment
    of this Python, none of ordercheck's packages). Killed if still running at the end."""
    bare = project / "bare"
    venv.create(bare, with_pip=False)
    (project / "tmp").mkdir()
    started = {
        "check": ordercheck(cluster, project, "check", "models/holds.toml", "models/violated.toml", "--quiet",
                            "--json", "check.json", ORDERCHECK_SPARK_DRIVER_STATES="0"),  # every level a Spark job
        "sweep": ordercheck(cluster, project, "sweep", "models/holds.toml", "-o", "sweep", tmpdir=project / "tmp"),
        "unfit": ordercheck(cluster, project, "check", "models/holds.toml", "--quiet", "--json", "unfit.json",
                            PYSPARK_PYTHON=str(bare / "bin" / "python"), ORDERCHECK_SPARK_DRIVER_STATES="0"),
    }
    request.addfinalizer(lambda: reap(list(started.values())))
    return started


def finished(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=600)
    return proc.returncode, out, err


def ran_on_an_executor(explanation: str, cluster: Cluster, spec: Path) -> None:
    """The violation was found by a cluster executor, in the driver's interpreter, with the
    copy of the spec file the driver shipped (in the executor's directory under a
    worker's), not the original."""
    where, _in, python = explanation.rpartition("checked by ")[2].rpartition(" in ")
    assert python == sys.executable, explanation
    ran = Path(where).resolve()
    assert ran != spec.resolve() and ran.name.startswith("ordercheck_user_spec_counter_"), explanation
    assert any(ran.is_relative_to(w.resolve()) for w in cluster.worker_dirs), explanation


def test_a_check_on_a_standalone_cluster_runs_a_users_spec_file(cluster, project, runs):
    code, out, err = finished(runs["check"])
    assert code == 0, out + err + cluster.logs()
    holds, violated = json.loads((project / "check.json").read_text())
    assert holds["engine"] == violated["engine"] == "spark"
    assert holds["stats"]["distinct_states"] == 2 and violated["stats"]["distinct_states"] == 3
    assert holds["properties"]["small"]["status"] == "holds"
    small = violated["properties"]["small"]
    assert small["status"] == "violated"
    ran_on_an_executor(small["explanation"], cluster, project / "specs" / "counter.py")


def test_a_sweep_on_a_standalone_cluster_ships_a_users_spec_file(cluster, project, runs):
    code, out, err = finished(runs["sweep"])
    assert code == 0, out + err + cluster.logs()
    rows = json.loads((project / "sweep" / "sweep.json").read_text())
    rows = rows["rows"] if isinstance(rows, dict) else rows
    assert {(r["variant"], r["status"]) for r in rows} == {("", "holds"), ("guard", "violated")}
    results = json.loads((project / "sweep" / "results.json").read_text())
    results = results["results"] if isinstance(results, dict) else results
    (mutant,) = [r for r in results if r["variant"] == "guard"]
    ran_on_an_executor(mutant["properties"]["small"]["explanation"], cluster, project / "specs" / "counter.py")
    # Its driver's scratch (a private directory under its $TMPDIR, which the executors'
    # own directories take precedence over: tests/test_spark_errors.py checks the
    # settings) is removed at the end.
    assert list((project / "tmp").iterdir()) == []


def test_an_executor_python_without_ordercheck_is_one_line_naming_pyspark_python(cluster, project, runs):
    code, out, err = finished(runs["unfit"])
    assert code == 4, out + err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ordercheck: error: spark: the executors' Python cannot import "), lines[0]
    assert "set PYSPARK_PYTHON" in lines[0] and "docs/howto/spark.md" in lines[0], lines[0]
    assert not (project / "unfit.json").exists()


def kept_the_archive(log: str) -> bool:
    """Whether a JVM's class-data sharing log (``-Xlog:cds=info``) says it mapped the
    archive it was given and kept it: a JVM maps the archive's regions first, then checks
    its own class path against the archive's and unmaps them where they differ."""
    mapped = re.search(r"Mapped dynamic region #0 at base (0x[0-9a-f]+)", log)
    return mapped is not None and f"Unmapping region #0 at base {mapped[1]} " not in log


def stopped_while_mapping(log: str) -> bool:
    """Whether a JVM's class-data sharing log ends before the archive's own (dynamic)
    regions were either mapped or given up, with no warning or error: the JVM was
    stopped during its first milliseconds (a worker kills an executor it was still
    starting when the application ends), not refused the archive, which it would say."""
    return ("Mapped dynamic region #0" not in log and "Unmapping region" not in log
            and re.search(r"\[(warning|error)\]", log) is None)


def test_every_jvm_of_the_cluster_maps_the_class_archive_make_test_wrote(cluster, runs):
    """Where ``make test`` wrote Spark's class-data archive (tests/spark_classes.py), the
    master, both workers, the three runs' drivers and their executors mapped it and kept
    it (each JVM's class-data sharing log says so): a JVM whose class path or Java no
    longer matches the archive starts without it, silently, and pays the whole start.
    An executor stopped while it was still mapping (its log ends there, with no warning)
    is left out; at least two executors must have kept it."""
    archive = archive_path()
    if not archive_option():
        pytest.skip(f"no class-data archive at {archive.relative_to(ROOT)} (make test writes it)")
    for proc in runs.values():  # every driver and executor has started
        proc.wait(600)
    logs = {log.name: log.read_text(errors="replace") for log in cluster.jvm_logs.glob("*.log")}
    roles = [name.partition("-")[0] for name in logs]
    assert (roles.count("daemon"), roles.count("driver")) == (3, 3) and roles.count("executor") >= 2, sorted(logs)
    stopped = {name for name, text in logs.items() if name.startswith("executor") and stopped_while_mapping(text)}
    assert roles.count("executor") - len(stopped) >= 2, sorted(logs)
    unmapped = sorted(name for name, text in logs.items() if name not in stopped and not kept_the_archive(text))
    assert not unmapped, (
        f"{unmapped} did not map {archive}: write it again with "
        f"`python tests/spark_classes.py {archive.relative_to(ROOT)}` (or `make test`)\n"
        + "\n".join(f"--- {name}\n{logs[name][-2000:]}" for name in unmapped))

"""Starting Spark for ordercheck: one SparkContext per process, from the PySpark package.

PySpark (with pandas, the ``spark`` extra: ``pip install 'ordercheck[spark]'``) brings
Spark itself; it needs a Java runtime (17 or later) on ``PATH`` or in ``JAVA_HOME``.
Nothing imports PySpark until a Spark run starts, so the local engine works without it.
With a ``local[...]`` master, and with a standalone master on this machine
(``spark://localhost:7077``) unless ``PYSPARK_PYTHON`` or ``spark.pyspark.python`` names
another interpreter, the executors run this interpreter, with this process's package
root and site-packages on their ``PYTHONPATH``, so they see the same ``ordercheck`` from
any directory. On other clusters (``spark://host:7077``, ``yarn``, ``k8s://...``) every
executor needs the same Python minor version with ``ordercheck`` and its dependencies
installed, and ``spark.pyspark.python`` (or ``PYSPARK_PYTHON``) naming that interpreter.
"""

from __future__ import annotations

import os
import re
import signal
import site
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ordercheck.checker.engine.interrupts import (
    WAITING_FOR_SPARK,
    at_hard_exit,
    cancelling,
    deferred,
    poll,
    reinstall,
    stop_grace,
)


def whole_number_env(name: str, unit: str) -> int | None:
    """The whole number (0 or more) of ``unit`` the environment variable ``name`` holds
    (``None`` when it is unset or empty); anything else is bad input
    (:class:`~ordercheck.checker.api.errors.InputError` naming the variable, exit 2)."""
    from ordercheck.checker.api.errors import InputError

    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise InputError(f"environment variable {name}", "", f"{raw!r} is not a whole number of {unit} (0 or more)")
    return int(raw)


DEFAULT_MASTER = "local[*]"

LOCAL_DRIVER_MEMORY = "4g"
"""The JVM heap on a ``local[...]`` master unless ``spark.driver.memory`` is given (Spark's
own default, 1g, spends much of a large search collecting garbage)."""

# PySpark checks for pandas when it is imported and before every Arrow function, and warns
# about pandas 3, which its DataFrame Arrow functions (no pandas data passes through them)
# work with: not the user's concern.
warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)


LOCAL_JVM_OPTIONS = "-XX:+UseParallelGC"
"""JVM options added on a ``local[...]`` master (where the driver's JVM runs the tasks):
the throughput collector, with no concurrent marking threads competing with the tasks
for the machine's cores. (The JIT compiler's first tier alone was measured too: its
compiler threads' 17 CPU seconds vanish, but the tasks' own JVM time doubles and the
search ends later; see the performance page.) ``spark.driver.extraJavaOptions`` given in
``conf`` (from Python, ``SparkOptions.conf``) replaces these options, and
:data:`JVM_OPTIONS_ENV` replaces them where it is set."""

JVM_OPTIONS_ENV = "ORDERCHECK_SPARK_JVM_OPTIONS"
"""Where set, the JVM options used instead of :data:`LOCAL_JVM_OPTIONS` on a ``local[...]``
master (whitespace-separated, as ``java`` takes them; empty for none). For many short
runs (a test suite) ``-XX:+UseParallelGC -XX:TieredStopAtLevel=1`` starts each JVM
with about a third less CPU; for one long search the default is faster."""


_started_jvm: Any = None
"""The JVM's :class:`subprocess.Popen` that :func:`get_spark` started (known before its
context is made: a signal while the context starts ends it too)."""


class SparkUnavailable(RuntimeError):
    """Spark could not start (no Java, or the master cannot be reached)."""


SPARK_EXTRA = "pip install 'ordercheck[spark]'"
"""How to install what the Spark engine needs beyond ordercheck's own dependencies."""

SPARK_PACKAGES = ("pyspark", "pandas")
"""The packages only the Spark engine needs (the ``spark`` extra): PySpark, and pandas,
without which PySpark refuses its Arrow functions (``mapInArrow``)."""


def missing_spark_packages() -> list[str]:
    """Those of :data:`SPARK_PACKAGES` this interpreter cannot import (found without
    importing them)."""
    import importlib.util

    missing = []
    for name in SPARK_PACKAGES:
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            missing.append(name)
    return missing


def require_spark() -> None:
    """Raise :class:`~ordercheck.checker.api.errors.InputError` (exit 2, one line saying how to
    install them) when a package the Spark engine needs is missing; a command checks this
    before it loads or writes anything."""
    from ordercheck.checker.api.errors import InputError

    missing = missing_spark_packages()
    if missing:
        names = " and ".join(missing)
        raise InputError("--engine spark", "", f"needs {names}, not installed here; install with: {SPARK_EXTRA}")


CLUSTER_HOWTO = "docs/howto/spark.md, Executors on a cluster"
"""The how-to section a failure of the executors' Python points to."""


def executor_python_problem(failure: str) -> str | None:
    """One line for a Spark job that failed because the executors' Python cannot run
    ordercheck: a module it cannot import (``ModuleNotFoundError``, e.g. ``checker``: the
    interpreter has no ordercheck), an interpreter that does not exist, or one of
    another Python version than the driver's. ``None`` for any other failure;
    ``failure`` is the text of the exception PySpark raised."""
    missing = re.search(r"ModuleNotFoundError: No module named '([^']+)'", failure)
    program = re.search(r'Cannot run program "([^"]+)"', failure)
    if missing:
        what = f"cannot import {missing.group(1)}"
    elif program:
        what = f"{program.group(1)} cannot be run there"
    elif "PYTHON_VERSION_MISMATCH" in failure or "Python in worker has different version" in failure:
        what = f"is not Python {sys.version_info.major}.{sys.version_info.minor}, the driver's"
    else:
        return None
    return (f"the executors' Python {what}: set PYSPARK_PYTHON (or spark.pyspark.python) to an interpreter "
            f"of the driver's Python version with ordercheck (and the specs' packages) installed, on every "
            f"executor (see {CLUSTER_HOWTO})")


def engine_installed(_ctx: Any, _param: Any, value: str) -> str:
    """The command line's ``--engine`` callback: ``spark`` without what it needs
    installed stops the command before it reads anything (:func:`require_spark`)."""
    if value == "spark":
        require_spark()
    return value


def get_spark(master: str = DEFAULT_MASTER, conf: dict[str, str] | None = None, app_name: str = "ordercheck") -> Any:
    """The process's SparkContext, started on ``master`` if none runs yet.

    The search engine works on DataFrames through :func:`sql_session` over this context.
    Spark allows one context per process: when one is already running (a test
    session, or an earlier check in the same run) it is reused as it is and ``master``
    and ``conf`` are ignored. Console progress bars are off; ``conf`` entries override
    the defaults. Spark's own log is cut to fatal messages (``log4j2.properties`` beside this module):
    retried task failures are Spark's business, and a job that fails for good is
    reported by the engine in one line.
    """
    try:
        from pyspark import SparkConf, SparkContext
        from pyspark.java_gateway import launch_gateway
    except ImportError as exc:  # the spark extra is not installed
        raise SparkUnavailable(f"pyspark cannot be imported ({exc}); install with: {SPARK_EXTRA}") from None
    active = SparkContext._active_spark_context
    if active is not None:
        return active
    log_config = Path(__file__).with_name("log4j2.properties")
    settings: dict[str, str] = {
        "spark.ui.showConsoleProgress": "false",
        "spark.python.worker.reuse": "true",
        # Generated classes named without their plan's stage numbers: every level's plan
        # has the same shape, so its code is compiled (and JIT-compiled) once, not per level.
        "spark.sql.codegen.useIdInClassName": "false",
        # Spark's log: fatal messages only (failed tasks are retried or reported in one line)
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={log_config.as_uri()}",
    }
    if "spark.local.dir" not in (conf or {}) and not os.environ.get("SPARK_LOCAL_DIRS"):
        # The driver's scratch (on local[...] the executor's too; a cluster's executors
        # use the directories their workers give them, which take precedence).
        settings["spark.local.dir"] = scratch = scratch_dir()
        # The JVM's own temporary directory too: it makes one of its own there at its
        # start (removed only by a shutdown the stop does not wait for), which was left
        # in /tmp after every run.
        settings["spark.driver.extraJavaOptions"] += " " + java_option(f"-Djava.io.tmpdir={scratch}")
    if master.startswith("local"):
        # On local[...] the driver's JVM is the executor too: it holds every level's rows
        # (the visited set's fingerprints, the frontier's states) and shuffles them.
        settings["spark.driver.memory"] = LOCAL_DRIVER_MEMORY
        settings["spark.driver.host"] = "127.0.0.1"
        settings["spark.driver.bindAddress"] = "127.0.0.1"
        # The throughput collector (see LOCAL_JVM_OPTIONS), or the options the environment
        # names (last, so that they override the ones above).
        settings["spark.driver.extraJavaOptions"] += " " + os.environ.get(JVM_OPTIONS_ENV, LOCAL_JVM_OPTIONS)
        # The executors see this process's ordercheck, and run this interpreter unless
        # the user named one.
        settings["spark.executorEnv.PYTHONPATH"] = executor_pythonpath()
        if not python_chosen(conf or {}):
            settings["spark.pyspark.python"] = sys.executable
    elif on_this_machine(master) and not python_chosen(conf or {}):
        # A standalone cluster on this machine: unless the user named the executors'
        # Python, they run this interpreter with this process's ordercheck, as on local[...].
        settings["spark.executorEnv.PYTHONPATH"] = executor_pythonpath()
        settings["spark.pyspark.python"] = sys.executable
    settings.update(conf or {})
    # PySpark gives its tasks the interpreter PYSPARK_PYTHON names when the context is
    # made (else "python3" on the executors' PATH), whatever spark.pyspark.python says.
    python = settings.get("spark.pyspark.python")
    spark_conf = SparkConf().setMaster(master).setAppName(app_name)
    for key, value in settings.items():
        spark_conf.set(key, value)
    # The JVM's own console output (its start-up notes, Spark's log) goes to a temporary
    # file, read back only to explain a failed start.
    jvm_log = tempfile.TemporaryFile()
    try:
        # A signal while the JVM starts is recorded; the JVM's process is known from the
        # moment it is started (_recording_jvm), so the stop (cancel_spark, stop_spark)
        # can end it even before its context is made.
        with deferred(), _recording_jvm(), _environment("PYSPARK_PYTHON", python):
            # The JVM leads a process group of its own, which kill_jvm ends whole.
            gateway = launch_gateway(spark_conf, popen_kwargs={"stderr": jvm_log, "stdout": jvm_log,
                                                               "process_group": 0})
            at_hard_exit(kill_jvm)
            poll()
            sc = SparkContext(conf=spark_conf, gateway=gateway)
            reinstall()  # the context put a SIGINT handler of its own: ordercheck's decides
    except Exception as exc:  # Java missing, master unreachable: one clear line
        jvm_log.seek(0)
        said = [ln.strip() for ln in jvm_log.read().decode(errors="replace").splitlines() if ln.strip()]
        text = str(exc).strip() or type(exc).__name__
        first = said[-1] if said else text.splitlines()[0]
        raise SparkUnavailable(
            f"cannot start Spark on {master!r}: {first[:300]} (is Java 17+ on PATH or JAVA_HOME set?)"
        ) from None
    sc.setLogLevel("FATAL")
    _follow_terminal_stops()
    return sc


def _follow_terminal_stops() -> None:
    """Make a stop from the terminal (Ctrl-Z, ``SIGTSTP``) stop Spark's JVM and its Python
    workers too, and ``SIGCONT`` continue them: they lead process groups of their own (so
    that a stop can kill them whole), which the terminal's signal does not reach. Only
    where ``SIGTSTP`` has its default action, from the main thread."""
    if not hasattr(signal, "SIGTSTP") or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTSTP) is signal.SIG_DFL:
        signal.signal(signal.SIGTSTP, _stop_with_jvm)


def _stop_with_jvm(_signum: int, _frame: Any) -> None:
    """``SIGTSTP``'s handler: stop the JVM and the processes under it, then this process;
    once continued, continue them. This process stops itself with ``SIGSTOP``, which a
    process group without a terminal (a run started in a session of its own) does not
    discard, as it does ``SIGTSTP``'s default action."""
    proc = _jvm_process()
    group = [] if proc is None else [proc.pid, *(p.pid for p in _descendants(proc.pid))]
    _signal_each(group, signal.SIGSTOP)
    try:
        os.kill(os.getpid(), signal.SIGSTOP)  # stopped here until a SIGCONT
    finally:
        _signal_each(group, signal.SIGCONT)


def _signal_each(pids: list[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except OSError:  # already gone
            pass


def java_option(option: str) -> str:
    """``option`` as one word of ``spark.driver.extraJavaOptions`` (which Spark's launcher
    splits at spaces): in double quotes, with the quotes and backslashes in it escaped."""
    escaped = option.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


SCRATCH_PREFIX = "ordercheck-spark-"


def scratch_dir() -> str:
    """The driver's scratch directory (``spark.local.dir``: its blocks, shuffle files,
    PySpark's broadcast files, the files shipped to the executors; on a ``local[...]``
    master the executor's too): a private directory in the
    temporary directory ``$TMPDIR`` names (Spark itself would use the JVM's, ``/tmp``,
    whatever ``$TMPDIR`` says), named after this process and removed when the process
    ends; one a process killed outright left behind is removed by the next run that
    makes one (:func:`~ordercheck.checker.engine.frontier.own_spill_dir`)."""
    import atexit
    import shutil

    from ordercheck.checker.engine.frontier import own_spill_dir

    path = own_spill_dir(SCRATCH_PREFIX)
    atexit.register(shutil.rmtree, path, True)
    return path


def executor_pythonpath() -> str:
    """The ``PYTHONPATH`` executors on this machine get: this process's package root (the
    folder holding ``ordercheck/``), its site-packages and its own ``PYTHONPATH``. Spark may
    start the executors' Python with the interpreter's real path, outside this virtual
    environment, and from another directory."""
    import ordercheck

    package_root = str(Path(ordercheck.__file__).resolve().parent.parent)  # the folder holding ordercheck/
    paths = [package_root, *site.getsitepackages(), os.environ.get("PYTHONPATH", "")]
    return os.pathsep.join(p for p in paths if p)


def on_this_machine(master: str) -> bool:
    """Whether ``master`` is a standalone master (``spark://HOST:PORT``) on this machine:
    ``localhost``, a loopback address, or this host's name."""
    if not master.startswith("spark://"):
        return False
    import socket

    hosts = [h.strip().rsplit(":", 1)[0].strip("[]") for h in master[len("spark://"):].split(",")]
    mine = {"localhost", "::1", socket.gethostname(), socket.getfqdn()}
    return all(h in mine or h.startswith("127.") for h in hosts)


def python_chosen(conf: dict[str, str]) -> bool:
    """Whether the user named the executors' Python: ``PYSPARK_PYTHON`` in the
    environment, or ``spark.pyspark.python`` in ``conf``."""
    return "PYSPARK_PYTHON" in os.environ or "spark.pyspark.python" in conf


@contextmanager
def _environment(name: str, value: str | None) -> Iterator[None]:
    """Inside the block, environment variable ``name`` is ``value`` (left alone when
    ``value`` is ``None``); afterwards it is as before."""
    if value is None:
        yield
        return
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


@contextmanager
def _recording_jvm() -> Iterator[None]:
    """Inside the block the process PySpark starts for its JVM is recorded in
    ``_started_jvm`` as soon as it is started (PySpark itself returns it only once the
    JVM answers, seconds later on a busy machine)."""
    import subprocess

    from pyspark import java_gateway

    class Recorded(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            global _started_jvm
            super().__init__(*args, **kwargs)
            _started_jvm = self

    original = java_gateway.Popen
    java_gateway.Popen = Recorded  # type: ignore[misc]
    try:
        yield
    finally:
        java_gateway.Popen = original  # type: ignore[misc]


def cancel_spark() -> None:
    """Cancel every Spark job of this process (a signal came: the job waited for ends
    with an error, which the command line reports as the signal). From here on PySpark's
    and Py4J's complaints about the connection to the JVM are silenced (:func:`quiet_spark`)."""
    from pyspark import SparkContext

    quiet_spark()
    sc = SparkContext._active_spark_context
    if sc is not None and getattr(sc, "_jsc", None) is not None:
        sc.cancelAllJobs()
    else:  # the JVM is starting (or its context): nothing to cancel, the start is given up
        kill_jvm()


def quiet_spark() -> None:
    """Silence what PySpark and Py4J print when the JVM goes away under them during a
    stop: Py4J's log, and the tracebacks of their threads (the accumulator server, a
    connection's reader) and of their finalizers. The run's one line says what happened."""
    import logging

    for name in ("py4j", "pyspark"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.CRITICAL + 1)
        logger.propagate = False
    if getattr(threading.excepthook, "ordercheck_quiet", False):
        return
    # Py4J also logs through the root logger ("Exception while sending command.")
    logging.getLogger().addFilter(lambda record: not any(p in record.pathname for p in _SPARK_PACKAGES))
    thread_hook, unraisable_hook = threading.excepthook, sys.unraisablehook

    def quiet_thread(args: Any) -> None:
        if not _from_spark(args.exc_traceback):
            thread_hook(args)

    def quiet_unraisable(args: Any) -> None:
        if not _from_spark(args.exc_traceback) and not _from_spark_object(args.object):
            unraisable_hook(args)

    quiet_thread.ordercheck_quiet = True  # type: ignore[attr-defined]
    threading.excepthook = quiet_thread
    sys.unraisablehook = quiet_unraisable


_SPARK_PACKAGES = (f"{os.sep}pyspark{os.sep}", f"{os.sep}py4j{os.sep}")


def _from_spark(tb: Any) -> bool:
    """Whether a traceback passes through PySpark's or Py4J's code."""
    while tb is not None:
        if any(p in tb.tb_frame.f_code.co_filename for p in _SPARK_PACKAGES):
            return True
        tb = tb.tb_next
    return False


def _from_spark_object(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", "") or ""
    return module.split(".")[0] in ("pyspark", "py4j")


@contextmanager
def spark_jobs() -> Iterator[None]:
    """The block of a command that waits on Spark jobs (check, sweep, validate on
    Spark): a first SIGINT or SIGTERM inside it cancels every job
    (:func:`cancel_spark`) and the command ends with the signal's exit code (130, 143);
    if the jobs do not end within the stop's grace, the watchdog kills the JVM
    (:func:`kill_jvm`) and interrupts the block
    (:func:`ordercheck.checker.engine.interrupts.cancelling`)."""
    with cancelling(cancel_spark, force=kill_jvm, waiting=WAITING_FOR_SPARK):
        yield


def kill_jvm() -> None:
    """Kill this process's Spark JVM at once, with the processes it started (the
    watchdog's last resort)."""
    proc = _jvm_process()
    if proc is None:
        return
    quiet_spark()
    others = _descendants(proc.pid)
    _kill_all(proc.pid, others)


def _jvm_process() -> Any:
    """The JVM's :class:`subprocess.Popen` of this process's Spark context (None: none)."""
    pyspark = sys.modules.get("pyspark")
    sc = getattr(getattr(pyspark, "SparkContext", None), "_active_spark_context", None)
    return getattr(getattr(sc, "_gateway", None), "proc", None) or _started_jvm


def _descendants(pid: int) -> list[Any]:
    """The processes under ``pid`` now (PySpark's daemon and its Python workers)."""
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def _kill_all(jvm: int, others: list[Any]) -> None:
    """SIGKILL the JVM's process group and ``others`` with the groups they lead (PySpark's
    daemon leads one with its workers, which it forks there after ``others`` was taken)."""
    try:
        os.killpg(jvm, signal.SIGKILL)
    except OSError:
        pass
    _kill_with_groups(others)


def sql_session(sc: Any) -> Any:
    """The :class:`pyspark.sql.SparkSession` over context ``sc`` (built once, then reused).

    Adaptive query execution is turned off in it: the engine picks the number of shuffle
    partitions itself and relies on every level's datasets keeping it, so the visited set
    and the deduplicated rows are partitioned alike and only the candidates' rows move.
    Arrow batches to Python are cut by record count only."""
    from pyspark.sql import SparkSession

    session = SparkSession._instantiatedSession
    if session is None or session.sparkContext is not sc:
        session = SparkSession(sc)
    session.conf.set("spark.sql.adaptive.enabled", "false")
    # Batches to Python are cut by record count alone (Spark's 10,000): with a byte
    # limit set, Spark measures the batch it is writing after every row.
    session.conf.set("spark.sql.execution.arrow.maxBytesPerBatch", str(2**31 - 1))
    return session


def stop_spark(timeout: float | None = None) -> None:
    """End this process's Spark at once (a run interrupted by a signal): PySpark's Python
    daemon and workers are killed (they would outlive a JVM that dies first), the JVM is
    terminated (its process group killed if it does not end within ``timeout`` seconds,
    by default the stop's grace, :func:`~ordercheck.checker.engine.interrupts.stop_grace`), and this
    returns once all of them have ended (or at most a second after they were killed). Nothing of
    PySpark's or Py4J's is printed (:func:`quiet_spark`)."""
    if timeout is None:
        try:
            timeout = stop_grace()
        except Exception:  # a bad ORDERCHECK_STOP_GRACE: reported elsewhere
            timeout = 3.0
    pyspark = sys.modules.get("pyspark")
    if pyspark is None:
        return  # Spark was never started
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    proc = _jvm_process()
    if sc is None and proc is None:
        return
    quiet_spark()
    SparkContext._active_spark_context = None
    accumulators = getattr(sc, "_accumulatorServer", None)
    if accumulators is not None:  # its connection ends with the JVM: nothing to report then
        accumulators.handle_error = lambda *_args: None
    if proc is None or proc.poll() is not None:
        return
    import subprocess

    import psutil

    others = _descendants(proc.pid)
    pythons = [p for p in others if _is_python(p)]
    _kill_with_groups(pythons)  # the tasks' workers: nothing of theirs is kept
    proc.terminate()  # Spark's shutdown hooks remove its temporary files
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        pass
    _kill_all(proc.pid, others)
    try:
        proc.wait(min(timeout, 1.0))
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL ignored
        pass
    psutil.wait_procs(others, timeout=min(timeout, 1.0))


def _is_python(process: Any) -> bool:
    import psutil

    try:
        return "python" in process.name().lower()
    except psutil.Error:
        return False


def _kill_with_groups(processes: list[Any]) -> None:
    """SIGKILL ``processes`` and the process groups they lead."""
    import psutil

    for child in processes:
        try:
            if os.getpgid(child.pid) == child.pid:
                os.killpg(child.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            child.kill()
        except psutil.Error:
            pass

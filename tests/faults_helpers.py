"""Running ``ordercheck`` as a real process under real faults, for tests/test_faults_*.py.

Each run starts in a session of its own, so that every process it starts (worker
processes, Spark's JVM) can be found afterwards by its session id, and a test can
assert that none is left.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
EXE = [sys.executable, "-c", "from ordercheck.checker.cli import main; main(prog_name=\"ordercheck\")"]


def limits(fsize: int | None = None, address_space: int | None = None, nofile: int | None = None,
           umask: int | None = None) -> Callable[[], None]:
    """A ``preexec_fn`` setting resource limits (bytes, bytes, descriptors) and the umask
    in the child before it runs."""

    def apply() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        if umask is not None:
            os.umask(umask)

    return apply


def env(tmpdir: Path | None = None) -> dict[str, str]:
    """The environment for a run (``TMPDIR`` set to ``tmpdir`` when given)."""
    out = dict(os.environ)
    out.pop("ORDERCHECK_SPARK_INJECT_FAILURES", None)
    if tmpdir is not None:
        out["TMPDIR"] = str(tmpdir)
    return out


def run(*args: str | Path, preexec: Callable[[], None] | None = None, tmpdir: Path | None = None,
        timeout: float = 120, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """Run ``ordercheck ARGS`` to its end; asserts that it left no process behind."""
    proc = subprocess.Popen(
        [*EXE, *map(str, args)], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=preexec, env=env(tmpdir),
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert_no_survivors(proc.pid)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def invoke(*args: str | Path) -> subprocess.CompletedProcess:
    """Run ``ordercheck ARGS`` in this process (for faults that need no process of their
    own: bad input, a path under a file); the same exit code and lines as a real run."""
    from click.testing import CliRunner

    from ordercheck.checker.cli import main

    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


STARTED: list[int] = []
"""The sessions of the runs started here (a run's session id is its pid), for
:func:`stop_stray_runs`."""


def started(proc: subprocess.Popen) -> subprocess.Popen:
    """Note ``proc``, a run started in a session of its own, for :func:`stop_stray_runs`."""
    STARTED.append(proc.pid)
    return proc


def stop_stray_runs() -> list[str]:
    """Kill every process still alive in the sessions of the runs started since the last
    call, and return their command lines. tests/conftest.py calls it when each test ends:
    a test that fails between starting a run and ending it (an assertion on its output
    while it runs) would leave it running, with its workers or its Spark JVM, long after
    the suite has ended."""
    killed = []
    while STARTED:
        killed += kill(session(STARTED.pop()))
    return killed


def kill(processes: list[psutil.Process]) -> list[str]:
    """Kill ``processes`` (those already gone are passed over); their command lines.

    Every command line is read before the first kill: a run's workers end by themselves
    once their parent is killed, and one read after that would be empty."""
    names = [" ".join(line[:4]) for line in map(command_line, processes) if line]
    for p in processes:
        try:
            p.kill()
        except psutil.Error:
            pass
    return names


def start(*args: str | Path, preexec: Callable[[], None] | None = None, tmpdir: Path | None = None,
          cwd: Path = ROOT) -> subprocess.Popen:
    """Start ``ordercheck ARGS`` in a session of its own (stdout, stderr piped), killed
    by :func:`stop_stray_runs` if the test leaves it running."""
    return started(subprocess.Popen(
        [*EXE, *map(str, args)], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=preexec, env=env(tmpdir),
    ))


def session(sid: int) -> list[psutil.Process]:
    """The live processes of session ``sid`` (zombies are dead)."""
    found = []
    for p in psutil.process_iter(["status"]):
        try:
            if os.getsid(p.pid) == sid and p.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(p)
        except (ProcessLookupError, PermissionError, psutil.Error):
            continue
    return found


def command_line(p: psutil.Process) -> list[str]:
    """``p``'s command line, empty once it has ended (a process listed a moment ago may
    be gone by the time its command line is read)."""
    try:
        return p.cmdline()
    except psutil.Error:
        return []


def assert_no_survivors(sid: int, grace: float = 10.0) -> None:
    """No process of session ``sid`` is alive (waiting up to ``grace`` seconds for
    processes that are on their way out); kills and fails otherwise."""
    deadline = time.monotonic() + grace
    while True:
        left = session(sid)
        if not left:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"processes left behind: {kill(left)}")
        time.sleep(0.05)


def wait_for(predicate: Callable[[], bool], timeout: float = 60.0, proc: subprocess.Popen | None = None) -> None:
    """Wait until ``predicate()`` holds (failing if ``proc`` ends first or time runs out)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the run ended (exit {proc.returncode}) before the moment awaited")
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.01)


def one_error_line(stderr: str) -> str:
    """The run's one line of its own on stderr (progress lines aside), its last, and no
    traceback."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("ordercheck:")]
    assert len(lines) == 1, stderr
    assert stderr.rstrip().splitlines()[-1] == lines[0], stderr
    return lines[0]


def counts(path: Path) -> tuple[int, int, int, dict[str, str]]:
    """(distinct states, transitions, depth, verdicts) of a ``--json`` result."""
    data = json.loads(Path(path).read_text())
    st = data["stats"]
    return st["distinct_states"], st["transitions"], st["depth"], {n: p["status"] for n, p in data["properties"].items()}


def reseal(where: Path) -> None:
    """Rewrite a checkpoint's manifest to match its files (damage a checksum cannot see)."""
    manifest = json.loads((where / "manifest.json").read_text())
    for name, entry in manifest["files"].items():
        data = (where / name).read_bytes()
        entry["bytes"], entry["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    (where / "manifest.json").write_text(json.dumps(manifest))


def checkpoint_of(root: Path) -> Path:
    """The single model checkpoint directory under a ``--checkpoint`` root."""
    dirs = [d for d in root.iterdir() if d.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def current_level(ckpt: Path) -> int | None:
    """The level of the checkpoint in force in a model checkpoint directory."""
    try:
        return int((ckpt / "CURRENT").read_text().split("-")[1])
    except (OSError, IndexError, ValueError):
        return None


def listing(path: Path) -> list[str]:
    """Every path under ``path``, relative, sorted."""
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


BUS1_3 = ("check", MODELS / "bus1-3.toml", "--no-por")
"""233,478 states over 32 levels, a few seconds: long enough to interrupt, kill and resume."""


_REFERENCE: list[tuple[int, int, int, dict[str, str]]] = []  # one run per test session


@pytest.fixture(scope="session")
def bus1_3_reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, int, int, dict[str, str]]:
    """The counts and verdicts of an uninterrupted run of :data:`BUS1_3` (import this
    fixture into a test module to use it; the run is made once per session)."""
    if not _REFERENCE:
        import fcntl

        # Under pytest-xdist every worker's temporary directory is under one session
        # directory: the first worker to get here runs it, the others read its result.
        shared = tmp_path_factory.getbasetemp()
        if os.environ.get("PYTEST_XDIST_WORKER"):
            shared = shared.parent
        out = shared / "bus1-3-reference.json"
        with open(shared / "bus1-3-reference.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not out.exists():
                part = shared / f"bus1-3-reference.{os.getpid()}.json"
                done = run(*BUS1_3, "--quiet", "--json", part)
                assert done.returncode == 0, done.stderr
                part.replace(out)
        _REFERENCE.append(counts(out))
    return _REFERENCE[0]

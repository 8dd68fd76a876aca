"""The memory budget, for real (issue 18): a search that would pass --memory-limit, or an
address-space limit (RLIMIT_AS), stops as at a bound (exit code 3, unknown verdicts,
never holds), writes its checkpoint when asked, says how to go on, and resumed with
more memory ends with the counts of an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.faults_helpers import (
    BUS1_3,
    MODELS,
    ROOT,
    assert_no_survivors,
    bus1_3_reference,
    checkpoint_of,
    counts,
    limits,
    one_error_line,
    run,
    start,
    wait_for,
)

reference = bus1_3_reference
BIG = ROOT / "benchmarks" / "models" / "bus1-3x2.toml"  # tens of millions of states unreduced


def _baseline() -> tuple[int, int]:
    """(resident, address space) of a process that has loaded the engine, in bytes."""
    code = (
        "import ordercheck.checker.cli, ordercheck.checker.engine.levels, ordercheck.checker.engine.run, ordercheck.specs.bus1, re\n"
        "s = open('/proc/self/status').read()\n"
        "print(*(int(re.search(k + r':\\s+(\\d+)', s).group(1)) * 1024 for k in ('VmRSS', 'VmSize')))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    rss, size = map(int, out.stdout.split())
    return rss, size


def _stopped_by_memory(out: subprocess.CompletedProcess) -> str:
    """The memory advice of a run stopped by its budget (a run without --quiet, which
    would leave that warning out)."""
    assert out.returncode == 3, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and "MemoryError" not in out.stderr, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.endswith("stopped by memory"), first
    advice = [line for line in out.stdout.splitlines() if "stopped at its memory budget" in line]
    assert len(advice) == 1
    for way in ("--memory-limit", "--spill-dir", "reductions", "--engine spark"):
        assert way in advice[0], advice[0]
    return advice[0]


def _verdicts(path: Path) -> dict[str, str]:
    return {n: p["status"] for n, p in json.loads(path.read_text())["properties"].items()}


@pytest.mark.parametrize("spill", [False, True], ids=["in-memory", "spilled"])
def test_memory_limit_stops_as_a_bound_and_resumes(reference, tmp_path: Path, spill: bool) -> None:
    """Two workers: the budget counts their memory; the level being searched is saved.
    With --spill-dir no file of the workers' shares stays there, after the stop or the
    resumed run."""
    rss, _size = _baseline()
    limit = f"{(rss >> 20) + 14}M"  # the search needs some 35 MiB more than that
    ckpt, spill_dir = tmp_path / "ckpt", tmp_path / "spill"
    args = (*BUS1_3, "--workers", "2", "--checkpoint", ckpt, "--checkpoint-every", "1000",
            *(("--spill-dir", spill_dir) if spill else ()))
    out = run(*args, "--memory-limit", limit, "--json", tmp_path / "cut.json")
    if spill:
        assert list(spill_dir.iterdir()) == []
    advice = _stopped_by_memory(out)
    model_dir = checkpoint_of(ckpt)
    assert f"resume from the checkpoint in {model_dir} (level " in advice
    states, _transitions, _depth, verdicts = counts(tmp_path / "cut.json")
    assert 0 < states < reference[0]
    always = [n for n, v in reference[3].items() if v == "holds"]
    assert any(verdicts[n] == "unknown" for n in always)
    assert not any(verdicts[n] == "holds" and reference[3][n] != "holds" for n in verdicts)
    resumed = run(*args, "--resume", "--memory-limit", "4G", "--json", tmp_path / "all.json")
    assert resumed.returncode == 0, resumed.stderr
    assert counts(tmp_path / "all.json") == reference
    if spill:
        assert list(spill_dir.iterdir()) == []


def test_memory_limit_without_checkpoint_says_how_to_keep_progress(tmp_path: Path) -> None:
    rss, _size = _baseline()
    out = run(*BUS1_3, "--memory-limit", f"{(rss >> 20) + 10}M", "--json", tmp_path / "cut.json")
    advice = _stopped_by_memory(out)
    assert "run again with --checkpoint DIR" in advice
    assert "unknown" in _verdicts(tmp_path / "cut.json").values()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_address_space_limit_stops_as_a_bound(workers: str) -> None:
    """Under ulimit -v the search stops before an allocation fails (a refused glibc
    allocation can also crawl instead of failing: the workers' address space counts).
    With two workers this once died by SIGSEGV about one run in two (see
    test_a_lost_worker_under_an_address_space_limit_is_one_line)."""
    _rss, size = _baseline()
    out = run("check", BIG, "--workers", workers, preexec=limits(address_space=size + (70 << 20)),
              timeout=180)
    advice = _stopped_by_memory(out)
    assert "of address space in use" in advice


def test_max_states_does_not_preallocate() -> None:
    """--max-states 1000000000 on a small model fits in a 1 GiB address space (a store
    sized from it alone would take 2.5 GiB)."""
    out = run("check", MODELS / "fifo-4.toml", "--quiet", "--max-states", "1000000000",
              preexec=limits(address_space=1 << 30))
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"fifo, \d+ distinct states", out.stdout) and "stopped by" not in out.stdout


def _worker_pids(proc: subprocess.Popen) -> list[int]:
    try:
        return [c.pid for c in psutil.Process(proc.pid).children()]
    except psutil.Error:
        return []


@pytest.mark.parametrize("args", [
    ("check", BIG, "--no-por"),
    ("check", BIG, "--no-por", "--spill-dir", "SPILL"),
    ("check", MODELS / "bus1-3.toml"),  # reduced (visibility; its acyclic spec skips the cycle proviso)
], ids=["shards", "shards-spilled", "reduced"])
def test_a_lost_worker_under_an_address_space_limit_is_one_line(args: tuple, tmp_path: Path) -> None:
    """A worker killed in the middle of a search (as the out-of-memory killer would) ends
    the run with one line and exit code 4, under an address-space limit too. It used
    to end in a RuntimeError that was taken for a spec's: the search was repeated in
    this process to find the spec's exception, with no memory budget, filled the
    address space, and CPython, unable to create a MemoryError, died by SIGSEGV. The
    reduced case runs partial-order reduction with visibility (bus1-3 declares acyclic,
    so it skips the cycle proviso; a stop between the proviso's rounds is tested in
    tests/test_workers.py). The killed shard worker's files in the spill directory are
    deleted by the main process."""
    _rss, size = _baseline()
    spill = tmp_path / "spill"
    proc = start(*[spill if a == "SPILL" else a for a in args], "--workers", "2",
                 preexec=limits(address_space=size + (400 << 20)))
    try:
        wait_for(lambda: len(_worker_pids(proc)) == 2, proc=proc)
        time.sleep(1.0)  # well into the search
        if "SPILL" in args:  # both workers hold files of their shares (the victim's stay when it dies)
            wait_for(lambda: {p.name.split("-")[3] for p in spill.glob("share-*")} == {"w0", "w1"}, proc=proc)
        victim = _worker_pids(proc)[1]
        os.kill(victim, signal.SIGKILL)
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert_no_survivors(proc.pid)
    assert proc.returncode == 4, (proc.returncode, err[-3000:])
    line = one_error_line(err)
    assert re.search(r"error: local: worker process [01] ended in the middle of the search \(killed by SIGKILL\)",
                     line), line
    if "SPILL" in args:
        assert spill.is_dir() and list(spill.iterdir()) == []


def test_diagnosis_keeps_within_the_address_space() -> None:
    """The search again for a spec's exception (ordercheck.checker.engine.diagnose), of an exception
    no spec raised, on a model far larger than the address space allows: it gives up
    at its budget and hands the exception back, where it once filled the address space
    and died by SIGSEGV."""
    _rss, size = _baseline()
    code = (
        "from ordercheck.checker.engine.diagnose import diagnose\n"
        "from ordercheck.checker.loading.modelfile import load_model\n"
        f"found = diagnose(load_model({str(BIG)!r}), RuntimeError('not the spec'), max_states=10**8, seconds=600)\n"
        "print(type(found).__name__, found)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          preexec_fn=limits(address_space=size + (50 << 20)))
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
    assert done.stdout.strip() == "RuntimeError not the spec", done.stdout


FILL_AT_THE_BOUND = """
import mmap, resource, sys
import ordercheck.checker.engine.budget as budget
refuse = budget.MemoryBudget.reserve
held = []
def fill():  # every byte of address space left, as a late allocation elsewhere would
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    room = soft - int(open('/proc/self/statm').read().split()[0]) * 4096
    chunk = 1 << 20
    while room > 0 and chunk >= 4096:
        try:
            held.append(mmap.mmap(-1, min(chunk, room), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=0))
            room -= min(chunk, room)
        except OSError:
            chunk >>= 1
def reserve(self, extra):
    try:
        refuse(self, extra)
    except budget.MemoryBoundReached:
        if not held:
            fill()
        raise
budget.MemoryBudget.reserve = reserve
from ordercheck.checker.cli import main
main(prog_name='ordercheck', args=sys.argv[1:])
"""


def test_address_space_full_when_the_budget_stops() -> None:
    """The moment the budget stops the search, the address space is full to the last
    page (filled by the test, as an allocation the budget did not see would fill it):
    stopping the workers and the report still end as a bound, exit code 3, and do not
    fall back on a search without a budget (ordercheck.checker.engine.diagnose)."""
    _rss, size = _baseline()
    proc = subprocess.Popen(
        [sys.executable, "-c", FILL_AT_THE_BOUND, "check", str(BIG), "--workers", "2"], cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=limits(address_space=size + (70 << 20)),
    )
    out, err = proc.communicate(timeout=180)
    assert_no_survivors(proc.pid)
    _stopped_by_memory(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))


ARENA_PROBE = """
import re, threading
from ordercheck.checker.engine.budget import MemoryBudget
def size():
    return int(re.search(r'VmSize:\\s+(\\d+)', open('/proc/self/status').read()).group(1)) << 10
if IMPORT_BUDGET:
    MemoryBudget(None)
before = size()
def allocate():
    global kept
    kept = [bytearray(4096) for _ in range(64)]
thread = threading.Thread(target=allocate, daemon=True)
thread.start()
thread.join()
print((size() - before) >> 20)
"""


@pytest.mark.parametrize("capped", [True, False])
def test_threads_reserve_no_malloc_arena_under_an_address_space_limit(capped: bool) -> None:
    """Under an address-space limit the budget caps glibc's malloc arenas at one: a
    thread's first allocation (a worker pipe's receiver) takes no 64 MiB of address
    space. Without the cap (``capped`` false) it does, which shows the probe sees it."""
    _rss, size = _baseline()
    code = ARENA_PROBE.replace("IMPORT_BUDGET", str(capped))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          preexec_fn=limits(address_space=size + (1 << 30)))
    assert done.returncode == 0, done.stderr
    grown = int(done.stdout)  # MiB of address space the thread's allocations added, its 8 MiB stack aside
    assert (grown < 32) if capped else (grown >= 60), grown

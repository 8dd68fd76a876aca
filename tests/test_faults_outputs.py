"""Operating-system errors on outputs and work paths, for real (issue 18).

Each run is a real ``ordercheck`` process: a path under a file, a file-size limit
(``RLIMIT_FSIZE``), a full small filesystem and a read-only one (where ``mount``
works), too few file descriptors. Each asserts the exit code (6), the one line naming
the path and the error, that no process is left, and that nothing was left behind.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults_helpers import MODELS, ROOT, invoke, limits, listing, one_error_line, run, start

SMALL = MODELS / "fifo-4.toml"  # 240 states, witness traces: a 40 KB JSON, a report of several pages
TRACES = MODELS / "bus1-mutant-no-block.toml"  # three counterexamples


OUTPUTS = {
    "json": lambda b: ["check", SMALL, "--quiet", "--json", b / "out.json"],
    "report": lambda b: ["check", SMALL, "--quiet", "--report", b / "report"],
    "junit": lambda b: ["check", SMALL, "--quiet", "--junit", b / "junit.xml"],
    "checkpoint": lambda b: ["check", SMALL, "--quiet", "--checkpoint", b / "ckpt"],
    "spill-dir": lambda b: ["check", SMALL, "--quiet", "--spill-dir", b / "spill"],
    "export-tla": lambda b: ["export-tla", SMALL, "-o", b / "tla"],
    "graph": lambda b: ["graph", MODELS / "synchronous-2.toml", "-o", b / "graph"],
    "sweep": lambda b: ["sweep", SMALL, "--no-ablations", "-o", b / "sweep"],
    "ablate": lambda b: ["ablate", MODELS / "synchronous-2.toml", "--quiet", "--json", b / "ablate.json"],
    "simulate": lambda b: ["simulate", SMALL, "--runs", "5", "--json", b / "simulate.json"],
}


@pytest.mark.parametrize("kind", sorted(OUTPUTS))
def test_output_under_a_file_is_one_line_exit_6(tmp_path: Path, blocker: Path, kind: str) -> None:
    before = listing(tmp_path)
    out = invoke(*OUTPUTS[kind](blocker))
    assert out.returncode == 6, out.stderr
    line = one_error_line(out.stderr)
    assert line.startswith("ordercheck: error: ") and str(blocker) in line and "Not a directory" in line, line
    assert listing(tmp_path) == before  # nothing new anywhere


@pytest.mark.parametrize("kind", sorted(OUTPUTS))
def test_dash_is_refused_not_written_as_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """``--json -`` (standard output by the Unix convention) would write a file named
    ``-``: every output refuses it in one line naming the option, exit 2, before any work."""
    monkeypatch.chdir(tmp_path)
    marker = Path("MARK")
    args = [("-" if isinstance(a, Path) and a.parent == marker else a) for a in OUTPUTS[kind](marker)]
    assert "-" in args
    out = invoke(*args)
    assert out.returncode == 2, out.stderr
    line = one_error_line(out.stderr)
    option = args[args.index("-") - 1]
    assert line.startswith(f"ordercheck: error: {option}: '-' is not standard output here"), line
    assert listing(tmp_path) == []


VALIDATE_LOG = ROOT / "tests" / "data" / "validate" / "fifo-swapped.jsonl"  # one violation: a diagram in the report


@pytest.mark.parametrize("bad", ["-o", "--json"])
def test_validate_outputs_are_all_or_nothing(tmp_path: Path, blocker: Path, bad: str) -> None:
    """``validate -o DIR --json FILE`` with either under a file: exit 6 naming it, and
    neither the directory's files nor the JSON file is written."""
    good = {"-o": tmp_path / "out", "--json": tmp_path / "v.json"}
    paths = dict(good, **{bad: blocker / "x"})
    before = listing(tmp_path)
    out = invoke("validate", VALIDATE_LOG, "-p", "fifo", "-o", paths["-o"], "--json", paths["--json"])
    assert out.returncode == 6, out.stderr
    line = one_error_line(out.stderr)
    assert str(blocker) in line and "Not a directory" in line, line
    assert listing(tmp_path) == before
    done = invoke("validate", VALIDATE_LOG, "-p", "fifo", "-o", good["-o"], "--json", good["--json"])
    assert done.returncode == 1, done.stderr  # the violation; both outputs written this time
    assert sorted(p.name for p in good["-o"].iterdir()) == ["index.html", "report.md", "verdicts.json",
                                                             "verdicts.parquet"]
    assert good["--json"].exists()


def test_validate_output_too_large_leaves_no_json(tmp_path: Path) -> None:
    """RLIMIT_FSIZE lets the small JSON through but not the verdict table: the JSON
    is not left behind alone."""
    out = run("validate", VALIDATE_LOG, "-p", "fifo", "-o", tmp_path / "out", "--json", tmp_path / "v.json",
              preexec=limits(fsize=2_000))  # the JSON is 829 bytes, the table 4 KB
    assert out.returncode == 6, out.stderr
    assert "File too large" in one_error_line(out.stderr)
    assert listing(tmp_path) == []


def test_report_command_under_a_file(tmp_path: Path, blocker: Path) -> None:
    result = tmp_path / "result.json"
    assert run("check", SMALL, "--quiet", "--json", result).returncode == 0
    before = listing(tmp_path)
    out = run("report", result, "-o", blocker / "r", "--junit", tmp_path / "junit.xml")
    assert out.returncode == 6, out.stderr
    assert str(blocker) in one_error_line(out.stderr)
    assert listing(tmp_path) == before  # the JUnit file, staged too, is not left alone


def test_report_too_large_leaves_neither_report_nor_json(tmp_path: Path) -> None:
    """RLIMIT_FSIZE lets the 40 KB JSON through but not the report's 60 KB page: the
    JSON is not left behind alone."""
    out = run("check", SMALL, "--quiet", "--json", tmp_path / "out.json", "--report", tmp_path / "report",
              "--junit", tmp_path / "junit.xml", preexec=limits(fsize=48_000))
    assert out.returncode == 6, out.stderr
    line = one_error_line(out.stderr)
    assert "File too large" in line and str(tmp_path / "report") in line, line
    assert listing(tmp_path) == []


def test_every_output_is_written_when_they_fit(tmp_path: Path) -> None:
    """The same command without the limit writes all three (the limit above is what failed)."""
    out = run("check", SMALL, "--quiet", "--json", tmp_path / "out.json", "--report", tmp_path / "report",
              "--junit", tmp_path / "junit.xml", preexec=limits(fsize=10_000_000))
    assert out.returncode == 0, out.stderr
    assert {"out.json", "junit.xml", "report", "report/index.html"} <= set(listing(tmp_path))
    assert not [p for p in listing(tmp_path) if ".ordercheck-staging-" in p]


@pytest.mark.parametrize("args", [["export-tla", SMALL, MODELS / "bus1-2.toml", "-o"], ["sweep", SMALL, "-o"]],
                         ids=["export-tla", "sweep"])
def test_multi_file_outputs_are_all_or_nothing(tmp_path: Path, args: list) -> None:
    out = run(*args, tmp_path / "out", preexec=limits(fsize=3_000))
    assert out.returncode == 6, out.stderr
    line = one_error_line(out.stderr)
    assert "File too large" in line and str(tmp_path / "out") in line
    assert listing(tmp_path) == []


def _mount(where: Path, *options: str) -> bool:
    where.mkdir(exist_ok=True)
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(where)],
                              capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@contextlib.contextmanager
def small_filesystem(tmp_path: Path, *options: str):
    where = tmp_path / "mnt"
    if os.geteuid() != 0 or not _mount(where, *options):
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], capture_output=True, timeout=30)


def test_full_filesystem_leaves_nothing(tmp_path: Path) -> None:
    """A 64 KiB filesystem: no space left for the report; the mount stays empty."""
    with small_filesystem(tmp_path, "size=64k") as mnt:
        out = run("check", TRACES, "--quiet", "--json", mnt / "out.json", "--report", mnt / "report")
        assert out.returncode == 6, out.stderr
        line = one_error_line(out.stderr)
        assert "No space left on device" in line and str(mnt) in line, line
        assert listing(mnt) == []


def read_only_dir(tmp_path: Path) -> tuple[contextlib.AbstractContextManager[Path], str]:
    """A directory no file can be created in, as a context giving its path, and the
    reason the system will give: a read-only tmpfs as root (who ignores modes), a
    mode-555 directory otherwise."""
    if os.geteuid() == 0:
        ctx = small_filesystem(tmp_path, "size=64k", "ro")
        reason = "Read-only file system"
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        ctx = contextlib.nullcontext(ro)
        reason = "Permission denied"
    return ctx, reason


def test_unwritable_directory(tmp_path: Path) -> None:
    """Read-only: --json, --checkpoint and --spill-dir into it are refused."""
    ctx, reason = read_only_dir(tmp_path)
    with ctx as ro:
        for option, target in (("--json", ro / "out.json"), ("--checkpoint", ro / "ckpt"), ("--spill-dir", ro / "spill")):
            out = run("check", SMALL, "--quiet", option, target)
            assert out.returncode == 6, (option, out.stderr)
            line = one_error_line(out.stderr)
            assert reason in line and str(ro) in line, line
            assert listing(ro) == []


def test_too_many_open_files(tmp_path: Path) -> None:
    """Two workers need pipes; with 8 descriptors there are too few."""
    out = run("check", SMALL, "--quiet", "--workers", "2", "--json", tmp_path / "out.json", preexec=limits(nofile=8))
    assert out.returncode == 6, out.stderr
    assert "Too many open files" in one_error_line(out.stderr)
    assert listing(tmp_path) == []


def _modes(root: Path) -> set[tuple[str, int]]:
    return {("dir" if p.is_dir() else "file", stat.S_IMODE(p.stat().st_mode)) for p in [root, *root.rglob("*")]}


@pytest.mark.parametrize("mask", [0o027, 0o002])
def test_outputs_get_the_umask_modes(tmp_path: Path, mask: int) -> None:
    out = run("check", TRACES, "--quiet", "--json", tmp_path / "out.json", "--report", tmp_path / "report",
              "--junit", tmp_path / "junit.xml", preexec=limits(umask=mask))
    assert out.returncode == 0, out.stderr
    file_mode, dir_mode = 0o666 & ~mask, 0o777 & ~mask
    assert stat.S_IMODE((tmp_path / "out.json").stat().st_mode) == file_mode
    assert stat.S_IMODE((tmp_path / "junit.xml").stat().st_mode) == file_mode
    assert _modes(tmp_path / "report") == {("dir", dir_mode), ("file", file_mode)}


def test_report_directory_holds_only_this_runs_pages(tmp_path: Path) -> None:
    report = tmp_path / "report"
    assert invoke("check", TRACES, "--quiet", "--report", report).returncode == 0
    old_pages = {p.name for p in (report / "traces").iterdir()}
    assert any("mutant-no-block" in p for p in old_pages)
    (report / "notes.txt").write_text("mine\n")  # not the report's: stays
    assert invoke("check", MODELS / "bus1-2.toml", "--quiet", "-v", "--report", report).returncode == 0
    new_pages = {p.name for p in (report / "traces").iterdir()} if (report / "traces").exists() else set()
    assert not new_pages & old_pages
    assert all(p.startswith("bus1-2") for p in new_pages)
    assert (report / "notes.txt").read_text() == "mine\n"
    assert "mutant-no-block" not in (report / "index.html").read_text()
    assert not [p for p in listing(report) if ".ordercheck-staging-" in p]


def test_closed_stdout_ends_quietly_and_writes_the_files(tmp_path: Path) -> None:
    """The reader goes away before anything is printed: no traceback, the exit code
    the run would have had, and the JSON written all the same."""
    args = ("check", SMALL, TRACES, "-v", "--quiet", "--max-states", "100")
    proc = start(*args, "--json", tmp_path / "out.json")
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert proc.returncode == 3, err  # a bound left verdicts unknown, as without the pipe:
    assert run(*args).returncode == 3
    assert err.strip() == "", err
    assert (tmp_path / "out.json").exists()


def test_piping_into_head() -> None:
    models = " ".join(str(MODELS / m) for m in ("fifo-4.toml", "bus1-mutant-no-block.toml", "skeen-3.toml"))
    done = subprocess.run(
        f"{sys.executable} -c \"from ordercheck.checker.cli import main; main()\" check {models} -v | head -n 1; echo \"status ${{PIPESTATUS[0]}}\"",
        shell=True, executable="/bin/bash", cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and lines[1] == "status 0", done.stdout  # every verdict as expected, as without head
    assert "Traceback" not in done.stderr and "Broken pipe" not in done.stderr, done.stderr


def test_no_frontier_directories_left_in_tmp(tmp_path: Path) -> None:
    """Normal runs, with and without workers, and a run refused at its checkpoint leave
    no ``ordercheck-frontier-*`` directory in the temporary directory."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    ckpt = tmp_path / "ckpt"
    for extra in ([], ["--workers", "2"]):
        assert run("check", SMALL, "--quiet", "--checkpoint", ckpt, "--checkpoint-every", "0", *extra,
                   tmpdir=tmp).returncode == 0
    refused = run("check", SMALL, "--quiet", "--checkpoint", ckpt, "--resume", "--no-por", tmpdir=tmp)
    assert refused.returncode == 2, refused.stderr
    assert listing(tmp) == []

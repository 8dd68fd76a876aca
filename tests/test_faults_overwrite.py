"""Nothing is overwritten or lost (issue 30).

An output that is an input (by path, symbolic link or hard link) or another output is
refused before the run (exit 2, one line naming both options and the file); every output
path is checked before the search (exit 6, no verdict printed first); a checkpoint
directory is locked by the run using it; the advice after a damaged ``CURRENT`` keeps
the intact level; ``new`` leaves nothing behind when it fails; a long property name
cannot break ``--report``; and every exit code a command returns is on the reference
page. Each case asserts the exit code, the one line, and that nothing was written or
changed (inputs byte-identical).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import click
import pytest

from tests.faults_helpers import (
    MODELS,
    ROOT,
    checkpoint_of,
    counts,
    invoke,
    limits,
    listing,
    one_error_line,
    run,
    start,
    wait_for,
)

TINY = MODELS / "fifo-2.toml"
LOG = ROOT / "tests" / "data" / "validate" / "fifo-swapped.jsonl"


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (links followed)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A model file, a log, a spec source of the user's own and a model naming it, and a
    hard link and a symbolic link to the model file."""
    shutil.copy(TINY, tmp_path / "m.toml")
    shutil.copy(LOG, tmp_path / "in.jsonl")
    (tmp_path / "toy.py").write_text(
        "from ordercheck import Property, Spec\n\n\n"
        "class Toy(Spec):\n"
        '    name = "toy"\n\n'
        "    def init_states(self):\n        return [0]\n\n"
        "    def next_states(self, s):\n        return [((\"inc\",), s + 1)] if s < 2 else []\n\n"
        "    def properties(self):\n"
        '        return [Property.always("small", lambda s: None)]\n'
    )
    (tmp_path / "toy.toml").write_text(f'spec = "{(tmp_path / "toy.py").as_posix()}:Toy"\n[expect]\nsmall = "holds"\n')
    os.link(tmp_path / "m.toml", tmp_path / "hard.json")
    (tmp_path / "sym.json").symlink_to(tmp_path / "m.toml")
    return tmp_path


INPUT_CLASHES = {
    "check --json model": lambda w: (["check", w / "m.toml", "--quiet", "--json", w / "m.toml"], "--json", "m.toml"),
    "check --junit model": lambda w: (["check", w / "m.toml", "--quiet", "--junit", w / "m.toml"], "--junit", "m.toml"),
    "check --json hard link": lambda w: (["check", w / "m.toml", "--quiet", "--json", w / "hard.json"], "--json", "m.toml"),
    "check --json symlink": lambda w: (["check", w / "m.toml", "--quiet", "--json", w / "sym.json"], "--json", "m.toml"),
    "check --json spec source": lambda w: (["check", w / "toy.toml", "--quiet", "--json", w / "toy.py"], "--json", "toy.py"),
    "simulate --json": lambda w: (["simulate", w / "m.toml", "--runs", "2", "--json", w / "m.toml"], "--json", "m.toml"),
    "matrix --json": lambda w: (["matrix", w / "m.toml", "--quiet", "--json", w / "m.toml"], "--json", "m.toml"),
    "ablate --json": lambda w: (["ablate", w / "m.toml", "--quiet", "--json", w / "m.toml"], "--json", "m.toml"),
    "validate --json log": lambda w: (["validate", w / "in.jsonl", "-p", "fifo", "--json", w / "in.jsonl"], "--json",
                                      "in.jsonl"),
    "validate --json dir log": lambda w: (["validate", w, "-p", "fifo", "--json", w / "in.jsonl"], "--json", "in.jsonl"),
    "validate --json --model": lambda w: (["validate", w / "in.jsonl", "-m", w / "m.toml", "--json", w / "m.toml"],
                                          "--json", "m.toml"),
    "validate -o over a log": lambda w: (["validate", w / "r" / "index.html", "-p", "fifo", "-o", w / "r"], "-o",
                                         "index.html"),
    "report -o over its result": lambda w: (["report", w / "r" / "results.json", "-o", w / "r"], "-o", "results.json"),
    "report --junit over its result": lambda w: (["report", w / "res.json", "-o", w / "rep", "--junit", w / "res.json"],
                                                 "--junit", "res.json"),
}


@pytest.mark.parametrize("case", sorted(INPUT_CLASHES))
def test_output_over_an_input_is_refused(work: Path, case: str) -> None:
    (work / "r").mkdir()
    shutil.copy(LOG, work / "r" / "index.html")  # a log under the name of a file validate -o writes
    if case.startswith("report"):
        assert invoke("check", TINY, "--quiet", "--json", work / "res.json").returncode == 0
        shutil.copy(work / "res.json", work / "r" / "results.json")
    args, option, name = INPUT_CLASHES[case](work)
    before = snapshot(work)
    out = invoke(*args)
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    line = one_error_line(out.stderr)
    assert option in line and name in line and "would overwrite" in line, line
    assert out.stdout == ""  # refused before any work
    assert snapshot(work) == before  # every input byte-identical, nothing new


OUTPUT_CLASHES = {
    "check --json --junit": lambda w: ["check", TINY, "--quiet", "--json", w / "x", "--junit", w / "x"],
    "check --json in --report": lambda w: ["check", TINY, "--quiet", "--json", w / "r" / "results.json", "--report", w / "r"],
    "check --junit in --report traces": lambda w: ["check", TINY, "--quiet", "--junit", w / "r" / "traces" / "a.xml",
                                                   "--report", w / "r"],
    "check --json symlink --junit": lambda w: ["check", TINY, "--quiet", "--json", w / "link", "--junit", w / "x"],
    "validate -o --json": lambda w: ["validate", LOG, "-p", "fifo", "-o", w / "r", "--json", w / "r" / "verdicts.json"],
    "report -o --junit": lambda w: ["report", w / "res.json", "-o", w / "r", "--junit", w / "r" / "index.html"],
    "ablate --json in --report": lambda w: ["ablate", TINY, "--quiet", "--json", w / "r" / "report.md", "--report", w / "r"],
}


@pytest.mark.parametrize("case", sorted(OUTPUT_CLASHES))
def test_two_outputs_on_one_file_are_refused(tmp_path: Path, case: str) -> None:
    if case.startswith("report"):
        assert invoke("check", TINY, "--quiet", "--json", tmp_path / "res.json").returncode == 0
    (tmp_path / "link").symlink_to(tmp_path / "x")  # dangling: --json would write x through it
    before = snapshot(tmp_path)
    out = invoke(*OUTPUT_CLASHES[case](tmp_path))
    assert out.returncode == 2, (out.returncode, out.stderr)
    line = one_error_line(out.stderr)
    assert "name the same file" in line, line
    options = re.findall(r"(--?[a-z]+) \(", line)
    assert len(options) == 2 and options[0] != options[1], line  # both options named
    assert out.stdout == ""
    assert snapshot(tmp_path) == before and not (tmp_path / "r").exists()


BEFORE_THE_SEARCH = {
    "check --json": lambda b: ["check", TINY, "--quiet", "--json", b / "out.json"],
    "check --report": lambda b: ["check", TINY, "--quiet", "--report", b / "r"],
    "check --junit": lambda b: ["check", TINY, "--quiet", "--junit", b / "j.xml"],
    "simulate --json": lambda b: ["simulate", TINY, "--runs", "2", "--json", b / "out.json"],
    "matrix --json": lambda b: ["matrix", TINY, "--quiet", "--json", b / "out.json"],
    "ablate --report": lambda b: ["ablate", MODELS / "synchronous-2.toml", "--quiet", "--report", b / "r"],
    "validate --json": lambda b: ["validate", LOG, "-p", "fifo", "--json", b / "v.json"],
    "validate -o": lambda b: ["validate", LOG, "-p", "fifo", "-o", b / "v"],
    "graph -o": lambda b: ["graph", MODELS / "synchronous-2.toml", "-o", b / "g"],
    "sweep -o": lambda b: ["sweep", TINY, "--no-ablations", "-o", b / "s"],
}


@pytest.mark.parametrize("case", sorted(BEFORE_THE_SEARCH))
def test_output_paths_are_checked_before_the_search(tmp_path: Path, blocker: Path, case: str) -> None:
    """An output under a file ends the command with exit 6 before any verdict is
    printed: the search (or validation) never ran."""
    before = listing(tmp_path)
    out = invoke(*BEFORE_THE_SEARCH[case](blocker))
    assert out.returncode == 6, (out.returncode, out.stderr)
    line = one_error_line(out.stderr)
    assert str(blocker) in line and "Not a directory" in line, line
    assert out.stdout == "", out.stdout  # no verdict: refused before the work
    assert out.stderr.strip() == line  # nor a progress line
    assert listing(tmp_path) == before


def test_unwritable_directory_is_refused_before_the_search(tmp_path: Path) -> None:
    """A directory no file can be created in (a read-only tmpfs as root, who ignores
    modes; a mode-555 directory otherwise) stops the run before its verdicts."""
    from tests.test_faults_outputs import read_only_dir

    ctx, reason = read_only_dir(tmp_path)
    with ctx as ro:
        out = invoke("check", TINY, "--quiet", "--json", ro / "out.json")
        assert out.returncode == 6, out.stderr
        line = one_error_line(out.stderr)
        assert reason in line and str(ro) in line, line
        assert out.stdout == ""
        assert listing(ro) == []


# --- the checkpoint directory's lock --------------------------------------------------

def _ckpt_of(root: Path, model: Path) -> Path:
    from ordercheck.checker.engine.checkpoints import checkpoint_dir

    return checkpoint_dir(root, model)


def test_checkpoint_locked_elsewhere_is_refused(tmp_path: Path) -> None:
    """A lock taken through another open of ``LOCK`` (the test's own, in the test's
    process: ``flock`` refuses it as it would another process's) refuses the run, naming
    the pid the file records."""
    ckpt = _ckpt_of(tmp_path / "ck", TINY)
    ckpt.mkdir(parents=True)
    fd = os.open(ckpt / "LOCK", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, json.dumps({"pid": os.getpid(), "host": "here", "since": "now"}).encode())
        before = snapshot(tmp_path)
        out = invoke("check", TINY, "--quiet", "--checkpoint", tmp_path / "ck")
    finally:
        os.close(fd)
    assert out.returncode == 2, out.stderr
    line = one_error_line(out.stderr)
    assert f"pid {os.getpid()} on host here" in line and str(ckpt) in line and "--checkpoint" in line, line
    assert out.stdout == ""
    assert snapshot(tmp_path) == before


def test_stale_lock_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    ckpt = _ckpt_of(tmp_path / "ck", TINY)
    ckpt.mkdir(parents=True)
    (ckpt / "LOCK").write_text(json.dumps({"pid": dead.pid, "host": "here", "since": "then"}))
    out = invoke("check", TINY, "--quiet", "--checkpoint", tmp_path / "ck", "--checkpoint-every", "0")
    assert out.returncode == 0, out.stderr
    assert (ckpt / "CURRENT").exists()
    assert (ckpt / "LOCK").read_text() == ""  # let go of when the run ended


def test_an_in_process_command_lets_go_of_its_lock(tmp_path: Path) -> None:
    """The command line holds the lock until its command ends, and no longer: two
    commands in one process, then a run of another process, all use the directory."""
    from ordercheck.checker.engine import ckptlock

    ckpt = _ckpt_of(tmp_path / "ck", TINY)
    for _ in range(2):
        out = invoke("check", TINY, "--quiet", "--checkpoint", tmp_path / "ck", "--checkpoint-every", "0")
        assert out.returncode == 0, out.stderr
        assert not ckptlock.held(ckpt) and (ckpt / "LOCK").read_text() == ""
    from ordercheck.checker.engine.run import Options, check_model
    from ordercheck.checker.loading.modelfile import load_model

    check_model(load_model(TINY), Options(progress=False, checkpoint=str(tmp_path / "ck")))  # the library too
    assert not ckptlock.held(ckpt)
    assert run("check", TINY, "--quiet", "--checkpoint", tmp_path / "ck", "--resume").returncode == 0


def test_second_run_on_a_checkpoint_is_refused_naming_the_first(tmp_path: Path) -> None:
    """Two real runs: the second is refused with the first one's pid; the first goes on
    undisturbed (no 'checkpoint not written' warning)."""
    args = ("check", MODELS / "bus1-3.toml", "--no-por", "--quiet", "--checkpoint", tmp_path / "ck",
            "--checkpoint-every", "0")
    first = start(*args)
    try:
        lock = lambda: [p for p in (tmp_path / "ck").glob("*/LOCK") if p.stat().st_size]  # noqa: E731
        wait_for(lambda: bool((tmp_path / "ck").exists() and lock()), proc=first)
        second = run(*args)
        assert second.returncode == 2, second.stderr
        line = one_error_line(second.stderr)
        assert f"pid {first.pid} " in line and "in use by another run" in line, line
    finally:
        first.send_signal(signal.SIGINT)
        _out, err = first.communicate(timeout=60)
    assert first.returncode in (0, 130), err
    assert "checkpoint not written" not in err, err


def test_a_writer_leaves_other_writers_temporary_files(tmp_path: Path) -> None:
    """``save`` writes under names of its own and removes only finished levels: a
    temporary directory of another writer (on another host, say) stays."""
    import numpy as np

    from ordercheck.checker.engine import checkpoints

    class Frontier:
        def dump(self, fh) -> None:
            fh.write(b"frontier")

    ckpt = tmp_path / "ck"
    foreign = ckpt / "level-00001-424242-deadbeef.tmp"
    foreign.mkdir(parents=True)
    (ckpt / "CURRENT.424242-deadbeef.tmp").write_text("level-00001-424242")
    warnings: list[str] = []
    for depth in (1, 2, 3):
        meta = {"depth": depth, "level_start": 0, "transitions": 0, "initial_states": 1, "seconds": 0.0,
                "decisions": {}}
        arrays = (np.array([7], dtype=np.uint64), np.array([-1], dtype=np.int64), np.array([0], dtype=np.uint32))
        assert checkpoints.save(ckpt, {"spec": "x"}, meta, *arrays, Frontier(), warnings.append), warnings
    assert foreign.is_dir() and (ckpt / "CURRENT.424242-deadbeef.tmp").exists()
    assert not [p for p in ckpt.iterdir() if p.name.startswith(f"level-00003-{os.getpid()}-")]  # its own tmp renamed
    assert sorted(p.name for p in ckpt.glob("level-*") if not p.name.endswith(".tmp")) == [
        f"level-00002-{os.getpid()}", f"level-00003-{os.getpid()}"]


# --- advice after damage --------------------------------------------------------------

def test_damaged_current_advice_keeps_the_intact_level(tmp_path: Path) -> None:
    """A damaged CURRENT: the line names the intact level and how to resume from it (not
    "delete the checkpoint directory"); doing what it says resumes to the same counts."""
    root = tmp_path / "ck"
    full = invoke("check", TINY, "--quiet", "--checkpoint", root, "--checkpoint-every", "0", "--json", tmp_path / "a.json")
    assert full.returncode == 0, full.stderr
    ckpt = checkpoint_of(root)
    (ckpt / "CURRENT").write_bytes(b"\x00garbage\xff")
    levels = snapshot(ckpt)
    out = invoke("check", TINY, "--quiet", "--checkpoint", root, "--resume")
    assert out.returncode == 2, out.stderr
    line = one_error_line(out.stderr)
    assert f"delete {ckpt} " not in line and f"delete {ckpt}/ " not in line, line
    m = re.search(r"\(printf (level-\d+-\d+) > (\S+)\)", line)
    assert m and "is intact" in line and re.search(r"continue from level \d+", line), line
    assert snapshot(ckpt) == levels  # nothing removed or changed by the refusal
    Path(m.group(2)).write_text(m.group(1))  # as the line says
    again = invoke("check", TINY, "--quiet", "--checkpoint", root, "--resume", "--json", tmp_path / "b.json")
    assert again.returncode == 0, again.stderr
    assert counts(tmp_path / "b.json") == counts(tmp_path / "a.json")


# --- ordercheck new -------------------------------------------------------------------

def test_new_on_a_full_disk_leaves_nothing_and_can_be_rerun(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    out = run("new", "toy", "--dir", proj, preexec=limits(fsize=1_000))  # the spec alone is larger
    assert out.returncode == 6, out.stderr
    assert "File too large" in one_error_line(out.stderr)
    assert listing(tmp_path) == []  # no empty file, no empty directory, no staging
    again = invoke("new", "toy", "--dir", proj)
    assert again.returncode == 0, again.stderr
    assert (proj / "models" / "toy.toml").stat().st_size > 0 and (proj / "specs" / "toy.py").stat().st_size > 0


def test_new_on_a_full_filesystem_leaves_nothing(tmp_path: Path) -> None:
    """A 12 KiB tmpfs holds the spec and the model but not the rest: no space left, and
    nothing left behind (where mounting works)."""
    from tests.test_faults_outputs import small_filesystem

    with small_filesystem(tmp_path, "size=12k") as mnt:
        out = run("new", "toy", "--dir", mnt / "proj")
        assert out.returncode == 6, out.stderr
        line = one_error_line(out.stderr)
        assert "No space left on device" in line and str(mnt / "proj") in line, line
        assert listing(mnt) == []


def test_refused_new_leaves_no_directories(tmp_path: Path) -> None:
    """A ``models`` that is a file: exit 6 naming it, and no ``specs`` or ``tests``
    directory made for the files that were never put in place."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "models").write_text("a file\n")
    out = invoke("new", "toy", "--dir", proj)
    assert out.returncode == 6, out.stderr
    line = one_error_line(out.stderr)
    assert str(proj / "models") in line and "Not a directory" in line, line
    assert listing(proj) == ["models"]


# --- long names in report file names --------------------------------------------------

def test_long_property_names_in_report_file_names(tmp_path: Path) -> None:
    long = "p" * 300
    (tmp_path / "longname.py").write_text(
        "from ordercheck import Property, Spec\n\n\n"
        "class Long(Spec):\n"
        '    name = "long"\n\n'
        "    def init_states(self):\n        return [0]\n\n"
        "    def next_states(self, s):\n        return [((\"inc\",), s + 1)] if s < 2 else []\n\n"
        "    def properties(self):\n"
        f'        return [Property.always("{long}", lambda s: "two" if s == 2 else None),\n'
        f'                Property.always("{long[:-1]}q", lambda s: "two" if s == 2 else None)]\n'
    )
    (tmp_path / "long.toml").write_text(
        f'spec = "{(tmp_path / "longname.py").as_posix()}:Long"\n[expect]\n"{long}" = "violated"\n"{long[:-1]}q" = "violated"\n'
    )
    names = []
    for report in ("r1", "r2"):
        out = invoke("check", tmp_path / "long.toml", "--quiet", "--report", tmp_path / report)
        assert out.returncode == 0, out.stderr
        names.append(sorted(p.name for p in (tmp_path / report / "traces").iterdir()))
    assert names[0] == names[1]  # stable
    pages = [n for n in names[0] if n.endswith(".html")]
    assert len(pages) == 2 and len(set(pages)) == 2  # one page each, unique
    assert all(len(n.encode()) <= 120 for n in names[0]), names[0]
    index = (tmp_path / "r1" / "index.html").read_text()
    assert all(f"traces/{p}" in index for p in pages)


# --- every exit code is on the reference page -----------------------------------------

EXIT_PAGE = ROOT / "docs" / "reference" / "exit-codes.md"


def documented_by_command() -> dict[str, set[int]]:
    """Each ``### command`` section's ``Exit codes:`` line of the reference page."""
    text = EXIT_PAGE.read_text()
    found: dict[str, set[int]] = {}
    for section in text.partition("## By command")[2].split("\n### ")[1:]:
        name = section.split("\n", 1)[0].strip()
        lines = re.findall(r"^Exit codes: ([0-9, ]+)\.$", section, flags=re.M)
        assert len(lines) == 1, f"### {name}: one 'Exit codes:' line wanted, found {lines}"
        found[name] = {int(c) for c in lines[0].split(",")}
    return found


def test_every_commands_exit_codes_are_on_the_reference_page() -> None:
    from ordercheck.checker.cli import main
    from ordercheck.checker.cli.exitcodes import COMMAND_EXITS

    documented = documented_by_command()
    assert set(main.list_commands(click.Context(main))) == set(COMMAND_EXITS) == set(documented)
    for name, codes in COMMAND_EXITS.items():
        assert documented[name] == set(codes), f"{name}: the page says {sorted(documented[name])}, the code {sorted(codes)}"


def test_every_code_the_sources_use_is_in_the_table() -> None:
    """Every ``EXIT_*`` constant and every literal ``sys.exit(N)`` in the sources is a
    code of the page's table."""
    import ordercheck.checker.api.result as result

    table = {int(c) for c in re.findall(r"^\| (\d+) \|", EXIT_PAGE.read_text(), flags=re.M)}
    constants = {getattr(result, n) for n in dir(result) if n.startswith("EXIT_")}
    assert constants <= table, constants - table
    used: set[int] = set()
    for package in ("checker", "reports", "tla", "specs"):
        for path in (ROOT / package).rglob("*.py"):
            used |= {int(n) for n in re.findall(r"\bsys\.exit\((\d+)\)", path.read_text())}
    assert used and used <= table, used - table


def test_a_code_missing_from_the_table_fails_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ORDERCHECK_STRICT_EXIT_CODES (set for the whole test suite), a command that
    ends with a code its row does not list ends with 70 and a line naming both."""
    from ordercheck.checker.cli import exitcodes

    monkeypatch.setenv(exitcodes.STRICT, "1")
    monkeypatch.setitem(exitcodes.COMMAND_EXITS, "new", frozenset({0}))
    out = invoke("new", "Not-A-Name")  # exit 2, which the row no longer lists
    assert out.returncode == exitcodes.UNDECLARED
    assert "new ended with exit code 2" in out.stderr


def test_a_file_system_without_locks_warns_and_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``flock`` failing with ENOLCK (an NFS mount without a lock daemon) is no reason to
    refuse checkpoints: one warning, and the run goes on."""
    import errno

    from ordercheck.checker.engine import ckptlock

    def no_locks(fd: int, op: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(ckptlock.fcntl, "flock", no_locks)
    with ckptlock.holding(tmp_path):
        assert ckptlock.held(tmp_path)
    assert not ckptlock.held(tmp_path)
    err = capsys.readouterr().err
    assert "cannot be locked (No locks available)" in err and str(tmp_path) in err, err

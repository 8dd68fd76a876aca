"""Damaged checkpoints, failed checkpoint writes and checkpoint directories (issue 18).

A checkpoint is damaged in each way a disk or a person can damage it; a resume must
refuse it with exit code 2, one line naming the file, and the previous intact
checkpoint offered, and following the offer must end with the counts of an
uninterrupted run. The refusals run in this process (they come before any search);
the runs that search are real processes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.faults_helpers import MODELS, checkpoint_of, invoke, limits, listing, one_error_line, reseal, run

MODEL = MODELS / "bus1-4-signal.toml"  # 15,835 states over 28 levels, a quarter of a second
ARGS = ("check", MODEL, "--no-por")


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, int, int]:
    """The uninterrupted run's counts, and a checkpoint directory of every level's run."""
    base = tmp_path_factory.mktemp("ckpt-reference")
    out = run(*ARGS, "--json", base / "ref.json", "--checkpoint", base / "ckpt", "--checkpoint-every", "0")
    assert out.returncode == 0, out.stderr
    st = json.loads((base / "ref.json").read_text())["stats"]
    return st["distinct_states"], st["transitions"], st["depth"], base / "ckpt"


@pytest.fixture
def ckpt(reference, tmp_path: Path) -> Path:
    """A fresh copy of the reference run's checkpoints: the last level's and the one before."""
    root = tmp_path / "ckpt"
    shutil.copytree(reference[3], root)
    return root


def _manifest(where: Path) -> dict:
    return json.loads((where / "manifest.json").read_text())


def _truncate(where: Path) -> None:
    p = where / "parents.npy"
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _zero_parents(where: Path) -> None:
    p = where / "parents.npy"
    a = np.load(p)
    np.save(p, np.zeros_like(a))


def _loop_parent(where: Path) -> None:
    """The last state is its own parent: following parents would never end."""
    p = where / "parents.npy"
    a = np.load(p)
    a[-1] = len(a) - 1
    np.save(p, a)


def _garbage(name: str):
    def damage(where: Path) -> None:
        p = where / name
        p.write_bytes(os.urandom(p.stat().st_size))
    return damage


def _resealed(damage):
    def both(where: Path) -> None:
        damage(where)
        reseal(where)
    return both


def _truncate_all(where: Path) -> None:
    """A shorter store whose files agree with each other: the frontier no longer matches."""
    for name in ("fingerprints.npy", "parents.npy", "actions.npy"):
        a = np.load(where / name)
        np.save(where / name, a[: len(a) - 100])


def _duplicate_fingerprint(where: Path) -> None:
    a = np.load(where / "fingerprints.npy")
    a[-1] = a[0]
    np.save(where / "fingerprints.npy", a)


DAMAGE = {
    # what is damaged, and what the line names and says
    "truncated-parents": (_truncate, "parents.npy", "bytes, the manifest says"),
    "zeroed-parents": (_zero_parents, "parents.npy", "does not match its checksum"),
    "garbage-frontier": (_garbage("frontier.bin"), "frontier.bin", "does not match its checksum"),
    "garbage-meta": (_garbage("meta.json"), "meta.json", "does not match its checksum"),
    "garbage-fingerprints": (_garbage("fingerprints.npy"), "fingerprints.npy", "does not match its checksum"),
    "garbage-manifest": (_garbage("manifest.json"), "manifest.json", "cannot be read"),
    "no-manifest": (lambda w: (w / "manifest.json").unlink(), "manifest.json", "is missing"),
    "old-format": (lambda w: (w / "manifest.json").write_text(json.dumps({**_manifest(w), "format": 1})),
                   "manifest.json", "reads format 4"),
    # damage that agrees with the manifest: the contents are checked too
    "zeroed-parents-resealed": (_resealed(_zero_parents), "parents.npy", "an initial state has a parent"),
    "looping-parent-resealed": (_resealed(_loop_parent), "parents.npy", "parent does not precede it"),
    "truncated-parents-resealed": (_resealed(_truncate), "parents.npy", "cannot be read"),
    "garbage-meta-resealed": (_resealed(_garbage("meta.json")), "meta.json", "cannot be read"),
    "garbage-frontier-resealed": (_resealed(_garbage("frontier.bin")), "frontier.bin", "cannot be read"),
    "shorter-store-resealed": (_resealed(_truncate_all), "frontier.bin", "the level has"),
    "duplicate-fingerprint-resealed": (_resealed(_duplicate_fingerprint), "fingerprints.npy", "a fingerprint twice"),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damaged_checkpoint_refused_naming_the_file(ckpt: Path, tmp_path: Path, kind: str) -> None:
    damage, name, words = DAMAGE[kind]
    model_dir = checkpoint_of(ckpt)
    current = model_dir / (model_dir / "CURRENT").read_text().strip()
    damage(current)
    out = invoke(*ARGS, "--checkpoint", ckpt, "--resume", "--json", tmp_path / "out.json")
    assert out.returncode == 2, out.stderr
    line = one_error_line(out.stderr)
    assert str(current / name) in line and words in line, line
    previous = [d for d in model_dir.iterdir() if d.is_dir() and d != current]
    assert len(previous) == 1
    assert f"the previous checkpoint {previous[0]} is intact" in line, line
    assert f"delete {current}" in line
    assert not (tmp_path / "out.json").exists()


def test_following_the_offer_resumes_to_the_same_counts(reference, ckpt: Path, tmp_path: Path) -> None:
    model_dir = checkpoint_of(ckpt)
    current = model_dir / (model_dir / "CURRENT").read_text().strip()
    _truncate(current)  # the case: resumed, it gave 185,159 of 233,478 states
    refused = invoke(*ARGS, "--checkpoint", ckpt, "--resume")
    assert refused.returncode == 2
    shutil.rmtree(current)  # as the line says
    out = run(*ARGS, "--checkpoint", ckpt, "--resume", "--json", tmp_path / "out.json")
    assert out.returncode == 0, out.stderr
    st = json.loads((tmp_path / "out.json").read_text())["stats"]
    assert (st["distinct_states"], st["transitions"], st["depth"]) == reference[:3]


def test_garbage_current_pointer(ckpt: Path) -> None:
    model_dir = checkpoint_of(ckpt)
    (model_dir / "CURRENT").write_bytes(b"\x00\xff garbage")
    out = invoke(*ARGS, "--checkpoint", ckpt, "--resume")
    assert out.returncode == 2
    line = one_error_line(out.stderr)
    assert str(model_dir / "CURRENT") in line and "is intact" in line, line


def test_no_intact_checkpoint_left(ckpt: Path) -> None:
    model_dir = checkpoint_of(ckpt)
    for d in model_dir.iterdir():
        if d.is_dir():
            _zero_parents(d)
    out = invoke(*ARGS, "--checkpoint", ckpt, "--resume")
    assert out.returncode == 2
    assert "no intact checkpoint is left: run again without --resume" in one_error_line(out.stderr)


def _check_failed_writes(out: subprocess.CompletedProcess, reference, ckpt: Path, reason: str) -> None:
    assert out.returncode == 0, out.stderr  # the search went on to its verdicts
    assert f"{reference[0]:,} distinct states, {reference[1]:,} transitions, depth {reference[2]}" in out.stdout
    warnings = [w for w in out.stderr.splitlines() if w.startswith("ordercheck: warning: checkpoint not written")]
    assert warnings, out.stderr
    assert all(reason in w and "is kept; the search goes on" in w for w in warnings), warnings
    assert "Traceback" not in out.stderr
    model_dir = checkpoint_of(ckpt)
    assert not list(model_dir.glob("*.tmp")), listing(model_dir)
    # The checkpoint in force is an intact one, from before the writes failed.
    resumed = run(*ARGS, "--checkpoint", ckpt, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{reference[0]:,} distinct states" in resumed.stdout


def test_checkpoint_too_large_keeps_the_previous_one(reference, tmp_path: Path) -> None:
    """RLIMIT_FSIZE: early levels' checkpoints fit, later ones do not (file too large)."""
    ckpt = tmp_path / "ckpt"
    out = run(*ARGS, "--checkpoint", ckpt, "--checkpoint-every", "0", preexec=limits(fsize=60_000))
    _check_failed_writes(out, reference, ckpt, "File too large")


def test_full_filesystem_keeps_the_previous_checkpoint(reference, tmp_path: Path) -> None:
    """A 400 KiB filesystem: early levels' checkpoints fit, later ones do not (no space)."""
    from tests.test_faults_outputs import small_filesystem

    with small_filesystem(tmp_path, "size=400k") as mnt:
        out = run(*ARGS, "--checkpoint", mnt / "ckpt", "--checkpoint-every", "0")
        _check_failed_writes(out, reference, mnt / "ckpt", "No space left on device")


def test_stale_temporary_checkpoints_removed(reference, ckpt: Path) -> None:
    model_dir = checkpoint_of(ckpt)
    stale = model_dir / "level-00003-999999.tmp"
    stale.mkdir()
    (stale / "parents.npy").write_bytes(b"half")
    out = run(*ARGS, "--checkpoint", ckpt, "--resume")
    assert out.returncode == 0, out.stderr
    assert not stale.exists()


def test_same_file_name_in_two_folders(tmp_path: Path) -> None:
    """Two models called fifo.toml: two checkpoint directories, and a resume of the
    second does not pick up the first's checkpoint."""
    for name, peers in (("a", 3), ("b", 2)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "fifo.toml").write_text(f'spec = "fifo"\n[constants]\npeers = {peers}\n')
    ckpt = tmp_path / "ckpt"
    assert invoke("check", tmp_path / "a" / "fifo.toml", "--quiet", "--checkpoint", ckpt,
               "--checkpoint-every", "0").returncode in (0, 1)  # verdicts, whichever
    out = invoke("check", tmp_path / "b" / "fifo.toml", "--quiet", "--checkpoint", ckpt, "--resume")
    assert out.returncode == 2
    assert "no checkpoint to resume from" in one_error_line(out.stderr)
    assert invoke("check", tmp_path / "b" / "fifo.toml", "--quiet", "--checkpoint", ckpt,
               "--checkpoint-every", "0").returncode in (0, 1)
    dirs = sorted(d.name for d in ckpt.iterdir())
    assert len(dirs) == 2 and all(d.startswith("fifo-") for d in dirs), dirs


def test_ablation_mutants_have_checkpoints_of_their_own(tmp_path: Path) -> None:
    """``ablate --checkpoint``: the full algorithm and each mutant keep their own
    checkpoint directory (one per model path and flag), so a resumed ablation resumes
    each from its own and ends with the table of a fresh one. Shared, the resume of
    the full algorithm would load the last mutant's checkpoint and be refused."""
    from ordercheck.checker.loading.modelfile import load_model

    model = MODELS / "synchronous-2.toml"
    flags = type(load_model(str(model)).spec).ablations()
    assert flags
    ckpt = tmp_path / "ckpt"
    args = ("ablate", model, "--quiet", "--checkpoint", ckpt, "--checkpoint-every", "0")
    first = invoke(*args, "--json", tmp_path / "first.json")
    assert first.returncode == 0, first.stderr
    variants = sorted(d.name for d in ckpt.iterdir())
    assert variants == sorted(["full", *(f"without-{f}" for f in flags)]), variants
    identities = set()
    for variant in variants:
        model_dir = checkpoint_of(ckpt / variant)
        current = (model_dir / "CURRENT").read_text().strip()
        meta = json.loads((model_dir / current / "meta.json").read_text())
        identities.add(json.dumps(meta["identity"]["constants"], sort_keys=True))
    assert len(identities) == len(variants)  # each directory holds its own variant's search
    resumed = invoke(*args, "--resume", "--json", tmp_path / "resumed.json")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == first.stdout  # the same table

    def runs(path: Path) -> list:
        data = json.loads(path.read_text())
        found = [data["baseline"], *(a["result"] for a in data["ablations"])]
        return [(r["stats"]["distinct_states"], {n: p["status"] for n, p in r["properties"].items()}) for r in found]

    assert runs(tmp_path / "resumed.json") == runs(tmp_path / "first.json")


def test_sweep_variants_have_checkpoints_of_their_own(tmp_path: Path) -> None:
    """``sweep --checkpoint``: the model and each of its mutants in a directory of its own."""
    from ordercheck.checker.loading.modelfile import load_model

    model = MODELS / "synchronous-2.toml"
    flags = type(load_model(str(model)).spec).ablations()
    ckpt = tmp_path / "ckpt"
    out = invoke("sweep", model, "--quiet", "-o", tmp_path / "out", "--checkpoint", ckpt, "--checkpoint-every", "0")
    assert out.returncode == 0, out.stderr
    assert sorted(d.name for d in ckpt.iterdir()) == sorted(["full", *(f"without-{f}" for f in flags)])
    assert all((checkpoint_of(d) / "CURRENT").exists() for d in ckpt.iterdir())


def test_a_resumed_command_searches_afresh_what_the_interrupted_run_did_not_reach(tmp_path: Path) -> None:
    """``--resume`` on a command of several checks (models, ablation mutants): a check
    after the first with no checkpoint yet (the interrupted run stopped before it) is
    searched from the start with a note, where it used to end the command with exit 2
    after the earlier checks had been redone. The first check must still resume."""
    a, b = MODELS / "fifo-3.toml", MODELS / "synchronous-2.toml"
    ckpt = tmp_path / "ckpt"
    first = invoke("check", a, "--quiet", "--checkpoint", ckpt, "--checkpoint-every", "0")
    assert first.returncode == 0, first.stderr
    both = invoke("check", a, b, "--quiet", "--checkpoint", ckpt, "--resume")
    assert both.returncode == 0, both.stderr
    assert f"warning: {b}: no checkpoint under {ckpt}" in both.stderr and "searched from the start" in both.stderr
    assert str(a) not in both.stderr
    fresh = invoke("check", a, b, "--quiet")
    assert _timeless(both.stdout) == _timeless(fresh.stdout)
    refused = invoke("check", MODELS / "bss-2.toml", a, "--quiet", "--checkpoint", ckpt, "--resume")
    assert refused.returncode == 2 and "no checkpoint to resume from" in one_error_line(refused.stderr)

    # ablate: the last mutant was not reached
    ckpt = tmp_path / "ablate"
    args = ("ablate", b, "--quiet", "--checkpoint", ckpt, "--checkpoint-every", "0")
    done = invoke(*args)
    assert done.returncode == 0, done.stderr
    last = sorted(d for d in ckpt.iterdir() if d.name.startswith("without-"))[-1]
    shutil.rmtree(last)
    resumed = invoke(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert _timeless(resumed.stdout) == _timeless(done.stdout)
    assert resumed.stderr.count("searched from the start") == 1 and str(last) in resumed.stderr
    shutil.rmtree(ckpt / "full")
    assert invoke(*args, "--resume").returncode == 2


def _timeless(out: str) -> str:
    """Command output without its times."""
    return re.sub(r"[\d.]+s \([\d,]+ states/s\)", "", out)

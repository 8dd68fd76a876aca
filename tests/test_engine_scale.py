"""The compact store, parallel workers and checkpoint/resume of the local engine."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ordercheck.checker.engine.fingerprint import fingerprint
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.engine.table import CompactStore, FingerprintTable, mix
from ordercheck.checker.loading.modelfile import load_model, model_from_dict

ROOT = Path(__file__).resolve().parent.parent


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 300), max_size=120), max_size=8), st.integers(1, 64))
def test_table_insert_is_set_insertion_in_order(batches: list[list[int]], capacity: int) -> None:
    """Small values force collisions and growth; the answers must equal a Python set's."""
    table = FingerprintTable(capacity)
    seen: set[int] = set()
    for batch in batches:
        fps = np.asarray(batch, dtype=np.uint64)
        new = table.insert(fps)
        expect = []
        for v in batch:
            v = v or 1
            expect.append(v not in seen)
            seen.add(v)
        assert new.tolist() == expect
        assert len(table) == len(seen)
    probe = np.arange(0, 310, dtype=np.uint64)
    assert table.contains(probe).tolist() == [((v or 1) in seen) for v in range(310)]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3000), max_size=400), max_size=6), st.sampled_from([0, 5, 1 << 30]))
def test_table_probing_rounds_and_tail_agree(batches: list[list[int]], tail: int) -> None:
    """Probing finishes the last fingerprints one by one below ``TAIL``: all rounds
    vectorised (0), all one by one (huge) and mixed must give the set's answers (with
    the table re-inserted a few slots at a time as it doubles)."""
    import ordercheck.checker.engine.table as table_module

    saved = table_module.TAIL, table_module.REHASH_BLOCK
    table_module.TAIL, table_module.REHASH_BLOCK = tail, 5
    try:
        table = FingerprintTable(16)
        seen: set[int] = set()
        for batch in batches:
            new = table.insert(np.asarray(batch, dtype=np.uint64))
            expect = []
            for v in batch:
                expect.append((v or 1) not in seen)
                seen.add(v or 1)
            assert new.tolist() == expect
        probe = np.arange(0, 3010, dtype=np.uint64)
        assert table.contains(probe).tolist() == [((v or 1) in seen) for v in range(3010)]
    finally:
        table_module.TAIL, table_module.REHASH_BLOCK = saved


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=12, unique=True), st.integers(0, 31))
def test_table_race_for_a_slot_goes_to_the_first_in_batch_order(multiples: list[int], home: int) -> None:
    """Fingerprints of one batch that aim at one home slot race for it round after round:
    the first in batch order takes each slot, so the ``i``-th lies ``i`` slots after
    the home, as inserting them one at a time puts them; membership of a batch with
    repeats is each item's own."""
    table = FingerprintTable(16)  # 32 slots
    size = len(table.slots)
    fps = [m * size + home for m in multiples]
    table.insert(np.asarray(fps, dtype=np.uint64))
    assert [int(table.slots[(home + i) % size]) for i in range(len(fps))] == fps
    probe = np.asarray(fps * 2 + [home + 41 * size], dtype=np.uint64)
    assert table.contains(probe).tolist() == [True] * (2 * len(fps)) + [False]


def test_vectorised_fingerprints_equal_the_scalar_ones() -> None:
    states = [(1, (2, 3)), (), ((0,), frozenset({1, 2})), -5, (1 << 62, -(1 << 40))]
    fps = mix(np.asarray([hash(s) for s in states], dtype=np.int64))
    assert [int(x) for x in fps] == [fingerprint(s) for s in states]


def test_store_paths() -> None:
    store = CompactStore(4)
    assert store.add(11, -1, 0) == 0
    assert store.add(11, -1, 0) == -1
    new = store.add_batch(np.asarray([12, 13, 12, 11], dtype=np.uint64), np.asarray([0, 0, 0, 0]), np.asarray([2, 5, 2, 1]))
    assert new.tolist() == [0, 1]
    assert store.add_batch(np.asarray([14], dtype=np.uint64), np.asarray([2]), np.asarray([7])).tolist() == [0]
    assert store.path(3) == (0, [5, 7])
    assert store.table.contains(np.asarray([13, 99], dtype=np.uint64)).tolist() == [True, False]


def summary(result) -> tuple:
    props = {n: (p.status, p.explanation, [s.label for s in (p.trace or [])]) for n, p in result.properties.items()}
    st_ = result.stats
    return st_.distinct_states, st_.transitions, st_.depth, props


def test_workers_give_identical_results() -> None:
    for name in ("fifo-3.toml", "bus1-mutant-tiebreak-by-arrival.toml"):
        model = load_model(ROOT / "models" / name)
        for por in (False, True):
            one = check_model(model, Options(progress=False, por=por, workers=1))
            two = check_model(model, Options(progress=False, por=por, workers=2))
            assert summary(one) == summary(two)
            assert any(p.status == "violated" for p in one.properties.values())


def test_workers_with_symmetry_and_bounds() -> None:
    model = model_from_dict({"spec": "fifo", "constants": {"peers": 3, "sends": 1, "destinations": "unicast"}})
    for opts in (dict(symmetry=True), dict(max_states=300), dict(max_depth=5)):
        one = check_model(model, Options(progress=False, workers=1, **opts))
        two = check_model(model, Options(progress=False, workers=2, **opts))
        assert summary(one) == summary(two)
    cut = check_model(model, Options(progress=False, symmetry=False, por=False, max_states=300))
    assert cut.stats.distinct_states == 300 and cut.stats.bound == "max_states"


@pytest.mark.parametrize("workers", [1, 2])
def test_killed_run_resumes_to_the_same_counts(tmp_path: Path, workers: int) -> None:
    """With two workers the checkpoint's frontier is collected from them (ordercheck.checker.engine.sharded)."""
    model = ROOT / "models" / "bus1-4-signal.toml"
    exe = [sys.executable, "-m", "ordercheck.checker.cli", "check", str(model), "--quiet", "--no-por", "--workers", str(workers)]
    reference = tmp_path / "reference.json"
    subprocess.run([*exe, "--json", str(reference)], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    ckpt = tmp_path / "ckpt"
    proc = subprocess.Popen([*exe, "--checkpoint", str(ckpt), "--checkpoint-every", "0"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    pointer = ckpt / "none"
    while time.monotonic() < deadline:  # the model's directory: its name and a digest of its path
        pointer = next(iter(ckpt.glob(f"{model.stem}-*/CURRENT")), pointer)
        if pointer.exists() and int(pointer.read_text().split("-")[1]) >= 8:
            break
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)  # the run and any workers
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    level = int(pointer.read_text().split("-")[1])
    assert level >= 8
    resumed = tmp_path / "resumed.json"
    subprocess.run([*exe, "--checkpoint", str(ckpt), "--resume", "--json", str(resumed)], check=True, cwd=ROOT,
                   stdout=subprocess.DEVNULL)
    a, b = json.loads(reference.read_text()), json.loads(resumed.read_text())
    for key in ("distinct_states", "transitions", "depth"):
        assert a["stats"][key] == b["stats"][key]
    assert {n: p["status"] for n, p in a["properties"].items()} == {n: p["status"] for n, p in b["properties"].items()}


def test_resume_refuses_another_model(tmp_path: Path) -> None:
    exe = [sys.executable, "-m", "ordercheck.checker.cli", "check", "--quiet", "--checkpoint", str(tmp_path), "--checkpoint-every", "0"]
    subprocess.run([*exe, str(ROOT / "models" / "fifo-4.toml")], cwd=ROOT, stdout=subprocess.DEVNULL, check=True)
    out = subprocess.run([*exe, "--no-por", "--resume", str(ROOT / "models" / "fifo-4.toml")], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "checkpoint" in out.stderr and "Traceback" not in out.stderr
    assert "reduction setting" in out.stderr and "without --resume" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1

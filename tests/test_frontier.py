"""The frontier spilled to disk: same chunks back, and the engine's results unchanged."""

from __future__ import annotations

import io
import os
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ordercheck.checker.engine import loop
from ordercheck.checker.engine.bfs import Bounds, search
from ordercheck.checker.engine.frontier import Frontier, decode, read_records, write_record
from ordercheck.checker.engine.reduce import Reductions
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model, model_from_dict

ROOT = Path(__file__).resolve().parent.parent

states_ = st.recursive(st.integers(-5, 5), lambda s: st.tuples(s, s) | st.frozensets(st.integers(0, 9)), max_leaves=6)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(states_, min_size=1, max_size=20), max_size=12), st.integers(0, 40),
       st.none() | st.integers(0, 60))
def test_frontier_gives_back_its_chunks_in_order(tmp_path_factory, chunks, raw, spill_after) -> None:
    spill = tmp_path_factory.mktemp("spill")
    f = Frontier(spill, raw=raw, spill_after=spill_after)
    for c in chunks:
        f.append(list(c))
    f.seal()
    total = sum(len(c) for c in chunks)
    assert len(f) == total and bool(f) == (total > 0)
    assert f.spilled == (spill_after is not None and total > spill_after)
    assert [decode(c) for c in f] == [list(c) for c in chunks]
    assert [decode(c) for c in f] == [list(c) for c in chunks]  # a second reader sees the same
    buf = io.BytesIO()
    f.dump(buf)
    buf.seek(0)
    g = Frontier.load(buf, spill, spill_after=0)
    assert [decode(c) for c in g] == [list(c) for c in chunks] and len(g) == total
    path = f.path
    f.discard()
    g.discard()
    assert not f and (path is None or not path.exists())
    assert list(spill.iterdir()) == []


def test_truncated_record_is_an_error() -> None:
    buf = io.BytesIO()
    write_record(buf, b"abcdef")
    data = buf.getvalue()[:-2]
    with pytest.raises(ValueError):
        list(read_records(io.BytesIO(data)))


def outcome_summary(outcome) -> tuple:
    store = outcome.store
    paths = {name: store.path(d.index) for name, d in outcome.decisions.items()}
    return (len(store), outcome.transitions, outcome.depth, outcome.bound, outcome.complete, paths,
            store.parents.view().tolist(), store.actions.view().tolist())


@pytest.mark.parametrize("name", ["fifo-3.toml", "bus1-mutant-no-block.toml", "lamport-2-signal.toml"])
def test_spilled_search_equals_in_memory(tmp_path: Path, name: str) -> None:
    """Every level on disk: the same numbering, parent links and counterexamples."""
    model = load_model(ROOT / "models" / name)
    for stop in (True, False):
        mem = search(model.spec, model.properties, Bounds(), stop_when_decided=stop, reductions=Reductions(),
                     spill_dir=None)
        disk = search(model.spec, model.properties, Bounds(), stop_when_decided=stop, reductions=Reductions(),
                      spill_dir=tmp_path / "spill")
        assert outcome_summary(mem) == outcome_summary(disk)
        assert list((tmp_path / "spill").iterdir()) == []  # each level's file is deleted


def test_spilled_check_rebuilds_the_same_traces(tmp_path: Path) -> None:
    model = load_model(ROOT / "models" / "fifo-3.toml")
    for workers in (1, 2):
        mem = check_model(model, Options(progress=False, symmetry=False, por=False, workers=workers))
        disk = check_model(model, Options(progress=False, symmetry=False, por=False, workers=workers,
                                          spill_dir=str(tmp_path)))
        assert mem.stats.distinct_states == disk.stats.distinct_states
        assert mem.stats.transitions == disk.stats.transitions
        traces = {n: (p.status, [(s.label, s.state) for s in (p.trace or [])]) for n, p in mem.properties.items()}
        assert traces == {n: (p.status, [(s.label, s.state) for s in (p.trace or [])])
                          for n, p in disk.properties.items()}
        assert any(p.status == "violated" and p.trace for p in disk.properties.values())


def test_automatic_spill_past_the_threshold(monkeypatch) -> None:
    """Without a spill directory a level spills once it passes SPILL_AFTER states."""
    model = model_from_dict({"spec": "fifo", "constants": {"peers": 3, "sends": 1, "destinations": "subsets"}})
    mem = check_model(model, Options(progress=False, symmetry=False, por=False, stop_when_decided=False))
    spilled: list[bool] = []
    original = Frontier.seal

    def seal(self):
        spilled.append(self.spilled)
        return original(self)

    monkeypatch.setattr(loop, "SPILL_AFTER", 50)
    monkeypatch.setattr(Frontier, "seal", seal)
    disk = check_model(model, Options(progress=False, symmetry=False, por=False, stop_when_decided=False))
    assert any(spilled) and not all(spilled)
    assert (mem.stats.distinct_states, mem.stats.transitions, mem.stats.depth) == (
        disk.stats.distinct_states, disk.stats.transitions, disk.stats.depth)
    assert {n: p.status for n, p in mem.properties.items()} == {n: p.status for n, p in disk.properties.items()}


def test_checkpoint_of_a_spilled_frontier_resumes(tmp_path: Path) -> None:
    """A checkpoint taken while levels live on disk carries the frontier with it: a run
    cut at depth 5 resumes from its depth-5 level to the counts of an uncut run."""
    model = load_model(ROOT / "models" / "fifo-3.toml")
    base = dict(progress=False, symmetry=False, por=False, stop_when_decided=False)
    ref = check_model(model, Options(**base))
    opts = dict(base, checkpoint=str(tmp_path / "ck"), checkpoint_every=0.0, spill_dir=str(tmp_path / "spill"))
    cut = check_model(model, Options(**opts, max_depth=5))
    assert cut.stats.distinct_states < ref.stats.distinct_states
    (model_dir,) = (tmp_path / "ck").iterdir()  # the model's own: its name and a digest of its path
    assert model_dir.name.startswith(model.name + "-")
    assert (model_dir / "CURRENT").read_text().startswith("level-00005")
    again = check_model(model, Options(**opts, resume=True))
    assert (again.stats.distinct_states, again.stats.transitions, again.stats.depth) == (
        ref.stats.distinct_states, ref.stats.transitions, ref.stats.depth)
    assert {n: p.status for n, p in again.properties.items()} == {n: p.status for n, p in ref.properties.items()}


def test_the_spill_directory_is_found_without_a_probe_file(tmp_path: Path, monkeypatch) -> None:
    # The standard library finds the temporary directory by writing and removing a probe
    # file there; a SIGKILL in between left it behind (the kill loop caught one). The spill
    # directory is found without it, under $TMPDIR, and falls back to the probe only when
    # no candidate is writable.
    import tempfile

    from ordercheck.checker.engine.frontier import SPILL_PREFIX, own_spill_dir, temp_root

    def probe() -> str:
        raise AssertionError("the standard library's probe file was written")

    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setattr(tempfile, "_get_default_tempdir", probe)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    made = Path(own_spill_dir())
    assert made.parent == tmp_path and made.name.startswith(SPILL_PREFIX)
    assert list(tmp_path.iterdir()) == [made]
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("TMPDIR", str(tmp_path / "file"))  # not a directory: the next candidate
    monkeypatch.setenv("TEMP", str(tmp_path / "sub"))  # absent: the next one
    monkeypatch.setenv("TMP", str(tmp_path))
    assert temp_root() == str(tmp_path)


class _Marker:
    """Unpickling this creates ``path`` (what a replaced spill file could make ordercheck run)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (Path(self.path).touch, ())


def test_a_spill_file_replaced_by_name_is_never_read(tmp_path: Path) -> None:
    """A spilled level is read back through the descriptor that wrote it: another process
    that replaces the file in a shared spill directory (here: renames a pickle over it)
    changes nothing that is read, runs nothing, and appending after a read goes on."""
    f = Frontier(tmp_path, raw=0, spill_after=0)
    f.append([(1, 2), (3, 4)])
    f.seal()
    assert f.spilled and f.path is not None
    marker = tmp_path / "ran"
    planted = tmp_path / "planted.bin"
    with open(planted, "wb") as fh:
        write_record(fh, pickle.dumps([_Marker(str(marker))]))
    os.replace(planted, f.path)
    assert [decode(c) for c in f] == [[(1, 2), (3, 4)]]
    f.append([(5, 6)])
    assert [decode(c) for c in f] == [[(1, 2), (3, 4)], [(5, 6)]]
    assert not marker.exists()
    f.discard()
    assert not f.spilled and list(f) == []


def test_a_dead_processs_scratch_directory_is_removed_by_the_next(tmp_path: Path, monkeypatch) -> None:
    """A run killed outright leaves its private directory (spilled levels, or Spark's
    scratch files on a local master): the next run that makes one with the same prefix
    removes it, and leaves a live process's and other prefixes' alone."""
    import subprocess
    import sys

    from ordercheck.checker.engine.frontier import own_spill_dir
    from ordercheck.checker.spark.session import SCRATCH_PREFIX

    monkeypatch.setattr("tempfile.tempdir", None)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    dead = tmp_path / f"{SCRATCH_PREFIX}{int(gone.stdout)}-abc"
    (dead / "blockmgr-1").mkdir(parents=True)
    live = tmp_path / f"{SCRATCH_PREFIX}{os.getppid()}-def"
    live.mkdir()
    other = tmp_path / f"ordercheck-frontier-{int(gone.stdout)}-ghi"
    other.mkdir()
    made = Path(own_spill_dir(SCRATCH_PREFIX))
    assert made.name.startswith(f"{SCRATCH_PREFIX}{os.getpid()}-") and oct(made.stat().st_mode & 0o777) == "0o700"
    assert sorted(tmp_path.iterdir()) == sorted([made, live, other])


def test_a_dead_processs_shipped_spec_copies_are_removed_by_the_next(tmp_path: Path, monkeypatch) -> None:
    """The copies of user specs shipped to Spark executors are staged in a directory
    named after the driver; ``atexit`` removes it, which a SIGKILL skips, so the next
    driver that stages one removes those of drivers no longer running."""
    import subprocess
    import sys

    from ordercheck.checker.spark.ship import SHIP_PREFIX, _staging

    monkeypatch.setattr("tempfile.tempdir", None)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    dead = tmp_path / f"{SHIP_PREFIX}{int(gone.stdout)}-abc"
    dead.mkdir()
    (dead / "spec_token.py").write_text("")
    live = tmp_path / f"{SHIP_PREFIX}{os.getppid()}-def"
    live.mkdir()
    made = _staging()
    assert made.name.startswith(f"{SHIP_PREFIX}{os.getpid()}-")
    assert sorted(tmp_path.iterdir()) == sorted([made, live])

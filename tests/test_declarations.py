"""Declarations checked, not trusted (issue 28).

* ``acyclic = True``: every engine notices an edge that can close a cycle, and a spec
  that declares ``acyclic`` and has a cycle stops with exit 2 naming it (one process,
  shard workers, Spark); a join of two runs of different lengths is not a cycle. An
  edge at the depth bound counts; a cycle search cut by its own budget (never the
  model's max_states) leaves no holds; --check-reductions is part of a checkpoint's
  identity.
* The cycle proviso of partial-order reduction, on random cyclic specs: reduced and
  unreduced verdicts agree (switching the proviso off for cyclic specs fails this).
  It is skipped on a spec that declares ``acyclic`` because that declaration is
  checked: a wrong one whose cycle hides a violation the proviso would have found is
  refused (exit 2), or leaves the verdicts unknown (exit 3), never "holds".
* Symmetry: the canonical fingerprint of a sampled reachable state is the least over
  its whole orbit, for every built-in spec that declares symmetries (a canonicalisation
  that skips a permutation fails this).
* ``--check-reductions`` passes on every built-in spec and catches a wrong footprint, a
  wrong visibility claim and a wrong symmetry, with one line and exit 2.
"""

from __future__ import annotations

import itertools
import random
import shutil
import subprocess
import sys
from collections import deque
from dataclasses import replace
from pathlib import Path

import pytest

from ordercheck.checker import Symmetry
from ordercheck.checker.api.errors import InputError
from ordercheck.checker.engine.bfs import Bounds, search
from ordercheck.checker.engine.declarations import find_cycle
from ordercheck.checker.engine.edges import EdgeLog
from ordercheck.checker.engine.fingerprint import fingerprint
from ordercheck.checker.engine.reduce import Expander, Reductions, plan
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model, model_from_dict
from ordercheck.specs.base import PeerSpec
from tests.toyspecs import (
    Blinker,
    Flicker,
    LastWriter,
    LateLoop,
    LateLoopAwaiting,
    Lopsided,
    OneKey,
    RandomProcesses,
    RandomProcessesDeclared,
    Ring,
    RingUndeclared,
    Shortcut,
    SpinAlarm,
    SpinAlarmUndeclared,
    Spinner,
    Tail,
    TailUndeclared,
    Toggles,
)

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
TOYSPECS = Path(__file__).resolve().parent / "toyspecs.py"
QUIET = Options(progress=False)


def toy(cls: type, constants: dict | None = None, props: list[str] | None = None):
    """A model of a spec class of this file or :mod:`tests.toyspecs`."""
    data: dict = {"spec": cls.name, "constants": constants or {}}
    if props:
        data["check"] = {"properties": props}
    return model_from_dict(data, f"{cls.name}.toml", spec=(cls, f"{Path(sys.modules[cls.__module__].__file__).as_posix()}:{cls.__name__}"))


def verdicts(result) -> dict[str, str]:
    return {name: p.status for name, p in result.properties.items()}


def cli(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ordercheck.checker.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def model_file(where: Path, cls: type, constants: dict, props: list[str], source: Path = TOYSPECS) -> Path:
    lines = [f'spec = "{source.as_posix()}:{cls.__name__}"', "[constants]"]
    lines += [f"{k} = {str(v).lower() if isinstance(v, bool) else v}" for k, v in constants.items()]
    lines += ["[check]", f"properties = {props!r}".replace("'", '"')]
    path = where / f"{cls.name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def one_error_line(run: subprocess.CompletedProcess) -> str:
    """The one line a refused run prints: exit 2, no traceback, no verdicts."""
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert "holds" not in run.stdout and "violated" not in run.stdout
    return lines[0]


# -- acyclic ------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("props", [["in_range"], ["in_range", "stops"]], ids=["always", "eventually"])
def test_a_spec_declaring_acyclic_that_has_a_cycle_is_refused(tmp_path, workers, props):
    """Before issue 28 both ran to exit 0, "stops holds" among them, trusting the
    declaration (no cycle tracking at all for a spec that declares it)."""
    path = model_file(tmp_path, Ring, {"n": 3}, props)
    line = one_error_line(cli("check", path, "--quiet", "--workers", workers, cwd=tmp_path))
    assert line == (
        f"ordercheck: error: {path}: spec ring declares acyclic = True but a run returns to a state: the cycle "
        "pass(0) -> pass(1) -> wrap(2) starts at an initial state and leads back to that state; remove the "
        "declaration, or make every step advance a bounded measure"
    )


def test_the_truth_the_wrong_declaration_hid():
    """Without the declaration the ring's `stops` is violated (a lasso): the verdict the
    declaration turned into "holds"."""
    result = check_model(toy(RingUndeclared, {"n": 3}), QUIET)
    assert result.properties["stops"].status == "violated"


@pytest.mark.parametrize("workers", [1, 2])
def test_a_ring_that_stops_is_acyclic_and_holds(workers):
    result = check_model(toy(Ring, {"n": 3, "stop": True}), replace(QUIET, workers=workers))
    assert verdicts(result) == {"in_range": "holds", "stops": "holds"}
    assert not [w for w in result.warnings if "acyclic" in w]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_join_at_a_shallower_depth_is_noticed_but_is_not_a_cycle(workers):
    """2 -> 3 leads to a state found at depth 1: noticed (it could close a cycle), then
    found not to, so the declaration stands and the run passes."""
    model = toy(Shortcut)
    assert search(model.spec, model.properties, workers=workers).maybe_cyclic
    assert find_cycle(model.spec)[0] is None
    result = check_model(model, replace(QUIET, workers=workers))
    assert verdicts(result) == {"ends": "holds"}


def test_a_cycle_found_up_to_symmetry_is_named_concretely():
    """Under symmetry reduction the cycle is searched for with states identified up to
    renaming, then named as a real run of the spec."""
    with pytest.raises(InputError, match=r"spec toggles declares acyclic = True but a run returns to a state: the "
                                         r"cycle flip\(0\) -> flip\(0\) starts at an initial state and leads back to "
                                         r"that state;"):
        check_model(toy(Toggles), QUIET)


def test_a_cycle_only_up_to_a_wrong_symmetry_is_not_blamed_on_acyclic():
    """(0, 1) -> (1, 0) is a self-loop up to the declared renaming, not a cycle: the
    acyclic declaration stands (the symmetry is what is wrong, and --check-reductions
    says so)."""
    model = toy(Toggles, {"one_way": True})
    assert search(model.spec, model.properties, reductions=Reductions(group=((1, 0),))).maybe_cyclic
    assert verdicts(check_model(model, QUIET)) == {"bits": "holds"}
    with pytest.raises(InputError, match="symmetry: "):
        check_model(model, replace(QUIET, check_reductions=True))


@pytest.mark.parametrize("name", ["matrix-2", "ses-2", "bss-mutant-no-fifo-condition", "lamport-tlc-mutant-keep-duplicates"])
def test_builtin_acyclic_specs_with_joins_still_pass(name):
    """Built-in models whose graphs join runs of different lengths: the engine notices
    the edges and finds no cycle; every verdict is as expected, with workers too."""
    model = load_model(MODELS / f"{name}.toml")
    assert model.spec.acyclic
    assert search(model.spec, model.properties, stop_when_decided=False).maybe_cyclic
    for workers in (1, 2):
        result = check_model(model, replace(QUIET, workers=workers))
        assert result.exit_code() == 0, verdicts(result)


def bounded(cls: type, constants: dict, props: list[str] | None, max_depth: int):
    """A model of a toy spec with a depth bound."""
    data: dict = {"spec": cls.name, "constants": constants, "check": {"max_depth": max_depth}}
    if props:
        data["check"]["properties"] = props
    return model_from_dict(data, f"{cls.name}.toml", spec=(cls, f"{TOYSPECS.as_posix()}:{cls.__name__}"))


@pytest.mark.parametrize("workers", [1, 2])
def test_an_edge_at_the_depth_bound_is_noticed(workers):
    """At the depth bound nothing new is stored, but an edge into a stored state (one at
    the bound's depth or shallower) can close a cycle all the same. The spinner's spin
    back from 1 to 0 is met only at depth 1: with max_depth = 1 the search is complete,
    and `done` used to "hold" there (exit 0) while max_depth = 5 said violated."""
    for depth in (1, 5):
        model = bounded(Spinner, {}, None, depth)
        out = search(model.spec, model.properties, Bounds(max_depth=model.max_depth), workers=workers)
        assert out.maybe_cyclic and out.bound is None and out.complete
        result = check_model(model, replace(QUIET, workers=workers))
        assert verdicts(result) == {"done": "violated"}, depth


@pytest.mark.parametrize("workers", [1, 2])
def test_a_cycle_within_the_depth_bound_of_a_spec_declaring_acyclic_is_refused(tmp_path, workers):
    """The ring of three closes its cycle at depth 2 (wrap(2) back to 0): with max_depth = 2
    that edge is at the bound, and `stops` used to "hold" (exit 0)."""
    path = model_file(tmp_path, Ring, {"n": 3}, ["in_range", "stops"])
    path.write_text(path.read_text() + "max_depth = 2\n")
    line = one_error_line(cli("check", path, "--quiet", "--workers", workers, cwd=tmp_path))
    assert "spec ring declares acyclic = True but a run returns to a state: the cycle pass(0) -> pass(1) -> wrap(2)" in line


@pytest.mark.parametrize("workers", [1, 2])
def test_a_depth_bound_that_cuts_a_cyclic_graph_leaves_eventually_unknown(workers):
    """A graph that goes on past the bound: `eventually` is unknown at a bound that cut
    the search (never holds), and a cycle noticed within it is still noticed."""
    model = bounded(RingUndeclared, {"n": 4}, ["stops"], 2)
    out = search(model.spec, model.properties, Bounds(max_depth=model.max_depth), workers=workers)
    assert out.bound == "max_depth" and not out.maybe_cyclic
    assert verdicts(check_model(model, replace(QUIET, workers=workers))) == {"stops": "unknown"}
    model = bounded(RingUndeclared, {"n": 2}, ["stops"], 1)
    out = search(model.spec, model.properties, Bounds(max_depth=model.max_depth), workers=workers)
    assert out.bound is None and out.maybe_cyclic
    assert verdicts(check_model(model, replace(QUIET, workers=workers))) == {"stops": "violated"}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_cycle_within_a_depth_bound_that_cuts_the_graph(workers):
    """The loop 0 -> 1 -> 0 closes at max_depth = 1 (back from 1, at the bound), the way
    out to 6 lies beyond it: the search is cut, so `out` is unknown (the lasso search
    needs the whole graph; never holds), and the wrong acyclic declaration is refused
    (it was not: no edge was noticed at the bound)."""
    model = bounded(TailUndeclared, {}, None, 1)
    out = search(model.spec, model.properties, Bounds(max_depth=1), workers=workers)
    assert out.bound == "max_depth" and out.maybe_cyclic
    result = check_model(model, replace(QUIET, workers=workers))
    assert verdicts(result) == {"out": "unknown"} and result.exit_code() == 3
    with pytest.raises(InputError, match=r"spec tail declares acyclic = True but .* the cycle on\(0\) -> back"):
        check_model(bounded(Tail, {}, None, 1), replace(QUIET, workers=workers))


@pytest.mark.parametrize("workers", [1, 2])
def test_edges_are_tracked_only_where_something_reads_them(workers):
    """Noticing an edge that can close a cycle costs a table per level: it is done for a
    spec that declares acyclic or a run with an `eventually` property only."""
    cyclic = toy(RingUndeclared, {"n": 3}, ["in_range"])
    assert not search(cyclic.spec, cyclic.properties, workers=workers).maybe_cyclic
    liveness = toy(RingUndeclared, {"n": 3}, ["in_range", "stops"])
    assert search(liveness.spec, liveness.properties, workers=workers).maybe_cyclic
    declared = toy(Ring, {"n": 3}, ["in_range"])
    assert search(declared.spec, declared.properties, workers=workers).maybe_cyclic


@pytest.mark.parametrize("workers", [1, 2])
def test_an_undecided_acyclic_declaration_leaves_no_holds(monkeypatch, workers):
    """When the cycle search stops before it decides, no verdict rests on the declaration:
    every holds not shown by a witness is unknown (exit 3), with the reason; a witness
    and a violation stand. (It used to warn and keep "holds", exit 0.) The edge log
    (one process's, or the shard workers' gathered into one), which decides these
    graphs without the cycle search, is told to decide nothing, as where the budget
    dropped it."""
    from ordercheck.checker.engine import declarations

    monkeypatch.setattr(EdgeLog, "acyclic", lambda self, states: None)
    monkeypatch.setattr(declarations, "CYCLE_SECONDS", 0.0)
    monkeypatch.setattr(declarations, "CYCLE_CHECK_EVERY", 1)
    result = check_model(toy(Shortcut), replace(QUIET, workers=workers))
    assert verdicts(result) == {"ends": "unknown"} and result.exit_code() == 3
    assert result.properties["ends"].explanation == declarations.UNDECIDED
    (note,) = [w for w in result.warnings if w.startswith("acyclic: ")]
    assert "was not decided within its time (1 state searched), so every verdict that could rest on the " \
           "declaration is unknown. To decide it, give the run more time (time_limit, --time-limit) or memory " \
           "(--memory-limit), or remove the declaration" in note
    # A built-in model whose reduced search notices such an edge (matrix-2's noticed one
    # only under the cycle proviso, which its acyclic spec now skips).
    model = load_model(MODELS / "ses-2.toml")
    result = check_model(model, replace(QUIET, workers=workers))
    assert {n: p.status for n, p in result.properties.items() if p.status != "unknown"} == {
        "synchronous": "violated", "fifo_race": "holds", "causal_race": "holds"}
    assert result.properties["fifo"].status == "unknown" and result.exit_code() == 3


@pytest.mark.parametrize("workers", [1, 2])
def test_an_undecided_acyclic_declaration_leaves_no_traceless_violation(monkeypatch, workers):
    """A "violated" with no trace (a sometimes property no reachable state was found to
    satisfy) can rest on the declaration too: under partial-order reduction SpinFlag's
    search keeps ticking and never sets the flag. Undecided, it is unknown (exit 3; it
    was "violated", as the model expected, exit 0); decided, the run is refused."""
    from ordercheck.checker.engine import declarations

    model = model_from_dict({"spec": f"{TOYSPECS.as_posix()}:SpinFlag", "expect": {"flag": "violated"}}, "spin.toml")
    with pytest.raises(InputError, match="spec spinflag declares acyclic = True but a run returns to a state"):
        check_model(model, replace(QUIET, workers=workers))
    monkeypatch.setattr(declarations, "CYCLE_SECONDS", 0.0)
    monkeypatch.setattr(declarations, "CYCLE_CHECK_EVERY", 1)
    result = check_model(model, replace(QUIET, workers=workers))
    assert verdicts(result) == {"flag": "unknown"} and result.exit_code() == 3
    assert result.properties["flag"].explanation == declarations.UNDECIDED
    assert check_model(model, replace(QUIET, workers=workers, por=False)).properties["flag"].status != "violated"


def test_the_cycle_search_stops_at_the_memory_budget(monkeypatch):
    """The cycle search looks at the run's memory budget as it goes, and is cut there."""
    from ordercheck.checker.engine import declarations
    from ordercheck.checker.engine.budget import MemoryBoundReached

    class Full:
        def check(self) -> None:
            raise MemoryBoundReached(2 << 30, 1 << 30)

    monkeypatch.setattr(declarations, "CYCLE_CHECK_EVERY", 1)
    with pytest.raises(declarations.CycleSearchCut, match=r"the memory budget \(2\.0 GiB of memory in use, limit "
                                                          r"1\.0 GiB; 1 state searched\)"):
        find_cycle(toy(Shortcut).spec, budget=Full())
    assert find_cycle(toy(Shortcut).spec)[2]  # no budget: decided


def test_the_cycle_search_is_not_limited_by_max_states():
    """The cycle search walks the unreduced graph, larger than the reduced search that
    max_states bounds: lamport-tlc-mutant-keep-duplicates's 154 reduced states (198
    unreduced) are all within max_states = 154, the search notices an edge that can
    close a cycle, and its acyclic declaration is decided (matrix-2 showed it once:
    "not decided within 65 states", and the holds stood; without the cycle proviso its
    reduced search notices no such edge)."""
    model = load_model(MODELS / "lamport-tlc-mutant-keep-duplicates.toml")
    reductions, _notes = plan(model.spec, model.properties, model.symmetry, model.por)
    out = search(model.spec, model.properties, Bounds(max_states=154), reductions=reductions)
    assert out.maybe_cyclic and out.distinct_states == 154 and out.bound is None
    assert find_cycle(model.spec)[2] and search(model.spec, model.properties).distinct_states == 198
    result = check_model(model, replace(QUIET, max_states=154))
    assert result.stats.bound is None and result.exit_code() == 0, verdicts(result)
    assert not [w for w in result.warnings if "acyclic" in w]


def test_spark_refuses_a_spec_declaring_acyclic_that_has_a_cycle(spark, tmp_path):
    from ordercheck.checker.spark.bfs import SparkOptions, check_models_spark

    (tmp_path / "bad").mkdir()
    (tmp_path / "good").mkdir()
    ring = load_model(model_file(tmp_path / "bad", Ring, {"n": 3}, ["in_range"]))
    good = load_model(model_file(tmp_path / "good", Ring, {"n": 3, "stop": True}, ["in_range", "stops"]))
    for driver_states in (0, None):  # Spark's own jobs from the first level, and the driver's first levels
        options = SparkOptions(partitions=2, driver_states=driver_states)
        with pytest.raises(InputError, match=r"spec ring declares acyclic = True but .*pass\(0\) -> pass\(1\) -> wrap\(2\)"):
            check_models_spark([ring], replace(QUIET, engine="spark"), options)
        if driver_states == 0:
            (result,) = check_models_spark([good], replace(QUIET, engine="spark"), options)
            assert verdicts(result) == {"in_range": "holds", "stops": "holds"}


def test_spark_notices_an_edge_at_the_depth_bound(spark, tmp_path):
    """Spark's level at the depth bound reports the visited successors it meets too."""
    from ordercheck.checker.spark.bfs import SparkOptions, check_models_spark

    ring_file = model_file(tmp_path, Ring, {"n": 3}, ["in_range", "stops"])
    ring_file.write_text(ring_file.read_text() + "max_depth = 2\n")
    spinner_file = model_file(tmp_path, Spinner, {}, ["done"])
    spinner_file.write_text(spinner_file.read_text() + "max_depth = 1\n")
    ring, spinner = load_model(ring_file), load_model(spinner_file)
    for driver_states in (0, None):
        options = SparkOptions(partitions=2, driver_states=driver_states)
        (result,) = check_models_spark([spinner], replace(QUIET, engine="spark"), options)
        assert verdicts(result) == {"done": "violated"}
        with pytest.raises(InputError, match=r"spec ring declares acyclic = True but .*wrap\(2\)"):
            check_models_spark([ring], replace(QUIET, engine="spark"), options)


def test_spark_an_undecided_acyclic_declaration_leaves_no_holds(spark, tmp_path, monkeypatch):
    from ordercheck.checker.engine import declarations
    from ordercheck.checker.spark.bfs import SparkOptions, check_models_spark

    monkeypatch.setattr(declarations, "CYCLE_SECONDS", 0.0)
    monkeypatch.setattr(declarations, "CYCLE_CHECK_EVERY", 1)
    shortcut = load_model(model_file(tmp_path, Shortcut, {}, ["ends"]))
    (result,) = check_models_spark([shortcut], replace(QUIET, engine="spark"), SparkOptions(partitions=2))
    assert verdicts(result) == {"ends": "unknown"} and result.exit_code() == 3


# -- the cycle proviso on random cyclic specs ---------------------------------------------

SEEDS = range(100)


@pytest.mark.parametrize("processes", [2, 3])
def test_random_cyclic_specs_same_verdicts_reduced(processes):
    """Random cyclic specs with exact footprints: partial-order reduction (with its cycle
    proviso: the `always` and `sometimes` properties need visibility) gives the verdicts
    of the unreduced search. Without the proviso, a process looping on its own can be
    the only one expanded for ever, and the others' steps are ignored: some of these
    seeds then give reduced "holds" against unreduced "violated"."""
    differ, reduced = [], 0
    for seed in SEEDS:
        for props in (["avoid", "reach"], ["avoid", "settles"]):
            model = toy(RandomProcesses, {"seed": seed, "processes": processes}, props)
            full = check_model(model, replace(QUIET, por=False, symmetry=False))
            red = check_model(model, replace(QUIET, symmetry=False))
            reduced += red.reductions["por"]
            if verdicts(red) != verdicts(full):
                differ.append((seed, props, verdicts(full), verdicts(red)))
    assert not differ
    assert reduced == len(SEEDS)  # applied wherever no `eventually` is checked: the test tests the reduction


def test_random_cyclic_specs_same_verdicts_reduced_with_workers():
    """The proviso as the shard workers decide it, in rounds (ordercheck.checker.engine.sharded)."""
    differ = []
    for seed in SEEDS:
        model = toy(RandomProcesses, {"seed": seed, "processes": 3}, ["avoid", "reach"])
        full = check_model(model, replace(QUIET, por=False, symmetry=False))
        red = check_model(model, replace(QUIET, symmetry=False, workers=2))
        assert red.reductions["por"]
        if verdicts(red) != verdicts(full):
            differ.append((seed, verdicts(full), verdicts(red)))
    assert not differ


# -- the cycle proviso skipped on a spec that declares acyclic ----------------------------


def test_the_proviso_is_skipped_only_where_acyclic_is_declared():
    """Both spinning alarms need visibility (``quiet`` is an ``always``); only the one
    that does not declare ``acyclic`` gets the cycle proviso, and ``--json`` says which.
    So does every built-in model whose reduction needs visibility: they all declare it."""
    for cls, proviso in ((SpinAlarm, False), (SpinAlarmUndeclared, True)):
        model = toy(cls)
        reductions, notes = plan(model.spec, model.properties, symmetry=False, por=True)
        assert reductions.por and reductions.visible and not notes
        assert reductions.proviso is proviso, cls.name
        assert reductions.as_dict(model.spec)["cycle_proviso"] is proviso
    # The undeclared one keeps its verdict by the proviso alone (no check of a declaration).
    result = check_model(toy(SpinAlarmUndeclared), QUIET)
    assert verdicts(result) == {"quiet": "violated"} and result.reductions["cycle_proviso"]
    needing = 0
    for path in sorted(MODELS.glob("*.toml")):
        model = load_model(path)
        reductions, _notes = plan(model.spec, model.properties, model.symmetry, model.por)
        if reductions.por and reductions.visible:
            needing += 1
            assert model.spec.acyclic and not reductions.proviso, path.name
    assert needing  # the skip is what the built-in models get


@pytest.mark.parametrize("workers", [1, 2])
def test_a_wrong_acyclic_declaration_is_refused_without_the_proviso(tmp_path, workers):
    """The spinning alarm declares acyclic, wrongly. Without the proviso the reduced
    search ticks round its cycle and never raises the alarm: it finds no violation. The
    proviso would have expanded the tick's state fully and found it. What stands in for
    the proviso is the check of the declaration: the tick back to a state at a shallower
    depth is noticed, the cycle search finds the cycle, and the run ends with exit 2
    naming it, never "holds"."""
    model = toy(SpinAlarm)
    reductions, _notes = plan(model.spec, model.properties, symmetry=False, por=True)
    assert not reductions.proviso
    reduced = search(model.spec, model.properties, reductions=reductions, workers=workers)
    assert reduced.complete and not reduced.decisions and reduced.maybe_cyclic
    with_proviso = search(model.spec, model.properties, reductions=replace(reductions, proviso=True), workers=workers)
    assert "quiet" in with_proviso.decisions
    path = model_file(tmp_path, SpinAlarm, {}, ["quiet"])
    line = one_error_line(cli("check", path, "--quiet", "--workers", workers, cwd=tmp_path))
    assert line == (
        f"ordercheck: error: {path}: spec spinalarm declares acyclic = True but a run returns to a state: the "
        "cycle tick(0) -> tick(0) starts at an initial state and leads back to that state; remove the "
        "declaration, or make every step advance a bounded measure"
    )
    assert check_model(toy(SpinAlarm, {"stop": True}), replace(QUIET, workers=workers)).properties[
        "quiet"].status == "violated"  # where it stops (acyclic, rightly) the alarm is found


@pytest.mark.parametrize("workers", [1, 2])
def test_a_wrong_acyclic_declaration_without_the_proviso_cut_or_undecided_is_unknown(monkeypatch, workers):
    """Where the search or the cycle search is cut, the spinning alarm's `quiet` is
    unknown (exit 3), never "holds": a state bound that stops the search before the
    tick returns (nothing noticed, the bound leaves it unknown), one after it (noticed:
    refused), and a cycle search given no time."""
    from ordercheck.checker.engine import declarations

    model = toy(SpinAlarm)
    cut = check_model(model, replace(QUIET, workers=workers, max_states=1))
    assert cut.stats.bound == "max_states" and verdicts(cut) == {"quiet": "unknown"} and cut.exit_code() == 3
    with pytest.raises(InputError, match=r"spec spinalarm declares acyclic = True but .* the cycle tick\(0\)"):
        check_model(model, replace(QUIET, workers=workers, max_states=2))
    monkeypatch.setattr(declarations, "CYCLE_SECONDS", 0.0)
    monkeypatch.setattr(declarations, "CYCLE_CHECK_EVERY", 1)
    undecided = check_model(model, replace(QUIET, workers=workers))
    assert verdicts(undecided) == {"quiet": "unknown"} and undecided.exit_code() == 3
    assert undecided.properties["quiet"].explanation == declarations.UNDECIDED


def test_spark_never_holds_on_a_wrong_acyclic_declaration_without_the_proviso(spark, tmp_path):
    """The Spark engine searches unreduced, so it has no proviso to skip: the spinning
    alarm's violation is found there (the search stops at it, before the tick back)."""
    from ordercheck.checker.spark.bfs import SparkOptions, check_models_spark

    alarm = load_model(model_file(tmp_path, SpinAlarm, {}, ["quiet"]))
    (result,) = check_models_spark([alarm], replace(QUIET, engine="spark"), SparkOptions(partitions=2))
    assert verdicts(result) == {"quiet": "violated"} and not result.reductions["por"]
    assert "the Spark engine does not apply symmetry or partial-order reduction" in result.warnings[0]


def test_random_specs_wrongly_declaring_acyclic_are_refused_or_right_without_the_proviso():
    """The random cyclic specs declaring ``acyclic``: partial-order reduction skips its
    cycle proviso, and each run is refused for a cycle (exit 2) or gives the verdicts of
    the unreduced search of the spec that does not declare it. Among the refused, some
    reduced searches alone (without the check of the declaration) miss a violation or a
    witness: there the check is what stands between the skipped proviso and a wrong
    verdict."""
    refused, right, missed = 0, 0, 0
    for seed in SEEDS:
        constants = {"seed": seed, "processes": 3}
        full = verdicts(check_model(toy(RandomProcesses, constants, ["avoid", "reach"]),
                                    replace(QUIET, por=False, symmetry=False)))
        model = toy(RandomProcessesDeclared, constants, ["avoid", "reach"])
        reductions, _notes = plan(model.spec, model.properties, symmetry=False, por=True)
        assert reductions.por and reductions.visible and not reductions.proviso
        try:
            result = check_model(model, replace(QUIET, symmetry=False))
        except InputError as exc:
            assert "declares acyclic = True but a run returns to a state" in str(exc)
            refused += 1
            alone = search(model.spec, model.properties, reductions=reductions).decisions
            # decided: avoid where violated, reach where it holds (a witness)
            missed += set(alone) != {n for n, v in full.items() if (v == "violated") == (n == "avoid")}
            continue
        assert verdicts(result) == full, seed
        right += 1
    assert refused and right and missed


def test_without_deferred_steps_the_reduced_graph_keeps_every_cycle():
    """Stubborn sets keep an infinite run from every state that has one, so a reduced
    search without deferred steps meets an edge that can close a cycle wherever the spec
    has a cycle (docs/howto/reductions.md, the cycle proviso): on every random spec
    declaring ``acyclic`` whose unreduced graph has a cycle, the complete reduced search
    notices one, the proviso skipped."""
    cyclic, smaller = 0, 0
    for processes, places in ((2, 3), (3, 3), (3, 4)):
        for seed in SEEDS:
            model = toy(RandomProcessesDeclared, {"seed": seed, "processes": processes, "places": places},
                        ["avoid", "reach"])
            reductions, _notes = plan(model.spec, model.properties, symmetry=False, por=True)
            assert reductions.por and not reductions.proviso and not reductions.defer
            if find_cycle(model.spec)[0] is None:
                continue
            cyclic += 1
            reduced = search(model.spec, model.properties, reductions=reductions, stop_when_decided=False)
            assert reduced.complete and reduced.maybe_cyclic, (processes, places, seed)
            smaller += reduced.distinct_states < search(model.spec, model.properties, stop_when_decided=False).distinct_states
    assert cyclic > 100 and smaller > 30  # many cycles, and reductions that left states out


@pytest.mark.parametrize("workers", [1, 2])
def test_a_deferred_step_can_hide_a_cycle_from_the_reduced_search(workers):
    """Deferred steps are where the argument above stops: the late loop's cycle lies
    behind an early ``mark``, which the deferring search takes only last, so it meets no
    edge that could close a cycle, and ``--check-reductions`` finds nothing wrong with
    the deferral; without deferring (stubborn sets alone) the edge is met, and
    ``--no-por`` refuses the declaration (docs/explanation/holds.md)."""
    model = toy(LateLoop)
    reductions, _notes = plan(model.spec, model.properties, symmetry=False, por=True)
    assert reductions.defer and reductions.por and not reductions.proviso
    lazy = search(model.spec, model.properties, reductions=reductions, stop_when_decided=False, workers=workers)
    assert lazy.complete and not lazy.maybe_cyclic
    stubborn_only = search(model.spec, model.properties, reductions=replace(reductions, defer=False),
                           stop_when_decided=False, workers=workers)
    assert stubborn_only.maybe_cyclic
    checked = check_model(model, replace(QUIET, workers=workers, check_reductions=True))
    assert checked.reductions["deferred_arrivals"] and verdicts(checked) == {"below_three": "holds"}
    with pytest.raises(InputError, match=r"spec lateloop declares acyclic = True but .* the cycle back\(0\) -> go\(0\)"):
        check_model(model, replace(QUIET, workers=workers, por=False))


@pytest.mark.parametrize("workers", [1, 2])
def test_no_step_is_deferred_where_an_eventually_verdict_rests_on_acyclic(workers):
    """The late loop awaiting ``x`` = 2: deferring ``mark`` would hide the fair cycle that
    violates ``reaches_two`` and the check of ``acyclic`` with it, and the run would say
    holds (it did). With an ``eventually`` property checked nothing is deferred, so the
    reduced search meets the cycle's edge and the wrong declaration is refused."""
    model = toy(LateLoopAwaiting)
    reductions, _notes = plan(model.spec, model.properties, symmetry=False, por=True)
    assert reductions.por and not reductions.defer
    with pytest.raises(InputError, match=r"spec lateloop_awaiting declares acyclic = True but .* the cycle"):
        check_model(model, replace(QUIET, workers=workers))
    deferring = search(model.spec, model.properties, reductions=replace(reductions, defer=True),
                       stop_when_decided=False, workers=workers)
    assert deferring.complete and not deferring.maybe_cyclic  # what deferring would have missed


# -- symmetry: canonical form against the whole orbit --------------------------------------

SYMMETRIC = {
    "bus1": {"spec": "bus1", "constants": {"peers": 2, "sends": 1, "signals": 1, "tiebreak_by_sender": False}},
    "fifo": "fifo-2",
    "sequencer": "sequencer-3",
    "bss": "bss-3",
    "matrix": "matrix-3-multicast",
    "ses": "ses-3-multicast",
    "lamport_total": {"spec": "lamport_total",
                      "constants": {"peers": 3, "sends": 1, "signals": 1, "tiebreak_by_sender": False}},
    "skeen": {"spec": "skeen", "constants": {"peers": 3, "script": {"a": ["bc"], "b": ["ac"], "c": ["ab"]},
                                             "signals": 1, "tiebreak_by_sender": False}},
}
"""One configuration with a symmetry group for every built-in spec that declares
symmetries (a model file, or a model's fields)."""


def symmetric_model(name: str):
    ref = SYMMETRIC[name]
    return load_model(MODELS / f"{ref}.toml") if isinstance(ref, str) else model_from_dict(ref, f"{name}.toml")


def builtin_spec_classes() -> dict[str, type]:
    """Every spec the built-in models name, by name."""
    return {load_model(p).spec.name: type(load_model(p).spec) for p in sorted(MODELS.glob("*.toml"))}


def test_every_symmetric_builtin_spec_is_covered():
    """A built-in spec that can declare symmetries is in :data:`SYMMETRIC`, unless it
    breaks symmetry on purpose whatever its constants (and then declares none). A spec
    whose id order is a constant's choice (Lamport, Skeen) is in it, with the choice off."""
    for name, cls in builtin_spec_classes().items():
        if not issubclass(cls, Symmetry) or cls.symmetries is Symmetry.symmetries:
            continue
        if getattr(cls, "symmetry_breaker", "") and cls.symmetry_broken_by is PeerSpec.symmetry_broken_by:
            assert name not in SYMMETRIC
            continue
        assert name in SYMMETRIC, f"{name} declares symmetries: add a configuration with a group to SYMMETRIC"


def reachable_sample(spec, limit: int = 4000, k: int = 250, seed: int = 0) -> list:
    seen = dict.fromkeys(spec.init_states())
    todo = deque(seen)
    while todo and len(seen) < limit:
        for _a, t in spec.next_states(todo.popleft()):
            if t not in seen:
                seen[t] = None
                todo.append(t)
    states = list(seen)
    return random.Random(seed).sample(states, min(k, len(states)))


@pytest.mark.parametrize("name", sorted(SYMMETRIC))
def test_canonical_fingerprint_is_the_least_over_every_permutation(name):
    """Brute force: each permutation of the processes that the declared group generates
    (composed until closed, so a group listed short is found out too) renames a sampled
    reachable state; the canonical fingerprint the engine stores must be the least
    fingerprint of all the renamed states."""
    spec = symmetric_model(name).spec
    group = [tuple(g) for g in spec.symmetries()]
    assert group, f"{name}: the configuration has no symmetry group"
    n = len(group[0])
    identity = tuple(range(n))
    closed = {identity, *group}
    while True:
        more = {tuple(g[h[i]] for i in range(n)) for g in closed for h in closed} - closed
        if not more:
            break
        closed |= more
    assert len(closed) == len(group) + 1, f"{name}: symmetries() is not a group (composition gives more)"
    assert all(sorted(g) == list(identity) for g in closed)
    every = [p for p in itertools.permutations(range(n)) if p in closed]
    canonical = Expander(spec, Reductions(group=tuple(group))).fingerprints
    states = reachable_sample(spec)
    assert len(states) > 20
    moved = 0
    for s in states:
        brute = min(fingerprint(spec.permute(s, p)) if p != identity else fingerprint(s) for p in every)
        assert int(canonical([s])[0]) == brute, (name, s)
        moved += brute != fingerprint(s)
    assert moved  # some sampled state's least renaming is not itself: the test can fail


@pytest.mark.parametrize("name, models", [
    ("lamport_total", [{"fifo_links": False}, {"rule": "later_timestamp"}, {"duplicates": 1, "discard_duplicates": False}]),
    ("skeen", [{"channel": "unordered"}, {"take_max": False, "mutant_final": "first"},
               {"wait_for_undeliverable": False}]),
])
def test_symmetry_without_the_tiebreak_keeps_every_verdict(name, models):
    """Lamport and Skeen rename peers when ``tiebreak_by_sender`` is off (only the
    tie-break compares peer ids): on small configurations with ablations and faults, the
    run reduced by symmetry stores fewer states, passes ``--check-reductions`` (every
    state's renamed successors against its successors renamed) and gives every verdict
    of the run without symmetry. With the tie-break on, no renaming is declared."""
    base = {"lamport_total": {"peers": 2, "sends": 1},
            "skeen": {"peers": 3, "script": {"a": ["bc"], "b": ["ac"]}}}[name]
    for extra in [{}, *models]:
        model = model_from_dict({"spec": name, "constants": {**base, "tiebreak_by_sender": False, **extra}},
                                f"{name}.toml")
        assert model.spec.symmetries(), extra
        everything = replace(QUIET, stop_when_decided=False)
        renamed = check_model(model, replace(everything, check_reductions=True))
        plain = check_model(model, replace(everything, symmetry=False))
        assert renamed.reductions["symmetry"] and not plain.reductions["symmetry"]
        assert verdicts(renamed) == verdicts(plain), extra
        assert renamed.stats.distinct_states < plain.stats.distinct_states, extra
    tied = model_from_dict({"spec": name, "constants": base}, f"{name}.toml")
    assert tied.spec.symmetries() == []


# -- --check-reductions -------------------------------------------------------------------

CHECKED = {
    "bss": ["bss-3", "bss-mutant-no-fifo-condition-duplicating"],
    "bus1": ["bus1-2", SYMMETRIC["bus1"]],
    "bus1_impl": ["bus1-impl-unicast"],
    "bus1_refinement": ["bus1-impl-refines-handle"],
    "fifo": ["fifo-2"],
    "lamport_total": ["lamport-3", "lamport-2", "lamport-mutant-no-tiebreak"],
    "matrix": ["matrix-3", "matrix-3-multicast"],
    "restart_clocks": ["restart-count"],
    "retransmit": ["retransmit-weak"],
    "sequencer": ["sequencer-mutant-own-delivery"],
    "ses": ["ses-3", "ses-3-multicast"],
    "skeen": ["skeen-4", "skeen-2-lossy", "skeen-mutant-no-tiebreak"],
    "synchronous": ["synchronous-3"],
}
"""Small models of every built-in spec, together covering each reduction its specs use:
symmetry, stubborn sets with and without the proviso, solo steps, deferred steps and
reduction keys."""


def checked_model(ref):
    return load_model(MODELS / f"{ref}.toml") if isinstance(ref, str) else model_from_dict(ref, "inline.toml")


def test_every_builtin_spec_is_checked_with_check_reductions():
    assert set(CHECKED) == set(builtin_spec_classes())


@pytest.mark.parametrize("spec", sorted(CHECKED))
def test_check_reductions_passes_on_every_builtin_spec(spec):
    for ref in CHECKED[spec]:
        model = checked_model(ref)
        result = check_model(model, replace(QUIET, check_reductions=True))
        plain = check_model(model, QUIET)
        assert result.exit_code() == plain.exit_code() == (0 if model.expect else result.exit_code()), ref
        assert verdicts(result) == verdicts(plain)


def test_check_reductions_with_workers():
    """The checks run in the shard workers too, and a failure there comes back."""
    result = check_model(load_model(MODELS / "fifo-2.toml"), replace(QUIET, check_reductions=True, workers=2))
    assert result.exit_code() == 0
    with pytest.raises(InputError, match="do not commute"):
        check_model(toy(LastWriter), replace(QUIET, check_reductions=True, workers=2))


@pytest.mark.parametrize(
    "cls, plain, wrong",
    [
        (LastWriter, "holds", "steps write(0) and write(1) do not commute, but partial-order reduction took write(0) alone "
                              "as independent by its footprints: the two orders reach different states; at an initial state"),
        (Blinker, "holds", "step on(1) changes the outcome of one_first, but its footprint writes nothing one_first "
                           "reads (as visible_mask says), so partial-order reduction may take it as invisible; at an "
                           "initial state"),
        (Lopsided, "holds", "symmetry: the state renamed by (1, 0) has 2 successors up to renaming, the state 1, 1 in "
                            "common (the renaming is not a symmetry of next_states); at the state after 1 step: count(0)"),
    ],
    ids=["footprint", "visibility", "symmetry"],
)
def test_check_reductions_catches_a_wrong_declaration(tmp_path, cls, plain, wrong):
    """Trusted, each wrong declaration gives a false "holds" (the full search says
    violated); checked, the run stops with one line naming the spec, the steps or the
    renaming, and the trace to the state."""
    model = toy(cls)
    prop = model.properties[0].name
    assert check_model(model, QUIET).properties[prop].status == plain
    assert check_model(model, replace(QUIET, por=False, symmetry=False)).properties[prop].status == "violated"
    path = model_file(tmp_path, cls, {}, [prop])
    line = one_error_line(cli("check", path, "--quiet", "--check-reductions", cwd=tmp_path))
    assert line.startswith(f"ordercheck: error: {path}: --check-reductions: spec {cls.name}: "), line
    assert wrong in line, line


def test_check_reductions_names_the_trace_to_the_state(tmp_path):
    """Lopsided fails at (1, 0), one step from the start."""
    path = model_file(tmp_path, Lopsided, {}, ["small"])
    line = one_error_line(cli("check", path, "--quiet", "--check-reductions", cwd=tmp_path))
    assert line.endswith("; at the state after 1 step: count(0)"), line


def test_check_reductions_catches_a_reduction_key_that_decides_nothing():
    """The memo keyed by a reduction key that is the same everywhere hands (1, 0), where
    only process 1 can step, the choice made at (0, 0): process 0's step."""
    with pytest.raises(InputError, match=r"spec one_key: reduction_key 0 does not decide the footprints and actors "
                                         r"of its states: .* at the state after 1 step: count\(0\)"):
        check_model(toy(OneKey), replace(QUIET, check_reductions=True))


def test_a_reduction_key_that_decides_nothing_is_one_line_without_the_check(tmp_path):
    """Without --check-reductions the memo still notices the stale choice when the
    successors it generates do not fit; that is the spec's fault, reported as one line
    with exit 2 (it was a bare RuntimeError, a traceback and exit 1)."""
    path = model_file(tmp_path, OneKey, {}, ["ends"])
    line = one_error_line(cli("check", path, "--quiet", cwd=tmp_path))
    assert line.startswith("ordercheck: error: spec one_key: its reduction_key gives two states"), line
    assert "--check-reductions" in line, line


def test_check_reductions_catches_a_property_wrongly_declared_stable():
    """On an acyclic spec `stable` spares a property the visibility condition; a step
    that undoes a met `sometimes` shows the declaration wrong."""
    with pytest.raises(InputError, match=r"spec flicker: lit is declared stable but step off\(0\) undoes its witness"):
        check_model(toy(Flicker), replace(QUIET, check_reductions=True, stop_when_decided=False))


def test_check_reductions_with_honest_footprints_passes():
    model = toy(LastWriter, {"honest": True})
    result = check_model(model, replace(QUIET, check_reductions=True))
    assert verdicts(result) == {"ends_with_two": "violated"}


def test_check_reductions_is_refused_by_spark(tmp_path):
    path = model_file(tmp_path, Ring, {"n": 3, "stop": True}, ["in_range"])
    line = one_error_line(cli("check", path, "--engine", "spark", "--check-reductions", cwd=tmp_path))
    assert "--check-reductions: not supported by --engine spark" in line


@pytest.mark.parametrize("workers", [1, 2])
def test_a_resume_with_another_check_reductions_setting_is_refused(tmp_path, workers):
    """--check-reductions is part of a checkpoint's identity: a resume that adds it would
    check only the states after the checkpoint (it resumed silently), one that drops it
    would pass off a half-checked run as checked."""
    model = toy(Shortcut)
    ckpt = tmp_path / "ckpt"
    for check in (False, True):
        shutil.rmtree(ckpt, ignore_errors=True)
        search(model.spec, model.properties, Bounds(max_depth=1), checkpoint=ckpt, checkpoint_every=0,
               reductions=Reductions(check=check), workers=workers)
        with pytest.raises(InputError, match="another model, property set or reduction setting"):
            search(model.spec, model.properties, checkpoint=ckpt, resume=True, reductions=Reductions(check=not check),
                   workers=workers)
        again = search(model.spec, model.properties, checkpoint=ckpt, resume=True, reductions=Reductions(check=check),
                       workers=workers)
        assert again.complete


def test_plan_is_unchanged_by_the_check():
    """The check changes nothing of what is reduced (the same plan, the same counts)."""
    model = load_model(MODELS / "skeen-4.toml")
    red, _notes = plan(model.spec, model.properties, True, True)
    plain = check_model(model, QUIET)
    checked = check_model(model, replace(QUIET, check_reductions=True))
    assert red.por and plain.stats.distinct_states == checked.stats.distinct_states
    assert plain.stats.transitions == checked.stats.transitions

"""Our counts as TLC counts an export whose module leaves per-step checks out of the state
(:mod:`ordercheck.tla.views`): bus1_impl's sticky ``bad`` bits."""

from __future__ import annotations

import pytest

from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.specs.bus1_impl import BAD
from ordercheck.specs.bus1_impl_defs import RANKS, TXS
from ordercheck.tla.adapters.bus1_impl import Bus1ImplAdapter
from ordercheck.tla.export import export_model
from ordercheck.tla.tlc import TlcUnavailable, find_tlc
from ordercheck.tla.views import HiddenStep, our_counts, result_counts, view_counts
from tests.conftest import MODELS

FULL = Options(progress=False, stop_when_decided=False, symmetry=False, por=False)


def test_where_no_check_fails_the_views_are_the_states():
    """bus1-impl-late-join-failed-fixed: no step fails a check, so the graph of views is
    our engine's graph (44 states, 46 generated, depth 13, as the docs' table has them)."""
    model = load_model(MODELS / "bus1-impl-late-join-failed-fixed.toml")
    ours = check_model(model, FULL)
    adapter = export_model(model, symmetry=False).adapter
    assert adapter.has_view
    assert view_counts(adapter) == result_counts(model.spec, ours) == our_counts(adapter, ours)
    assert (view_counts(adapter).distinct, view_counts(adapter).generated, view_counts(adapter).depth) == (44, 46, 13)


def test_where_a_check_fails_the_views_are_fewer():
    """bus1-impl-lock-stage-race: no_warn (a per-step check) fails on some steps, whose
    targets differ from states reached without failing it only in the sticky bits: our
    engine counts both, the module (and the graph of views) one (1336 states, 876 views)."""
    model = load_model(MODELS / "bus1-impl-lock-stage-race.toml")
    ours = check_model(model, FULL)
    adapter = export_model(model, symmetry=False).adapter
    views = view_counts(adapter)
    assert ours.properties["no_warn"].status == "violated"
    states = set()
    todo = list(model.spec.init_states())
    states.update(todo)
    while todo:
        for _label, t in model.spec.next_states(todo.pop()):
            if t not in states:
                states.add(t)
                todo.append(t)
    assert len(states) == ours.stats.distinct_states
    assert views.distinct == len({adapter.view(s) for s in states}) < ours.stats.distinct_states
    assert (ours.stats.distinct_states, views.distinct) == (1336, 876)
    assert any(s[BAD] != (0, 0) for s in states)


def test_a_step_that_changes_only_what_the_view_leaves_out_is_refused():
    """A step whose source and target have one view but differ would be stuttering to TLC,
    which no [][A]_vars constrains: view_counts refuses it rather than count it away."""
    model = load_model(MODELS / "bus1-impl-late-join-failed-fixed.toml")
    adapter = export_model(model, symmetry=False).adapter
    blind = type("Blind", (type(adapter),), {"view": lambda self, state: state[0]})(model.spec)
    with pytest.raises(HiddenStep, match="would take for stuttering"):
        view_counts(blind)


try:
    find_tlc()
    NO_TLC = ""
except TlcUnavailable as exc:
    NO_TLC = f"TLC not available: {exc}"


def without_ranks(self, state: tuple) -> tuple:
    """A wrong view: besides ``bad`` it leaves out the release groups' ranks, which the
    steps read (they order a transaction's tie), so states it merges have different
    successors."""
    return tuple(part for i, part in enumerate(state) if i not in (BAD, RANKS))


def test_a_view_that_drops_what_the_steps_read_changes_the_counts():
    """bus1-impl-late-join-failed-fixed's two initial states differ in their ranks: the
    wrong view merges them and every pair of states they lead to (22 views of 44 states),
    where the module, which keeps the ranks, has 44."""
    model = load_model(MODELS / "bus1-impl-late-join-failed-fixed.toml")
    adapter = export_model(model, symmetry=False).adapter
    wrong = type("WithoutRanks", (type(adapter),), {"view": without_ranks})(model.spec)
    assert view_counts(adapter).distinct == 44
    assert view_counts(wrong).distinct == 22


@pytest.mark.tlc
@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
def test_tlc_reports_disagreement_with_a_wrong_view(run_cli, monkeypatch):
    """The view's counts are not taken on trust: with the adapter's view leaving out the
    ranks, ``ordercheck tlc`` finds TLC's 44 distinct states against our 22 views and
    exits 1 (a mismatch; its summary line calls our count views, of our 44 states), and
    with a view that hides a step (it leaves out the
    transactions) it reports the step and exits 1 rather than count it away."""
    path = MODELS / "bus1-impl-late-join-failed-fixed.toml"
    monkeypatch.setattr(Bus1ImplAdapter, "view", without_ranks)
    result = run_cli("tlc", path, "--no-happened-before")
    assert result.exit_code == 1, result.output
    assert "MISMATCH: distinct states: ours 22, TLC 44" in result.output
    # The summary names the views as views, beside the search's own count.
    assert ": ours 22 views of our 44 states (" in result.output.splitlines()[0], result.output

    def without_transactions(self, state: tuple) -> tuple:
        return tuple(part for i, part in enumerate(state) if i not in (BAD, TXS))

    monkeypatch.setattr(Bus1ImplAdapter, "view", without_transactions)
    result = run_cli("tlc", path, "--no-happened-before")
    assert result.exit_code == 1, result.output
    assert ": MISMATCH: " in result.output and "the step" in result.output and "would take for stuttering" in result.output

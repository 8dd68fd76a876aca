"""Coverage: how often each action kind fired, in the result, --json and the HTML report, and
a warning for an action kind a spec lists that never fired."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.specs.bus1_impl import Bus1Impl
from tests.conftest import MODELS, model_checking, proviso_search

QUIET = Options(progress=False, stop_when_decided=False)


def transitions_by_kind(spec) -> Counter:
    """Every transition of the reachable graph, counted by action name, by a plain walk."""
    seen = set(spec.init_states())
    todo = list(seen)
    fired: Counter = Counter()
    while todo:
        s = todo.pop()
        for label, t in spec.next_states(s):
            fired[label[0]] += 1
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return fired


@pytest.mark.parametrize("name", ["bus1-impl-release", "bus1-impl-lock-stage-fixed"])
def test_coverage_counts_every_transition_by_its_action(name):
    model = load_model(MODELS / f"{name}.toml")
    result = check_model(model, QUIET)
    assert result.coverage == dict(result.coverage)  # plain ints by name
    assert Counter(result.coverage) == +transitions_by_kind(model.spec)
    assert sum(result.coverage.values()) == result.stats.transitions


@pytest.mark.parametrize(("name", "extra"), [
    ("bus1-impl-multicast", {"workers": 2}),
    ("bus1-impl-multicast", {"workers": 2, "spill_dir": "SPILL"}),
    ("skeen-2", {"workers": 2}),
], ids=["shards", "shards-spilled", "reduced"])
def test_workers_report_the_same_coverage(name, extra, tmp_path):
    """Shard workers (their shares of a level in memory or in a spill directory, and
    under partial-order reduction with visibility, which skeen-2's properties need)
    send their counts back with their results. With the cycle proviso too: below."""
    if "spill_dir" in extra:
        extra = {**extra, "spill_dir": str(tmp_path)}
    model = load_model(MODELS / f"{name}.toml")
    one = check_model(model, QUIET).coverage
    many = check_model(model, Options(progress=False, stop_when_decided=False, **extra)).coverage
    assert many == one and one


def test_a_state_the_cycle_proviso_expands_fully_counts_each_successor_once():
    """Under the cycle proviso a reduced state may be expanded fully: coverage counts the
    successors of its final expansion, once each, so the counts add up to the
    transitions (one process once counted its reduced successors twice, and the rest
    with the next chunk of states), and shard workers count as one process does.
    (skeen-2 declares acyclic, so the command line skips its proviso: it is switched
    on here, as for a spec that does not declare it.)"""
    one = proviso_search("skeen-2.toml", 1, stop=False)
    assert sum(one.fired.values()) == one.transitions
    assert proviso_search("skeen-2.toml", 2, stop=False).fired == one.fired


def test_an_action_kind_that_never_fires_is_named_in_a_warning(monkeypatch):
    model = load_model(MODELS / "bus1-impl-unicast.toml")
    assert not [w for w in check_model(model, QUIET).warnings if w.startswith("coverage")]
    listed = Bus1Impl.action_kinds
    monkeypatch.setattr(Bus1Impl, "action_kinds", lambda self: (*listed(self), "bus1_handle_release"))
    result = check_model(model, QUIET)
    (warning,) = [w for w in result.warnings if w.startswith("coverage")]
    assert "bus1_handle_release never fired" in warning
    assert result.coverage["bus1_handle_release"] == 0
    # A search cut short proves nothing by a zero: by a bound, or as soon as its only
    # property was decided.
    cut = check_model(model, Options(progress=False, stop_when_decided=False, max_depth=4))
    assert cut.coverage is not None and not [w for w in cut.warnings if w.startswith("coverage")]
    first = model_checking("bus1-impl-destroy-race", ["destroy_notified"])
    stopped = check_model(first, Options(progress=False))
    assert stopped.properties["destroy_notified"].status == "holds"
    assert stopped.coverage is not None
    assert not [w for w in stopped.warnings if w.startswith("coverage")]


def test_the_scripts_decide_the_listed_kinds():
    model = load_model(MODELS / "bus1-impl-life-disconnect.toml")
    kinds = model.spec.action_kinds()
    assert "bus1_peer_disconnect" in kinds and "bus1_handle_release" in kinds
    assert "bus1_handle_acquire" not in kinds and "mutex_lock" not in kinds
    locked = load_model(MODELS / "bus1-impl-lock-stage-race.toml").spec.action_kinds()
    assert "mutex_lock" in locked and "bus1_queue_stage" in locked


def test_coverage_is_in_the_json_and_the_html_report(run_cli, tmp_path):
    out = tmp_path / "out.json"
    report = tmp_path / "report"
    res = run_cli("check", MODELS / "bus1-impl-release.toml", "--json", out, "--report", report)
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    results = data if isinstance(data, list) else data.get("results", [data])
    (entry,) = [r for r in results if r["model"].endswith("bus1-impl-release.toml")]
    assert entry["coverage"]["bus1_handle_release"] > 0
    html = (report / "index.html").read_text()
    assert "coverage: transitions per action" in html and "bus1_tx_stage_sync" in html

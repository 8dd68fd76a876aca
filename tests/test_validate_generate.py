"""Logs generated from models: validate against the spec's own histories and the models' verdicts.

- Every built-in model that keeps a history: random walks become logs, and validate's
  verdict on each property, and the step at which it first breaks, equal those of the
  literal oracle read on the *spec's* history after each step (the spec's own causal
  pasts, not ones recomputed from the log).
- Correct protocols (every model that is not a mutant): no walk log is flagged for a
  property the model expects to hold.
- Faulty ones: every log on which the model's own check finds a violation (mutants'
  walks and ``ordercheck simulate``'s counterexamples) is caught by validate.
- The synthetic workload holds every property, and each fault breaks what it should.
"""

from __future__ import annotations

import pytest
from validate_oracle import PREFIX_SAFE, violated

from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.loading.registry import builtin_models
from ordercheck.checker.monitors import check
from ordercheck.checker.validate.checks import CHECKS, check_log
from ordercheck.checker.validate.generate import counterexample_logs, synthetic_log, trace_logs, walk
from ordercheck.specs import properties

WALKS = 12


def _with_history() -> list:
    out = []
    for path in builtin_models():
        model = load_model(path)
        try:
            model.spec.history(model.spec.init_states()[0])
        except NotImplementedError:
            continue
        out.append(path)
    return out


MODELS = _with_history()


def test_most_models_keep_a_history() -> None:
    assert len(MODELS) >= 80


@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_walks_match_the_oracle_on_spec_histories(path) -> None:
    model = load_model(path)
    for seed in range(WALKS):
        w = walk(model, seed, 120)
        if not w.faithful:
            continue  # not representable in a log (see Walk.faithful); counted below
        found = check_log(w.log, list(CHECKS))
        for name in PREFIX_SAFE:
            first = next((k for k, h in enumerate(w.histories) if violated(name, h)), None)
            v = found[name]
            assert (None if v is None else w.step_of_event[v.at]) == first, (seed, name, v and v.sentence)
        if w.terminal:
            assert (found["eventual_delivery"] is not None) == violated("eventual_delivery", w.histories[-1]), seed


CORRECT = [p for p in MODELS if "mutant" not in p.stem]


@pytest.mark.parametrize("path", CORRECT, ids=[p.stem for p in CORRECT])
def test_no_correct_log_flagged(path) -> None:
    model = load_model(path)
    holds = [p for p, e in model.expect.items() if e == "holds" and p in CHECKS]
    if not holds:
        pytest.skip("the model expects none of validate's properties to hold")
    for seed in range(3 * WALKS):
        w = walk(model, 1000 + seed, 200)
        if not w.faithful:
            continue
        found = check_log(w.log, holds)
        for name in holds:
            if name == "eventual_delivery" and not w.terminal:
                continue  # a walk cut short leaves messages in flight
            assert found[name] is None, (seed, name, found[name].sentence)


FAULTY = [p for p in MODELS if any(e == "violated" and n in CHECKS for n, e in load_model(p).expect.items())]

# Until the property library's new definitions land (issue #15: they add ``integrity``),
# its fifo and causal count a repeated delivery as out of order (the last one is read);
# validate follows the new definitions, under which only integrity sees a repeat.
OLD_LIBRARY = not hasattr(properties, "integrity")


def _label_is_ground_truth(name: str, w) -> bool:
    if not OLD_LIBRARY or name not in ("fifo", "causal"):
        return True
    return check(w.log, "integrity") is None


@pytest.mark.parametrize("path", FAULTY, ids=[p.stem for p in FAULTY])
def test_faulty_logs_caught(path) -> None:
    """Whenever the model's own check calls a generated log violated, so does validate:
    random walks, and the counterexample of each property a breadth-first search finds
    violated; every expected safety violation is among them."""
    model = load_model(path)
    walks = [walk(model, seed, 200) for seed in range(3 * WALKS)]
    found_by_search = trace_logs(model, check_model(model, Options(progress=False)), {"check": True})
    expected = {n for n, e in model.expect.items() if e == "violated" and n in PREFIX_SAFE}
    shown = {w.log.header["generated"]["property"] for w in found_by_search if w.faithful}
    seen: set[str] = set()
    for w in walks + found_by_search:
        if not w.faithful:
            continue
        bad = {n for n, verdict in w.verdicts.items()
               if verdict == "violated" and n in CHECKS and _label_is_ground_truth(n, w)}
        found = check_log(w.log, sorted(bad))
        missed = [n for n in bad if found[n] is None]
        assert not missed, (w.log.source, missed)
        seen |= bad
    must = {n for n in expected & shown
            if all(_label_is_ground_truth(n, w) for w in found_by_search if w.log.header["generated"]["property"] == n)}
    assert must <= seen, f"no generated log shows the expected violation of {sorted(must - seen)}"


def test_walks_with_grown_destinations_are_marked(monkeypatch) -> None:
    """A spec that addresses a message to more peers after its send has its walks marked, and
    they are few. No built-in spec does so since issue 35 (bus1_impl's late joiners are not
    destinations of a destruction: no walk of bus1-impl-handle-race grows), so the walks are
    grown by recording them again as the spec did before."""
    from ordercheck.specs import bus1_impl

    model = load_model(next(p for p in MODELS if p.stem == "bus1-impl-handle-race"))
    assert not any(walk(model, seed, 200).grown for seed in range(40))
    join = bus1_impl.World.join

    def join_as_destination(self, d, node):
        case = join(self, d, node)
        dmid = self.destroy_mid(node, self.hget(self.spec.owners[node], node)[2])
        if dmid is not None:
            sent, logs = self.ghost
            s, k = divmod(dmid, self.spec.stride)
            dmask, past = sent[s][k]
            row = sent[s][:k] + ((dmask | 1 << d, past),) + sent[s][k + 1:]
            self.ghost = (sent[:s] + (row,) + sent[s + 1:], logs)
        return case

    monkeypatch.setattr(bus1_impl.World, "join", join_as_destination)
    walks = [walk(model, seed, 200) for seed in range(40)]
    grown = [w for w in walks if w.grown]
    assert grown and len(grown) < len(walks)
    for w in grown:
        final = {m.name: m.dests for m in w.histories[-1].messages.values()}
        assert any(len(final[name]) > len(w.log.msg_dests[w.log.msg_name.index(name)]) for name in w.grown)


def test_walks_with_unlogged_pasts_are_marked() -> None:
    """bus1_impl lets a user that sees BUS1_HANDLE_INVALID join the destruction's causal
    past with no event; walks where a message's past holds such knowledge are marked,
    and the spec's past of each marked message differs from the one the log gives."""
    from ordercheck.checker.validate.log import causal_pasts

    model = load_model(next(p for p in MODELS if p.stem == "bus1-impl-life-transfer-invalid"))
    walks = [walk(model, seed, 120) for seed in range(WALKS)]
    hidden = [w for w in walks if w.hidden]
    assert hidden and len(hidden) < len(walks)
    assert all(not w.faithful and not w.grown for w in hidden)
    for w in walks:
        final = {m.name: m for m in w.histories[-1].messages.values()}
        ids = {m.id: m.name for m in final.values()}
        pasts = causal_pasts(w.log)
        differs = {w.log.msg_name[m] for m in range(w.log.messages)
                   if {ids[x] for x in final[w.log.msg_name[m]].past} != {w.log.msg_name[x] for x in pasts[m]}}
        assert differs == set(w.hidden), w.log.source
    # the walks the model's causal check flags are exactly those the log cannot show
    assert {w.log.source for w in walks if w.verdicts.get("causal") == "violated"} <= {w.log.source for w in hidden}


def test_simulate_counterexamples_become_logs() -> None:
    model = load_model(next(p for p in MODELS if p.stem == "sequencer-mutant-no-hold-back"))
    logs = counterexample_logs(model, 200, 60, 0)
    assert {w.log.header["generated"]["property"] for w in logs} >= {"total"}
    for w in logs:
        assert w.log.header["generated"]["simulate"] == {"runs": 200, "depth": 60, "seed": 0}
        prop = w.log.header["generated"]["property"]
        if prop in CHECKS:
            assert check_log(w.log, [prop])[prop] is not None


@pytest.mark.parametrize("fault", [None, "fifo", "total"])
def test_synthetic_workload(fault) -> None:
    log = synthetic_log(4000, 5, seed=3, fault=fault)
    assert len(log) >= 4000
    found = {n: v is not None for n, v in check_log(log, list(CHECKS)).items()}
    # a sequencer's deliveries follow one global send order, so the queues are FIFO in
    # it (global_lock holds); messages still cross in flight, so synchronous breaks
    broken = {
        None: {"synchronous"},
        "fifo": {"fifo", "causal", "total", "total_global", "total_prefix", "global_lock", "synchronous"},
        "total": {"total", "total_global", "total_prefix", "global_lock", "synchronous"},
    }[fault]
    assert {n for n, bad in found.items() if bad} == broken


ONLY_NEW = {
    "synchronous-3-mutant-no-permission": "synchronous",
    "synchronous-3-fifo-mutant-no-permission": "synchronous",
    "synchronous-tlc-fifo-mutant-no-permission": "synchronous",
    "bus1-mutant-no-sync-sender": "global_lock",
}


@pytest.mark.parametrize("stem", sorted(ONLY_NEW))
def test_mutants_only_global_lock_or_synchronous_catch(stem: str) -> None:
    """Mutants whose bug fifo, causal and the pairwise total order cannot see: the
    search's counterexample for the property, as a log, is flagged by validate for that
    property while those three hold on it."""
    name = ONLY_NEW[stem]
    model = load_model(next(p for p in MODELS if p.stem == stem))
    assert model.expect[name] == "violated"
    logs = [w for w in trace_logs(model, check_model(model, Options(progress=False)), {"check": True})
            if w.log.header["generated"]["property"] == name]
    assert logs and all(w.faithful for w in logs)
    for w in logs:
        found = check_log(w.log, [name, "fifo", "causal", "total"])
        assert found[name] is not None, w.log.source
        assert found["fifo"] is None and found["causal"] is None and found["total"] is None

"""Solo steps (PartialOrder.solo_step): a delivery of a settled queue head, expanded alone.

Lamport total order and Skeen name, in a state, a delivery that no run of other steps
can disable or fail to commute with (:meth:`ordercheck.specs.lamport_total.LamportTotal.settled`,
:meth:`ordercheck.specs.skeen.Skeen.settled`). Checked here: that condition itself on sampled
states of Hypothesis-drawn configurations (faults and ablations included), that the
check catches a settledness test made too weak, that the engine's graph with solo steps
gives the verdicts of the full graph and is smaller, and that solo steps are not taken
where a property needs visibility.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ordercheck.checker.engine.reduce import Expander, Reductions
from ordercheck.checker.loading.modelfile import model_from_dict
from ordercheck.specs.lamport_total import CHANS, CLOCKS, MSG, QUEUES, LamportTotal
from ordercheck.specs.skeen import Skeen
from tests.test_peer_reductions import LIBRARY, config_strategy, model_of
from tests.test_reductions import reachable, run, step, verdicts


def solo_failure(spec, s, rnd, walks: int = 3, steps: int = 8):
    """Check the solo condition at ``s``: for the step ``t`` :meth:`solo_step` names and
    random runs ``w`` of other steps, ``t`` is enabled after every prefix of ``w``, and
    ``w`` then ``t`` reaches the state ``t`` then ``w`` does. Returns the first failure
    ``(t, w)`` or ``None``, and how many non-empty runs were tried."""
    out = list(spec.next_states(s))
    i = spec.solo_step(s, out)
    if i is None:
        return None, 0
    t = out[i][0]
    checked = 0
    for _walk in range(walks):
        u, labels = s, []
        v = out[i][1]
        for _k in range(rnd.randint(1, steps)):
            options = [lab for lab, _x in spec.next_states(u) if lab != t]
            if not options:
                break
            lab = rnd.choice(options)
            labels.append(lab)
            u = step(spec, u, lab)
            v = step(spec, v, lab) if v is not None else None
            after = step(spec, u, t)
            if after is None or v is None or after != v:
                return (t, labels), checked
        checked += bool(labels)
    return None, checked


configs = config_strategy(["lamport_total", "skeen"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs, st.randoms(use_true_random=False))
def test_solo_steps_commute_with_other_runs(cfg: dict, rnd) -> None:
    spec = model_of(cfg).spec
    states = reachable(spec, 800)
    for s in rnd.sample(states, k=min(80, len(states))):
        failure, _n = solo_failure(spec, s, rnd, walks=2, steps=10)
        assert failure is None, (cfg, s, failure)


# Three peers, so that a broadcast in transit or still to come may overtake a head.
THREE = {
    "lamport_total": {"peers": 3, "sends": 1, "senders": "ab"},
    "skeen": {"peers": 3, "script": {"a": ["bc"], "b": ["ac"], "c": ["ab"]}},
}


def checked_solos(spec, seed: int, sample: int = 300) -> tuple[int, int]:
    """``(failures, non-empty runs tried)`` of :func:`solo_failure` on sampled states."""
    rnd = random.Random(seed)
    states = reachable(spec, 4000)
    failures = checked = 0
    for s in rnd.sample(states, min(sample, len(states))):
        failure, n = solo_failure(spec, s, rnd, walks=3, steps=12)
        failures += failure is not None
        checked += n
    return failures, checked


@pytest.mark.parametrize("name", sorted(THREE))
@pytest.mark.parametrize("links", ["fifo", "unordered"])
def test_solo_check_meets_solo_steps(name: str, links: str) -> None:
    """The check above is not vacuous: on three peers it meets solo steps with runs of
    other steps to commute them with, and finds no failure."""
    constants = dict(THREE[name])
    if name == "lamport_total":
        constants["fifo_links"] = links == "fifo"
    else:
        constants["channel"] = links
    spec = model_from_dict({"spec": name, "constants": constants}).spec
    failures, checked = checked_solos(spec, 5)
    assert failures == 0
    assert checked > 10


def test_check_catches_a_lamport_head_overtaken(monkeypatch) -> None:
    """Settledness without the broadcasts in transit: on unordered links a broadcast
    with a smaller timestamp, already on its way, overtakes the head; caught."""

    def blind(self, state, q):
        if self.remaining_sends(state, q):
            return False
        head = state[QUEUES][q][0][:2]
        return all(
            not (p != q and self.remaining_sends(state, p) and (state[CLOCKS][p] + 1, p) <= head)
            for p in range(self.peers)
        )

    spec = model_from_dict({"spec": "lamport_total", "constants": dict(THREE["lamport_total"], fifo_links=False)}).spec
    assert any(
        kind == MSG for s in reachable(spec, 4000) for (_k, msgs) in s[CHANS] for kind, _m, _t in msgs
    )
    assert checked_solos(spec, 5)[0] == 0
    monkeypatch.setattr(LamportTotal, "settled", blind)
    assert checked_solos(spec, 5)[0] > 0


def test_check_catches_a_skeen_delivery_before_a_send(monkeypatch) -> None:
    """Settledness that forgets the peer's own sends still to come (a send reads the
    knowledge a delivery adds to: the message's causal past changes); caught."""
    spec = model_from_dict({"spec": "skeen", "constants": {"peers": 3, "script": {"a": ["bc"], "b": ["a", "c"]}}}).spec
    assert checked_solos(spec, 2)[0] == 0
    monkeypatch.setattr(Skeen, "settled", lambda self, state, q: state[5][q] >= state[7][q][0][0])
    assert checked_solos(spec, 2)[0] > 0


# Configurations of a few hundred to a few thousand states, checked unreduced too.
SMALL = {
    "lamport_total": {"peers": 2, "sends": 1},
    "skeen": {"peers": 3, "script": {"a": ["bc"], "b": ["ac"]}},
}
# An ablation flag to turn off, "duplicates" (a duplicating channel), or None.
ABLATED = {
    "lamport_total": [None, "wait_acks", "duplicates", "discard_duplicates"],
    "skeen": [None, "take_max", "duplicates"],
}


@pytest.mark.parametrize(
    "name,ablation", [(name, a) for name in sorted(ABLATED) for a in ABLATED[name]]
)
def test_solo_steps_keep_verdicts_and_reduce(name: str, ablation: str | None, monkeypatch) -> None:
    """Each checked property stable or decided at the end: partial-order reduction
    with solo steps gives the full graph's verdicts (violations of the ablations
    included) in fewer states than without them."""
    constants = dict(SMALL[name])
    if ablation in ("duplicates", "discard_duplicates"):
        constants["duplicates"] = 1
        constants.pop("script", None)
        constants.pop("senders", None)
        constants.update(peers=2, sends=1)
    if ablation and ablation != "duplicates":
        constants[ablation] = False
    model = model_from_dict({"spec": name, "constants": constants, "check": {"properties": LIBRARY}})
    full = run(model, symmetry=False, por=False)
    solo = run(model, symmetry=False, por=True)
    assert verdicts(solo) == verdicts(full)
    monkeypatch.setattr(type(model.spec), "solo_step", lambda self, state, succ: None)
    whole = run(model, symmetry=False, por=True)
    assert verdicts(whole) == verdicts(full)
    if "violated" not in verdicts(full).values():  # else a search may stop once decided
        assert solo.stats.distinct_states < whole.stats.distinct_states < full.stats.distinct_states


def test_no_solo_steps_under_visibility(monkeypatch) -> None:
    """Where a property needs visibility (a nonzero visible mask), the engine does not
    ask for solo steps."""
    spec = model_from_dict({"spec": "lamport_total", "constants": THREE["lamport_total"]}).spec
    states = reachable(spec, 300)
    asked = []
    monkeypatch.setattr(LamportTotal, "solo_step", lambda self, state, succ: asked.append(state))
    Expander(spec, Reductions(por=True, visible=spec.visible_mask(("history",)))).expand(states)
    assert not asked
    Expander(spec, Reductions(por=True)).expand(states)
    assert asked

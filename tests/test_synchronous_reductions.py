"""Partial-order reduction of Garg's synchronous ordering: the channels a peer *hears*.

:meth:`ordercheck.specs.synchronous.Synchronous.hears` says, per peer, from which senders a run of
the other peers alone may bring it a new step (a passive peer only from its partner,
an active one from the peers that may still send it an application message or answer
a request of its own); the peer reads no other incoming channel in the footprints.
Checked here, on Hypothesis-drawn configurations (2 to 4 peers, `sends` or scripts,
FIFO or unordered channels, losses, copies, signals, the `request_permission` and
`wait_for_ack` ablations):

* that claim itself, on sampled states and random runs of the other peers;
* the stubborn-set condition (:func:`tests.test_reductions.commutation_failure` and
  :func:`tests.test_peer_reductions.enabling_failure`);
* the same verdicts reduced and unreduced, for every property of the spec (so
  `synchronous`, under visibility) and for the stable library alone;

and that each check catches a weakened rule: an active peer that forgets the
permission it asks for, a granted peer that forgets a permission copy still in transit.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ordercheck.checker.engine.reduce import stubborn
from ordercheck.checker.loading.modelfile import model_from_dict
from ordercheck.specs.synchronous import ACTIVE, APP, CHANS, DUPS, GRANTED, PROCS, Synchronous
from tests.test_peer_reductions import enabling_failure
from tests.test_reductions import assert_real_traces, commutation_failure, reachable, run, verdicts

LIBRARY = ["fifo", "causal", "integrity", "total", "global_lock", "eventual_delivery", "deadlock_free"]
NAMES = "abcd"


@st.composite
def configs(draw) -> dict:
    """Model constants: all-to-all `sends` or a script of a few unicasts, kept to a few
    thousand states."""
    peers = draw(st.integers(2, 4))
    fault = draw(st.sampled_from([None, None, "lossy", "duplicates"]))
    c: dict = {"peers": peers, "channel": draw(st.sampled_from(["fifo", "unordered"]))}
    if draw(st.booleans()) and peers < 4:
        c["sends"] = 1 if peers == 3 or fault else draw(st.integers(1, 2))
    else:
        total = draw(st.integers(1, 3 if fault or peers == 4 else 4))
        script: dict[str, list[str]] = {}
        if fault == "duplicates" and draw(st.booleans()):
            # Two small messages a -> b: a copy of the first permission may carry the second.
            script["a"] = ["b", "b"]
            total -= 1
        for _ in range(total):
            src = draw(st.integers(0, peers - 1))
            dst = draw(st.integers(0, peers - 2))
            dst += dst >= src
            script.setdefault(NAMES[src], []).append(NAMES[dst])
        c["script"] = script
    if fault == "lossy":
        c["lossy"] = True
    elif fault == "duplicates":
        c["duplicates"] = 1
    elif peers == 2:
        c["signals"] = draw(st.integers(0, 1))
    ablation = draw(st.sampled_from([None, None, "request_permission", "wait_for_ack"]))
    if ablation:
        c[ablation] = False
    return c


def spec_of(constants: dict) -> Synchronous:
    return model_from_dict({"spec": "synchronous", "constants": constants}).spec


def source(spec: Synchronous, label: tuple) -> int | None:
    """The sender of the message a step of the peer ``label[1]`` takes, or ``None``
    for a step that takes none (a send it starts, a signal)."""
    kind = label[0]
    if kind in ("ack", "grant"):
        return label[2]
    if kind == "deliver":
        return label[2] // spec.stride
    if kind == "send" and label[3] >> label[1] + 1:  # a small message: sent on taking the permission
        dest = label[3].bit_length() - 1
        return dest if spec.request_permission else None
    return None


def hears_failure(spec: Synchronous, s: tuple, rnd: random.Random, walks: int = 3, steps: int = 8):
    """Check :meth:`~ordercheck.specs.synchronous.Synchronous.hears` at ``s``: after random runs of
    the peers other than ``p``, every step of ``p`` not enabled at ``s`` takes a message
    from a peer ``p`` hears. Returns ``(p, run, label)`` for the first failure or
    ``None``, and how many non-empty runs were tried. States where losses or copies
    may happen are skipped (the footprints ignore ``hears`` there)."""
    if spec.lossy or s[DUPS]:
        return None, 0
    heard = spec.hears(s)
    before = {label for label, _t in spec.next_states(s)}
    checked = 0
    for p in range(spec.peers):
        for _walk in range(walks):
            u, labels = s, []
            for _k in range(rnd.randint(1, steps)):
                options = [(lab, t) for lab, t in spec.next_states(u) if spec.actor(lab) != p]
                if not options:
                    break
                lab, u = rnd.choice(options)
                labels.append(lab)
                for label, _t in spec.next_states(u):
                    if spec.actor(label) != p or label in before:
                        continue
                    src = source(spec, label)
                    if src is None or not heard[p] >> src & 1:
                        return (p, labels, label), checked
            checked += bool(labels)
    return None, checked


def failures(spec: Synchronous, seed: int, sample: int = 150, limit: int = 3000) -> tuple[int, int, int]:
    """``(hears failures, stubborn-set failures, non-empty runs tried)`` on sampled
    states of ``spec``."""
    rnd = random.Random(seed)
    states = reachable(spec, limit)
    bad_hears = bad_sets = checked = 0
    for s in rnd.sample(states, min(sample, len(states))):
        h, n = hears_failure(spec, s, rnd, walks=2, steps=8)
        bad_hears += h is not None
        checked += n
        c, n = commutation_failure(spec, s, rnd, walks=2, steps=8)
        bad_sets += c is not None or enabling_failure(spec, s, rnd, walks=2) is not None
        checked += n
    return bad_hears, bad_sets, checked


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), st.randoms(use_true_random=False))
def test_hears_and_stubborn_sets_on_sampled_states(constants: dict, rnd) -> None:
    spec = spec_of(constants)
    states = reachable(spec, 600)
    for s in rnd.sample(states, k=min(50, len(states))):
        failure, _n = hears_failure(spec, s, rnd, walks=2, steps=8)
        assert failure is None, (constants, s, failure)
        failure, _n = commutation_failure(spec, s, rnd, walks=2, steps=8)
        assert failure is None, (constants, s, failure)
        assert enabling_failure(spec, s, rnd, walks=2) is None, (constants, s)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_same_verdicts_reduced_and_unreduced(constants: dict) -> None:
    """Every property of the spec (`synchronous` needs visibility), and the stable
    library with `deadlock_free` (no visibility); traces replay unreduced."""
    for props in (None, LIBRARY):
        data: dict = {"spec": "synchronous", "constants": constants}
        if props:
            data["check"] = {"properties": props}
        model = model_from_dict(data)
        full = run(model, symmetry=False, por=False)
        reduced = run(model, symmetry=False, por=True)
        assert verdicts(reduced) == verdicts(full), (constants, props)
        if "violated" not in verdicts(full).values():  # else a search may stop once decided
            assert reduced.stats.distinct_states <= full.stats.distinct_states
        assert_real_traces(model, reduced)


# A hub: the smallest peer asks permission, the bigger ones send big messages, so the
# hub is granted, awaits nothing, and takes big messages in turn.
HUB = {"peers": 4, "script": {"a": ["b", "b"], "c": ["b"], "d": ["b"]}}


def test_checks_meet_passive_peers_and_proper_sets() -> None:
    """The checks above are not vacuous: on the hub they try many runs, meet states
    where a peer hears fewer than all others (passive ones included), and stubborn
    sets that leave steps out; and the hub reduces."""
    spec = spec_of(HUB)
    bad_hears, bad_sets, checked = failures(spec, 1)
    assert (bad_hears, bad_sets) == (0, 0)
    assert checked > 100
    states = reachable(spec, 3000)
    every = (1 << spec.peers) - 1
    narrow = [s for s in states if any(h != every & ~(1 << p) for p, h in enumerate(spec.hears(s)))]
    passive = [s for s in narrow if any(mode != ACTIVE for mode, _j, _a in s[PROCS])]
    assert narrow and passive
    proper = 0
    for s in states:
        out = spec.next_states(s)
        found = stubborn(spec, s, out, 0)
        proper += found is not None and len(found[0]) < len(out)
    assert proper > len(states) // 4
    model = model_from_dict({"spec": "synchronous", "constants": HUB, "check": {"properties": LIBRARY}})
    full = run(model, symmetry=False, por=False)
    reduced = run(model, symmetry=False, por=True)
    assert verdicts(reduced) == verdicts(full)
    assert 3 * reduced.stats.distinct_states < full.stats.distinct_states


REAL_HEARS = Synchronous.hears


def _forgets_permission(self, state):
    """An active peer that forgets to hear the peer it asks for permission."""
    out = list(REAL_HEARS(self, state))
    for p, (mode, _j, asking) in enumerate(state[PROCS]):
        if mode == ACTIVE and asking and not self.sends_left_mask(state, asking - 1) >> p & 1:
            out[p] &= ~(1 << (asking - 1))
    return tuple(out)


def _forgets_copies(self, state):
    """A granted peer that hears nobody once its partner's small message is in transit,
    forgetting a permission copy still on its way back."""
    out = list(REAL_HEARS(self, state))
    for p, (mode, j, _a) in enumerate(state[PROCS]):
        if mode == GRANTED and any(k == APP for k, _m in self.net.between(state[CHANS], j, p)):
            out[p] = 0
    return tuple(out)


@pytest.mark.parametrize(
    "weakened,constants",
    [
        (_forgets_permission, {"peers": 3, "script": {"a": ["c"], "b": ["a"]}, "channel": "unordered"}),
        (
            _forgets_copies,
            {"peers": 2, "script": {"a": ["b", "b"]}, "channel": "unordered", "duplicates": 1},
        ),
    ],
    ids=["active-peer-forgets-permission", "granted-peer-forgets-copy"],
)
def test_checks_catch_a_weakened_rule(weakened, constants: dict, monkeypatch) -> None:
    """Each weakening makes a peer deaf to a sender that can still bring it a step;
    the hears check and the stubborn-set check both find it, and find nothing with the
    rule as it is."""
    spec = spec_of(constants)
    assert failures(spec, 2, sample=300)[:2] == (0, 0)
    monkeypatch.setattr(Synchronous, "hears", weakened)
    bad_hears, bad_sets, _n = failures(spec, 2, sample=300)
    assert bad_hears > 0
    assert bad_sets > 0


@pytest.mark.parametrize("wait_for_ack", [True, False])
def test_fan_in_verdicts_and_their_ablation(wait_for_ack: bool) -> None:
    """The benchmark's pattern, smaller (b and c send two big messages each to a): the
    library holds reduced and unreduced, and without waiting for acks a's deliveries
    break FIFO order there, reduced and unreduced alike."""
    constants = {"peers": 3, "script": {"b": ["a", "a"], "c": ["a", "a"]}, "wait_for_ack": wait_for_ack}
    model = model_from_dict({"spec": "synchronous", "constants": constants, "check": {"properties": LIBRARY}})
    full = run(model, symmetry=False, por=False)
    reduced = run(model, symmetry=False, por=True)
    assert verdicts(reduced) == verdicts(full)
    assert verdicts(full)["fifo"] == ("holds" if wait_for_ack else "violated")
    if wait_for_ack:
        assert set(verdicts(full).values()) == {"holds"}
        assert reduced.stats.distinct_states < full.stats.distinct_states
    assert_real_traces(model, reduced)

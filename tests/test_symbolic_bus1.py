"""The Z3 encoding of bus1 agrees with the explicit spec, one step at a time.

For states sampled along random runs of the explicit spec, the encoded state's
successors under Z3 (every model of the transition relation with the pre-state fixed)
must equal the encoded explicit successors, action labels included.
"""

from __future__ import annotations

import random

import pytest

from ordercheck.checker.loading.registry import spec_class
from ordercheck.checker.symbolic.encodings import NoEncoding, Stepper, symbolic_class
from ordercheck.specs.bus1_symbolic import Bus1Ghosts, SymbolicBus1


def sampled_states(spec, walks: int, seed: int, every: int = 1):
    """States along random runs, each with the proof ghosts the run has built."""
    rng = random.Random(seed)
    for _ in range(walks):
        state, ghosts = spec.init_states()[0], Bus1Ghosts(spec.peers)
        step = 0
        while True:
            succ = spec.next_states(state)
            if step % every == 0 or not succ:
                yield state, ghosts, succ
            if not succ:
                break
            label, nxt = rng.choice(succ)
            ghosts, state = ghosts.after(state, label, nxt), nxt
            step += 1


def explicit_successors(sym, state, ghosts, succ):
    out = set()
    for label, nxt in succ:
        g = ghosts.after(state, label, nxt)
        out.add((label, tuple(sorted(sym.encode(nxt, g.ts_of, g.last).items()))))
    return out


CONFIGS = [
    ({"peers": 3, "sends": 1, "signals": 1}, 2, 1),
    ({"peers": 3, "sends": 2, "destinations": "unicast"}, 1, 3),
    ({"peers": 3, "sends": 1, "block_destinations": False, "sync_sender": False}, 1, 2),
    ({"peers": 3, "sends": 1, "sync_receivers_before_queueing": False, "tiebreak_by_sender": False}, 1, 2),
    ({"peers": 3, "script": {"a": ["bc", "c"], "b": ["a"]}, "signals": 1}, 1, 2),
]


@pytest.mark.parametrize(("constants", "walks", "every"), CONFIGS)
def test_successors_agree(constants: dict, walks: int, every: int) -> None:
    spec = spec_class("bus1")(**constants)
    sym = SymbolicBus1(spec, bounded=True)
    stepper = Stepper(sym)
    checked = 0
    for state, ghosts, succ in sampled_states(spec, walks, seed=len(str(constants)), every=every):
        want = explicit_successors(sym, state, ghosts, succ)
        got = stepper.successors(sym.encode(state, ghosts.ts_of, ghosts.last))
        assert {lab for lab, _ in got} == {lab for lab, _ in want}, spec.describe(state)
        assert got == want, spec.describe(state)
        checked += 1
    assert checked >= 8


def test_a_wrong_encoding_is_caught() -> None:
    """The comparison can fail: an encoding whose tick forgets the sender sync differs."""
    spec = spec_class("bus1")(peers=3, sends=1)
    wrong = SymbolicBus1(spec_class("bus1")(peers=3, sends=1, sync_sender=False), bounded=True)
    stepper = Stepper(wrong)
    differs = False
    for state, ghosts, succ in sampled_states(spec, 4, seed=7, every=2):
        got = stepper.successors(wrong.encode(state, ghosts.ts_of, ghosts.last))
        if got != explicit_successors(wrong, state, ghosts, succ):
            differs = True
            break
    assert differs


def test_encoding_lookup() -> None:
    assert symbolic_class(spec_class("bus1")()) is SymbolicBus1
    with pytest.raises(NoEncoding):
        symbolic_class(spec_class("retransmit")())

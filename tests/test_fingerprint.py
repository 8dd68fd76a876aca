"""Fingerprints are the same in every process, whatever its hash seed."""

from __future__ import annotations

import os
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from ordercheck.checker.engine.fingerprint import check_vocabulary, collision_probability, fingerprint

STATE = ((0, 3, 1), ((1, 2, 5), (7, 1 << 20, 3)), frozenset({4, 9}), True, (), (-1, -2))


def test_same_fingerprint_under_other_hash_seeds():
    here = fingerprint(STATE)
    code = f"from ordercheck.checker.engine.fingerprint import fingerprint; print(fingerprint({STATE!r}))"
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        assert int(out.stdout) == here


states = st.recursive(st.integers(-(2**40), 2**40) | st.booleans(), lambda inner: st.tuples(inner, inner), max_leaves=12)


@given(states)
def test_fingerprint_is_unsigned_64_bit_and_vocabulary_accepts(state):
    fp = fingerprint(state)
    assert 0 <= fp < 2**64
    assert check_vocabulary(state) is None


def test_vocabulary_rejects_salted_or_address_hashed_values():
    assert "str" in check_vocabulary((1, ("x",)))
    assert "NoneType" in check_vocabulary((None,))
    assert "state[1][0]" in check_vocabulary((1, (b"x",)))
    assert "state[2][1] is a list" in check_vocabulary((1, frozenset({2}), (3, [4])))
    assert "float" in check_vocabulary(frozenset({(1, 2.5)}))


def test_vocabulary_takes_subclasses_of_its_types_as_the_types():
    """The fast path tests exact types first; a subclass of int or tuple (an IntEnum, a
    NamedTuple) is still taken as before, and its items still checked."""
    import enum
    from typing import NamedTuple

    class Colour(enum.IntEnum):
        RED = 1

    class Pair(NamedTuple):
        a: int
        b: tuple

    assert check_vocabulary((Colour.RED, Pair(1, (2, True)))) is None
    assert "state[1][1][0] is a str" in check_vocabulary((Colour.RED, Pair(1, ("x",))))


def test_collision_probability_like_tlc():
    assert collision_probability(0, 0) == 0.0
    assert collision_probability(1000, 3000) == 1000 * 2000 / 2**64

"""Stable 64-bit state fingerprints.

A state is built from ``int``, ``bool``, ``tuple`` and ``frozenset`` only. CPython
hashes those without any per-process randomisation (hash randomisation applies to
``str``, ``bytes`` and ``datetime``; ``None`` and plain objects hash by address): an int
hashes to itself modulo 2**61 - 1 and a tuple combines its items with the xxHash
round, so the same state has the same 64-bit hash in every process and on every 64-bit
CPython since 3.8. The fingerprint is that hash mixed once more (the splitmix64
finaliser) and taken as an unsigned 64-bit number. :func:`check_vocabulary` refuses
states that contain anything else, so a spec cannot silently lose this guarantee.
"""

from __future__ import annotations

from typing import Any

MASK64 = (1 << 64) - 1


def fingerprint(state: Any) -> int:
    """The unsigned 64-bit fingerprint of ``state`` (see the module docstring)."""
    z = hash(state) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def check_vocabulary(state: Any, path: str = "state") -> str | None:
    """``None`` if ``state`` is made only of ints, bools, tuples and frozensets.

    Otherwise a sentence naming the first offending part, for the spec's author.
    """
    if _plain(state):
        return None
    return _problem(state, path)


def _plain(state: Any) -> bool:
    """Whether ``state`` is made only of ints, bools, tuples and frozensets (the check
    without the paths: most states pass, and building a path per item cost more than
    the check)."""
    if isinstance(state, (tuple, frozenset)):
        return _plain_items(state)
    return isinstance(state, int)  # bool is an int


def _plain_items(items: tuple | frozenset) -> bool:
    """:func:`_plain` for every item of a tuple or frozenset: the exact types tested
    first (most items are ints and tuples), subclasses as :func:`_plain` takes them."""
    for item in items:
        kind = type(item)
        if kind is int or kind is bool:
            continue
        if kind is tuple or kind is frozenset:
            if not _plain_items(item):
                return False
        elif not _plain(item):
            return False
    return True


def _problem(state: Any, path: str) -> str | None:
    """The sentence for the first part of ``state`` that :func:`_plain` refuses, reached
    by ``path``; ``None`` if there is none."""
    if isinstance(state, int):
        return None
    if isinstance(state, (tuple, frozenset)):
        for i, item in enumerate(state):
            problem = _problem(item, f"{path}[{i}]")
            if problem:
                return problem
        return None
    return (
        f"{path} is a {type(state).__name__} ({state!r}); states may hold only ints, bools, "
        "tuples and frozensets, whose hashes are the same in every process (use an int "
        "code instead of a string or None)"
    )


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's optimistic estimate of a fingerprint collision: n * (m - n) / 2**64."""
    if distinct <= 0:
        return 0.0
    return distinct * max(generated - distinct, 0) / float(1 << 64)

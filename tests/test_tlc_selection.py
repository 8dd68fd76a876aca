"""Which built-in models the TLC cross-check runs by default (no TLC needed to check it).

The cross-check (``tests/test_tlc_crosscheck.py``) runs a few small models per spec. It
must include, for each spec, a model where the spec's claimed properties can fail, or it
would only ever compare "holds" with "holds" and never a counterexample.
"""

from __future__ import annotations

from tests.test_tlc_crosscheck import MAX_STATES, default_models, model_sizes


def test_each_spec_has_a_model_where_its_claims_fail():
    chosen = default_models()
    sizes = model_sizes()
    assert sizes, "no model small enough for TLC: the cross-check would run nothing"
    for spec, found in sizes.items():
        picked = [(name, mutant, breaks) for _n, name, mutant, breaks in found if name in chosen]
        assert picked, f"{spec}: no model selected"
        assert any(name == found[0][1] for name, _m, _b in picked), f"{spec}: its smallest model is not selected"
        if any(mutant and breaks for _n, _name, mutant, breaks in found):
            assert any(mutant and breaks for _name, mutant, breaks in picked), f"{spec}: no failing mutant selected"
        elif any(breaks for *_rest, breaks in found):
            assert any(breaks for _name, _m, breaks in picked), f"{spec}: no model expecting a violation selected"


def test_the_total_order_protocols_cross_check_a_mutant():
    """The specs whose smallest models are the ones where nothing can go wrong (issue 15):
    the selection includes a mutant for each, within the state limit."""
    chosen = default_models()
    sizes = model_sizes()
    for spec in ("lamport_total", "skeen", "sequencer", "bss", "ses", "matrix", "synchronous", "bus1"):
        mutants = [name for _n, name, mutant, breaks in sizes[spec] if mutant and breaks and name in chosen]
        assert mutants, f"{spec}: no mutant of at most {MAX_STATES} states selected"

"""TLA+ values: reading TLC's printed values and writing them back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ordercheck.tla.values import ModelValue, ValueSyntaxError, parse_value, tla

names = st.sampled_from(["a", "b", "c", "d"]).map(ModelValue)
scalars = st.one_of(st.integers(-50, 10**6), names, st.text("xyz_ \"\\", max_size=6), st.booleans())
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(tuple),
        st.frozensets(st.one_of(st.integers(0, 9), names), max_size=4),
        st.dictionaries(st.sampled_from(["kind", "arg", "msg", "i"]), inner, min_size=1, max_size=3),
        st.dictionaries(names, inner, min_size=1, max_size=3),
    ),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(values)
def test_write_then_read_is_identity(value):
    assert parse_value(tla(value)) == value


def test_reads_tlc_multiline_function_of_records():
    text = """( a :> [i |-> 0, msg |-> <<>>, phase |-> "idle", acc |-> 0] @@
  b :> [i |-> 2, msg |-> <<a, 1>>, phase |-> "blocking", acc |-> 3] )"""
    v = parse_value(text)
    assert v[ModelValue("b")] == {"i": 2, "msg": (ModelValue("a"), 1), "phase": "blocking", "acc": 3}
    assert v[ModelValue("a")]["msg"] == ()


@pytest.mark.parametrize("bad", ["<<1, 2", "[a |-> ]", "(a :> 1 @@)", "1 2", "{1,, 2}"])
def test_rejects_broken_values(bad):
    with pytest.raises(ValueSyntaxError):
        parse_value(bad)

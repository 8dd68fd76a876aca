"""Channel semantics (specs/channels.py): canonical form, FIFO order, losses, duplicates."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ordercheck.checker import ConstantError
from ordercheck.specs.bss import BSS
from ordercheck.specs.channels import EMPTY, Channels, channel_constants

FIFO = Channels(ordered=True)
UNORDERED = Channels(ordered=False)

# A send: (src, dst, message); messages share one shape, as the module asks.
sends_st = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 2), st.tuples(st.integers(0, 3), st.integers(0, 2))),
    max_size=8,
)


def load(net: Channels, sends) -> tuple:
    chans = EMPTY
    for src, dst, msg in sends:
        chans = net.send(chans, src, dst, msg)
    return chans


def contents(chans: tuple) -> Counter:
    return Counter((key, m) for key, msgs in chans for m in msgs)


def assert_canonical(chans: tuple, ordered: bool) -> None:
    keys = [key for key, _ in chans]
    assert keys == sorted(set(keys)), "channels sorted by (src, dst), each once"
    for _key, msgs in chans:
        assert msgs, "empty channels are left out"
        if not ordered:
            assert list(msgs) == sorted(msgs)


@settings(max_examples=40, deadline=None)
@given(sends_st, st.randoms())
def test_unordered_channels_forget_send_order(sends, rnd):
    shuffled = list(sends)
    rnd.shuffle(shuffled)
    a, b = load(UNORDERED, sends), load(UNORDERED, shuffled)
    assert a == b and hash(a) == hash(b)
    assert_canonical(a, ordered=False)


@settings(max_examples=40, deadline=None)
@given(sends_st)
def test_fifo_channels_deliver_in_send_order_per_pair(sends):
    chans = load(FIFO, sends)
    assert_canonical(chans, ordered=True)
    received: dict[tuple[int, int], list] = {}
    while chans:
        options = list(FIFO.receivable(chans))
        assert len(options) == len(chans), "one head per non-empty channel"
        src, dst, msg, chans = options[0]
        received.setdefault((src, dst), []).append(msg)
        assert_canonical(chans, ordered=True)
    expected: dict[tuple[int, int], list] = {}
    for src, dst, msg in sends:
        expected.setdefault((src, dst), []).append(msg)
    assert received == expected


@settings(max_examples=40, deadline=None)
@given(sends_st)
def test_unordered_receive_offers_each_distinct_message_once(sends):
    chans = load(UNORDERED, sends)
    options = list(UNORDERED.receivable(chans))
    offered = [(s, d, m) for s, d, m, _rest in options]
    assert len(offered) == len(set(offered)) == len({(s, d, m) for s, d, m in sends})
    for s, d, m, rest in options:
        assert contents(rest) == contents(chans) - Counter({((s, d), m): 1})
        assert_canonical(rest, ordered=False)


@settings(max_examples=40, deadline=None)
@given(sends_st, st.integers(0, 2))
def test_receivable_filters_by_destination(sends, dst):
    chans = load(UNORDERED, sends)
    assert {(s, m) for s, d, m, _ in UNORDERED.receivable(chans, dst)} == {(s, m) for s, d, m in sends if d == dst}


@settings(max_examples=40, deadline=None)
@given(sends_st, st.booleans())
def test_losses_remove_exactly_one_message(sends, ordered):
    net = Channels(ordered=ordered, lossy=True)
    chans = load(net, sends)
    outcomes = list(net.losses(chans))
    assert len({rest for *_x, rest in outcomes}) == len(outcomes), "each successor once"
    for s, d, m, rest in outcomes:
        assert contents(rest) == contents(chans) - Counter({((s, d), m): 1})
        assert_canonical(rest, ordered)
    assert bool(outcomes) == bool(chans)
    assert list(Channels(ordered=ordered, lossy=False).losses(chans)) == []


@settings(max_examples=40, deadline=None)
@given(sends_st, st.booleans())
def test_duplications_add_one_copy_right_behind(sends, ordered):
    net = Channels(ordered=ordered)
    chans = load(net, sends)
    for s, d, m, more in net.duplications(chans):
        assert contents(more) == contents(chans) + Counter({((s, d), m): 1})
        assert_canonical(more, ordered)
        if ordered:
            before, after = Channels.between(chans, s, d), Channels.between(more, s, d)
            # The copy sits right behind an original of m, everything else in its place.
            spots = [k for k, x in enumerate(before) if x == m and after == before[: k + 1] + (m,) + before[k + 1 :]]
            assert spots, f"no copy of {m} right behind an original: {before} became {after}"


def test_fifo_duplicate_is_received_after_the_original_and_before_later_messages():
    chans = load(FIFO, [(0, 1, (1, 0)), (0, 1, (2, 0))])
    (_s, _d, _m, more), *_ = [o for o in FIFO.duplications(chans) if o[2] == (1, 0)]
    order = []
    while more:
        _s, _d, msg, more = next(iter(FIFO.receivable(more)))
        order.append(msg)
    assert order == [(1, 0), (1, 0), (2, 0)]


def test_in_transit_and_between():
    chans = load(UNORDERED, [(0, 1, (5, 0)), (2, 1, (1, 0)), (0, 1, (3, 0))])
    assert Channels.in_transit(chans) == 3
    assert Channels.between(chans, 0, 1) == ((3, 0), (5, 0))
    assert Channels.between(chans, 1, 0) == ()


def test_constants_choose_the_semantics():
    names = [c.name for c in channel_constants("unordered")]
    assert names == ["channel", "lossy", "duplicates"]
    spec = BSS(channel="fifo", lossy=True)
    assert Channels.from_spec(spec) == Channels(ordered=True, lossy=True)
    assert Channels.from_spec(BSS()) == Channels(ordered=False, lossy=False)
    with pytest.raises(ConstantError):
        BSS(channel="lifo")
    with pytest.raises(ConstantError):
        BSS(duplicates=-1)

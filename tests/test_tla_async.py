"""The TLA+ form of the asynchronous channels shared by sequencer, lamport_total and skeen:
FIFO channels as sequences, unordered ones as bags (message -> copies), both ways."""

from __future__ import annotations

from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from ordercheck.checker.loading.modelfile import load_model, model_from_dict
from ordercheck.specs.channels import Channels
from ordercheck.tla.export import export_model
from ordercheck.tla.values import parse_value, tla
from tests.conftest import MODELS

SEQ_FIFO = load_model(MODELS / "sequencer-2.toml")
SEQ_UNORDERED = load_model(MODELS / "sequencer-tlc-channel-faults.toml")
SEQ_UNORDERED_2 = model_from_dict(
    {"spec": "sequencer", "constants": {"peers": 2, "sends": 2, "channel": "unordered"}}, "<unordered>"
)
_ADAPTERS: dict = {}


def adapter(model):
    if model.path not in _ADAPTERS:
        _ADAPTERS[model.path] = export_model(model).adapter
    return _ADAPTERS[model.path]


def through_tlc_text(adapter, chans: tuple) -> tuple:
    """``chans`` encoded, printed as TLA+, parsed back and decoded."""
    return adapter.decode_chans(parse_value(tla(adapter.encode_chans(chans))))


# A sequencer's wire messages: a message id on the way to the sequencer (process 2),
# <<number, id>> on the way from it. Two peers, two messages each (ids 0..3).
to_sequencer = st.tuples(st.sampled_from([0, 1]), st.just(2), st.integers(0, 3))
from_sequencer = st.tuples(st.just(2), st.sampled_from([0, 1]), st.tuples(st.integers(0, 3), st.integers(0, 3)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(to_sequencer, from_sequencer), max_size=8))
def test_channels_round_trip_in_both_orderings(puts):
    for model in (SEQ_FIFO, SEQ_UNORDERED_2):
        a = adapter(model)
        assert a.spec.stride == 2
        chans: tuple = ()
        for src, dst, msg in puts:
            chans = a.spec.chan.send(chans, src, dst, msg)
        assert through_tlc_text(a, chans) == chans


def test_unordered_channel_is_a_bag_counting_copies():
    a = adapter(SEQ_UNORDERED)
    chans = Channels(ordered=False).send(Channels(ordered=False).send((), 0, 2, 0), 0, 2, 0)
    encoded = a.encode_chans(chans)
    bag = encoded[(a.peers[0], a.procs[2])]
    assert bag == {a.msg(0): 2}
    assert tla(bag) == "(<<a, 1>> :> 2)"
    assert all(v == {} for k, v in encoded.items() if k != (a.peers[0], a.procs[2]))
    assert through_tlc_text(a, chans) == chans


def test_fifo_channel_keeps_order():
    a = adapter(SEQ_FIFO)
    chans = a.spec.chan.send(a.spec.chan.send((), 2, 1, (1, 0)), 2, 1, (0, 1))
    assert a.encode_chans(chans)[(a.procs[2], a.peers[1])] == ((1, a.msg(0)), (0, a.msg(1)))
    assert through_tlc_text(a, chans) == chans


def test_a_duplicated_copy_reaches_the_bag_and_round_trips():
    """Some reachable state of the small faulty model holds two copies of one message in
    an unordered channel: its encoding counts 2 and decodes to the same state."""
    model = SEQ_UNORDERED
    a = adapter(model)
    seen = set(model.spec.init_states())
    queue = deque(seen)
    doubled = []
    while queue:
        state = queue.popleft()
        if any(len(msgs) != len(set(msgs)) for _k, msgs in state[4]):
            doubled.append(state)
        for _label, nxt in model.spec.next_states(state):
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    assert doubled
    for state in doubled:
        text = a.encode_text(state)
        assert ":> 2" in text["chans"]
        assert a.decode({k: parse_value(v) for k, v in text.items()}) == state


def test_no_bound_name_shadows_a_peer():
    """Peers are constants a, b, c, ...: a bound variable, parameter or local
    definition named like one is a redefinition SANY rejects (tree-sitter does not)."""
    from tests.test_tla_export import PARSER as parser
    for spec, peers in (("sequencer", 6), ("lamport_total", 6), ("skeen", 8)):  # the most peers each allows
        model = model_from_dict({"spec": spec, "constants": {"peers": peers, "sends": 1}}, f"<{spec}>")
        export = export_model(model)
        constants = set(export.adapter.names) | {"S"}
        todo = [parser.parse(export.module.encode()).root_node]
        clashes = set()
        while todo:
            node = todo.pop()
            if node.type == "identifier" and node.parent is not None and node.parent.type != "constant_declaration":
                if node.text.decode() in constants:
                    clashes.add(f"{spec}: line {node.start_point[0] + 1}: {node.text.decode()}")
            todo.extend(node.children)
        assert not clashes, sorted(clashes)

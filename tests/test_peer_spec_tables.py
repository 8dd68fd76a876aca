"""PeerSpec's tables read on every state: the send options per count of sends
(``send_table``) and the history key getter answer as the rules they stand for do."""

from __future__ import annotations

import pickle

import pytest

from ordercheck.specs.base import PeerSpec
from ordercheck.specs.bss import BSS
from ordercheck.specs.bus1 import Bus1
from ordercheck.specs.common import send_options


@pytest.mark.parametrize(
    "spec",
    [
        Bus1(peers=3, sends=2, destinations="unicast"),
        Bus1(peers=2, sends=0),
        Bus1(peers=3, script={"a": ["bc", "b"], "c": ["a"]}),
        BSS(peers=3, sends=1, destinations="subsets"),
    ],
    ids=["choices", "no-sends", "script", "holdback"],
)
def test_send_table_is_send_options_for_every_count(spec: PeerSpec) -> None:
    for p in range(spec.peers):
        row = spec.send_table[p]
        assert row[-1] == ()  # the last count a peer reaches offers nothing more
        for count in range(spec.stride + 3):  # past the table's end too: nothing
            expected = send_options(spec.plan, spec.choices, spec.sends, p, count)
            got = row[count] if count < len(row) else ()
            assert got == expected, (p, count)


def test_history_key_getter_reads_the_ghost_as_the_method_does() -> None:
    spec = Bus1(peers=2, sends=1, signals=1)
    assert type(spec).history_key is PeerSpec.history_key  # not overridden: the getter is used
    states = [spec.init_states()[0]]
    for _ in range(4):
        states += [t for s in states for _label, t in spec.next_states(s)]
    for s in states:
        assert spec.history_key(s) is PeerSpec.history_key(spec, s)
    again = pickle.loads(pickle.dumps(spec))  # the worker processes and Spark get the spec pickled
    assert again.history_key(states[-1]) == spec.history_key(states[-1])

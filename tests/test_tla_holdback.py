"""The TLA+ export of the hold-back specs (BSS, SES, matrix clocks): what the generic
export tests do not reach in their first 200 states — duplicates in bags and in FIFO
channels, lost copies — and the one-successor-per-copy rule TLC's counts rely on."""

from __future__ import annotations

from collections import deque

import pytest

from ordercheck.specs.bss import BSS
from ordercheck.specs.holdback import BUFFERS, CHANS
from ordercheck.specs.matrix import Matrix
from ordercheck.specs.ses import SES
from ordercheck.tla.adapters import adapter_for
from tests.tla_helpers import Reader


def everything(spec):
    seen = dict.fromkeys(spec.init_states())
    queue = deque(seen)
    while queue:
        for _label, t in spec.next_states(queue.popleft()):
            if t not in seen:
                seen[t] = None
                queue.append(t)
    return list(seen)


SPECS = [
    BSS(peers=3, script={"a": ["bc"], "b": ["ac"]}, duplicates=1),
    SES(peers=2, sends=2, channel="fifo", duplicates=2, lossy=True),
    Matrix(peers=2, sends=2, duplicates=1, lossy=True),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.name}-{s.channel}")
def test_every_state_round_trips_through_tla(spec):
    adapter = adapter_for(spec.name)(spec)
    states = everything(spec)
    texts = set()
    repeated = False
    read = Reader()
    for state in states:
        text = adapter.encode_text(state)
        assert adapter.decode(read.state(text)) == state
        texts.add(tuple(sorted(text.items())))
        repeated |= any(len(set(ms)) < len(ms) for _k, ms in state[CHANS])
    assert len(texts) == len(states)
    assert repeated, "the model should put two equal copies on one channel"


def test_a_ready_duplicate_gives_one_successor():
    """Two equal held-back copies that become deliverable together are one step, as a
    bag in TLA+ has them (and as ordercheck.specs.channels offers equal copies once)."""
    spec = SPECS[0]
    found = 0
    for state in everything(spec):
        succ = spec.next_states(state)
        assert len(succ) == len(set(succ)), "a successor offered twice"
        for p in range(spec.peers):
            buf = state[BUFFERS][p]
            ready = spec.ready(state, p)
            if len(set(buf)) < len(buf) and ready and any(buf.count(r) > 1 for r in ready):
                found += 1
                assert len(ready) == len(set(ready))
    assert found, "the model should reach a buffer with a duplicate ready to deliver"


def test_channel_kind_is_a_constant_of_the_one_module():
    """One BSS module for both channel kinds: the configuration picks the kind."""
    from ordercheck.checker.loading.modelfile import model_from_dict
    from ordercheck.tla.export import export_model

    texts = set()
    for channel, flag in (("fifo", "TRUE"), ("unordered", "FALSE")):
        model = model_from_dict({"spec": "bss", "constants": {"peers": 2, "channel": channel}}, f"bss-{channel}.toml")
        export = export_model(model)
        assert f"FifoChannels = {flag}" in export.config
        texts.add(export.files["BSS.tla"])
    assert len(texts) == 1

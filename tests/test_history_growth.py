"""Skipping history checks an extension cannot affect (Property.changed_by), and the
paused garbage collector: both change how fast a search runs, never what it finds."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ordercheck.checker import Property
from ordercheck.checker.engine.bfs import search
from ordercheck.checker.engine.evaluate import Evaluator
from ordercheck.checker.engine.memory import collector_paused
from ordercheck.checker.engine.outcome import NO_BOUNDS, Bounds
from ordercheck.checker.loading.modelfile import load_model, model_from_dict
from ordercheck.specs.base import PeerSpec
from ordercheck.specs.bus1 import Bus1
from ordercheck.specs.bus1_impl import Bus1Impl

MODELS = sorted((Path(__file__).resolve().parent.parent / "models").glob("*.toml"))
LIBRARY_PROPS = [
    "fifo", "causal", "integrity", "total", "total_global", "total_prefix", "global_lock", "eventual_delivery",
    "deadlock_free",
]


def successor(spec, state, kind: str):
    return next(t for label, t in spec.next_states(state) if label[0] == kind)


def test_growth_names_the_appended_events() -> None:
    spec = Bus1(peers=2, sends=1, signals=1)
    s0 = spec.init_states()[0]
    key = spec.history_key
    assert spec.history_growth(key(s0), key(s0)) == frozenset()
    s1 = successor(spec, s0, "send")
    assert spec.history_growth(key(s0), key(s1)) == {"send"}
    sig = successor(spec, s0, "signal")
    assert spec.history_growth(key(s0), key(sig)) == {"signal_out", "signal_in"}
    # Run a's send to completion, then b delivers.
    s = s1
    while s[2][0]:
        s = next(t for label, t in spec.next_states(s) if label[1] == 0 and label[0] != "send")
    d = successor(spec, s, "deliver")
    assert spec.history_growth(key(s), key(d)) == {"deliver"}
    assert spec.history_growth(key(s0), key(d)) == {"send", "deliver"}
    # Not an extension: the other way round, or two unrelated branches.
    assert spec.history_growth(key(d), key(s0)) is None
    assert spec.history_growth(key(sig), key(s1)) is None


def test_growth_refuses_a_changed_message() -> None:
    spec = Bus1(peers=2, sends=1)
    s0 = spec.init_states()[0]
    s1 = successor(spec, s0, "send")
    sent, logs = spec.history_key(s1)
    (dests, past), = sent[0]
    forged = ((((dests, past | 2),),) + sent[1:], logs)
    assert spec.history_growth(spec.history_key(s1), forged) is None
    # A send event without its message is not a plain extension either.
    assert spec.history_growth(spec.history_key(s0), (spec.history_key(s0)[0], logs)) is None


def test_specs_with_their_own_history_report_no_growth() -> None:
    spec = Bus1Impl(peers=2, nodes="ab", handles=["b", "a"], script={"a": ["send 1"], "b": ["send 0"]})
    s0 = spec.init_states()[0]
    assert type(spec).history_key is not PeerSpec.history_key
    for _label, t in spec.next_states(s0):
        assert spec.history_growth(spec.history_key(s0), spec.history_key(t)) is None


def test_checks_skip_extensions_they_ignore_and_run_on_the_rest() -> None:
    spec = Bus1(peers=2, sends=1)
    calls: list[int] = []

    def count(h):
        calls.append(1)
        return None

    prop = Property.always("count", count, over="history", changed_by=("deliver",))
    ev = Evaluator(spec, [prop])
    s0 = spec.init_states()[0]
    ev.on_state(s0, spec.history_key(s0), None)
    assert len(calls) == 1
    s1 = successor(spec, s0, "send")
    ev.on_state(s1, spec.history_key(s1), spec.history_key(s0))
    assert len(calls) == 1  # a send cannot change a delivery-only check
    ev.on_state(s1, spec.history_key(s1), None)
    assert len(calls) == 2  # without a parent the check runs
    everything = Property.always("count", count, over="history")
    ev = Evaluator(spec, [everything])
    ev.on_state(s1, spec.history_key(s1), spec.history_key(s0))
    assert len(calls) == 3  # changed_by=None: any event may matter


def test_changed_by_wants_a_collection() -> None:
    with pytest.raises(TypeError, match="collection"):
        Property.always("x", lambda h: None, over="history", changed_by="deliver")


def outcome(spec, props, no_growth: bool, bounds: Bounds = NO_BOUNDS):
    if no_growth:
        spec.history_growth = lambda parent, key: None  # type: ignore[method-assign]
    out = search(spec, props, bounds)
    return {name: (d.index, d.explanation) for name, d in out.decisions.items()}, out.distinct_states


def compare(spec_factory, props_of, bounds: Bounds = NO_BOUNDS) -> None:
    fast = spec_factory()
    slow = spec_factory()
    assert outcome(fast, props_of(fast), False, bounds) == outcome(slow, props_of(slow), True, bounds)


SMALL = [p for p in MODELS if p.stem not in {"bus1-3"}]

# The largest peer model here (93,301 states, a quarter of this file's time) is compared
# over its first 20,000 states: both searches stop at the same state.
BOUNDED = {"lamport-2-two-sends": Bounds(max_states=20_000)}


@pytest.mark.parametrize("path", SMALL, ids=[p.stem for p in SMALL])
def test_builtin_models_decide_the_same_without_skipping(path: Path) -> None:
    model = load_model(path)
    cls = type(model.spec)
    if not (issubclass(cls, PeerSpec) and cls.history is PeerSpec.history and cls.history_key is PeerSpec.history_key):
        pytest.skip(f"{model.spec.name} keeps its own history: nothing is skipped")
    compare(lambda: load_model(path).spec, lambda spec: load_model(path).properties, BOUNDED.get(path.stem, NO_BOUNDS))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    spec_name=st.sampled_from(["bus1", "fifo"]),
    peers=st.integers(2, 3),
    destinations=st.sampled_from(["others", "unicast", "subsets"]),
    signals=st.integers(0, 1),
    mutant=st.sampled_from([None, "block_destinations", "sync_sender", "sync_receivers_before_queueing", "tiebreak_by_sender"]),
)
def test_random_configurations_decide_the_same(spec_name, peers, destinations, signals, mutant) -> None:
    # Three peers with a signal reach 10^5-10^6 states (searched twice here): signals are
    # drawn with two peers only, so one example stays within seconds.
    constants = {"peers": peers, "sends": 1, "destinations": destinations, "signals": signals if peers == 2 else 0}
    if spec_name == "bus1" and mutant:
        constants[mutant] = False
    doc = {"spec": spec_name, "constants": constants, "check": {"properties": LIBRARY_PROPS}}
    compare(lambda: model_from_dict(doc).spec, lambda spec: model_from_dict(doc).properties)


def test_collector_paused_restores_the_collector() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # a caller's choice stays
    finally:
        gc.enable()


class _Node:
    """An object that can sit in a reference cycle and be watched by a weak reference."""

    me: object = None


def test_what_a_pause_leaves_is_scanned_by_full_collections_only() -> None:
    """Objects alive when the pause ends skip the young generations (the first young
    collection does not scan them), and a full collection scans them again: cyclic
    garbage made during the pause, or among them later, is freed then."""
    with collector_paused():
        kept = _Node()
        kept.me = kept
        dropped = _Node()
        dropped.me = dropped
        dropped_ref = weakref.ref(dropped)
        del dropped
    assert gc.get_freeze_count() > 0
    assert not any(o is kept for o in gc.get_objects(0))
    kept_ref = weakref.ref(kept)
    del kept
    gc.collect(1)  # the young generations only
    assert dropped_ref() is not None and kept_ref() is not None
    gc.collect()
    assert dropped_ref() is None and kept_ref() is None


def test_search_runs_with_the_collector_paused_and_restores_it() -> None:
    seen: list[bool] = []

    def probe(state):
        seen.append(gc.isenabled())
        return None

    spec = Bus1(peers=2, sends=1)
    search(spec, [Property.always("probe", probe)])
    assert seen and not any(seen)
    assert gc.isenabled()


EXIT_PROBE = """
import gc, os, sys
from ordercheck.checker.engine.memory import collector_paused
with collector_paused():
    kept = [(i, (i,)) for i in range(20_000)]
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
def probe(phase, info, write=os.write, fd=fd, frozen=gc.get_freeze_count):
    if phase == "start" and info["generation"] == 2:
        write(fd, b"%d\\n" % frozen())
gc.callbacks.append(probe)  # after the collector's own callback: it sees what that one left
"""


def test_the_collection_at_exit_does_not_thaw_what_a_pause_froze(tmp_path: Path) -> None:
    """A process that ends after a search (a ``check`` command) leaves the objects the
    pause froze frozen through the interpreter's own full collection at exit: thawed,
    they were all scanned (0.5 s at the end of a check of BSS 2x5)."""
    log = tmp_path / "frozen"
    subprocess.run([sys.executable, "-c", EXIT_PROBE, str(log)], check=True, timeout=60)
    counts = [int(x) for x in log.read_text().split()]
    assert counts and all(c >= 20_000 for c in counts), counts

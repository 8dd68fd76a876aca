"""The monitors (one definition of each property, shared by validate and the model
checker) against the independent oracle of tests/validate_oracle.py.

validate and the property library used to be two codes compared here; both are now the
monitors of :mod:`ordercheck.checker.monitors`, so each is compared with the oracle, written
straight from the definitions with no code shared with the monitors:

- on random small logs, validate's first violation (the event) is the oracle's, read on
  the history of every prefix of the log;
- on walks of every built-in model, the library's verdict on the spec's own history
  after every step (the monitors on the history laid out as a log, with the spec's
  causal pasts) is the oracle's on that history, and validate's first violation on the
  walk's generated log falls at the step where the oracle's first does.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from validate_oracle import PREFIX_SAFE, first_violation, log_violated, random_logs, violated

from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.loading.registry import builtin_models
from ordercheck.checker.validate.checks import CHECKS, check_log
from ordercheck.checker.validate.generate import walk
from ordercheck.checker.validate.log import Log, causal_pasts, to_history
from ordercheck.specs import properties
from ordercheck.specs.history import history_log


@settings(max_examples=200, deadline=None)
@given(random_logs())
def test_random_logs_match_the_oracle(log: Log) -> None:
    found = check_log(log, list(CHECKS))
    for name in PREFIX_SAFE:
        v = found[name]
        assert (None if v is None else v.at) == first_violation(log, name), (name, v and v.sentence)
    assert (found["eventual_delivery"] is None) == (not log_violated("eventual_delivery", log))


def _models() -> list:
    out = []
    for path in builtin_models():
        model = load_model(path)
        try:
            model.spec.history(model.spec.init_states()[0])
        except NotImplementedError:
            continue
        out.append(path)
    return out


MODELS = _models()
# The oracle reads integrity's "after it was sent" on a log's order only (a history has
# none): on a history it checks repeats, destinations and sends, so the walks compare
# integrity where happened-before has no cycle (every built-in model's walks).


@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_model_walks_match_the_oracle(path) -> None:
    model = load_model(path)
    for seed in range(8):
        w = walk(model, 500 + seed, 120)
        for name in PREFIX_SAFE:
            check = getattr(properties, name)
            library = [check(h) is not None for h in w.histories]
            oracle = [violated(name, h) for h in w.histories]
            assert library == oracle, (seed, name, library.index(True) if True in library else None)
        if w.terminal:
            h = w.histories[-1]
            assert (properties.eventual_delivery(h) is None) == (not violated("eventual_delivery", h))
        if not w.faithful:
            continue
        found = check_log(w.log, list(CHECKS))
        for name in PREFIX_SAFE:
            first = next((k for k, h in enumerate(w.histories) if violated(name, h)), None)
            v = found[name]
            assert (None if v is None else w.step_of_event[v.at]) == first, (seed, name, v and v.sentence)


def test_a_delivery_at_a_non_destination_breaks_fifo_and_causal_too() -> None:
    """docs/reference/properties.md (integrity, "Does not cover"): b delivers a2, which
    is addressed to c only, while a1, which a sent before it and which is addressed to
    b, is not delivered at b yet. integrity, fifo and causal are all violated there, in
    the library (the model checker's definitions), in validate, in the oracle and in
    the plain reference checker; delivered at a peer that waits for nothing, it breaks
    integrity only."""
    from ordercheck.checker.validate.jsonl import read_jsonl
    from tests.validate_reference import first_violation as reference_first

    for waits, expected in ((True, {"fifo": 4, "causal": 4, "integrity": 4}), (False, {"integrity": 4})):
        first = '{"peer": "a", "kind": "send", "msg": "a1", "to": ["b"]}' if waits else \
                '{"peer": "a", "kind": "send", "msg": "a1", "to": ["c"]}'
        text = "\n".join([
            '{"format": "ordercheck-log", "version": 1, "peers": ["a", "b", "c"]}',
            first,
            '{"peer": "a", "kind": "send", "msg": "a2", "to": ["c"]}',
            '{"peer": "b", "kind": "deliver", "msg": "a2"}',
        ]) + "\n"
        log = read_jsonl(text.splitlines(), "misaddressed.jsonl")
        history = to_history(log)
        found = check_log(log, ["fifo", "causal", "integrity"])
        for name in ("fifo", "causal", "integrity"):
            want = expected.get(name)
            assert (getattr(properties, name)(history) is not None) == (want is not None), name
            assert violated(name, history) == (want is not None), name
            assert (found[name].line(log) if found[name] is not None else None) == want, name
            assert reference_first(text, name) == want, name


def test_a_spec_past_beyond_the_events_decides_causal() -> None:
    """bus1_impl lets a user that sees BUS1_HANDLE_INVALID join a destruction's causal
    past with no event to record it: the log's clocks miss that past, the spec's has it.
    The library decides causal with the spec's pasts (ordercheck.checker.monitors.spec_past), as
    the oracle does, on every state of the model the search meets first."""
    spec = load_model("models/bus1-impl-life-transfer-invalid.toml").spec
    frontier, seen, hidden = list(spec.init_states()), set(), 0
    while frontier and len(seen) < 3000:
        nxt = []
        for s in frontier:
            if s in seen:
                continue
            seen.add(s)
            h = spec.history(s)
            assert (properties.causal(h) is not None) == violated("causal", h)
            # the reports read the same verdict through first_violation (by name)
            assert (properties.first_violation(h, "causal") is not None) == violated("causal", h)
            log = history_log(h)
            clocks = causal_pasts(log)
            hidden += any(log.msg_send[m] >= 0 and {log.msg_name[x] for x in clocks[m]}
                          != {h.messages[x].name for x in h.messages[mid].past}
                          for mid, m in log.ids.items() if mid in h.messages)
            nxt.extend(t for _label, t in spec.next_states(s))
        frontier = nxt
    assert hidden  # the model does reach histories whose pasts the events do not show

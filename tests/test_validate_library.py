"""validate against the property library itself (``specs.properties``): same verdicts.

validate decides the library's definitions with its own algorithms. Here both are run:
on random small logs (the library on the history of every prefix of the log) and on
walks of every built-in model (the library on the spec's own history after every
step). The verdict, and where a log breaks a property the event (or step) at which it
first breaks, must agree.
"""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from validate_oracle import PREFIX_SAFE, log_violated, random_logs

from checker.loading.modelfile import load_model
from checker.loading.registry import builtin_models
from checker.validate.checks import CHECKS, check_log
from checker.validate.generate import walk
from checker.validate.log import Log, sub_log, to_history
from specs import properties

if not hasattr(properties, "integrity"):  # pragma: no cover - until the new definitions land
    pytest.skip("the property library does not have the prefix-safety definitions yet (issue #15)",
                allow_module_level=True)


def library_violated(name: str, log: Log) -> bool:
    """The library's check on the log's history; for ``integrity`` also the one rule only
    a log's order can tell (a signal's receipt after the signal), as validate reads it.
    ``global_lock`` is decided on the library's own graph (:func:`specs.properties.lock_graph`):
    the library's sentence for a cycle through a delivery of a message never sent
    raises KeyError (it names the message from the history's sent messages)."""
    if name == "global_lock":
        return not nx.is_directed_acyclic_graph(properties.lock_graph(to_history(log)))
    found = getattr(properties, name)(to_history(log))
    if found is not None and found is not False:
        return True
    return name == "integrity" and log_violated(name, log)


def library_first(log: Log, name: str) -> int | None:
    for end in range(1, len(log) + 1):
        prefix, _kept = sub_log(log, range(end), all_peers=True)
        if library_violated(name, prefix):
            return end - 1
    return None


@settings(max_examples=200, deadline=None)
@given(random_logs())
def test_random_logs_match_the_library(log: Log) -> None:
    found = check_log(log, list(CHECKS))
    for name in PREFIX_SAFE:
        v = found[name]
        assert (None if v is None else v.at) == library_first(log, name), (name, v and v.sentence)
    library = properties.eventual_delivery(to_history(log))
    assert (found["eventual_delivery"] is None) == (library is None)


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


@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_generated_logs_match_the_library(path) -> None:
    model = load_model(path)
    for seed in range(8):
        w = walk(model, 500 + seed, 120)
        if not w.faithful:
            continue
        found = check_log(w.log, list(CHECKS))
        for name in PREFIX_SAFE:
            check = getattr(properties, name)
            first = next((k for k, h in enumerate(w.histories) if check(h) not in (None, False)), None)
            v = found[name]
            assert (None if v is None else w.step_of_event[v.at]) == first, (seed, name, v and v.sentence)
        if w.terminal:
            assert (found["eventual_delivery"] is None) == (properties.eventual_delivery(w.histories[-1]) is None)


def test_a_delivery_at_a_non_destination_breaks_fifo_and_causal_too() -> None:
    """docs/reference/properties.md (integrity, "Does not cover"): b delivers a2, which
    is addressed to c only, while a1, which a sent before it and which is addressed to
    b, is not delivered at b yet. integrity, fifo and causal are all violated there, in
    the library (the model checker's definitions, the reference), in validate and in
    the plain reference checker; delivered at a peer that waits for nothing, it breaks
    integrity only."""
    from checker.validate.jsonl import read_jsonl
    from tests.validate_reference import first_violation

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
            assert (found[name].line(log) if found[name] is not None else None) == want, name
            assert first_violation(text, name) == want, name

"""Coverage for every built-in spec: each lists the action kinds its configuration is sure
to take (``Spec.action_kinds``, mostly from the shared bases of ``specs/base.py`` and
``specs/holdback.py``), and a model in which one of them cannot fire gets a warning
naming it.

For each spec, one small built-in model: every kind it lists fires there (no warning),
and the kinds that fire are exactly the listed ones, so a listing that forgot a step of
the spec fails here too. Then the same model with one listed kind taken out of the spec's
steps (a subclass whose ``next_states`` drops it: a model in which that kind cannot
fire) must get the warning naming that kind. That the other built-in models get no
coverage warning is ``ordercheck check models/``.
"""

from __future__ import annotations

import dataclasses

import pytest

from ordercheck.checker.api.reductions import partial_order_of
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.loading.registry import spec_names
from tests.conftest import MODELS

QUIET = Options(progress=False, stop_when_decided=False)
# Without reductions: a spec with a step taken out no longer matches its footprints.
PLAIN = Options(progress=False, stop_when_decided=False, por=False, symmetry=False)

# One small model per built-in spec in which every kind the spec can take here fires.
MODEL_OF = {
    "bss": "bss-3-duplicating",
    "bus1": "bus1-4-signal",
    "bus1_impl": "bus1-impl-life-disconnect",
    "bus1_refinement": "bus1-impl-refines-handle",
    "fifo": "fifo-3",
    "lamport_total": "lamport-2-duplicating",
    "matrix": "matrix-3",
    "restart_clocks": "restart-count",
    "retransmit": "retransmit-weak",
    "sequencer": "sequencer-2-duplicating",
    "ses": "ses-3",
    "skeen": "skeen-2-lossy",
    "synchronous": "synchronous-tlc-duplicating",
}


# More models where the listing is exact: signals, and ablations that take a step away
# (without their condition, BSS and SES never hold a message back, the sequencer without
# hold-back delivers on receipt). The listing may stay short of what fires (a hold-back it
# cannot foresee, as in matrix-mutant-no-causal-condition): it lists only what is sure.
MORE = ["bss-3-signal", "bss-mutant-no-causal-condition", "matrix-3-signal", "ses-3-signal", "ses-mutant-no-buffer-check", "sequencer-mutant-no-hold-back", "sequencer-mutant-own-delivery",
        "synchronous-mutant-no-ack", "synchronous-mutant-no-permission", "bus1-mutant-sync-while-queueing",
        "lamport-tlc-channel-faults", "skeen-tlc-channel-faults", "restart-count-two-producers"]

# Kinds a spec takes in its coverage model but does not list, because no configuration
# guarantees them: bus1_impl stages a holder's destroy notification (bus1_tx_stage_sync)
# only if a remote holder is still attached when the destruction starts.
UNLISTED = {"bus1_impl": {"bus1_tx_stage_sync"}, "bus1_refinement": {"bus1_tx_stage_sync"}}


def coverage_warnings(result) -> list[str]:
    return [w for w in result.warnings if w.startswith("coverage")]


def test_every_built_in_spec_has_a_coverage_model():
    assert sorted(MODEL_OF) == sorted(spec_names())


@pytest.mark.parametrize("name", sorted(MODEL_OF.values()) + MORE)
def test_the_listed_kinds_are_the_kinds_that_fire(name):
    model = load_model(MODELS / f"{name}.toml")
    spec = model.spec_name
    listed = model.spec.action_kinds()
    assert listed and len(set(listed)) == len(listed)
    result = check_model(model, QUIET)
    assert not coverage_warnings(result)
    if partial_order_of(model.spec).defers():
        # Deferred steps fire only where nothing else is enabled in the reduced graph (no
        # warning then, above); the full graph fires every listed kind.
        result = check_model(model, Options(progress=False, stop_when_decided=False, por=False))
        assert not coverage_warnings(result)
    assert {k for k, n in result.coverage.items() if n} == set(listed) | UNLISTED.get(spec, set())


def without(model, kind: str):
    """``model`` with a spec whose steps of action ``kind`` are taken out."""
    base = type(model.spec)

    class Without(base):  # type: ignore[misc, valid-type]
        def next_states(self, state):
            return [(a, t) for a, t in super().next_states(state) if a[0] != kind]

    return dataclasses.replace(model, spec=Without(**model.spec.values))


def cases() -> list[tuple[str, str]]:
    out = []
    for spec, name in sorted(MODEL_OF.items()):
        for kind in load_model(MODELS / f"{name}.toml").spec.action_kinds():
            out.append((spec, kind))
    return out


@pytest.mark.parametrize(("spec", "kind"), cases())
def test_a_kind_that_cannot_fire_is_named(spec, kind):
    model = without(load_model(MODELS / f"{MODEL_OF[spec]}.toml"), kind)
    result = check_model(model, PLAIN)
    assert result.coverage[kind] == 0
    (warning,) = coverage_warnings(result)
    named = warning.split(" never fired")[0].removeprefix("coverage: ").split(", ")
    assert kind in named
    # The others named are those that only a step of `kind` led to.
    assert set(named) <= set(model.spec.action_kinds())

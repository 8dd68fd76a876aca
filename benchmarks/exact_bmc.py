"""Bounded model checking on the exact encodings against the explicit engine, per mutant.

For each mutant model with a step-exact encoding (``EXACT`` in ``specs/NAME_symbolic.py``,
see ``ordercheck.specs.symbolic_exact``): the explicit engine's shortest counterexample
length ``L`` to the ordering property, BMC's shortest violation depth ``d`` on the exact
encoding (they must be equal), whether BMC's trace replays through the Python spec label
by label (each step one of the spec's, reaching the same encoded state, the property
broken at the end), and the seconds each side took. The unit tests
(tests/test_symbolic_exact.py) run the cheap rows; the Skeen mutants (``L = 18``, tens of
seconds of Z3 each) are run here.

    python benchmarks/exact_bmc.py [MODEL ...]
"""

from __future__ import annotations

import argparse
import importlib
import time

from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.checker.symbolic.prove import bmc_queries
from ordercheck.specs import properties as library

MUTANTS = {
    "bss-mutant-no-causal-condition": "causal",
    "matrix-mutant-no-causal-condition": "causal",
    "sequencer-mutant-no-hold-back": "total",
    "sequencer-mutant-own-delivery": "total",
    "lamport-mutant-no-wait": "total",
    "lamport-mutant-no-tiebreak": "total",
    "lamport-unordered": "total",
    "ses-mutant-no-buffer-check": "causal",
    "ses-literal-smaller": "causal",
    "ses-mutant-no-merge": "causal",
    "synchronous-mutant-no-ack": "synchronous",
    "synchronous-3-mutant-no-permission": "synchronous",
    "skeen-mutant-no-tiebreak": "total",
    "skeen-mutant-min": "total",
    "skeen-mutant-no-wait": "total",
}


def replays(spec, sym, trace, prop: str) -> bool:
    """Whether BMC's trace is a run of the spec that breaks ``prop`` at its last step only."""
    (state,) = spec.init_states()
    for step in trace[1:]:
        if getattr(library, prop)(spec.history(state)) is not None:
            return False
        nexts = [nxt for lab, nxt in spec.next_states(state) if lab == tuple(step.label)]
        if len(nexts) != 1:
            return False
        state = nexts[0]
        if sym.describe(sym.encode(state))["changed"] != step.state["changed"]:
            return False
    return getattr(library, prop)(spec.history(state)) is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(MUTANTS))
    args = parser.parse_args()
    print(f"{'model':36} {'property':11} {'L':>3} {'d':>3} replays  explicit s  bmc s")
    for name in args.models:
        prop = MUTANTS[name]
        m = load_model(f"models/{name}.toml")
        started = time.monotonic()
        found = check_model(m, Options(progress=False)).properties[prop]
        explicit = time.monotonic() - started
        length = len(found.trace) - 1 if found.trace else None
        sym = importlib.import_module(f"ordercheck.specs.{m.spec_name}_symbolic").EXACT(m.spec)
        started = time.monotonic()
        (q,) = bmc_queries(sym, [prop], length or 0, None)
        bmc = time.monotonic() - started
        depth = len(q.trace) - 1 if q.status == "violated" else None
        ok = q.status == "violated" and replays(m.spec, sym, q.trace, prop)
        print(f"{name:36} {prop:11} {length!s:>3} {depth!s:>3} {'yes' if ok else 'NO':7} {explicit:10.1f} {bmc:6.1f}",
              flush=True)


if __name__ == "__main__":
    main()

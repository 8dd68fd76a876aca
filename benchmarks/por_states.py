"""How many states partial-order reduction leaves on bus1 multicast configurations.

The size of the reduced graph is what the footprints (which steps commute) and the
choice among stubborn sets (``ordercheck.checker.engine.reduce``) decide; this prints it, with the
transitions and CPU seconds, for bus1 with three peers multicasting to both others
and the ordering properties (stable, so no visibility condition), from one multicast
each up to ``bus1-3x2``'s two each:

    python benchmarks/por_states.py                 # the three smaller configurations
    python benchmarks/por_states.py --all           # and the whole bus1-3x2 (minutes)
    python benchmarks/por_states.py --unreduced     # the unreduced counts beside them

Each line: configuration, reductions, distinct states, transitions, depth, CPU seconds.
"""

from __future__ import annotations

import argparse
import time

from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import model_from_dict

PROPERTIES = ["fifo", "causal", "total", "global_lock", "eventual_delivery", "deadlock_free"]
CONFIGURATIONS = {
    "one each": {"peers": 3, "sends": 1},
    "a two, b c one": {"peers": 3, "script": {"a": ["bc", "bc"], "b": ["ac"], "c": ["ab"]}},
    "a b two, c one": {"peers": 3, "script": {"a": ["bc", "bc"], "b": ["ac", "ac"], "c": ["ab"]}},
    "two each (bus1-3x2)": {"peers": 3, "sends": 2},
}


def measure(name: str, constants: dict, por: bool) -> str:
    model = model_from_dict({"spec": "bus1", "constants": constants, "check": {"properties": PROPERTIES}})
    start = time.process_time()
    result = check_model(model, Options(progress=False, por=por, symmetry=False, stop_when_decided=False))
    cpu = time.process_time() - start
    st = result.stats
    what = "por" if por else "off"
    return f"{name:22} {what:4} {st.distinct_states:>11,} states {st.transitions:>11,} transitions depth {st.depth:>3} {cpu:8.2f} CPU s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="include the whole bus1-3x2 (minutes)")
    parser.add_argument("--unreduced", action="store_true", help="also run without reductions")
    args = parser.parse_args()
    names = list(CONFIGURATIONS) if args.all else list(CONFIGURATIONS)[:3]
    for name in names:
        for por in (False, True) if args.unreduced else (True,):
            print(measure(name, CONFIGURATIONS[name], por), flush=True)


if __name__ == "__main__":
    main()

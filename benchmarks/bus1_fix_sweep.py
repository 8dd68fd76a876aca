"""Sweep bus1's candidate fixes over every bus1_impl model (docs/explanation/bus1-implementation.md).

Each fix is a switch on the spec (``specs/bus1_impl.py``). For every model file
``models/bus1-impl-*.toml`` (the ``bus1_impl`` and ``bus1_refinement`` ones) and every fix,
the model is checked with the code's setting and with the fix, on the properties the model
checks, and the script prints, per fix, each model's distinct states both ways and every
verdict that differs: a property newly violated (the fix breaks something: none may be
listed), one that now holds (what the fix repairs), a witness (``sometimes``) lost or
gained. A model that already sets the switch, or where it does not apply (``stage_lock``
outside the lock-level mode), is skipped and said so.

    PYTHONPATH=. python benchmarks/bus1_fix_sweep.py [--fix NAME ...] [--skip MODEL ...] [--glob PATTERN] [--markdown]

Exit status 1 when a fix newly violates a property on some model, else 0.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tomllib
from pathlib import Path
from typing import Any

from ordercheck.checker.api.errors import InputError
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.modelfile import load_model, model_from_dict

MODELS = Path(__file__).resolve().parent.parent / "models"

FIXES: dict[str, tuple[str, dict[str, Any]]] = {
    "liveness": ("C: is_live_at compares the full key (ts, group, address)", {"liveness": "key"}),
    "flush_front": ("E: bus1_queue_flush recomputes front", {"flush_front": True}),
    "join_failure": ("F: a failed join records the destruction timestamp (INVALID)", {"join_failure": "invalid"}),
    "synthetic_tie": ("D: commit_synthetic's tie test flipped (node > t)", {"synthetic_tie": "flipped"}),
    "stage_lock": ("A: staging under the destination's data lock", {"stage_lock": True}),
    "install_lock": ("B: the liveness check at install under the receiver's data lock", {"install_lock": True}),
    "join_sealed": ("G: an acquire joining a sealed destruction waits for its commit (then J3)",
                    {"join_sealed": "wait"}),
    "transfer_check": ("I, J: a transfer answers INVALID only when the target's handle did not join",
                       {"transfer_check": "join"}),
    "stale_handle": ("K: a stale handle of a destroyed node records the destruction (INVALID)",
                     {"stale_handle": "invalid"}),
    "acquire_owner": ("H: bus1_handle_acquire_slow locks a deactivated owner, and an owner it did not lock "
                      "is released", {"acquire_owner": "pinned"}),
    "all": ("every fix above at once (stage_lock, install_lock and acquire_owner on the lock-level models only)",
            {"liveness": "key", "flush_front": True, "join_failure": "invalid", "synthetic_tie": "flipped",
             "transfer_check": "join", "stale_handle": "invalid", "join_sealed": "wait"}),
}
"""Each fix: what it repairs, and the constants that switch it on."""


@dataclasses.dataclass
class Row:
    """One model under one fix: states with the code's setting and with the fix, and the verdicts
    that differ (``property: before -> after``), the properties still violated with the fix;
    ``skipped`` says why it was not run."""

    model: str
    states_code: int = 0
    states_fix: int = 0
    newly_violated: list[str] = dataclasses.field(default_factory=list)
    repaired: list[str] = dataclasses.field(default_factory=list)
    witnesses: list[str] = dataclasses.field(default_factory=list)
    still: list[str] = dataclasses.field(default_factory=list)
    skipped: str = ""


def _run(path: Path, constants: dict[str, Any]) -> tuple[int, dict[str, tuple[str, str]]]:
    """Check the model at ``path`` with ``constants`` over its own: states, and per property its
    kind and verdict."""
    base = load_model(path)
    data = tomllib.loads(path.read_text())
    model = model_from_dict({"spec": data["spec"], "constants": {**data.get("constants", {}), **constants}},
                            path.stem)
    names = [p.name for p in base.properties]
    props = [p for p in model.spec.properties() if p.name in names]
    result = check_model(dataclasses.replace(base, spec=model.spec, properties=props, expect={}),
                         Options(progress=False))
    kinds = {p.name: p.kind for p in props}
    return result.stats.distinct_states, {k: (kinds[k], v.status) for k, v in result.properties.items()}


def sweep(fix: str, paths: list[Path], code: dict[Path, tuple[int, dict]]) -> list[Row]:
    """The rows of one fix over ``paths``; ``code`` caches each model's run with the code's setting."""
    _what, switches = FIXES[fix]
    rows = []
    for path in paths:
        row = Row(path.stem)
        constants = tomllib.loads(path.read_text()).get("constants", {})
        if fix == "all" and constants.get("locks"):
            switches = {**FIXES["all"][1], "stage_lock": True, "install_lock": True, "acquire_owner": "pinned"}
        elif fix == "all":
            switches = FIXES["all"][1]
        if all(constants.get(k) == v for k, v in switches.items()):
            row.skipped = "already sets the fix"
            rows.append(row)
            continue
        try:
            row.states_fix, after = _run(path, switches)
        except InputError as exc:
            row.skipped = f"does not apply ({str(exc).rsplit(': ', 1)[-1]})"
            rows.append(row)
            continue
        if path not in code:
            code[path] = _run(path, {})
        row.states_code, before = code[path]
        row.still = [name for name, (kind, now) in after.items() if kind != "sometimes" and now == "violated"]
        for name, (kind, was) in before.items():
            now = after[name][1]
            if now == was:
                continue
            text = f"{name}: {was} -> {now}"
            if kind == "sometimes":
                row.witnesses.append(text)
            elif now == "violated":
                row.newly_violated.append(text)
            else:
                row.repaired.append(text)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the sweep and print it; 1 if some fix newly violates a property."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fix", action="append", choices=sorted(FIXES), help="only this fix (repeatable)")
    ap.add_argument("--markdown", action="store_true", help="one Markdown table per fix")
    ap.add_argument("--skip", action="append", default=[], help="leave this model out (its file stem; repeatable)")
    ap.add_argument("--glob", default="bus1-impl-*.toml", help="the model files to sweep (default: every bus1_impl one)")
    args = ap.parse_args(argv)
    paths = sorted(p for p in MODELS.glob(args.glob) if p.stem not in args.skip
                   and tomllib.loads(p.read_text()).get("spec") in ("bus1_impl", "bus1_refinement"))
    code: dict[Path, tuple[int, dict]] = {}
    bad = 0
    for fix in args.fix or list(FIXES):
        rows = sweep(fix, paths, code)
        print(f"\n{fix}: {FIXES[fix][0]}")
        if args.markdown:
            print("\n| model | states (code) | states (fix) | repaired | newly violated | witnesses | still violated |\n"
                  "|---|---|---|---|---|---|---|")
        for r in rows:
            if r.skipped:
                if not args.markdown:
                    print(f"  {r.model}: skipped, {r.skipped}")
                continue
            bad += len(r.newly_violated)
            if args.markdown:
                print(f"| {r.model} | {r.states_code:,} | {r.states_fix:,} | {'; '.join(r.repaired) or '-'} | "
                      f"{'; '.join(r.newly_violated) or '-'} | {'; '.join(r.witnesses) or '-'} | "
                      f"{', '.join(r.still) or '-'} |")
            else:
                print(f"  {r.model}: {r.states_code:,} -> {r.states_fix:,} states; repaired "
                      f"[{', '.join(r.repaired)}]; NEWLY VIOLATED [{', '.join(r.newly_violated)}]; "
                      f"witnesses [{', '.join(r.witnesses)}]; still violated [{', '.join(r.still)}]")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

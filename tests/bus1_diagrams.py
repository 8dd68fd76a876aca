"""The findings page's space-time diagrams (docs/explanation/bus1/*.svg): each finding
model's shortest counterexample for the property its section is about, drawn by the
report's own code (:func:`ordercheck.reports.html.trace_svg`).

``tests/test_bus1_impl.py`` checks that each file is what the current model produces;
after a change to a model, the spec or the drawing, rewrite them with
``python -m tests.bus1_diagrams`` (from the repository root, about a minute: G's model has
115,488 states).
"""

from __future__ import annotations

from pathlib import Path

from ordercheck.checker.api.result import Result
from ordercheck.reports.html import trace_svg

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "explanation" / "bus1"

DIAGRAMS: tuple[tuple[str, str, str], ...] = (
    ("C", "bus1-impl-destroy-race", "owner_no_message_after_destroy"),
    ("F", "bus1-impl-late-join-failed", "valid_handle_notified"),
    ("D", "bus1-impl-synthetic-front", "no_insert_before_front"),
    ("E", "bus1-impl-reset-race", "front_consistent"),
    ("G", "bus1-impl-synthetic-causality", "causal"),
    ("A", "bus1-impl-lock-stage-race", "one_writer"),
    ("B", "bus1-impl-lock-install", "lockdep_held"),
    ("H", "bus1-impl-lock-owner-gone", "map_one_writer"),
    ("I", "bus1-impl-life-transfer-invalid", "causal"),
    ("J", "bus1-impl-life-transfer-window", "valid_handle_notified"),
    ("K", "bus1-impl-life-stale-handle", "handle_valid_iff_before_destroy"),
)
"""(finding, model, property): the diagram of each finding's section."""


def path(model: str, prop: str) -> Path:
    """Where the diagram of ``model``'s shortest ``prop`` counterexample is kept."""
    return OUT / f"{model}--{prop}.svg"


def drawing(result: Result, model: str, prop: str) -> str:
    """The diagram of ``result``'s (``model``'s) shortest counterexample of ``prop``."""
    return trace_svg(result, prop, f"{model}--{prop}")


def main() -> None:
    """Check each model and rewrite its diagram."""
    from ordercheck.checker.engine.run import Options, check_model
    from ordercheck.checker.loading.modelfile import load_model

    OUT.mkdir(parents=True, exist_ok=True)
    for _finding, model, prop in DIAGRAMS:
        result = check_model(load_model(ROOT / "models" / f"{model}.toml"), Options(progress=False))
        path(model, prop).write_text(drawing(result, model, prop), encoding="utf-8")
        print(path(model, prop).relative_to(ROOT))


if __name__ == "__main__":
    main()

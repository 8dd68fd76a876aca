"""The whole built-in suite's verdicts without checking it, for layout tests.

Checking ``models/`` takes about 20 s of CPU; the matrix's layout needs only what each
model is (its name, spec, properties and whether it is a mutant) and each verdict
against its expectation. The built-in suite passes (every verdict is its model's
``[expect]``: the tests that check the models say so), so :func:`suite_results` gives
each property the verdict its model expects (``holds`` where it names none), with no
trace. The matrix shows no trace length in a cell, so a trace changes no width.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from ordercheck.checker.api.model import Model
from ordercheck.checker.api.result import PropertyResult, Result
from ordercheck.checker.loading.modelfile import load_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"


@cache
def suite_models() -> tuple[Model, ...]:
    """Every model file directly under ``models/`` (what ``ordercheck matrix models/`` checks)."""
    return tuple(load_model(p, mutants=False) for p in sorted(MODELS.glob("*.toml")))


def suite_results() -> list[Result]:
    """A result per suite model, each verdict the expected one (see the module)."""
    out = []
    for m in suite_models():
        props = {
            p.name: PropertyResult(p.name, p.kind, m.expect.get(p.name, "holds"), m.expect.get(p.name))
            for p in m.properties
        }
        out.append(Result(m.path, m.spec_name, dict(m.constants), "local", {}, props))
    return out

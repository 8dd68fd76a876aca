"""TLC against our engine on the built-in models (needs TLA2TOOLS_JAR and java).

Without TLC every test here is skipped, saying why. With it, the cross-check runs on
the built-in models small enough for the suite's time budget: per spec, the
``ORDERCHECK_TLC_PER_SPEC`` (1) smallest models of at most ``ORDERCHECK_TLC_MAX_STATES``
(300) distinct states, and the smallest of them where the spec's claimed properties can
fail (a mutant, see :func:`default_models`); set
``ORDERCHECK_TLC_ALL=1`` to cross-check every model (minutes; the table in docs/explanation/tla.md).
"""

from __future__ import annotations

import fnmatch
import functools
import os
from pathlib import Path

import pytest

from ordercheck.checker.api.model import Model
from ordercheck.checker.engine.run import Options, check_model
from ordercheck.checker.loading.evidence import ORDERING
from ordercheck.checker.loading.modelfile import load_model
from ordercheck.tla.adapters import adapter_for, refusal
from ordercheck.tla.tlc import TlcUnavailable, find_tlc
from tests.conftest import MODELS
from tests.test_tla_export import exportable_models, page_table, table_text

try:
    find_tlc()
    NO_TLC = ""
except TlcUnavailable as exc:
    NO_TLC = f"TLC not available: {exc}"

pytestmark = [pytest.mark.tlc, pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")]

MAX_STATES = int(os.environ.get("ORDERCHECK_TLC_MAX_STATES", "300"))
ALL = os.environ.get("ORDERCHECK_TLC_ALL") == "1"
PER_SPEC = int(os.environ.get("ORDERCHECK_TLC_PER_SPEC", "1"))
CHOSEN = [p for p in os.environ.get("ORDERCHECK_TLC_MODELS", "").replace(",", " ").split() if p]
"""``ORDERCHECK_TLC_MODELS``: model names or shell patterns (``bus1-impl-*``), separated
by commas or spaces; when set, exactly these models are cross-checked (and their rows of
the docs' table regenerated)."""


def is_mutant(model: Model) -> bool:
    """Whether the model switches a step of its algorithm off (an ablation flag false)."""
    return any(model.constants.get(flag) is False for flag in type(model.spec).ablations())


@functools.cache
def model_sizes() -> dict[str, list[tuple[int, str, bool, bool]]]:
    """Per spec with a template: ``(distinct states, file name, is a mutant, expects an
    ordering property violated)`` of each model of at most ``MAX_STATES`` states, smallest
    first."""
    sizes: dict[str, list[tuple[int, str, bool, bool]]] = {}
    for path in sorted(MODELS.glob("*.toml")):
        model = load_model(path)
        adapter = adapter_for(model.spec_name)
        if adapter is None or adapter.refuse(model.spec) is not None:
            continue  # no template, or a setting the template does not mirror (export refuses it)
        probe = check_model(model, Options(progress=False, max_states=MAX_STATES + 1, stop_when_decided=False))
        if probe.stats.bound is None:
            breaks = any(model.expect.get(prop) == "violated" for prop in ORDERING)
            sizes.setdefault(model.spec_name, []).append((probe.stats.distinct_states, path.name, is_mutant(model), breaks))
    return {spec: sorted(found) for spec, found in sizes.items()}


@functools.cache
def default_models() -> frozenset[str]:
    """Per spec with a template, its ``PER_SPEC`` smallest models of at most
    ``MAX_STATES`` states (ties by name), and its smallest model there where the spec's
    claimed properties fail: a mutant (an ablation flag switched off) that expects an
    ordering property violated, else any model that does. A cross-check on correct models
    only would never compare a counterexample."""
    chosen: set[str] = set()
    for found in model_sizes().values():
        chosen.update(name for _n, name, _m, _b in found[:PER_SPEC])
        failing = [name for _n, name, mutant, b in found if mutant and b] or [name for _n, name, _m, b in found if b]
        if failing:
            chosen.add(failing[0])
    return frozenset(chosen)


def small_enough(path: Path) -> None:
    model = load_model(path)
    why = refusal(model.spec_name)
    if why is not None:
        pytest.skip(why)
    if adapter_for(model.spec_name) is None:
        pytest.skip(f"spec {model.spec_name!r} has no TLA+ template yet")
    refused = adapter_for(model.spec_name).refuse(model.spec)
    if refused is not None:
        pytest.skip(f"{path.name}: {refused[1]}")
    if ALL:
        return
    if CHOSEN:
        if not any(fnmatch.fnmatchcase(path.stem, pattern) for pattern in CHOSEN):
            pytest.skip(f"{path.name} is not among ORDERCHECK_TLC_MODELS={' '.join(CHOSEN)}")
        return
    if path.name not in default_models():
        pytest.skip(
            f"{path.name} is not among its spec's {PER_SPEC} smallest models of at most {MAX_STATES} states: "
            "cross-checked with ORDERCHECK_TLC_ALL=1 (or `ordercheck tlc`), kept out of the default suite for time"
        )


TABLE_ROWS: dict[str, str] = {}
"""The cross-check table's row of each model cross-checked in this process (see
:func:`test_docs_table_is_the_cross_checks`)."""


def table_row(name: str, cc) -> str:
    """A model's row of the docs' cross-check table: both sides' counts, how many verdicts
    are equal, and TLC's runs (one per configuration, and the replay of our traces)."""
    final, counts = cc.final, cc.ours_counts
    equal = sum(1 for n, r in cc.ours.properties.items() if n in cc.tlc and cc.tlc[n].status == r.status)
    total = len(cc.ours.properties)
    return (f"| {name} | {counts.distinct:,} / {final.distinct:,} | {counts.generated:,} / {final.generated:,} "
            f"| {counts.depth} / {final.depth} | {equal}/{total} {'yes' if cc.agree else 'NO'} | {len(cc.runs)} |")


@pytest.mark.parametrize("path", sorted(MODELS.glob("*.toml")), ids=lambda p: p.stem)
def test_tlc_agrees_with_our_engine(path):
    from ordercheck.checker.cli.tla import cross_check

    small_enough(path)
    cc = cross_check(load_model(path))
    if cc.final is not None and cc.final.distinct is not None:
        TABLE_ROWS[path.stem] = table_row(path.stem, cc)
    assert cc.mismatches == []
    assert cc.agreement is not None or cc.export.happened_before is None  # run wherever the export has one
    assert cc.final is not None and cc.final.distinct == cc.ours_counts.distinct
    for name, mine in cc.ours.properties.items():
        assert cc.tlc[name].status == mine.status
        if mine.trace:
            assert cc.confirmed[name] is True


def test_tlc_refuses_a_trace_that_is_not_a_behaviour(tmp_path):
    """The replay check can fail: a counterexample with one step left out is rejected,
    the genuine one confirmed, in the same TLC run."""
    from ordercheck.tla.export import export_model
    from ordercheck.tla.traces import confirm_in_tlc

    model = load_model(MODELS / "fifo-4.toml")
    ours = check_model(model, Options(progress=False))
    trace = ours.properties["causal"].trace
    export = export_model(model, symmetry=False)
    export.write(tmp_path)
    prop = next(p for p in export.properties if p.name == "causal")
    from ordercheck.tla.traces import raw_states

    states = raw_states(export.adapter, trace)
    result = confirm_in_tlc(
        export.adapter, tmp_path, export.name, "fifo-4.toml",
        {"causal": (prop, states, None), "causal_with_a_gap": (prop, states[:3] + states[4:], None)},
    )
    assert result.confirmed == {"causal": True, "causal_with_a_gap": False}


def test_docs_table_is_the_cross_checks():
    """The rows of the table in docs/explanation/tla.md are those this process's
    cross-checks made (runs after test_tlc_agrees_with_our_engine, in the same file and
    process): each model cross-checked here must have the row it made; with
    ``ORDERCHECK_TLC_ALL=1`` every exportable model must have been cross-checked, so the
    whole table is regenerated. On a difference the table, the page's rows with this
    process's in their place (and only the models that export today), is written to
    ``ORDERCHECK_TLC_TABLE`` when set, to paste into the page."""
    if not TABLE_ROWS:
        pytest.skip("no model was cross-checked in this process (the table's rows come from test_tlc_agrees_with_our_engine)")
    exportable = exportable_models()
    page = page_table()
    rows = {name: TABLE_ROWS.get(name, page.get(name)) for name in exportable}
    missing = [name for name, row in rows.items() if row is None]
    if ALL:
        assert sorted(TABLE_ROWS) == exportable, "every exportable model must have been cross-checked in this session"
    table = table_text({name: row for name, row in rows.items() if row is not None})
    if table != table_text(page) and os.environ.get("ORDERCHECK_TLC_TABLE"):
        Path(os.environ["ORDERCHECK_TLC_TABLE"]).write_text(table, encoding="utf-8")
    assert not missing, f"no row on the page for {', '.join(missing)}: cross-check them (ORDERCHECK_TLC_MODELS)"
    stale = [name for name in TABLE_ROWS if page.get(name) != TABLE_ROWS[name]]
    assert not stale, (f"docs/explanation/tla.md's cross-check rows of {', '.join(stale)} are not the current ones "
                       "(ORDERCHECK_TLC_TABLE=FILE writes the table with them)")
    assert table == table_text(page)

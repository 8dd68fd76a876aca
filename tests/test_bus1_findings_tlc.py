"""The findings page's TLC table, re-run: docs/explanation/bus1-implementation.md, "Two
engines", lists for each bus1 finding and fix the model, its distinct states (ours, and
TLC's where they are fewer: :data:`VIEWS`) and the properties violated. Each row is re-run here with ``ordercheck tlc``'s
cross-check when ``TLA2TOOLS_JAR`` is set (skipped, saying so, without it): TLC must find
the row's states and verdicts, and replay each of our counterexamples.

Without the jar only the cheap half runs: every row of :data:`ROWS` is on the page with
its numbers, and every row of the page is in :data:`ROWS` (so the page cannot gain a row,
or change a number, that the suite does not re-run).

The rows marked slow (G's pair: about 250 s of TLC; A's model: 13 TLC runs; and the larger
fix and variant models) run only with ``ORDERCHECK_FINDINGS_TLC=all`` in the environment
(skipped, saying so, otherwise); the others (23 rows, about 4.7 minutes of CPU) are a
representative per finding but G.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from ordercheck.checker.loading.modelfile import load_model
from tests.conftest import MODELS, model_checking

PAGE = Path(__file__).resolve().parent.parent / "docs" / "explanation" / "bus1-implementation.md"

# (finding, model, constants beyond the file's, distinct states, properties violated (a
# "sometimes" witness never reached counts as violated, as our engine reports it), slow)
ROWS = [
    ("A", "bus1-impl-lock-stage-race", {}, 1336,
     {"one_writer", "lockdep_held", "clock_monotonic", "dequeue_increasing", "eventual_delivery", "front_consistent",
      "front_linked", "no_insert_before_front", "no_warn", "queue_drained", "staging_bounds"}, True),
    ("A, fix", "bus1-impl-lock-stage-fixed", {}, 426, set(), False),
    ("B", "bus1-impl-lock-install", {}, 3164, {"lockdep_held"}, False),
    ("B, fix", "bus1-impl-lock-install-fixed", {}, 3394, set(), False),
    ("H (reset, the assertion)", "bus1-impl-lock-owner-gone", {"owner_gone_steps": False}, 7732, {"lockdep_held"},
     True),
    ("H, fix (the assertion)", "bus1-impl-lock-owner-gone", {"owner_gone_steps": False, "acquire_owner": "pinned"},
     7468, set(), True),
    ("H (reset, past the assertion)", "bus1-impl-lock-owner-gone", {}, 10016,
     {"lockdep_held", "map_one_writer", "no_leaked_pin"}, False),
    ("H, fix (past the assertion)", "bus1-impl-lock-owner-gone-fixed", {}, 8960, set(), True),
    ("H, disconnect", "bus1-impl-lock-disconnect", {}, 16934,
     {"lockdep_held", "no_warn", "queue_drained", "eventual_delivery", "map_one_writer", "no_leaked_pin",
      "no_use_after_free"}, False),
    ("H, disconnect, fix", "bus1-impl-lock-disconnect-fixed", {}, 8908, set(), True),
    ("lock order", "bus1-impl-lock-lock2", {}, 858, set(), False),
    ("lock order, mutant", "bus1-impl-lock-mutant-lock2-unordered", {}, 864, {"deadlock_free", "eventual_delivery"},
     True),
    ("C, destination", "bus1-impl-destroy-race", {}, 340,
     {"delivered_iff_before_destroy", "owner_no_message_after_destroy"}, False),
    ("C, destination, fix", "bus1-impl-destroy-race-fixed", {}, 340, set(), False),
    ("C, passed handle", "bus1-impl-handle-tie", {}, 604, {"handle_valid_iff_before_destroy"}, False),
    ("C, passed handle, fix", "bus1-impl-handle-tie-fixed", {}, 604, set(), False),
    ("F, J3", "bus1-impl-late-join-failed", {}, 44, {"handle_valid_iff_before_destroy", "valid_handle_notified"},
     False),
    ("F, J3, fix", "bus1-impl-late-join-failed-fixed", {}, 44, set(), False),
    ("F, J2", "bus1-impl-handle-race", {}, 932,
     {"handle_valid_iff_before_destroy", "valid_handle_notified", "causal_race"}, True),
    ("F, J2, fix", "bus1-impl-handle-race-fixed", {}, 932, {"causal_race"}, True),
    ("D", "bus1-impl-synthetic-front", {}, 2006,
     {"no_insert_before_front", "handle_valid_iff_before_destroy", "valid_handle_notified"}, False),
    ("D, the tie flipped alone", "bus1-impl-synthetic-front-flipped", {}, 1756,
     {"handle_valid_iff_before_destroy", "valid_handle_notified"}, True),
    ("D, fix", "bus1-impl-synthetic-front-fixed", {}, 1756, set(), True),
    ("E", "bus1-impl-reset-race", {}, 444, {"front_consistent", "eventual_delivery", "queue_drained"}, False),
    ("E, fix", "bus1-impl-reset-race-fixed", {}, 438, set(), False),
    ("E, later traffic", "bus1-impl-life-reset-then-traffic", {}, 3306,
     {"front_consistent", "eventual_delivery", "queue_drained"}, True),
    ("E, later traffic, fix", "bus1-impl-life-reset-then-traffic-fixed", {}, 3198, set(), True),
    ("disconnect (lifecycle)", "bus1-impl-life-disconnect", {}, 426, set(), False),
    ("group tags shared by one thread", "bus1-impl-shared-groups", {}, 412, {"group_tie"}, False),
    ("group tags, mutant", "bus1-impl-mutant-shared-unserialized", {}, 1188, {"total"}, True),
    ("C, counted references", "bus1-impl-life-refs", {}, 520,
     {"delivered_iff_before_destroy", "owner_no_message_after_destroy"}, True),
    ("counted references, mutant", "bus1-impl-life-refs-multi-mutant", {}, 324, {"release_when_unreferenced"}, True),
    ("C, counted references, lock level", "bus1-impl-lock-refs", {}, 2276,
     {"delivered_iff_before_destroy", "owner_no_message_after_destroy"}, False),
    ("counted references, mutant, lock level", "bus1-impl-lock-refs-mutant", {}, 2582, {"release_when_unreferenced"},
     True),
    ("G", "bus1-impl-synthetic-causality", {}, 140650, {"causal"}, True),
    ("G, fix", "bus1-impl-synthetic-causality-fixed", {}, 115856, set(), True),
    ("I", "bus1-impl-life-transfer-invalid", {}, 1456, {"causal"}, False),
    ("I, fix", "bus1-impl-life-transfer-invalid-fixed", {}, 1844, set(), True),
    ("I and J, transfer in steps", "bus1-impl-life-transfer-invalid", {"transfer": "steps"}, 2168,
     {"causal", "valid_handle_notified"}, True),
    ("J", "bus1-impl-life-transfer-window", {}, 84, {"valid_handle_notified"}, False),
    ("J, fix", "bus1-impl-life-transfer-window-fixed", {}, 76, set(), False),
    ("K", "bus1-impl-life-stale-handle", {}, 1176, {"handle_valid_iff_before_destroy", "valid_handle_notified"},
     False),
    ("K, fix", "bus1-impl-life-stale-handle-fixed", {}, 1168, set(), True),
]

# TLC's distinct states where they are fewer than ours: the module checks the per-step
# checks as action properties and keeps no sticky bit of them, so states of ours that
# differ only in those bits are one state of TLC's (ordercheck.tla.views; the rows not
# listed have as many of each).
VIEWS = {"A": 876, "B": 2784, "B, fix": 2944, "H (reset, the assertion)": 6804, "H, fix (the assertion)": 6892,
         "H (reset, past the assertion)": 8036, "H, fix (past the assertion)": 8300, "H, disconnect": 8356,
         "H, disconnect, fix": 8248, "F, J2, fix": 924, "D": 1646, "K": 1164, "K, fix": 1140}


def states_cell(finding: str, states: int) -> str:
    """The page's states cell of a row: ours, and TLC's where they are fewer."""
    views = VIEWS.get(finding)
    return f"{states:,}" if views is None else f"{states:,} / {views:,}"


def page_rows() -> dict[str, str]:
    """The page's TLC table: finding column -> the row's text."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("| finding | model | states (ours / TLC where fewer) |")
    rows = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows[line.split("|")[1].strip()] = line
    return rows


def row_model(name: str, constants: dict):
    """The row's model: the file's properties, its constants updated by ``constants``."""
    if not constants:
        return load_model(MODELS / f"{name}.toml")
    names = [p.name for p in load_model(MODELS / f"{name}.toml").properties]
    if constants.get("owner_gone_steps") is False:  # the properties of the steps past the assertion go too
        names = [n for n in names if n not in ("map_one_writer", "no_leaked_pin", "no_use_after_free")]
    return model_checking(name, names, **constants)


def test_the_page_lists_exactly_these_rows_with_these_numbers():
    rows = page_rows()
    assert sorted(rows) == sorted(r[0] for r in ROWS)
    for finding, model, constants, states, violated, _slow in ROWS:
        line = rows[finding]
        cells = [c.strip() for c in line.split("|")[1:-1]]
        assert f"`{model}`" in cells[1], finding
        for name, value in constants.items():
            shown = str(value).lower() if isinstance(value, bool) else f'"{value}"'
            assert f"`{name} = {shown}`" in cells[1], finding
        assert cells[2] == states_cell(finding, states), finding
        named = set(re.findall(r"`([a-z_]+)`", cells[3]))
        assert violated <= named, finding  # the page names each property violated (or witness not reached)
        if not violated - {"causal_race"}:
            assert "holds" in cells[3], finding


try:
    from ordercheck.tla.tlc import TlcUnavailable, find_tlc

    find_tlc()
    NO_TLC = ""
except TlcUnavailable as exc:
    NO_TLC = f"TLC not available (set TLA2TOOLS_JAR to tla2tools.jar): {exc}"


ALL_ROWS = os.environ.get("ORDERCHECK_FINDINGS_TLC") == "all"


def _params():
    for finding, model, constants, states, violated, slow in ROWS:
        marks = [pytest.mark.tlc]
        if slow:
            marks += [pytest.mark.slow, pytest.mark.skipif(
                not ALL_ROWS, reason="a slow row: set ORDERCHECK_FINDINGS_TLC=all to re-run it")]
        yield pytest.param(model, constants, states, VIEWS.get(finding, states), violated, id=re.sub(r"[^A-Za-z0-9]+", "-", finding).strip("-"), marks=marks)


@pytest.mark.skipif(bool(NO_TLC), reason=NO_TLC or "TLC available")
@pytest.mark.parametrize(("model", "constants", "states", "views", "violated"), list(_params()))
def test_tlc_reproduces_the_pages_row(model, constants, states, views, violated):
    from ordercheck.checker.cli.tla import cross_check

    cc = cross_check(row_model(model, constants))
    assert cc.mismatches == []
    assert cc.ours.stats.distinct_states == states
    assert cc.final is not None and cc.final.distinct == cc.ours_counts.distinct == views
    assert {p for p, r in cc.ours.properties.items() if r.status == "violated"} == violated
    for prop, mine in cc.ours.properties.items():
        assert cc.tlc[prop].status == mine.status, prop
        if mine.trace:
            assert cc.confirmed[prop] is True, prop

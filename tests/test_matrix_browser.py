"""The matrix of the whole suite, and the report index, on a 1400-pixel screen: headless
Chromium lays them out with no horizontal scrolling (issue 31). Before the matrix was
split by spec with narrow cells, the suite's matrix made the index over 6,000 pixels wide."""

from __future__ import annotations

from pathlib import Path

import pytest
from seedwalk import run_model
from suite_helpers import suite_results

from ordercheck.reports.browser import find_chromium, page_width
from ordercheck.reports.html import write_report
from ordercheck.reports.view import build_report

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="chromium is not installed (`make setup` installs Debian's chromium where apt-get is available)",
)

SCREEN = (1400, 900)


@pytest.fixture(scope="module")
def suite_report(tmp_path_factory) -> Path:
    """The report of the whole suite (:func:`suite_helpers.suite_results`), one verdict
    made unexpected (the widest cell), and two checked models with their traces."""
    results = suite_results()
    bss4 = next(r for r in results if Path(r.model).name == "bss-4.toml")
    bss4.properties["total_global"].expected = "holds"
    results += [run_model("lamport-mutant-no-wait"), run_model("bus1-mutant-no-block")]
    out = tmp_path_factory.mktemp("suite-report")
    write_report(build_report(results), out)
    return out


@pytest.mark.parametrize("page", ["matrix.html", "index.html"])
def test_the_suite_fits_a_1400_pixel_screen(suite_report: Path, page: str) -> None:
    measured = page_width(suite_report / page, SCREEN)
    assert measured["view"] <= SCREEN[0]
    assert measured["scroll"] <= SCREEN[0], f"{page} scrolls sideways: {measured}"
    text = (suite_report / page).read_text(encoding="utf-8")
    assert text.count('<details class="mx-spec" open>') == 13  # every spec's matrix is there, open
    assert text.count('<th class="mx-model"') > 136  # a row per model (and the header cells)

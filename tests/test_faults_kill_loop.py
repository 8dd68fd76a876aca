"""SIGKILL at random moments, resumed each time, ends with the counts of an
uninterrupted run (issue 18). The loop is benchmarks/kill_loop.py; here it runs twenty
kills per worker count, with one and two workers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.faults_helpers import BUS1_3, ROOT, bus1_3_reference

sys.path.insert(0, str(ROOT / "benchmarks"))

import kill_loop  # noqa: E402

reference = bus1_3_reference
ARGS = [str(a) for a in BUS1_3[1:]]


def _loop(reference, tmp_path: Path, workers: int, kills: int) -> None:
    # Kills 0.2 to 0.8 s after each start (the benchmark's default is 0.3 to 1.2 s): start-ups,
    # resumed levels and checkpoint writes all fall in that window, and twenty kills cost less.
    res = kill_loop.kill_loop(ARGS, workers, kills, tmp_path, reference, seed=workers, low=0.2, high=0.8)
    assert res.kills == kills
    assert res.completed and all(c == reference for c in res.completed), (res.completed, reference)
    assert not res.survivors, res.survivors  # workers exit when their parent is killed
    assert not res.leftovers, res.leftovers  # no temporary checkpoint or spill directory stays


@pytest.mark.parametrize("workers", [1, 2])
def test_twenty_kills_resume_to_the_same_counts(reference, tmp_path: Path, workers: int) -> None:
    _loop(reference, tmp_path, workers, 20)

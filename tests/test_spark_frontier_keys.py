"""The levels' keys the Spark driver keeps for the traces (ordercheck.checker.spark.frontier_keys)."""

from __future__ import annotations

import numpy as np
import pytest

from ordercheck.checker.spark.frontier_keys import FrontierKeys
from ordercheck.checker.spark.tasks import POS_BITS


def key(rank: int, position: int) -> int:
    return rank << POS_BITS | position


def test_a_state_is_walked_back_to_its_initial_state_through_each_levels_ranks() -> None:
    keys = FrontierKeys()
    # model 1's levels between model 0's, as a batch's levels come
    assert keys.add(0, np.array([0, 2], dtype=np.int64)) == 0  # level 0: initial states at positions 0 and 2
    assert keys.add(1, np.array([0], dtype=np.int64)) == 0
    assert keys.add(0, np.sort(np.array([key(0, 1), key(1, 0), key(1, 3)], dtype=np.int64))) == 1
    assert keys.add(1, np.array([key(0, 9)], dtype=np.int64)) == 1
    assert keys.add(0, np.sort(np.array([key(2, 5), key(0, 4)], dtype=np.int64))) == 2
    try:
        # rank 1 of level 2 is key(2, 5): its parent is rank 2 of level 1, key(1, 3), whose
        # parent is rank 1 of level 0, the initial state at position 2
        assert keys.path(0, 2, 1, [7]) == (2, [3, 5, 7])
        assert keys.path(0, 2, 0, []) == (0, [1, 4])
        assert keys.path(0, 0, 1, [6]) == (2, [6])
        assert keys.path(1, 1, 0, [2]) == (0, [9, 2])
        with pytest.raises(RuntimeError, match="no state of rank 3 in level 1"):
            keys.path(0, 1, 3, [])
    finally:
        keys.close()


def test_the_keys_file_has_no_name(tmp_path, monkeypatch) -> None:
    """The keys are kept in an anonymous file: nothing is left in the temporary folder
    while the search runs, nor after it, however the process ends."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    keys = FrontierKeys()
    keys.add(0, np.arange(1000, dtype=np.int64))
    assert keys.key(0, 0, 999) == 999
    assert list(tmp_path.iterdir()) == []
    keys.close()

"""The chunk workers of the merging search (checker.engine.chunkpool)."""

from __future__ import annotations

import os
import signal
import time

import pytest

from checker.engine.chunkpool import ChunkPool
from checker.engine.shards import WorkerLost


def _square_setup():
    def work(chunk):
        if chunk == "boom":
            raise ValueError("a spec's exception")
        return chunk * chunk

    return work


def test_results_come_back_in_order_whatever_the_worker_count() -> None:
    for workers in (1, 2, 3):
        pool = ChunkPool(workers, _square_setup)
        try:
            assert list(pool.map(range(50))) == [i * i for i in range(50)]
            assert list(pool.map([])) == []
            assert list(pool.map([7])) == [49]
        finally:
            pool.close()


def test_an_exception_in_a_worker_is_raised_as_itself_and_later_maps_are_not_confused() -> None:
    pool = ChunkPool(2, _square_setup)
    try:
        with pytest.raises(ValueError, match="a spec's exception"):
            list(pool.map([1, 2, "boom", 4, 5, 6]))
        results = pool.map(range(10))
        assert [next(results), next(results)] == [0, 1]  # a map left unread ...
        assert list(pool.map([3, 4])) == [9, 16]  # ... is dropped by the next
    finally:
        pool.close()


def test_a_worker_killed_between_chunks_ends_the_next_map() -> None:
    """A worker that died while idle holds no chunk: the next chunk handed to it (or read
    from it) is WorkerLost, where multiprocessing's pool would have replaced it silently
    or waited for ever."""
    pool = ChunkPool(2, _square_setup)
    try:
        assert list(pool.map(range(4))) == [0, 1, 4, 9]
        os.kill(pool.pids()[1], signal.SIGKILL)
        time.sleep(0.2)
        with pytest.raises(WorkerLost, match=r"worker process 1 ended .*killed by SIGKILL"):
            list(pool.map(range(8)))
    finally:
        pool.close()


def test_workers_exit_when_the_pipe_closes() -> None:
    pool = ChunkPool(3, _square_setup)
    procs = list(pool.procs)
    pool.close()
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]

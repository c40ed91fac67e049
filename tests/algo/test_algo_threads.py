"""Algorithm runs under a process's limits: a library that cannot be loaded, or a thread
that cannot start, under an address-space limit is a typed error, never a missing extra
or an untyped server error."""

from __future__ import annotations

import importlib.abc
import os
import sys
from pathlib import Path

import pytest

from graphlake.algo import nkit
from graphlake.errors import AlgorithmError, MissingExtraError, QueryTooLargeError
from graphlake.isolation import Stopped, Workers

ROOT = Path(__file__).resolve().parents[2]
STOPPED = Stopped(timeout=lambda s: f"timed out after {s:g} s", memory=lambda: "out of memory")


class _Unloadable(importlib.abc.MetaPathFinder):
    """`networkit` is installed but cannot be mapped (as under a tight RLIMIT_AS)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "networkit":
            raise ImportError("libnetworkit.so: failed to map segment from shared object")
        return None


def test_a_library_that_fails_to_load_is_not_a_missing_extra(monkeypatch) -> None:
    monkeypatch.delitem(sys.modules, "networkit", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_Unloadable(), *sys.meta_path])
    with pytest.raises(AlgorithmError, match="installed but failed to load") as caught:
        nkit.networkit("louvain")
    assert not isinstance(caught.value, MissingExtraError)
    monkeypatch.setitem(sys.modules, "networkit", None)  # not installed at all
    with pytest.raises(MissingExtraError, match="pip install"):
        nkit.networkit("louvain")


@pytest.fixture
def workers(monkeypatch) -> Workers:
    # the worker imports the test's jobs by name
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", f"{ROOT}{os.pathsep}{path}" if path else str(ROOT))
    pool = Workers(1, 32, "duckdb:connect", threads=1)  # DuckDB loaded before the limit
    yield pool
    pool.close()


def test_a_thread_past_the_address_space_limit_is_out_of_memory(workers: Workers) -> None:
    """A job whose thread's stack does not fit the worker's limit gets the pool's memory
    error (413 in the server), not a RuntimeError (500); the next job runs in a new worker."""
    job = "tests.algo.worker_jobs:big_stack_thread"
    assert workers.run(job, (4,), timeout_s=60, stopped=STOPPED) == "started"
    with pytest.raises(QueryTooLargeError, match="out of memory"):
        workers.run(job, (256,), timeout_s=60, stopped=STOPPED)
    assert workers.run(job, (4,), timeout_s=60, stopped=STOPPED) == "started"


def test_duckdb_out_of_memory_outside_a_query_is_out_of_memory(workers: Workers) -> None:
    with pytest.raises(QueryTooLargeError, match="out of memory"):
        workers.run(
            "tests.algo.worker_jobs:duckdb_out_of_memory", (), timeout_s=60, stopped=STOPPED
        )
    with pytest.raises(RuntimeError, match="InvalidInputException: not memory"):
        workers.run("tests.algo.worker_jobs:duckdb_other_error", (), timeout_s=60, stopped=STOPPED)


def test_workers_start_with_their_thread_count(workers: Workers) -> None:
    env = workers.run("tests.algo.worker_jobs:thread_env", (), timeout_s=60, stopped=STOPPED)
    assert env == {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


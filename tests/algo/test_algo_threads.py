"""Algorithm runs under a process's limits: a library that cannot be loaded, or a thread
that cannot start, under an address-space limit is a typed error, never a missing extra
or an untyped server error."""

from __future__ import annotations

import importlib.abc
import os
import sys
from pathlib import Path
from typing import Any

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


# --- the server's caps on a run (algo.run's max_threads), and repeatable answers

SCHEMA = """
node Person { name: String @key }
edge Knows: Person -> Person { w: F64 }
"""


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import numpy as np

    import graphlake as gl

    g = gl.Graph.init(str(tmp_path_factory.mktemp("threads") / "g"), SCHEMA)
    rng = np.random.default_rng(8)
    names = [f"p{i:04d}" for i in range(400)]
    ends = zip(rng.integers(0, 400, 4000), rng.integers(0, 400, 4000), strict=True)
    with g.write(message="seed") as w:
        w.insert("Person", [{"name": n} for n in names])
        w.insert(
            "Knows",
            [
                {"id": f"k{j}", "src": names[a], "dst": names[b], "w": float(rng.random())}
                for j, (a, b) in enumerate(ends)
            ],
        )
    return g.snapshot("main")


RUNS = [
    ("pagerank", {}),
    ("wcc", {}),
    ("scc", {}),
    ("louvain", {}),  # under a cap: one thread
    ("louvain", {"threads": 1}),
    ("leiden", {"seed": 3}),
    ("kcore", {}),
    ("shortest_paths", {"source": "p0001", "weight": "w"}),
]


@pytest.mark.parametrize(("name", "options"), RUNS)
def test_every_algorithm_answers_alike_twice_under_the_servers_cap(
    snapshot, name: str, options: dict
) -> None:
    """The docs' determinism table: at the server's defaults (algo_threads 2), two runs
    of the same graph give equal tables, to the last bit."""
    from graphlake.algo.run import run

    first = run(snapshot, name, "Knows", max_threads=2, **options)
    assert first.num_rows > 0
    assert run(snapshot, name, "Knows", max_threads=2, **options).equals(first)


def test_louvain_under_a_cap_defaults_to_its_one_thread_run(snapshot) -> None:
    from graphlake.algo.run import capped, lookup, run

    louvain = lookup("louvain")
    assert capped(louvain, {}, 2) == {"threads": 1}
    assert capped(louvain, {"threads": 2, "seed": 4}, 2) == {"threads": 2, "seed": 4}
    assert capped(louvain, {}, None) == {}  # no cap (the library): every CPU, as before
    assert capped(lookup("pagerank"), {"damping": 0.5}, 1) == {"damping": 0.5}

    capped = run(snapshot, "louvain", "Knows", max_threads=2)
    assert capped.equals(run(snapshot, "louvain", "Knows", threads=1))
    assert run(snapshot, "louvain", "Knows", max_threads=2, threads=2).num_rows == 400


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"threads": 3}, "threads must be at most 2 here, not 3"),
        ({"threads": 1024}, "at most 2 here"),
        ({"threads": 0}, "threads must be an integer from 1 to 1024"),
    ],
)
def test_threads_above_the_cap_are_refused(snapshot, options: dict, message: str) -> None:
    from graphlake.algo.run import run

    with pytest.raises(AlgorithmError, match=message):
        run(snapshot, "louvain", "Knows", max_threads=2, **options)


def test_a_cap_must_be_a_positive_integer(snapshot) -> None:
    from graphlake.algo.run import run

    for bad in (0, -1, 1.5, True):
        with pytest.raises(AlgorithmError, match="max_threads"):
            run(snapshot, "wcc", "Knows", max_threads=bad)

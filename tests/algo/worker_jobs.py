"""Jobs for tests/algo/test_algo_threads.py's query worker (graphlake.isolation): a worker
imports them by name, so they live in a module of their own."""

from __future__ import annotations

import threading


def big_stack_thread(stack_mb: int) -> str:
    """Start a thread whose stack does not fit the worker's address-space limit."""
    threading.stack_size(stack_mb * 2**20)
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    return "started"


def thread_env() -> dict[str, str | None]:
    import os

    return {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}


def duckdb_out_of_memory() -> None:
    """DuckDB's out-of-memory error raised outside a query's own error handling (as
    `duckdb.connect` raised it under a worker's tight address-space limit)."""
    import duckdb

    raise duckdb.OutOfMemoryException("Out of Memory Error: Allocation failure")


def duckdb_other_error() -> None:
    import duckdb

    raise duckdb.InvalidInputException("not memory")

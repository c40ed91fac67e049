"""SQL and Cypher requests: run in a query worker process, cancelled with their client.

A request takes a read slot (503 beyond `max_concurrent_reads`), then hands its query to
the app's worker pool (graphlake.isolation via query.isolated): parsing, planning,
prefetch, execution and the result all happen there, bounded by `query_memory_mb`
(413) and `sql_timeout_s` (408; the worker is killed 0.5 s later at the latest). While it
runs, the event loop checks every quarter second whether the client went away; if it did,
the worker is killed and its slot freed. `sql_limits` is the server's `[limits]` as one
request's `SqlLimits`, shared by the SQL and Cypher routes, the UI's Query page and the
data checks' runner.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from graphlake.server.deps import AppState

if TYPE_CHECKING:
    import pyarrow as pa

    from graphlake.catalog.commits import Commit
    from graphlake.query.data_checks import Runner
    from graphlake.read.snapshot import Snapshot
    from graphlake.read.sql import SqlLimits
    from graphlake.server.config import Limits

_DISCONNECT_POLL_S = 0.25


async def run_query_request(
    request: Request,
    state: AppState,
    kind: str,
    branch: str,
    text: str,
    limits: SqlLimits,
    params: dict[str, Any] | None = None,
    explain: bool = False,
) -> tuple[Commit, pa.Table]:
    """(commit, result) of a `kind` ("sql" or "cypher") query on `branch`'s head; with
    `explain` (Cypher), its plan instead of its rows."""
    gone = threading.Event()

    def work() -> tuple[Commit, pa.Table]:
        from graphlake.query.isolated import run_isolated  # see app.py: imported on use

        # on first use only: loads lance, pyarrow, lark (start-up time)
        from graphlake.read.snapshot import Snapshot

        commit = state.graph.resolve(branch)
        with state.reads.hold():
            return commit, run_isolated(
                state.workers,
                kind,
                Snapshot(state.graph.repo, commit),
                text,
                params=params,
                limits=limits,
                memory_name="query_memory_mb",
                cancelled=gone.is_set,
                explain=explain,
            )

    return await watched(request, work, gone)


async def watched(request: Request, work: Callable[[], Any], gone: threading.Event) -> Any:
    task = asyncio.ensure_future(run_in_threadpool(work))
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=_DISCONNECT_POLL_S)
            if done:
                return task.result()
            if await request.is_disconnected():
                gone.set()
    finally:
        gone.set()  # also when this request itself is cancelled


def sql_limits(limits: Limits, max_rows: int | None) -> SqlLimits:
    """The server's `[limits]` for one SQL or Cypher request; the client may ask fewer rows."""
    # on first use only: loads lance, duckdb, pyarrow (start-up time)
    from graphlake.read.sql import SqlLimits

    return SqlLimits(
        max_rows=min(max_rows or limits.sql_max_rows, limits.sql_max_rows),
        timeout_s=limits.sql_timeout_s,
        max_query_chars=limits.sql_max_query_chars,
        max_result_bytes=limits.sql_max_result_bytes,
        memory_limit_mb=limits.sql_memory_limit_mb,
        adjacency_memory_mb=limits.adjacency_memory_mb,
        threads=limits.sql_threads,
        algo_memory_mb=limits.query_memory_mb,  # a CALL's run: as POST /algo's
        algo_threads=limits.algo_threads,
        timeout_name="sql_timeout_s",
    )


def check_runner(state: AppState) -> Runner:
    """Runs data checks' queries like SQL and Cypher requests: each in a query worker
    under the server's `[limits]` (time, memory, result bytes; no row cap: a check keeps
    at most 21 rows of a SQL result, and a Cypher check with more rows than fit fails
    with its error). A dry run's merged state whose merged schema exists only in memory
    (a preview of a merge that changes the schema) cannot be opened by a worker: its
    checks run in the server process under the same DuckDB limits instead."""

    limits = dataclasses.replace(sql_limits(state.config.limits, None), max_rows=None)

    def run(language: str, snapshot: Snapshot, text: str) -> pa.Table:
        # only when data checks run in query workers (keeps server start-up light)
        from graphlake.query.data_checks import local_runner

        # only when data checks run in query workers (keeps server start-up light)
        from graphlake.query.isolated import run_isolated

        if not snapshot.repo.schemas.is_stored(snapshot.commit.schema_id):
            return local_runner(limits)(language, snapshot, text)
        return run_isolated(
            state.workers,
            language,
            snapshot,
            text,
            limits=limits,
            memory_name="query_memory_mb",
        )

    return run

"""SQL and Cypher requests: run in a query worker process, cancelled with their client.

A request takes a read slot (503 beyond `max_concurrent_reads`), then hands its query to
the app's worker pool (graphlake.isolation via query.isolated): parsing, planning,
prefetch, execution and the result all happen there, bounded by `query_memory_mb`
(413) and `sql_timeout_s` (408; the worker is killed 0.5 s later at the latest). While it
runs, the event loop checks every quarter second whether the client went away; if it did,
the worker is killed and its slot freed.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from graphlake.server.deps import AppState

if TYPE_CHECKING:
    import pyarrow as pa

    from graphlake.catalog.commits import Commit
    from graphlake.read.sql import SqlLimits

_DISCONNECT_POLL_S = 0.25


async def run_query_request(
    request: Request,
    state: AppState,
    kind: str,
    branch: str,
    text: str,
    limits: SqlLimits,
    params: dict[str, Any] | None = None,
) -> tuple[Commit, pa.Table]:
    """(commit, result) of a `kind` ("sql" or "cypher") query on `branch`'s head."""
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
            )

    return await _watched(request, work, gone)


async def _watched(request: Request, work: Callable[[], Any], gone: threading.Event) -> Any:
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

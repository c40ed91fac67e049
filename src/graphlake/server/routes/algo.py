"""`POST /branches/{b}/algo/{name}`: a graph algorithm on one edge type of the branch's
head (any revision the path names), run in a query worker process like /query
(server/queries.py): bounded by `query_memory_mb` (413, refused up front when the
estimate passes it; the same limit as a Cypher `CALL`), `algo_threads` (a `threads`
above it is 400; Louvain's default there is one thread, repeatable) and `sql_timeout_s`
(408), cancelled with its client. A completed
answer is kept by commit, algorithm, edge type and parameters (server/algo_cache.py), so
the next page of it is a slice, not another run."""

from __future__ import annotations

import threading
from typing import Any

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from graphlake.server.algo_cache import answer_key
from graphlake.server.auth import ReadScope
from graphlake.server.convert import columns_and_rows
from graphlake.server.deps import State
from graphlake.server.queries import watched
from graphlake.server.routes.common import READ_ERRORS, BranchPath, errors
from graphlake.server.routing import ThreadedJsonRoute

router = APIRouter(tags=["reads"], route_class=ThreadedJsonRoute)

# A parameter is a number or a short string (a source key, a property name).
Param = float | int | str | None


class AlgoRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    edge_type: str = Field(min_length=1, max_length=256, examples=["Knows"])
    params: dict[str, Param] = Field(
        default_factory=dict,
        max_length=8,
        description="The algorithm's parameters: damping (pagerank), resolution, seed "
        "(louvain, leiden), threads (louvain; at most the server's algo_threads; default 1, "
        "repeatable), iterations (leiden), source "
        "and weight (shortest_paths).",
        examples=[{"damping": 0.85}],
    )
    offset: int = Field(default=0, ge=0, description="Rows to skip (the answer is by id).")
    limit: int | None = Field(
        default=None, ge=1, description="Rows to return (capped at the server's sql_max_rows)."
    )


class AlgoResult(BaseModel):
    commit: str
    total: int = Field(description="Rows in the whole answer (one per node reached).")
    columns: list[str]
    rows: list[list[Any]]
    cached: bool = Field(
        description="The answer was kept from an earlier request (same commit, algorithm, "
        "edge type and parameters): this page did not run the algorithm."
    )


@router.post(
    "/branches/{branch:path}/algo/{name}",
    response_model=AlgoResult,
    dependencies=[ReadScope],
    responses=errors(*READ_ERRORS, 408, 413, 503),
    summary="A graph algorithm (pagerank, wcc, scc, louvain, leiden, kcore, shortest_paths) "
    "on one edge type",
)
async def algo(
    request: Request,
    branch: BranchPath,
    name: str = Path(min_length=1, max_length=64),
    *,
    body: AlgoRequest,
    state: State,
) -> AlgoResult:
    limits = state.config.limits
    gone = threading.Event()
    limit = min(body.limit or limits.sql_max_rows, limits.sql_max_rows)

    def work() -> tuple[Any, int, Any, bool]:
        # imported on use (app.py): keeps the server's start-up light
        from graphlake.algo.isolated import run_isolated
        from graphlake.read.snapshot import Snapshot  # on use, as above

        commit = state.graph.resolve(branch)
        key = answer_key(commit.id, name.lower(), body.edge_type, body.params)
        kept = state.algo_answers.get(key)
        if kept is not None:
            return commit, kept.num_rows, kept.slice(body.offset, limit), True
        with state.reads.hold():
            total, table, whole = run_isolated(
                state.workers,
                Snapshot(state.graph.repo, commit),
                name,
                body.edge_type,
                body.params,
                offset=body.offset,
                limit=limit,
                timeout_s=limits.sql_timeout_s,
                timeout_name="sql_timeout_s",
                memory_mb=limits.query_memory_mb,
                memory_name="query_memory_mb",
                max_threads=limits.algo_threads,
                adjacency_memory_mb=limits.adjacency_memory_mb,
                cancelled=gone.is_set,
                # the whole answer crosses from the worker only when it may be kept and
                # is no larger than any other result the server takes in (a SQL result's
                # cap): the server's memory per request stays sql_max_result_bytes
                whole_bytes=min(state.algo_answers.budget_bytes, limits.sql_max_result_bytes),
            )
        if whole:
            state.algo_answers.put(key, table)
            table = table.slice(body.offset, limit)
        return commit, total, table, False

    commit, total, table, cached = await watched(request, work, gone)
    columns, rows = columns_and_rows(table)
    return AlgoResult(commit=commit.id, total=total, columns=columns, rows=rows, cached=cached)

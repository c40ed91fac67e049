"""`POST /branches/{b}/query`: an openCypher read query, under the same `[limits]` as SQL,
run in a query worker process (server/queries.py)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from graphlake.query.explained import logical_plan_lines
from graphlake.server.auth import ReadScope
from graphlake.server.convert import columns_and_rows
from graphlake.server.deps import State
from graphlake.server.models import SqlResult
from graphlake.server.queries import run_query_request, sql_limits
from graphlake.server.routes.common import READ_ERRORS, BranchPath, errors
from graphlake.server.routing import ThreadedJsonRoute

router = APIRouter(tags=["reads"], route_class=ThreadedJsonRoute)


class QueryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, examples=["MATCH (p:Person) RETURN p.name"])
    params: dict[str, Any] | None = Field(
        default=None, description="Values of the query's `$name` parameters."
    )
    max_rows: int | None = Field(
        default=None,
        ge=1,
        description="Fail rather than return more rows (capped at the server's limit).",
    )
    explain: bool = Field(
        default=False,
        description="Return the plan instead of the rows: one row per step run (its "
        "operation, rows, seconds, SQL and executor) and `logical_plan`.",
    )


class QueryResult(SqlResult):
    logical_plan: list[str] | None = Field(
        default=None,
        description="With `explain`: the logical plan, one operator a line, top-down, each "
        "with its executor in brackets (`csr`, `sql`, `pathsearch`, `lance`); an OPTIONAL "
        "MATCH's operators follow it, indented with `| `.",
        examples=[["Project b.name  [csr]", "Expand (a)-[:Knows]->(b)  [csr]"]],
    )


@router.post(
    "/branches/{branch:path}/query",
    response_model=QueryResult,
    dependencies=[ReadScope],
    responses=errors(*READ_ERRORS, 408, 413, 503),
    summary="An openCypher read query over the branch's head (labels are node types)",
)
async def query(
    request: Request, branch: BranchPath, body: QueryRequest, state: State
) -> QueryResult:
    commit, result = await run_query_request(
        request,
        state,
        "cypher",
        branch,
        body.query,
        sql_limits(state.config.limits, body.max_rows),
        body.params,
        explain=body.explain,
    )
    columns, rows = columns_and_rows(result)
    logical = logical_plan_lines(result) if body.explain else None
    return QueryResult(commit=commit.id, columns=columns, rows=rows, logical_plan=logical)

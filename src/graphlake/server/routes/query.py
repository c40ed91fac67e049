"""`POST /branches/{b}/query`: an openCypher read query, under the same `[limits]` as SQL."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from graphlake.server.auth import ReadScope
from graphlake.server.convert import columns_and_rows
from graphlake.server.deps import State
from graphlake.server.models import SqlResult
from graphlake.server.routes.common import READ_ERRORS, BranchPath, errors
from graphlake.server.routes.tables import sql_limits
from graphlake.server.routing import ThreadedJsonRoute

router = APIRouter(tags=["reads"], route_class=ThreadedJsonRoute)


class QueryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, examples=["MATCH (p:Person) RETURN p.name"])
    params: dict[str, Any] | None = Field(
        default=None, description="Values of the query's `$name` parameters.")
    max_rows: int | None = Field(
        default=None, ge=1,
        description="Fail rather than return more rows (capped at the server's limit).",
    )


@router.post(
    "/branches/{branch:path}/query", response_model=SqlResult, dependencies=[ReadScope],
    responses=errors(*READ_ERRORS, 413, 503),
    summary="An openCypher read query over the branch's head (labels are node types)",
)
def query(branch: BranchPath, body: QueryRequest, state: State) -> SqlResult:
    from graphlake.query.executor import run_query  # see app.py: imported on use
    from graphlake.read.snapshot import Snapshot

    commit = state.graph.resolve(branch)
    with state.reads.hold():
        result = run_query(Snapshot(state.graph.repo, commit), body.query, body.params,
                           limits=sql_limits(state.config.limits, body.max_rows))
    columns, rows = columns_and_rows(result)
    return SqlResult(commit=commit.id, columns=columns, rows=rows)

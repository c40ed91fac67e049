"""`POST /branches/{b}/search`: vector, full-text or hybrid search (read scope)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from graphlake.server.auth import ReadScope
from graphlake.server.convert import table_rows
from graphlake.server.deps import State
from graphlake.server.errors import ApiError
from graphlake.server.routes.common import READ_ERRORS, BranchPath, errors
from graphlake.server.routing import ThreadedJsonRoute

router = APIRouter(tags=["reads"], route_class=ThreadedJsonRoute)

# Bounds checked before the request reaches `g.search` (which checks k, text and the
# vector's dimension and values itself); the body is also capped by max_body_bytes.
MAX_VECTOR_VALUES = 65_536
MAX_WHERE_CHARS = 4096
MAX_TEXT_CHARS = 4096


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str = Field(min_length=1, examples=["Doc"])
    vector: list[float] | None = Field(default=None, max_length=MAX_VECTOR_VALUES)
    near: str | int | None = Field(default=None, description="A node's key: its vector.")
    text: str | None = Field(
        default=None,
        max_length=MAX_TEXT_CHARS,
        description="Full-text query on the @search properties.",
    )
    k: int = Field(default=10, description="Rows to return (1 to the documented cap).")
    where: str | None = Field(
        default=None,
        max_length=MAX_WHERE_CHARS,
        description="Filter applied before ranking, e.g. `n > 3`.",
    )
    columns: list[str] | None = Field(default=None, max_length=1024)
    on: list[str] = Field(
        default_factory=list,
        max_length=64,
        description="Properties to search (default: the declared ones).",
    )
    explain: bool = Field(default=False, description="Report index coverage, no rows.")


class SearchResult(BaseModel):
    commit: str
    rows: list[dict[str, Any]] = Field(
        description="Best first; with `_distance`, `_score` or `_rrf`."
    )
    plan: dict[str, Any] | None = None


@router.post(
    "/branches/{branch:path}/search",
    response_model=SearchResult,
    dependencies=[ReadScope],
    responses=errors(*READ_ERRORS, 413, 503),
    summary="The k best rows of a type by vector distance, BM25 score or both (RRF)",
)
def search(branch: BranchPath, body: SearchRequest, state: State) -> SearchResult:
    commit = state.graph.resolve(branch)  # one pinned commit for the whole request
    with state.reads.hold():
        result: Any = state.graph.search(
            body.type,
            vector=body.vector,
            text=body.text,
            k=body.k,
            where=body.where,
            columns=body.columns,
            branch=commit.id,
            near=body.near,
            on=tuple(body.on),
            explain=body.explain,
        )
    if body.explain:
        return SearchResult(commit=commit.id, rows=[], plan=result.to_dict())
    cap = state.config.limits.sql_max_result_bytes
    if result.nbytes > cap:  # the SQL result cap, before any row becomes JSON
        raise ApiError(
            413,
            "ResultTooLarge",
            f"the search result is larger than {cap} bytes (the limit "
            "sql_max_result_bytes): ask for fewer rows (`k`) or columns",
        )
    return SearchResult(commit=commit.id, rows=table_rows(result))

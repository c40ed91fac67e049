"""Reads: rows of one table with cursor pagination, and read-only SQL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Query, Request

from graphlake.server.auth import ReadScope
from graphlake.server.convert import columns_and_rows, table_rows
from graphlake.server.deps import State
from graphlake.server.models import Page, SqlRequest, SqlResult
from graphlake.server.pages import read_page
from graphlake.server.queries import run_query_request
from graphlake.server.routes.common import READ_ERRORS, BranchPath, errors
from graphlake.server.routing import ThreadedJsonRoute

if TYPE_CHECKING:
    from graphlake.read.sql import SqlLimits
    from graphlake.server.config import Limits

router = APIRouter(tags=["reads"], route_class=ThreadedJsonRoute)


@router.get(
    "/branches/{branch:path}/tables/{table}",
    response_model=Page,
    dependencies=[ReadScope],
    responses=errors(*READ_ERRORS, 413, 503),
    summary="Rows of a node or edge type, ordered by id, one page at a time",
)
def read_table(
    branch: BranchPath,
    table: str,
    state: State,
    where: Annotated[str | None, Query(description="Filter, e.g. `age > 30`.")] = None,
    columns: Annotated[
        str | None, Query(description="Comma-separated columns, e.g. `id,name`.")
    ] = None,
    limit: Annotated[
        int,
        Query(
            ge=1,
            description="Rows per page (capped at the server's "
            "limit; a page also ends before it passes the byte limit "
            "sql_max_result_bytes, with a next_cursor).",
        ),
    ] = 100,
    cursor: Annotated[
        str | None,
        Query(
            description="`next_cursor` of the previous page; "
            "later pages read the commit the first one did."
        ),
    ] = None,
) -> Page:
    # "a, b,,a" -> ["a", "b"]; nothing named means every column.
    names = [c.strip() for c in (columns or "").split(",") if c.strip()]
    wanted = list(dict.fromkeys(names)) or None
    with state.reads.hold():
        page = read_page(
            state.graph,
            branch,
            table,
            where=where if where and where.strip() else None,
            columns=wanted,
            limit=min(limit, state.config.limits.page_max_rows),
            cursor=cursor or None,
            max_bytes=state.config.limits.sql_max_result_bytes,
        )
    return Page(
        table=table, commit=page.commit, rows=table_rows(page.rows), next_cursor=page.next_cursor
    )


@router.post(
    "/branches/{branch:path}/sql",
    response_model=SqlResult,
    dependencies=[ReadScope],
    responses=errors(*READ_ERRORS, 408, 413, 503),
    summary="Read-only SQL (DuckDB) over the branch's head; tables are named after types",
)
async def sql(request: Request, branch: BranchPath, body: SqlRequest, state: State) -> SqlResult:
    # In a query worker process (server/queries.py).
    commit, result = await run_query_request(
        request, state, "sql", branch, body.query, sql_limits(state.config.limits, body.max_rows)
    )
    # Bounded by sql_max_result_bytes; the date range was checked by run_sql.
    columns, rows = columns_and_rows(result)
    return SqlResult(commit=commit.id, columns=columns, rows=rows)


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

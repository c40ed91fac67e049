"""The Query page: an openCypher read query on any revision, under the server's SQL limits
(rows, time, text length, memory), as `POST /branches/{b}/query` runs it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from graphlake.errors import GraphLakeError
from graphlake.server.convert import columns_and_rows
from graphlake.server.deps import AppState
from graphlake.server.errors import ApiError, status_for
from graphlake.server.queries import sql_limits
from graphlake.server.ui.deps import UiRoute, app_state, check_csrf, read_form, require_session
from graphlake.server.ui.render import render

router = APIRouter(route_class=UiRoute, include_in_schema=False)

ROWS_SHOWN = 500  # rows drawn of a result (up to the server's sql_max_rows are computed)
EXAMPLE = "MATCH (n) RETURN n LIMIT 10"


@router.get("/ui/query")
def query_form(request: Request) -> Response:
    session = require_session(request)
    state = app_state(request)
    return _page(request, session, state, state.graph.repo.info.default_branch, "")


@router.post("/ui/query")
async def query(request: Request) -> Response:
    # A read: the gate lets a read session post it (gate.py); the form carries the CSRF
    # token like every UI form, so no other site can spend this server's query time.
    session = require_session(request)
    form = await read_form(request)
    check_csrf(session, form)
    state = app_state(request)
    ref = form.get("ref", "").strip() or state.graph.repo.info.default_branch
    text = form.get("q", "")
    if not text.strip():
        raise ApiError(400, "BadRequest", "write a query first")
    try:
        commit, table = await run_in_threadpool(_run, state, ref, text)
    except GraphLakeError as exc:
        # Syntax, names, types, limits, an unknown revision: the text stays in the box.
        problem = f"{type(exc).__name__}: {exc}"
        return _page(request, session, state, ref, text, status=status_for(exc), problem=problem)
    columns, rows = columns_and_rows(table.slice(0, ROWS_SHOWN))
    return _page(
        request,
        session,
        state,
        ref,
        text,
        commit=commit,
        columns=columns,
        rows=rows,
        total=table.num_rows,
    )


def _run(state: AppState, ref: str, text: str) -> tuple[Any, Any]:
    from graphlake.query.executor import run_query  # the query stack loads on use

    # on first use only: loads lance, pyarrow, lark (start-up time)
    from graphlake.read.snapshot import Snapshot

    commit = state.graph.resolve(ref)  # one pinned commit for the query
    with state.reads.hold():  # the read slots of the JSON API's queries
        table = run_query(
            Snapshot(state.graph.repo, commit), text, limits=sql_limits(state.config.limits, None)
        )
    return commit, table


def _page(
    request: Request,
    session: Any,
    state: AppState,
    ref: str,
    text: str,
    status: int = 200,
    **context: Any,
) -> Response:
    limits = state.config.limits
    return render(
        request,
        "query.html",
        session,
        status=status,
        ref=ref,
        text=text,
        example=EXAMPLE,
        max_chars=limits.sql_max_query_chars,
        max_rows=limits.sql_max_rows,
        timeout_s=limits.sql_timeout_s,
        shown=ROWS_SHOWN,
        branches=state.graph.branches()[:200],
        **{"problem": None, "rows": None, **context},
    )

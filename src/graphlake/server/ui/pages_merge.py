"""Diff between two revisions (or `a...b`), the merge preview and the merge itself."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import RedirectResponse
from starlette.concurrency import run_in_threadpool

from graphlake.errors import MergeConflictError
from graphlake.merge.conflicts import CONSTRAINT_KINDS
from graphlake.server.config import Scope
from graphlake.server.deps import AppState
from graphlake.server.errors import ApiError
from graphlake.server.routes.merge import run_diff, run_merge
from graphlake.server.ui.deps import (
    UiRoute,
    app_state,
    check_csrf,
    outcomes,
    read_form,
    require_session,
)
from graphlake.server.ui.render import render
from graphlake.server.ui.session import Session

router = APIRouter(route_class=UiRoute, include_in_schema=False)

DIFF_ROWS = 50  # rows per table and kind of change on the first page
MAX_CONFLICTS = 100  # conflicts drawn on a preview (each a table of its own)
STRATEGIES = ("", "ours", "theirs")
# Constraint violations of the merged result (never resolved by a strategy): the
# preview lists them apart from the row conflicts.
VIOLATION_KINDS = CONSTRAINT_KINDS
Ref = Annotated[str, Query(min_length=1, max_length=1000)]


@router.get("/ui/diff")
def diff_page(
    request: Request,
    a: Ref | None = None,
    b: Ref | None = None,
    limit: Annotated[int, Query(ge=1)] = DIFF_ROWS,
) -> Response:
    session = require_session(request)
    state = app_state(request)
    if a is None:  # the empty form
        return render(request, "diff.html", session, a="", b="", tables=None, limit=limit)
    limit = min(limit, state.config.limits.page_max_rows)
    base, end, changes = run_diff(state, a, b, limit)
    cap = state.config.limits.page_max_rows
    # The header names what the user asked for: `A...B` is B's changes since its merge
    # base with A; two revisions are "from a to b".
    range_ = a.split("...", 1) if b is None and "..." in a else None
    return render(
        request,
        "diff.html",
        session,
        a=a,
        b=b or "",
        range_=range_,
        base=base,
        end=end,
        tables=tables_view(state, changes),
        steps=schema_steps(changes),
        limit=limit,
        cap=cap,
        more_href="?" + urlencode([("a", a), *([("b", b)] if b else []), ("limit", limit * 4)]),
        can_write=session.scope >= Scope.write,
    )


def tables_view(state: AppState, changes: dict[str, Any]) -> dict[str, dict[str, Any]]:
    schema = state.graph.schema
    return {
        name: table_view(d, bool((t := schema.table(name)) and t.is_edge))
        for name, d in changes.items()
    }


def schema_steps(changes: Any) -> list[tuple[str, str]]:
    """Where diffs carry schema steps (per-commit schemas), they are listed first, as
    `graphlake diff` prints them."""
    return [(s.describe(), str(s.cost)) for s in getattr(changes, "schema_changes", [])]


def table_view(d: Any, edge: bool) -> dict[str, Any]:
    """What the template shows of one table's `TableDiff`."""

    def ends(key: str) -> tuple[str, str] | None:
        return d.endpoints.get(key) if edge else None

    return {
        "edge": edge,
        "counts": d.counts,
        "truncated": d.truncated,
        "inserted": [(k, ends(k), d.inserted_rows.get(k, {})) for k in d.inserted],
        "deleted": [(k, ends(k), d.deleted_rows.get(k, {})) for k in d.deleted],
        "updated": [(k, ends(k), d.changes.get(k, {})) for k in d.updated],
    }


@router.get("/ui/merge")
def merge_preview(request: Request, source: Ref | None = None, into: Ref | None = None) -> Response:
    session = require_session(request)
    state = app_state(request)
    into = into or state.graph.repo.info.default_branch
    result = None
    if source is not None:
        result = run_merge(state, source, into, strategy=None, dry_run=True)
    return render(
        request,
        "merge.html",
        session,
        source=source or "",
        into=into,
        result=result,
        strategies=STRATEGIES,
        problem=None,
        violation_kinds=VIOLATION_KINDS,
        max_conflicts=MAX_CONFLICTS,
        can_merge=session.scope >= Scope.write,
        request_only=state.config.rules_for(into).merge_only_via_request,
        branches=state.graph.branches()[:200],
    )


@router.post("/ui/merge")
async def merge(request: Request) -> Response:
    session = require_session(request, Scope.write)
    form = await read_form(request)
    check_csrf(session, form)
    state = app_state(request)
    source, into = form.get("source", ""), form.get("into", "")
    strategy = form.get("strategy", "")
    if not source or not into or strategy not in STRATEGIES:
        raise ApiError(
            400, "BadRequest", "a merge needs source, into and a strategy of '', 'ours' or 'theirs'"
        )
    message = form.get("message", "").strip() or None
    try:
        result = await run_in_threadpool(
            run_merge,
            state,
            source,
            into,
            strategy=strategy or None,
            dry_run=False,
            message=message,
        )
    except MergeConflictError as exc:
        preview = await run_in_threadpool(
            run_merge, state, source, into, strategy=None, dry_run=True
        )
        return render(
            request,
            "merge.html",
            session,
            status=409,
            source=source,
            into=into,
            result=preview,
            strategies=STRATEGIES,
            problem=str(exc),
            violation_kinds=VIOLATION_KINDS,
            max_conflicts=MAX_CONFLICTS,
            can_merge=True,
            request_only=False,
            branches=state.graph.branches()[:200],
        )
    # Post/redirect/get: reloading the result page does not merge again.
    target = result.commit or state.graph.head(into).id
    return RedirectResponse(
        result_url(request, session, target, f"{source} into {into}", result), 303
    )


def result_url(request: Request, session: Session, commit: str, what: str, result: Any) -> str:
    """The commit page saying what was just done, with the merge's outcome kept for it
    (outcomes.py: the conflicts a strategy resolved)."""
    key = outcomes(request).put(session.id, result)
    return (
        f"/ui/commit/{commit}?{urlencode({'merged': f'{what}: {result.outcome}', 'outcome': key})}"
    )

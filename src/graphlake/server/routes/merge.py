"""Diff, three-way merge and N-way merge between branches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Query

from graphlake.server.auth import ReadScope, WriteScope
from graphlake.server.convert import jsonable
from graphlake.server.deps import AppState, State
from graphlake.server.errors import ApiError
from graphlake.server.models import (
    Diff,
    MergeConflictBody,
    MergeManyRequest,
    MergeOutcome,
    MergeRequest,
)
from graphlake.server.queries import check_runner
from graphlake.server.routes.common import errors
from graphlake.server.routing import ThreadedJsonRoute

if TYPE_CHECKING:
    from graphlake.merge.diff import TableDiff
    from graphlake.merge.result import MergeResult

router = APIRouter(tags=["merge"], route_class=ThreadedJsonRoute)

DIFF_DEFAULT_ROWS = 100
RefQuery = Annotated[
    str,
    Query(
        min_length=1,
        description="A revision: branch, commit id (prefix), main~1, dev^2, ...; "
        "`a` may be a range A...B (from the merge base of A and B to B) when `b` is omitted.",
    ),
]


@router.get(
    "/diff",
    response_model=Diff,
    dependencies=[ReadScope],
    responses=errors(400, 401, 403, 404, 422, 503),
    summary="Per table: what b inserted, updated (old -> new) and deleted since a",
)
def diff(
    a: RefQuery,
    state: State,
    b: RefQuery | None = None,
    limit: Annotated[
        int,
        Query(
            ge=0,
            description="At most this many rows per table and kind "
            "of change (capped at the server's limit); counts cover "
            "all.",
        ),
    ] = DIFF_DEFAULT_ROWS,
) -> Diff:
    a, b, changes = run_diff(state, a, b, limit)
    tables = {name: jsonable(d.to_dict()) for name, d in changes.items()}
    steps = [s.to_json() for s in getattr(changes, "schema_changes", [])]
    return Diff.model_validate({"a": a, "b": b, "tables": tables, "schema_changes": steps})


def run_diff(
    state: AppState, a: str, b: str | None, limit: int
) -> tuple[str, str, dict[str, TableDiff]]:
    """(a, b, changes per table) as `GET /diff` and the web UI compute them, holding a
    read slot (`max_concurrent_reads`) for the whole computation."""
    cap = state.config.limits.page_max_rows
    with state.reads.hold():
        if b is None:  # a range: compare its merge base with its end
            a, b = state.graph.diff_range(a)
        return a, b, state.graph.diff(a, b, limit=min(limit, cap))


@router.post(
    "/merge",
    response_model=MergeOutcome,
    dependencies=[WriteScope],
    responses={
        **errors(400, 401, 403, 404, 413, 422, 503),
        409: {
            "model": MergeConflictBody,
            "description": "Merge conflicts (nothing published; `merge_conflicts` lists "
            "them), or the target moved concurrently",
        },
    },
    summary="Three-way merge of source into target, published as one commit",
)
def merge(body: MergeRequest, state: State) -> dict[str, Any]:
    result = run_merge(
        state,
        body.source,
        body.into,
        strategy=body.strategy,
        dry_run=body.dry_run,
        message=body.message,
        lineage=body.lineage,
        resolutions=body.resolutions,
        checks=body.checks,
    )
    return jsonable(result.to_dict())


def run_merge(
    state: AppState,
    source: str,
    into: str | None,
    *,
    strategy: str | None,
    dry_run: bool,
    message: str | None = None,
    lineage: str | None = None,
    resolutions: list[dict[str, Any]] | None = None,
    checks: bool = False,
) -> MergeResult:
    """The merge both this route and the web UI run: a merge holds the target's writer
    lock, a dry run (the UI's preview) a read slot like any read (`max_concurrent_reads`).
    `checks` (forced for a target whose rule is `require_checks`) runs the merged
    result's data checks, each query in a query worker."""
    # Protected targets accept merges: a write token suffices (protection only refuses
    # direct mutations and loads).
    into = into or state.graph.repo.info.default_branch
    if not dry_run:
        check_not_request_only(state, into)
    checks = checks or state.config.rules_for(into).require_checks
    with state.reads.hold() if dry_run else state.locks.hold(into):
        return state.graph.merge(
            source,
            into,
            strategy=strategy,
            dry_run=dry_run,
            message=message,
            lineage=lineage,
            resolutions=resolutions,
            checks=checks,
            check_runner=check_runner(state) if checks else None,
        )


def check_not_request_only(state: AppState, into: str, what: str = "merge") -> None:
    """A branch with `merge_only_via_request` takes merges (and reverts, cherry-picks,
    resets: `what`) through merge requests only."""
    if state.config.rules_for(into).merge_only_via_request:
        raise ApiError(
            403,
            "ReviewPermissionError",
            f"branch {into!r} rule merge_only_via_request = true: no direct {what} "
            "into it; change it through a merge request (POST /merge-requests)",
        )


@router.post(
    "/merge_many",
    response_model=MergeOutcome,
    dependencies=[WriteScope],
    responses={
        **errors(400, 401, 403, 404, 413, 422, 503),
        409: {
            "model": MergeConflictBody,
            "description": "Merge conflicts (nothing published; `merge_conflicts` lists "
            "them), or the target moved concurrently",
        },
    },
    summary="Merge N branches into the target as one commit with N+1 parents",
)
def merge_many(body: MergeManyRequest, state: State) -> dict[str, Any]:
    into = body.into or state.graph.repo.info.default_branch
    if not body.dry_run:
        check_not_request_only(state, into)
    checks = body.checks or state.config.rules_for(into).require_checks
    with state.reads.hold() if body.dry_run else state.locks.hold(into):
        result = state.graph.merge_many(
            body.sources,
            into,
            strict_disjoint=body.strict_disjoint,
            strategy=body.strategy,
            dry_run=body.dry_run,
            message=body.message,
            lineage=body.lineage,
            checks=checks,
            check_runner=check_runner(state) if checks else None,
        )
    return jsonable(result.to_dict())

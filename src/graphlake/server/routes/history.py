"""Undoing and re-applying history: revert, cherry-pick, reset, and the reflog.

Revert and cherry-pick are merge-engine applications (merge/apply.py): like `/merge`,
they answer with the merge outcome, 409 with `merge_conflicts` on conflicts, and accept a
protected target (protection refuses direct mutations and loads, not merges). A reset
moves a branch anywhere, so on a protected branch it needs an admin token. A branch whose
rule is `merge_only_via_request` refuses all three (403 naming the rule): what reaches it
comes through a merge request (dry runs of revert and cherry-pick stay allowed).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Annotated, Any

from fastapi import APIRouter, Query

from graphlake.server.auth import ReadScope, WriteScope
from graphlake.server.config import Scope
from graphlake.server.convert import jsonable
from graphlake.server.deps import State
from graphlake.server.errors import ApiError
from graphlake.server.models import (
    ApplyRequest,
    CommitRef,
    MergeConflictBody,
    MergeOutcome,
    Reflog,
    ReflogEntryInfo,
    ResetRequest,
)
from graphlake.server.routes.common import BranchName, errors
from graphlake.server.routes.merge import check_not_request_only
from graphlake.server.routing import ThreadedJsonRoute

router = APIRouter(tags=["history"], route_class=ThreadedJsonRoute)

_RESPONSES: dict[int | str, dict[str, Any]] = {
    **errors(400, 401, 403, 404, 413, 422),
    409: {
        "model": MergeConflictBody,
        "description": "Conflicts (nothing published; `merge_conflicts` lists them), or "
        "the branch moved concurrently",
    },
}


@router.post(
    "/branches/{branch:path}/revert",
    response_model=MergeOutcome,
    dependencies=[WriteScope],
    responses=_RESPONSES,
    summary="Undo what one commit changed, as one new commit on the branch",
)
def revert(branch: BranchName, body: ApplyRequest, state: State) -> dict[str, Any]:
    if not body.dry_run:
        check_not_request_only(state, branch, "revert")
    with nullcontext() if body.dry_run else state.locks.hold(branch):
        result = state.graph.revert(
            body.rev,
            branch,
            mainline=body.mainline,
            strategy=body.strategy,
            dry_run=body.dry_run,
            message=body.message,
        )
    return jsonable(result.to_dict())


@router.post(
    "/branches/{branch:path}/cherry-pick",
    response_model=MergeOutcome,
    dependencies=[WriteScope],
    responses=_RESPONSES,
    summary="Apply what one commit changed onto the branch, as one new commit",
)
def cherry_pick(branch: BranchName, body: ApplyRequest, state: State) -> dict[str, Any]:
    if not body.dry_run:
        check_not_request_only(state, branch, "cherry-pick")
    with nullcontext() if body.dry_run else state.locks.hold(branch):
        result = state.graph.cherry_pick(
            body.rev,
            branch,
            mainline=body.mainline,
            strategy=body.strategy,
            dry_run=body.dry_run,
            message=body.message,
        )
    return jsonable(result.to_dict())


@router.post(
    "/branches/{branch:path}/reset",
    response_model=CommitRef,
    responses=errors(400, 401, 403, 404, 409, 413, 422),
    summary="Move a branch to any revision (recorded in its reflog; a protected "
    "branch needs an admin token)",
)
def reset(
    branch: BranchName, body: ResetRequest, state: State, granted: Annotated[Scope, WriteScope]
) -> CommitRef:
    check_not_request_only(state, branch, "reset")
    if branch in state.config.protected_branches and granted < Scope.admin:
        raise ApiError(
            403,
            "ProtectedBranchError",
            f"branch {branch!r} is protected: resetting it needs the admin scope",
        )
    with state.locks.hold(branch):
        entry = state.graph.reset_branch(branch, body.rev)
    assert entry.commit is not None
    return CommitRef(branch=branch, commit=entry.commit)


@router.get(
    "/branches/{branch:path}/reflog",
    response_model=Reflog,
    dependencies=[ReadScope],
    responses=errors(400, 401, 403, 404, 422),
    summary="Every move of a branch, newest first (deleted branches too)",
)
def reflog(
    branch: BranchName,
    state: State,
    limit: Annotated[
        int | None,
        Query(ge=1, description="At most this many entries (capped at the server's log limit)."),
    ] = None,
) -> Reflog:
    cap = state.config.limits.log_max_commits
    entries = state.graph.reflog(branch, limit=min(limit or cap, cap))
    return Reflog(branch=branch, entries=[ReflogEntryInfo(**e.to_dict()) for e in entries])

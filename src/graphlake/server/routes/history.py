"""Undoing and re-applying history: revert and cherry-pick onto a branch.

Both are merge-engine applications (merge/apply.py): like `/merge`, they answer with the
merge outcome, 409 with `merge_conflicts` on conflicts, and accept a protected target
(protection refuses direct mutations and loads, not merges).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from fastapi import APIRouter

from graphlake.server.auth import WriteScope
from graphlake.server.convert import jsonable
from graphlake.server.deps import State
from graphlake.server.models import ApplyRequest, MergeConflictBody, MergeOutcome
from graphlake.server.routes.common import BranchName, errors
from graphlake.server.routing import ThreadedJsonRoute

router = APIRouter(tags=["history"], route_class=ThreadedJsonRoute)

_RESPONSES: dict[int | str, dict[str, Any]] = {
    **errors(400, 401, 403, 404, 413, 422),
    409: {"model": MergeConflictBody,
          "description": "Conflicts (nothing published; `merge_conflicts` lists them), or "
                         "the branch moved concurrently"},
}


@router.post("/branches/{branch:path}/revert", response_model=MergeOutcome,
             dependencies=[WriteScope], responses=_RESPONSES,
             summary="Undo what one commit changed, as one new commit on the branch")
def revert(branch: BranchName, body: ApplyRequest, state: State) -> dict[str, Any]:
    with nullcontext() if body.dry_run else state.locks.hold(branch):
        result = state.graph.revert(body.rev, branch, mainline=body.mainline,
                                    strategy=body.strategy, dry_run=body.dry_run,
                                    message=body.message)
    return jsonable(result.to_dict())


@router.post("/branches/{branch:path}/cherry-pick", response_model=MergeOutcome,
             dependencies=[WriteScope], responses=_RESPONSES,
             summary="Apply what one commit changed onto the branch, as one new commit")
def cherry_pick(branch: BranchName, body: ApplyRequest, state: State) -> dict[str, Any]:
    with nullcontext() if body.dry_run else state.locks.hold(branch):
        result = state.graph.cherry_pick(body.rev, branch, mainline=body.mainline,
                                         strategy=body.strategy, dry_run=body.dry_run,
                                         message=body.message)
    return jsonable(result.to_dict())

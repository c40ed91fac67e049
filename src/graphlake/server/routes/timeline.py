"""Row history, blame and the change feed over HTTP (read scope): the library's
`row_history`, `blame` and `changes` (graphlake.timeline)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from graphlake.server.auth import ReadScope
from graphlake.server.convert import jsonable
from graphlake.server.deps import State
from graphlake.server.routes.common import BranchName, errors
from graphlake.server.routing import ThreadedJsonRoute

router = APIRouter(tags=["history"], route_class=ThreadedJsonRoute)

TypeName = Annotated[str, Path(description="Node or edge type.")]
Key = Annotated[
    str,
    Path(
        description="The row's key (node key or edge id); it may contain `/` "
        "(as is, or encoded as `%2F`): the rest of the path is the key."
    ),
]


@router.get(
    "/branches/{branch:path}/history/{type}/{key:path}",
    dependencies=[ReadScope],
    responses=errors(400, 401, 403, 404, 422),
    summary="The commits that changed one row, newest first along first parents",
)
def row_history(
    branch: BranchName,
    type: TypeName,
    key: Key,
    state: State,
    limit: Annotated[
        int | None,
        Query(ge=1, description="At most this many commits (capped at the server's log limit)."),
    ] = None,
) -> dict[str, Any]:
    cap = state.config.limits.log_max_commits
    entries = state.graph.row_history(type, key, branch, limit=min(limit or cap, cap))
    return {
        "branch": branch,
        "type": type,
        "key": key,
        "history": jsonable([e.to_dict() for e in entries]),
    }


@router.get(
    "/branches/{branch:path}/blame/{type}/{key:path}",
    dependencies=[ReadScope],
    responses=errors(400, 401, 403, 404, 422),
    summary="For each property of one row, the commit that set its current value",
)
def blame(branch: BranchName, type: TypeName, key: Key, state: State) -> dict[str, Any]:
    lines = state.graph.blame(type, key, branch)
    return {
        "branch": branch,
        "type": type,
        "key": key,
        "blame": jsonable([b.to_dict() for b in lines]),
    }


@router.get(
    "/branches/{branch:path}/changes",
    dependencies=[ReadScope],
    responses={
        **errors(400, 401, 403, 404, 409),
        410: {"description": "The cursor's history is gone (gc)"},
    },
    summary="The change feed: row changes after a cursor, oldest first",
)
def changes(
    branch: BranchName,
    state: State,
    cursor: Annotated[
        str | None,
        Query(
            description="Resume after this cursor (the "
            "`cursor` of the last page); none: from the "
            "beginning of the branch's history."
        ),
    ] = None,
    limit: Annotated[int, Query(description="At most this many entries (1..10000).")] = 1000,
) -> dict[str, Any]:
    page = state.graph.changes(branch, since=cursor or None, limit=limit)
    return jsonable(page.to_dict())

"""Branches and history: list, create, delete, log."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from graphlake.catalog.commits import Commit
from graphlake.errors import BranchNotFoundError
from graphlake.server.auth import AdminScope, ReadScope, WriteScope, check_not_protected
from graphlake.server.config import Scope
from graphlake.server.deps import AppState, State
from graphlake.server.errors import ApiError
from graphlake.server.models import BranchCreate, BranchInfo, BranchList, CommitInfo, Log
from graphlake.server.routes.common import BranchName, BranchPath, errors
from graphlake.server.routing import ThreadedJsonRoute

router = APIRouter(tags=["branches"], route_class=ThreadedJsonRoute)


def _info(state: AppState, name: str, head: Commit) -> BranchInfo:
    return BranchInfo(
        name=name,
        head=head.id,
        time=head.time,
        message=head.message,
        default=name == state.graph.repo.info.default_branch,
        protected=name in state.config.protected_branches,
    )


@router.get(
    "/branches",
    response_model=BranchList,
    dependencies=[ReadScope],
    responses=errors(401, 403),
    summary="List branches with their heads",
)
def list_branches(state: State) -> BranchList:
    out = []
    for name in state.graph.branches():
        try:
            out.append(_info(state, name, state.graph.head(name)))
        except BranchNotFoundError:  # deleted since it was listed
            continue
    return BranchList(branches=out)


@router.post(
    "/branches",
    response_model=BranchInfo,
    status_code=status.HTTP_201_CREATED,
    responses=errors(400, 401, 403, 404, 409, 413, 422),
    summary="Create a branch at the head of another branch or at a commit "
    "(a protected name needs an admin token)",
)
def create_branch(
    body: BranchCreate, state: State, granted: Annotated[Scope, WriteScope]
) -> BranchInfo:
    if body.name in state.config.protected_branches and granted < Scope.admin:
        # A protected branch changes only by merge: whoever creates it picks all of its
        # content, so only an admin may.
        raise ApiError(
            403,
            "ProtectedBranchError",
            f"branch {body.name!r} is protected: creating it needs the admin scope",
        )
    start = body.from_ or state.graph.repo.info.default_branch
    state.graph.create_branch(body.name, from_=start)
    return _info(state, body.name, state.graph.head(body.name))


@router.delete(
    "/branches/{name:path}",
    status_code=status.HTTP_204_NO_CONTENT,
    dependencies=[AdminScope],
    responses=errors(400, 401, 403, 404),
    response_class=Response,
    summary="Delete a branch name (commits stay while referenced)",
)
def delete_branch(
    name: BranchName,
    state: State,
    force: Annotated[bool, Query(description="Required to delete a protected branch.")] = False,
) -> Response:
    if not force:
        check_not_protected(state.config, name, "deleting it without ?force=true")
    with state.locks.hold(name):
        state.graph.delete_branch(name)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/branches/{branch:path}/log",
    response_model=Log,
    dependencies=[ReadScope],
    responses=errors(400, 401, 403, 404, 422, 503),
    summary="Commits reachable, newest first",
)
def log(
    branch: BranchPath,
    state: State,
    limit: Annotated[
        int | None,
        Query(ge=1, description="At most this many commits (capped at the server's limit)."),
    ] = None,
) -> Log:
    cap = state.config.limits.log_max_commits
    with state.reads.hold():  # a history walk is a read (max_concurrent_reads)
        commits = state.graph.log(branch, limit=min(limit or cap, cap))
    return Log(
        branch=branch,
        commits=[
            CommitInfo(
                id=c.id,
                parents=list(c.parents),
                message=c.message,
                time=c.time,
                author=c.author_text,
            )
            for c in commits
        ],
    )

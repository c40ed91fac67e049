"""Merge requests: open, list, show (with the current preview), approve, comment, close,
merge. Who acts is the token's name. Reads need the read scope, changes the write scope;
a merge also follows the target branch's rules (`[branches."NAME"]` in the config:
`required_approvals`, approvals by others than the author at the current heads;
`require_checks`, the merged result's data checks pass: else 409 `DataCheckFailedError`
naming the rule) and the
token's branch permissions, and holds the target's writer lock like `POST /merge`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, status

from graphlake.catalog.reviews import MergeRequest
from graphlake.server.auth import ReadScope, WriteScope
from graphlake.server.convert import jsonable
from graphlake.server.deps import AppState, State
from graphlake.server.models import MergeConflictBody, ReviewComment, ReviewMerge, ReviewOpen
from graphlake.server.queries import check_runner
from graphlake.server.routes.common import errors
from graphlake.server.routing import ThreadedJsonRoute

router = APIRouter(tags=["merge requests"], route_class=ThreadedJsonRoute)

RequestId = Annotated[int, Path(ge=1, lt=10**8, description="The merge request's number.")]


def _body(state: AppState, mr: MergeRequest, preview: bool = False) -> dict[str, Any]:
    out = mr.to_dict()
    if preview:
        with state.reads.hold():
            out["preview"] = state.graph.reviews.preview(
                mr, state.config.rules_for(mr.into), check_runner(state)
            )
    out["rules"] = state.config.rules_for(mr.into).__dict__
    return jsonable(out)


@router.post(
    "/merge-requests",
    status_code=status.HTTP_201_CREATED,
    dependencies=[WriteScope],
    responses=errors(400, 401, 403, 404, 413, 422),
    summary="Open a merge request of a branch into another",
)
def open_request(body: ReviewOpen, state: State) -> dict[str, Any]:
    into = body.into or state.graph.repo.info.default_branch
    mr = state.graph.reviews.open(body.source, into, body.title, body.description)
    return _body(state, mr)


@router.get(
    "/merge-requests",
    dependencies=[ReadScope],
    responses=errors(400, 401, 403),
    summary="List merge requests (optionally of one state)",
)
def list_requests(
    state: State,
    state_: Annotated[Literal["open", "merged", "closed"] | None, Query(alias="state")] = None,
) -> dict[str, Any]:
    found = state.graph.reviews.list(state_)
    return {"merge_requests": [_body(state, mr) for mr in found]}


@router.get(
    "/merge-requests/{rid}",
    dependencies=[ReadScope],
    responses=errors(400, 401, 403, 404),
    summary="One merge request, with its preview at the branches' current heads",
)
def show_request(rid: RequestId, state: State) -> dict[str, Any]:
    return _body(state, state.graph.reviews.get(rid), preview=True)


@router.post(
    "/merge-requests/{rid}/approve",
    dependencies=[WriteScope],
    responses=errors(400, 401, 403, 404, 409),
    summary="Approve at the current heads (never your own request)",
)
def approve(rid: RequestId, state: State) -> dict[str, Any]:
    return _body(state, state.graph.reviews.approve(rid))


@router.post(
    "/merge-requests/{rid}/comment",
    dependencies=[WriteScope],
    responses=errors(400, 401, 403, 404, 409, 413, 422),
    summary="Comment",
)
def comment(rid: RequestId, body: ReviewComment, state: State) -> dict[str, Any]:
    return _body(state, state.graph.reviews.comment(rid, body.text))


@router.post(
    "/merge-requests/{rid}/close",
    dependencies=[WriteScope],
    responses=errors(400, 401, 403, 404, 409),
    summary="Close without merging",
)
def close(rid: RequestId, state: State) -> dict[str, Any]:
    return _body(state, state.graph.reviews.close(rid))


@router.post(
    "/merge-requests/{rid}/merge",
    dependencies=[WriteScope],
    responses={
        **errors(400, 401, 403, 404, 413, 422, 503),
        409: {
            "model": MergeConflictBody,
            "description": "Unresolved conflicts (nothing published), a data check "
            "failing on the merged result under require_checks, a request "
            "that is not open, or the target moved concurrently",
        },
    },
    summary="Merge the request (its target branch's rules apply)",
)
def merge(rid: RequestId, state: State, body: ReviewMerge | None = None) -> dict[str, Any]:
    body = body or ReviewMerge()
    reviews = state.graph.reviews
    into = reviews.get(rid).into
    with state.locks.hold(into):
        mr = reviews.merge(
            rid,
            resolutions=body.resolutions,
            strategy=body.strategy,
            rules=state.config.rules_for(into),
            runner=check_runner(state),
        )
    out = _body(state, mr)
    out["result"] = jsonable(mr.result.to_dict()) if mr.result is not None else None
    return out

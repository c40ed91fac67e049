"""Tags: list, create (write scope), delete (admin). A tag names one commit forever."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response, status

from graphlake.catalog.tags import Tag
from graphlake.server.auth import AdminScope, ReadScope, WriteScope
from graphlake.server.deps import State
from graphlake.server.models import TagCreate, TagInfo, TagList
from graphlake.server.routes.common import errors
from graphlake.server.routing import ThreadedJsonRoute

router = APIRouter(tags=["tags"], route_class=ThreadedJsonRoute)

TagName = Annotated[str, Path(description="Tag name (may contain `/`).", examples=["v1.0"])]


def _info(tag: Tag) -> TagInfo:
    return TagInfo(**tag.to_dict())


@router.get(
    "/tags",
    response_model=TagList,
    dependencies=[ReadScope],
    responses=errors(401, 403),
    summary="List tags by name",
)
def list_tags(state: State) -> TagList:
    return TagList(tags=[_info(t) for t in state.graph.tags().values()])


@router.post(
    "/tags",
    response_model=TagInfo,
    status_code=status.HTTP_201_CREATED,
    dependencies=[WriteScope],
    responses=errors(400, 401, 403, 404, 409, 413, 422),
    summary="Tag a revision (an existing tag or a branch of that name: 409)",
)
def create_tag(body: TagCreate, state: State) -> TagInfo:
    rev = body.rev or state.graph.repo.info.default_branch
    return _info(state.graph.tag(body.name, rev, body.message))


@router.delete(
    "/tags/{name:path}",
    status_code=status.HTTP_204_NO_CONTENT,
    dependencies=[AdminScope],
    responses=errors(400, 401, 403, 404),
    response_class=Response,
    summary="Delete a tag (its commits stay while anything else reaches them)",
)
def delete_tag(name: TagName, state: State) -> Response:
    state.graph.delete_tag(name)
    return Response(status_code=status.HTTP_204_NO_CONTENT)

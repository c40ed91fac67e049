"""The webhook delivery log (admin): what was sent where, with attempts and errors."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from graphlake.server.auth import AdminScope
from graphlake.server.deps import State
from graphlake.server.errors import ApiError
from graphlake.server.routes.common import errors
from graphlake.server.routing import ThreadedJsonRoute
from graphlake.server.webhooks.log import read_deliveries

router = APIRouter(tags=["webhooks"], route_class=ThreadedJsonRoute)

MAX_LIMIT = 1000


class DeliveryInfo(BaseModel):
    id: str = Field(
        description="The delivery id (`X-Graphlake-Delivery`): the same event "
        "always has the same id"
    )
    webhook: str
    event: str
    status: str = Field(
        description="pending (being retried), delivered, or failed (all "
        "attempts of a round failed; tried again later)"
    )
    attempts: int
    created: str
    updated: str
    last_error: str | None = None
    last_status_code: int | None = None
    branch: str | None = None
    commit: str | None = None
    tag: str | None = None


class DeliveryList(BaseModel):
    deliveries: list[DeliveryInfo]


@router.get(
    "/webhooks/deliveries",
    response_model=DeliveryList,
    dependencies=[AdminScope],
    responses=errors(401, 403, 404, 422),
    summary="The webhook delivery log, newest first",
)
def list_deliveries(
    state: State,
    webhook: Annotated[str | None, Query(description="Only this webhook's (its `name`)")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="At most this many")] = 100,
) -> DeliveryList:
    names = [h.name for h in state.config.webhooks]
    if webhook is not None:
        if webhook not in names:
            raise ApiError(
                404, "WebhookNotFoundError", f"no webhook named {webhook!r} is configured"
            )
        names = [webhook]
    found = read_deliveries(state.graph.repo.store, names, limit)
    return DeliveryList(deliveries=[DeliveryInfo(**d.to_dict()) for d in found])

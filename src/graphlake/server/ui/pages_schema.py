"""The schema page: the `.pg` text in force at any revision (read-only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from graphlake.server.ui.deps import UiRoute, app_state, require_session
from graphlake.server.ui.render import render
from graphlake.server.ui.schema_view import is_schema_commit

router = APIRouter(route_class=UiRoute, include_in_schema=False)

Ref = Annotated[str, Query(min_length=1, max_length=1000)]


@router.get("/ui/schema")
def schema_page(request: Request, ref: Ref | None = None) -> Response:
    session = require_session(request)
    graph = app_state(request).graph
    ref = ref or graph.repo.info.default_branch
    commit = graph.resolve(ref)  # one commit: the text and the types below agree
    schema = graph.repo.schemas.of(commit)
    types = [
        {"name": t.name, "edge": t.is_edge, "search": bool(t.search or t.vector_indexes)}
        for t in (*schema.nodes.values(), *schema.edges.values())
    ]
    return render(
        request,
        "schema.html",
        session,
        ref=ref,
        commit=commit,
        text=graph.repo.schemas.text(commit.schema_id),
        types=types,
        changed_here=is_schema_commit(graph, commit),
    )

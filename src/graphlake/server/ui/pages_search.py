"""Search a node type from the Browse page: full text on its `@search` properties, or
"similar to this node" through its vector index; results paged like browse."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from graphlake.errors import GraphLakeError
from graphlake.server.convert import table_rows
from graphlake.server.errors import status_for
from graphlake.server.routes.search import MAX_TEXT_CHARS, MAX_WHERE_CHARS
from graphlake.server.ui.deps import UiRoute, app_state, require_session
from graphlake.server.ui.render import render

router = APIRouter(route_class=UiRoute, include_in_schema=False)

ROWS_PER_PAGE = 50
MAX_PAGES = 20  # k = 50 x pages stays within g.search's cap of 1,000
HIDDEN_KINDS = ("Vector", "Blob")  # a vector is no table cell; the node page shows it
Ref = Annotated[str, Query(min_length=1, max_length=1000)]
Text = Annotated[str | None, Query(max_length=MAX_TEXT_CHARS)]
Where = Annotated[str | None, Query(max_length=MAX_WHERE_CHARS)]
Near = Annotated[str | None, Query(max_length=4096)]
Page = Annotated[int, Query(ge=0, lt=MAX_PAGES)]


def search_kinds(t: Any) -> dict[str, bool]:
    """Which searches a type offers: `text` (it declares `@search`), `near` (a vector
    index); both False for edges and types without either."""
    node = t is not None and not t.is_edge
    return {"text": node and bool(t.search), "near": node and bool(t.vector_indexes)}


@router.get("/ui/search")
def search_page(
    request: Request,
    table: Ref,
    ref: Ref | None = None,
    text: Text = None,
    near: Near = None,
    where: Where = None,
    page: Page = 0,
) -> Response:
    session = require_session(request)
    state = app_state(request)
    graph = state.graph
    ref = ref or graph.repo.info.default_branch
    commit = graph.resolve(ref)  # one pinned commit for the page and its next pages
    t = graph.repo.schemas.of(commit).table(table)
    text, near, where = (v.strip() or None if v else None for v in (text, near, where))
    context: dict[str, Any] = {
        "ref": ref,
        "table": table,
        "text": text or "",
        "near": near or "",
        "where": where or "",
        "commit": commit,
        "kinds": search_kinds(t),
        "rows": None,
        "page": page,
        "per_page": ROWS_PER_PAGE,
    }
    if text is None and near is None:  # the empty form
        return render(request, "search.html", session, **context)
    k = (page + 1) * ROWS_PER_PAGE
    try:
        with state.reads.hold():  # the read slots of POST /branches/{b}/search
            found = graph.search(
                table, text=text, near=near, where=where, k=k, columns=_columns(t), branch=commit.id
            )
    except GraphLakeError as exc:
        # Bad text, an unknown key, a type without that index: the form stays.
        context["problem"] = f"{type(exc).__name__}: {exc}"
        return render(request, "search.html", session, status=status_for(exc), **context)
    rows = table_rows(found)
    context.update(
        rows=rows[page * ROWS_PER_PAGE :],
        header=list(found.column_names),
        more=len(rows) == k and page + 1 < MAX_PAGES,
    )
    return render(request, "search.html", session, **context)


def _columns(t: Any) -> list[str] | None:
    if t is None:
        return None  # g.search names the unknown type
    return ["id", *(p.name for p in t.properties if p.type.kind not in HIDDEN_KINDS)]
